package golden

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// docsExamples are the docs whose YAML examples are ModelRouters, each with
// the testdata input a fragment is written against and how many of its
// blocks are routers (the others, a routing-test case for example, are not
// compiled here; the count keeps a router block from being skipped
// unnoticed).
var docsExamples = []struct {
	doc, base string
	routers   int
}{
	{"docs/mcp.md", "testdata/mcp-server/input.yaml", 1},
	{"docs/classifier.md", "testdata/classification-detector/input.yaml", 1},
	{"docs/reliability.md", "testdata/minimal-router/input.yaml", 1},
	{"docs/rate-limits.md", "testdata/minimal-router/input.yaml", 2},
}

// yamlBlock is a fenced YAML block of a Markdown file.
var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// TestDocsExamplesCompile: every ModelRouter example of the docs above is
// accepted as written, so a reader who copies one is not refused. A whole
// router (kind: ModelRouter) compiles alone; a fragment (spec: only) is laid
// over the router of its base input, each top-level field of its spec
// replacing the base's (never merged into it: a field the example leaves
// out is left out), and compiles with the base's other objects.
func TestDocsExamplesCompile(t *testing.T) {
	for _, d := range docsExamples {
		t.Run(d.doc, func(t *testing.T) {
			md, err := os.ReadFile(filepath.Join("..", d.doc))
			require.NoError(t, err)
			base, err := os.ReadFile(filepath.Join("..", d.base))
			require.NoError(t, err)
			routers := 0
			for i, m := range yamlBlock.FindAllSubmatch(md, -1) {
				var block map[string]any
				if yaml.Unmarshal(m[1], &block) != nil || (block["spec"] == nil && block["kind"] != "ModelRouter") {
					continue // not a router: a list, a routing test...
				}
				routers++
				input := m[1]
				if block["kind"] == nil {
					input = overlaySpec(t, base, block["spec"])
				}
				in := &compiler.Inputs{}
				diags := in.Decode(d.doc, input)
				require.False(t, diags.HasErrors(), "%s, YAML block %d is refused as written:\n%s\n%s", d.doc, i+1, diags.Err(), input)
				require.Len(t, in.Routers, 1, "%s, YAML block %d", d.doc, i+1)
				_, diags = pipeline.Run(in, builtin.Registry(), pipeline.Options{})
				require.False(t, diags.HasErrors(), "%s, YAML block %d is refused as written:\n%s\n%s", d.doc, i+1, diags.Err(), input)
			}
			require.Equal(t, d.routers, routers, "%s: the router examples compiled", d.doc)
		})
	}
}

// overlaySpec is base (a multi-document input) with the ModelRouter's spec
// fields replaced by those of spec.
func overlaySpec(t *testing.T, base []byte, spec any) []byte {
	t.Helper()
	fields, ok := spec.(map[string]any)
	require.True(t, ok, "the example's spec is not an object")
	var out bytes.Buffer
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(base)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &obj))
		if obj == nil {
			continue
		}
		if obj["kind"] == "ModelRouter" {
			s, _ := obj["spec"].(map[string]any)
			for k, v := range fields {
				s[k] = v
			}
		}
		b, err := yaml.Marshal(obj)
		require.NoError(t, err)
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes()
}
