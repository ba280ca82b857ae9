package agentgateway

import (
	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// poolRouting reports whether the router routes through InferencePools.
func poolRouting(s *v1.ModelRouterSpec) bool {
	return s.AgentGatewayRef == nil || s.AgentGatewayRef.Routing != v1.RoutingModel
}

// Fields implements targets.Fields: what the AgentGateway plane does not
// read, the proxy's timeouts included.
func (*Target) Fields() []compiler.FieldRule {
	return append(targets.ProxyWorkloadFields(ir.DataPlaneAgentGateway, true),
		compiler.FieldRule{Path: "spec.backends[*].balancing",
			Why: "balancing applies to the Proxy data plane only; on AgentGateway the InferencePool's endpoint picker places requests on pods"},
		compiler.FieldRule{Path: "spec.backends[*].modelInfo",
			Why: "modelInfo is published on the router-proxy's /v1/models and applies to the Proxy data plane only; AgentGateway ignores it"},
		compiler.FieldRule{Path: "spec.backends[*].resolution", Value: "endpoint", When: poolRouting,
			Why: "resolution: endpoint is how the router-proxy addresses pods; an InferencePool always addresses pods through its endpoint picker, so it is ignored"},
		compiler.FieldRule{Path: "spec.backends[*].timeout",
			Why: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route (an HTTPRoute timeout would also cut off streaming responses), so it is ignored"},
		compiler.FieldRule{Path: "spec.backends[*].costPerMillionTokens",
			Why: "costPerMillionTokens feeds the router-proxy's budgets and audit log, which AgentGateway does not run; it is ignored"},
		compiler.FieldRule{Path: "spec.rules[*].match.latencySLOMs",
			Why: "latencySLOMs promotes a fallback from the router-proxy's latency measurements; on AgentGateway failover follows readiness only, so it is ignored"},
		compiler.FieldRule{Path: "spec.rules[*].timeout",
			Why: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route, so it is ignored"},
		compiler.FieldRule{Path: "spec.rules[*].route.poolActivation", Value: "IfIdle",
			Why: "poolActivation steers the router-proxy's ModelPool swaps, which AgentGateway does not perform; it is ignored"},
	)
}
