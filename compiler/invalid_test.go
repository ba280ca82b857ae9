package compiler_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// invalidCase is one testdata/invalid file and the expectations its header
// comments state:
//
//	# expect: FIELD.PATH Reason   (one or more)
//	# data-plane: Gateway         (optional --data-plane override)
type invalidCase struct {
	file      string
	expect    []string // "path Reason"
	dataPlane ir.DataPlane
}

func loadInvalidCases(t *testing.T) []invalidCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "invalid", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no testdata/invalid cases found")
	var cases []invalidCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		c := invalidCase{file: f}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "# expect:"); ok {
				fields := strings.Fields(v)
				require.Len(t, fields, 2, "%s: malformed expectation %q; want \"# expect: FIELD.PATH Reason\"", f, line)
				c.expect = append(c.expect, fields[0]+" "+fields[1])
			}
			if v, ok := strings.CutPrefix(line, "# data-plane:"); ok {
				c.dataPlane = ir.DataPlane(strings.TrimSpace(v))
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// TestInvalidCases compiles every testdata/invalid input through the pipeline and requires exactly
// the errors its header expects: each expected (path, reason) must be
// reported, and nothing else may be wrong, so each file stays a complete input
// that is valid but for what it tests.
func TestInvalidCases(t *testing.T) {
	for _, c := range loadInvalidCases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(c.file), ".yaml"), func(t *testing.T) {
			require.NotEmpty(t, c.expect, "the file states no \"# expect: FIELD.PATH Reason\" line")
			data, err := os.ReadFile(c.file)
			require.NoError(t, err)
			inputs := &compiler.Inputs{}
			decodeDiags := inputs.Decode(c.file, data)
			require.False(t, decodeDiags.HasErrors(), "decode: %v", decodeDiags.Err())
			require.NotEmpty(t, inputs.Routers)

			// The whole pipeline: the frontend's checks and the data plane's own
			// refusals; a case of several routers (checks across routers) runs
			// them all, every router refused.
			opts := pipeline.Options{Compile: compiler.Options{DataPlane: c.dataPlane}}
			objs, diags := pipeline.Run(inputs, builtin.Registry(), opts)
			if len(inputs.Routers) > 1 {
				for _, src := range inputs.Routers {
					assert.Contains(t, diags.Errors().Err().Error(), "ModelRouter/"+src.Router.Name+":", "router %s is not refused", src.Router.Name)
				}
			}
			assert.Nil(t, objs, "an input with errors must not compile")

			var got []string
			for _, d := range diags.Errors() {
				got = append(got, d.Field+" "+d.Reason)
				assert.NotEmpty(t, d.Message, "%s %s has no message", d.Field, d.Reason)
			}
			want := append([]string(nil), c.expect...)
			sort.Strings(got)
			sort.Strings(want)
			for _, w := range want {
				assert.Contains(t, got, w, "expected error not reported")
			}
			assert.Equal(t, want, slices.Compact(got), "errors differ from the file's expectations:\n%v", diags.Errors().Err())
		})
	}
}
