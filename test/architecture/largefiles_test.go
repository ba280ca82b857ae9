package architecture

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxTrackedBytes is the largest file the repository may track outside a
// test-data folder: anything bigger is a build output or a data set that
// every clone would carry forever (two ELF binaries once were).
const maxTrackedBytes = 1 << 20

// testDataDir names the folders whose files may be larger: Go's own
// convention for fixtures, ignored by the go tool.
const testDataDir = "testdata"

// oversized returns the paths, relative to root, of the listed files larger
// than maxTrackedBytes that lie outside every testdata folder.
func oversized(root string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if inTestData(p) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, p))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() && fi.Size() > maxTrackedBytes {
			out = append(out, fmt.Sprintf("%s (%d bytes)", p, fi.Size()))
		}
	}
	return out, nil
}

func inTestData(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == testDataDir {
			return true
		}
	}
	return false
}

// TestNoLargeTrackedFiles: no tracked file is over 1 MiB outside a testdata
// folder, so a built binary or a downloaded data set never rides in the history.
func TestNoLargeTrackedFiles(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err)
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	require.NotEmpty(t, paths, "git ls-files listed nothing")
	big, err := oversized("../..", paths)
	require.NoError(t, err)
	assert.Empty(t, big, "tracked files over %d bytes outside %s/ folders: remove them (and ignore what wrote them)", maxTrackedBytes, testDataDir)
}

// TestLargeFileCheckCatchesTwoMiB: the check itself refuses a 2-MiB file
// outside testdata and allows it inside, and allows a file of exactly 1 MiB.
func TestLargeFileCheckCatchesTwoMiB(t *testing.T) {
	root := t.TempDir()
	write := func(p string, n int) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), make([]byte, n), 0o644))
	}
	write("bench-controller", 2<<20)
	write("routerproxy/classifier/testdata/corpus.jsonl", 2<<20)
	write("docs/limit.md", maxTrackedBytes)
	big, err := oversized(root, []string{"bench-controller", "routerproxy/classifier/testdata/corpus.jsonl", "docs/limit.md"})
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("bench-controller (%d bytes)", 2<<20)}, big)
}
