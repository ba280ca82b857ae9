package architecture

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTopLevelIsTheMap: docs/architecture.md's "The top level" puts every
// folder at the top of the repository on one side of the architecture
// (compile side, contract, runtime, controller, programs, shared leaves,
// tooling) and names no folder that is not there: a folder added, moved or
// removed without its line in the map fails here.
func TestTopLevelIsTheMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	require.NoError(t, err)
	_, section, found := strings.Cut(string(doc), "\n## The top level\n")
	require.True(t, found, "docs/architecture.md has no \"## The top level\" section")
	section, _, _ = strings.Cut(section, "\n## ")
	named := topLevelNames(section)
	require.NotEmpty(t, named, "the top level's table names no folder")

	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	require.NoError(t, err)
	folders := map[string]bool{}
	for _, f := range strings.Split(string(out), "\n") {
		if dir, _, ok := strings.Cut(f, "/"); ok && !strings.HasPrefix(dir, ".") {
			folders[dir] = true
		}
	}
	for f := range folders {
		assert.True(t, named[f], "the top-level folder %s is on no row of docs/architecture.md's \"The top level\"", f)
	}
	for n := range named {
		assert.True(t, folders[n], "docs/architecture.md's \"The top level\" names %s, which is no top-level folder", n)
	}
}

var tickedName = regexp.MustCompile("`([^`]+)`")

// topLevelNames are the folders the table's rows name: each `name` in a
// row's second cell outside parentheses (a remark in parentheses may name
// what a folder holds).
func topLevelNames(section string) map[string]bool {
	named := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			if inTable {
				break // the first table is the map
			}
			continue
		}
		inTable = true
		if side := strings.TrimSpace(cells[1]); side == "side" || strings.HasPrefix(side, "---") {
			continue
		}
		var outside strings.Builder
		depth := 0
		for _, r := range cells[2] {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth--
			case depth == 0:
				outside.WriteRune(r)
			}
		}
		for _, m := range tickedName.FindAllStringSubmatch(outside.String(), -1) {
			named[m[1]] = true
		}
	}
	return named
}
