package aigateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
)

func routerIR(t *testing.T, name, gateway, spec string) *ir.Router {
	t.Helper()
	doc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: " + name + ", namespace: ml}\nspec:\n  gatewayRef: {name: " + gateway + "}\n  backends:\n    - {name: q, inferenceServiceRef: {name: qwen}}\n" + spec
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{DataPlane: ir.DataPlaneGateway})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	return r
}

// TestRoutersSharingAGateway: overlapping routers on one Gateway are both
// refused naming each other; disjoint ones, or ones on other Gateways, pass.
func TestRoutersSharingAGateway(t *testing.T) {
	alpha := routerIR(t, "alpha", "gw", "  defaultRoute: q\n")
	beta := routerIR(t, "beta", "gw", "  defaultRoute: q\n")
	out := New().CheckTogether([]*ir.Router{alpha, beta})
	require.Len(t, out, 2)
	require.True(t, out[0].HasErrors())
	require.True(t, out[1].HasErrors())
	assert.Equal(t, "GatewayRoutesOverlap", out[0][0].Reason)
	assert.Contains(t, out[0][0].Message, "ModelRouter ml/beta")
	assert.Contains(t, out[1][0].Message, "ModelRouter ml/alpha")

	other := routerIR(t, "gamma", "other-gw", "  defaultRoute: q\n")
	for _, d := range New().CheckTogether([]*ir.Router{alpha, other}) {
		assert.False(t, d.HasErrors(), "different Gateways do not share a host: %v", d)
	}
	a := routerIR(t, "a", "gw", "  rules:\n    - {name: one, failClosed: true, match: {models: [m1]}, route: {backends: [q]}}\n")
	b := routerIR(t, "b", "gw", "  rules:\n    - {name: two, failClosed: true, match: {models: [m2]}, route: {backends: [q]}}\n")
	for _, d := range New().CheckTogether([]*ir.Router{a, b}) {
		assert.False(t, d.HasErrors(), "disjoint models never meet: %v", d)
	}
}
