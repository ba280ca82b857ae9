package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// proxySettings set the router-proxy's own settings, which only the Proxy
// plane reads.
const proxySettings = `  backends:
    - name: a
      inferenceServiceRef: {name: q}
      resolution: endpoint
      balancing: {mode: LoadAware}
      modelInfo: {contextLength: 8192}
  defaultRoute: a
  endpoint: {type: NodePort}
  proxy: {replicas: 2, responseHeaderTimeout: 30s}
`

// routerHead starts a ModelRouter document, up to its spec's fields.
const routerHead = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
`

// modelRouting starts a router on AgentGateway's Model routing, up to its
// backends.
const modelRouting = routerHead + `  dataPlane: AgentGateway
  agentGatewayRef: {name: gw, routing: Model, sectionName: http}
  backends:
`

// plan compiles one router through the pipeline (so the planes' field
// tables apply).
func plan(t *testing.T, doc string) *pipeline.Planned {
	t.Helper()
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	p, err := pipeline.Plan(in.Routers[0], in, builtin.Registry(), pipeline.Options{}, nil)
	require.NoError(t, err)
	return p
}

// planeWarnings compiles one valid router and returns its warnings by field path.
func planeWarnings(t *testing.T, doc string) map[string]string {
	t.Helper()
	p := plan(t, doc)
	require.False(t, p.Diags.HasErrors(), "%v", p.Diags.Err())
	return p.Diags.Warnings().ReasonsByField()
}

func TestProxyOnlySettingsWarnOnGatewayPlanes(t *testing.T) {
	gw := planeWarnings(t, routerHead+`  dataPlane: Gateway
  gatewayRef: {name: gw}
`+proxySettings)
	for _, f := range []string{"spec.proxy.replicas", "spec.endpoint", "spec.backends[0].balancing", "spec.backends[0].resolution", "spec.backends[0].modelInfo"} {
		assert.Equal(t, "FieldIgnored", gw[f], f)
	}
	assert.NotContains(t, gw, "spec.proxy.responseHeaderTimeout", "the Gateway plane reads the proxy timeouts")

	ag := planeWarnings(t, modelRouting+`    - name: a
      inferenceServiceRef: {name: q}
  proxy: {responseHeaderTimeout: 30s}
`)
	assert.Equal(t, "FieldIgnored", ag["spec.proxy.responseHeaderTimeout"])
	assert.NotContains(t, ag, "spec.defaultRoute", "Model routing needs no rules or default route")
}

// TestProxyPlaneIgnoresNothing: the Proxy plane reads every field, so the
// same settings warn nothing there.
func TestProxyPlaneIgnoresNothing(t *testing.T) {
	w := planeWarnings(t, routerHead+proxySettings)
	for f, reason := range w {
		assert.NotEqual(t, "FieldIgnored", reason, f)
	}
}

// TestModelRoutingAdviceIsTrue: an external backend is refused by both
// routing modes of AgentGateway, so its refusal in Model routing points at
// the planes that route to providers, never at routing: InferencePool.
func TestModelRoutingAdviceIsTrue(t *testing.T) {
	p := plan(t, modelRouting+`    - name: gpt
      external: {provider: openai, model: gpt-5}
`)
	var msg string
	for _, d := range p.Diags.Errors() {
		if d.Field == "spec.backends[0].external" {
			msg = d.Message
		}
	}
	assert.Contains(t, msg, "use the Proxy or Gateway data plane")
	assert.NotContains(t, msg, "routing: InferencePool")
}

// TestLatencySLOIsIgnoredOnEveryGatewayPlane: latencySLOMs means one thing
// on both gateway planes: the promotion on latency is dropped with a
// FieldIgnored warning, failover still follows errors (Gateway) or
// readiness (AgentGateway), and the router compiles.
func TestLatencySLOIsIgnoredOnEveryGatewayPlane(t *testing.T) {
	rule := `  rules:
    - name: fast
      match: {latencySLOMs: 800}
      route: {backends: [a, b]}
`
	backends := `    - name: a
      inferenceServiceRef: {name: q}
      endpointPicker: {service: {name: epp, port: 9002}}
    - name: b
      inferenceServiceRef: {name: q}
      endpointPicker: {service: {name: epp, port: 9002}}
`
	gw := planeWarnings(t, routerHead+`  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
`+backends+rule)
	ag := planeWarnings(t, routerHead+`  dataPlane: AgentGateway
  agentGatewayRef: {name: gw}
  backends:
`+backends+rule)
	for _, w := range []map[string]string{gw, ag} {
		assert.Equal(t, "FieldIgnored", w["spec.rules[0].match.latencySLOMs"])
	}
}
