package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// TestMCPServerRequiresJWTNamesEveryRequiredField: the hint of
// MCPServerRequiresJWT lists every field policy.auth.jwt requires, so a
// router written from it is not refused again for the next missing one.
func TestMCPServerRequiresJWTNamesEveryRequiredField(t *testing.T) {
	_, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.MCPServer = &v1.MCPServerSpec{Enabled: true, ResourceURL: "https://models.example.com/mcp"}
	})
	d, ok := vtFind(diags, "spec.mcpServer.enabled", ReasonMCPServerRequiresJWT)
	require.True(t, ok, "%v", vtKeys(diags))
	assert.Contains(t, d.Message, "set spec.policy.auth.jwt (provider, issuer, jwksURI, teamClaim)")
}
