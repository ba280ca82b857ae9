package agentgateway

import (
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
	"github.com/llmkube/llmkube-compile/targets"
)

// modelRouting is agentGatewayRef.routing: Model; InferencePool routing is
// every other spec (the default).
var modelRouting = &planes.FieldValue{Path: "spec.agentGatewayRef.routing", Value: "Model"}

// Capabilities implements targets.Target: what the AgentGateway plane
// ignores, refuses and requires of the spec, the proxy's timeouts included.
func (*Target) Capabilities() planes.Table {
	return planes.Table{Rows: append(targets.ProxyWorkloadFields(ir.DataPlaneAgentGateway, true),
		planes.Capability{Path: "spec.backends[*].balancing", Verdict: planes.Ignored,
			Message: "balancing applies to the Proxy data plane only; on AgentGateway the InferencePool's endpoint picker places requests on pods"},
		planes.Capability{Path: "spec.backends[*].modelInfo", Verdict: planes.Ignored,
			Message: "modelInfo is published on the router-proxy's /v1/models and applies to the Proxy data plane only; AgentGateway ignores it"},
		planes.Capability{Path: "spec.backends[*].resolution", Value: "endpoint", Unless: modelRouting, Verdict: planes.Ignored,
			Message: "resolution: endpoint is how the router-proxy addresses pods; an InferencePool always addresses pods through its endpoint picker, so it is ignored"},
		planes.Capability{Path: "spec.backends[*].timeout", Verdict: planes.Ignored,
			Message: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route (an HTTPRoute timeout would also cut off streaming responses), so it is ignored"},
		planes.Capability{Path: "spec.backends[*].costPerMillionTokens", Verdict: planes.Ignored,
			Message: "costPerMillionTokens feeds the router-proxy's budgets and audit log, which AgentGateway does not run; it is ignored"},
		planes.Capability{Path: "spec.rules[*].match.latencySLOMs", Verdict: planes.Ignored,
			Message: "latencySLOMs promotes a fallback from the router-proxy's latency measurements; on AgentGateway failover follows readiness only, so it is ignored"},
		planes.Capability{Path: "spec.rules[*].timeout", Verdict: planes.Ignored,
			Message: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route, so it is ignored"},
		planes.Capability{Path: "spec.rules[*].route.poolActivation", Value: "IfIdle", Verdict: planes.Ignored,
			Message: "poolActivation steers the router-proxy's ModelPool swaps, which AgentGateway does not perform; it is ignored"},
	)}
}
