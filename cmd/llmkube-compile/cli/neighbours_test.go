package cli

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateSaysWhatItCouldNotCheck: validate given another team's
// AgentgatewayPolicy that selects Gateways by label, without the Gateway,
// accepts the router with a warning that it could not check the selector
// and what to give it; given the Gateway it finds the override.
func TestValidateSaysWhatItCouldNotCheck(t *testing.T) {
	router, err := os.ReadFile("../../../testdata/agentgateway-pool-auth/input.yaml")
	require.NoError(t, err)
	in := write(t, "router.yaml", string(router))
	policy := "../../../testdata/agentgateway-pool-auth/label-override.yaml"
	r := run(t, "", "validate", "-f", in, "-f", policy)
	assert.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "NeighbourNotChecked")
	assert.Contains(t, r.stdout+r.stderr, "Give the Gateway beside the router")

	gateway := write(t, "gateway.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: agentgateway, namespace: ml, labels: {tier: shared}}\nspec: {gatewayClassName: agentgateway, listeners: [{name: http, port: 80, protocol: HTTP}]}\n")
	r = run(t, "", "validate", "-f", in, "-f", policy, "-f", gateway)
	assert.NotEqual(t, ExitOK, r.code)
	assert.Contains(t, r.stdout+r.stderr, "OverridingPolicy")
	assert.NotContains(t, r.stdout+r.stderr, "NeighbourNotChecked")
	assert.NotContains(t, r.stdout+r.stderr, "rechecked", "validate rechecks nothing")
}
