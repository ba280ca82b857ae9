package agentgateway_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
	"github.com/llmkube/llmkube-compile/test/reasonscan"
)

// TestEveryReasonIsDocumented keeps docs/targets/agentgateway.md complete:
// every reason this target emits is named there.
func TestEveryReasonIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/targets/agentgateway.md")
	require.NoError(t, err)
	uses, bad, err := reasonscan.Emitted(".")
	require.NoError(t, err)
	require.Empty(t, bad)
	var reasons []string
	for _, u := range uses {
		reasons = append(reasons, u.Reason)
	}
	for _, r := range (&agentgateway.Target{}).Capabilities().Rows {
		if r.Reason != "" {
			reasons = append(reasons, r.Reason)
		}
	}
	require.Greater(t, len(reasons), 15)
	for _, r := range reasons {
		if r == targets.ReasonInternalError {
			continue // a compiler bug, never an input's fault
		}
		assert.Contains(t, string(doc), "`"+r+"`", "reason %s is not documented", r)
	}
}
