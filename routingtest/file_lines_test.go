package routingtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestYAMLErrorsNameTheFilesLine: a YAML error in the second document of a
// test file names the file's line, not the line within the document.
func TestYAMLErrorsNameTheFilesLine(t *testing.T) {
	_, diags := Decode("t.yaml", []byte(`apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: a}
spec:
  router: chat
  cases: [{name: c, expect: {status: 200}}]
---
apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: b
`))
	var msgs []string
	for _, d := range diags {
		if d.Reason == "TestFileInvalid" {
			assert.Equal(t, "document 2", d.Object)
			msgs = append(msgs, d.Message)
		}
	}
	require.Len(t, msgs, 1, "%v", diags.Err())
	assert.Contains(t, msgs[0], "line 10:", "the file's line")
}
