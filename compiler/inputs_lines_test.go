package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestYAMLErrorsNameTheFilesLine: a YAML error in the third document of a
// file names the file's line, not the line within its document, whatever
// the separators, comments and empty documents before it.
func TestYAMLErrorsNameTheFilesLine(t *testing.T) {
	const head = `# three documents
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3}
spec: {runtime: vllm}
---
---  # an empty document
# a comment
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama3}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
`
	for _, tc := range []struct{ name, tail, want string }{
		{"a syntax error", "  backends: [{name: a\n", "line 18:"},
		{"mapping values in a scalar", "  backends: a: b\n", "line 18:"},
		{"a key set twice", "  defaultRoute: a\n  defaultRoute: b\n", "line 19:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := (&Inputs{}).Decode("all.yaml", []byte(head+tc.tail))
			require.Len(t, diags, 1, "%v", diags.Err())
			assert.Equal(t, ReasonInvalidYAML, diags[0].Reason)
			assert.Contains(t, diags[0].Message, "document 3: ")
			assert.Contains(t, diags[0].Message, tc.want)
		})
	}
	// A one-document file: its lines are the file's.
	diags := (&Inputs{}).Decode("one.yaml", []byte("\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n"))
	require.Len(t, diags, 1)
	assert.Contains(t, diags[0].Message, "line 5:")
}

func TestDocumentStarts(t *testing.T) {
	assert.Equal(t, []int{1, 3, 7}, DocumentStarts([]byte("a: 1\n---\nb: 2\n\n---\n--- # empty\nc: 3")))
	assert.Equal(t, []int{2}, DocumentStarts([]byte("---\nc: 3\n---\n")))
	assert.Empty(t, DocumentStarts(nil))
}
