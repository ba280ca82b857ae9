package agentgateway

import (
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
	"github.com/llmkube/llmkube-compile/targets"
)

// modelRouting is agentGatewayRef.routing: Model; InferencePool routing is
// every other spec (the default).
var modelRouting = &planes.FieldValue{Path: "spec.agentGatewayRef.routing", Value: "Model"}

// Fields implements targets.Fields: what the AgentGateway plane does not
// read, the proxy's timeouts included.
func (*Target) Fields() []planes.FieldRule {
	return append(targets.ProxyWorkloadFields(ir.DataPlaneAgentGateway, true),
		planes.FieldRule{Path: "spec.backends[*].balancing",
			Why: "balancing applies to the Proxy data plane only; on AgentGateway the InferencePool's endpoint picker places requests on pods"},
		planes.FieldRule{Path: "spec.backends[*].modelInfo",
			Why: "modelInfo is published on the router-proxy's /v1/models and applies to the Proxy data plane only; AgentGateway ignores it"},
		planes.FieldRule{Path: "spec.backends[*].resolution", Value: "endpoint", Unless: modelRouting,
			Why: "resolution: endpoint is how the router-proxy addresses pods; an InferencePool always addresses pods through its endpoint picker, so it is ignored"},
		planes.FieldRule{Path: "spec.backends[*].timeout",
			Why: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route (an HTTPRoute timeout would also cut off streaming responses), so it is ignored"},
		planes.FieldRule{Path: "spec.backends[*].costPerMillionTokens",
			Why: "costPerMillionTokens feeds the router-proxy's budgets and audit log, which AgentGateway does not run; it is ignored"},
		planes.FieldRule{Path: "spec.rules[*].match.latencySLOMs",
			Why: "latencySLOMs promotes a fallback from the router-proxy's latency measurements; on AgentGateway failover follows readiness only, so it is ignored"},
		planes.FieldRule{Path: "spec.rules[*].timeout",
			Why: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route, so it is ignored"},
		planes.FieldRule{Path: "spec.rules[*].route.poolActivation", Value: "IfIdle",
			Why: "poolActivation steers the router-proxy's ModelPool swaps, which AgentGateway does not perform; it is ignored"},
	)
}
