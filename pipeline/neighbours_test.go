package pipeline

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

func gateway(labels string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: agentgateway, namespace: ml, labels: {" + labels + "}}\nspec: {gatewayClassName: agentgateway, listeners: [{name: http, port: 80, protocol: HTTP}]}\n"
}

// TestForeignSelectorWithoutTheGatewayWarns: a foreign policy that selects
// Gateways by label cannot be judged without the Gateway: validate says so
// (a warning naming the policy and what to give) instead of taking the
// router as checked; with the Gateway the selector is judged.
func TestForeignSelectorWithoutTheGatewayWarns(t *testing.T) {
	router, err := os.ReadFile("../testdata/agentgateway-pool-auth/input.yaml")
	require.NoError(t, err)
	// Another team's AgentgatewayPolicy that selects Gateways labelled
	// tier: shared and overrides their JWT authentication: on the router's
	// Gateway it would lift the router's Strict JWT.
	override, err := os.ReadFile("../testdata/agentgateway-pool-auth/label-override.yaml")
	require.NoError(t, err)
	labelOverride := string(override)
	run := func(foreign string) diag.List {
		in := &compiler.Inputs{}
		require.False(t, in.Decode("in.yaml", append(router, []byte("\n---\n"+foreign)...)).HasErrors())
		_, diags := Run(in, builtin.Registry(), Options{})
		return diags
	}

	diags := run(labelOverride)
	assert.False(t, diags.HasErrors(), "%v", diags.Err())
	w := diags.OfReason(ReasonNeighbourNotChecked)
	require.Len(t, w, 1, "%v", diags)
	assert.Equal(t, diag.Warning, w[0].Severity)
	assert.Equal(t, "ModelRouter/tenants", w[0].Object)
	assert.Equal(t, "spec.agentGatewayRef", w[0].Field)
	assert.Contains(t, w[0].Message, "AgentgatewayPolicy ml/shared-jwt selects Gateways by label")
	assert.Contains(t, w[0].Message, "Gateway ml/agentgateway is not among the inputs")
	assert.Contains(t, w[0].Message, "kubectl get gateway -n ml agentgateway -o yaml")

	// The Gateway given, labelled as selected: the override is found.
	diags = run(labelOverride + "---\n" + gateway("tier: shared"))
	assert.Empty(t, diags.OfReason(ReasonNeighbourNotChecked))
	require.Len(t, diags.OfReason("OverridingPolicy"), 1, "%v", diags)

	// The Gateway given, not selected: nothing to say.
	diags = run(labelOverride + "---\n" + gateway("tier: private"))
	assert.Empty(t, diags.Errors())
	assert.Empty(t, diags.OfReason(ReasonNeighbourNotChecked))

	// A policy by name needs no Gateway to be judged, nor does one that
	// would not matter if it attached.
	diags = run(`apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: timeouts, namespace: ml}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {tier: shared}}]
  strategy: {inheritance: Override}
  traffic: {timeouts: {request: 10s}}
`)
	assert.Empty(t, diags.OfReason(ReasonNeighbourNotChecked))
}
