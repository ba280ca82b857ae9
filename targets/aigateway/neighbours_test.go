package aigateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
)

// CheckForeign (the controller's and the CLI's one check): a router with
// policy.auth beside a route it does not own, on a host its hostnames
// share, is refused naming the route; its own routes, routes on another
// Gateway or on disjoint hostnames, and routers without auth are not.
func TestCheckForeignRoutes(t *testing.T) {
	compile := func(hosts, auth string) (*ir.Router, []*unstructured.Unstructured) {
		in := &compiler.Inputs{}
		require.False(t, in.Decode("in.yaml", []byte(isvc+hostRouter("alpha", hosts, auth))).HasErrors())
		r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{DataPlane: ir.DataPlaneGateway})
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		res, tdiags := aigateway.New().Compile(r)
		require.False(t, tdiags.HasErrors(), "%v", tdiags.Err())
		return r, res.Objects
	}
	obj := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(s), &u.Object))
		return u
	}
	aiRoute := func(name, gw, hosts string) *unstructured.Unstructured {
		return obj(`apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIGatewayRoute
metadata: {name: ` + name + `, namespace: other}
spec:
  parentRefs: [{name: ` + gw + `, namespace: envoy-gateway-system}]
  ` + hosts + `
  rules: [{backendRefs: [{name: x}]}]`)
	}
	httpRoute := obj(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: envoy-gateway-system}
spec:
  parentRefs: [{name: ai-gateway}]
  rules: [{backendRefs: [{name: web, port: 80}]}]`)
	jwt := jwtAuth(issuerA, "")
	for _, c := range []struct {
		name, hosts, auth string
		foreign           []*unstructured.Unstructured
		want              string // the route named, "" for no conflict
	}{
		{"foreign AIGatewayRoute", "", jwt, []*unstructured.Unstructured{aiRoute("chatbot", "ai-gateway", "")}, "AIGatewayRoute other/chatbot"},
		{"its generated HTTPRoute is named once", "", jwt, []*unstructured.Unstructured{aiRoute("chatbot", "ai-gateway", ""), obj("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: chatbot, namespace: other}\nspec: {parentRefs: [{name: ai-gateway, namespace: envoy-gateway-system}]}")}, "AIGatewayRoute other/chatbot"},
		{"foreign HTTPRoute", "", jwt, []*unstructured.Unstructured{httpRoute}, "HTTPRoute envoy-gateway-system/web"},
		{"their hostnames within ours", `, hostnames: ["*.example.com"]`, jwt, []*unstructured.Unstructured{aiRoute("chatbot", "ai-gateway", "hostnames: [chat.example.com]")}, "AIGatewayRoute other/chatbot"},
		{"ours, any host of theirs", `, hostnames: [models.example.com]`, jwt, []*unstructured.Unstructured{httpRoute}, "HTTPRoute envoy-gateway-system/web"},
		{"disjoint hostnames", `, hostnames: [models.example.com]`, jwt, []*unstructured.Unstructured{aiRoute("chatbot", "ai-gateway", "hostnames: [chat.example.com]")}, ""},
		{"another Gateway", "", jwt, []*unstructured.Unstructured{aiRoute("chatbot", "other-gateway", "")}, ""},
		{"no auth", "", "", []*unstructured.Unstructured{aiRoute("chatbot", "ai-gateway", "")}, ""},
	} {
		r, own := compile(c.hosts, c.auth)
		// The router's own AIGatewayRoutes are in the cluster too.
		reason, msg, err := aigateway.New().CheckForeign(context.Background(), targets.MemoryReader(append(own, c.foreign...)), r, own)
		require.NoError(t, err, c.name)
		if c.want == "" {
			assert.Empty(t, reason, "%s: %s", c.name, msg)
			continue
		}
		assert.Equal(t, aigateway.ReasonGatewaySharedWithAuth, reason, c.name)
		assert.Contains(t, msg, c.want, c.name)
		assert.LessOrEqual(t, strings.Count(msg, "chatbot"), 1, "%s: %s", c.name, msg)
	}
}
