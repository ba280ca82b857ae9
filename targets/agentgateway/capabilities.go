package agentgateway

import (
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// Reasons of the AgentGateway plane's rows.
const (
	ReasonAgentGatewayRefRequired               = "AgentGatewayRefRequired"
	ReasonUnsupportedOnAgentGateway             = "UnsupportedOnAgentGateway"
	ReasonUnsupportedInModelRouting             = "UnsupportedInModelRouting"
	ReasonPoolActivationUnsupported             = "PoolActivationUnsupported"
	ReasonMessagesAPIUnsupportedOnAgentGateway  = "MessagesAPIUnsupportedOnAgentGateway"
	ReasonResponsesAPIUnsupportedOnAgentGateway = "ResponsesAPIUnsupportedOnAgentGateway"
	ReasonRateLimitsUnsupportedOnAgentGateway   = "RateLimitsUnsupportedOnAgentGateway"
)

// Reasons the AgentGateway emitter gives on top of its rows' (Table.Emits):
// what the fields alone do not decide (a combination, a limit, readiness).
const (
	// ReasonAllowlistNeedsServingBackend: a team's allowlist names another
	// backend of a rule but not the one the rule is served by (its first
	// ready one), so the team is refused there.
	ReasonAllowlistNeedsServingBackend        = "AllowlistNeedsServingBackend"
	ReasonDuplicateModelID                    = "DuplicateModelID"
	ReasonEndpointPickerRequired              = "EndpointPickerRequired"
	ReasonModelIDNotExpressible               = "ModelIDNotExpressible"
	ReasonNoReadyBackend                      = "NoReadyBackend"
	ReasonNoRoute                             = "NoRoute"
	ReasonPickerSharedAcrossInferenceServices = "PickerSharedAcrossInferenceServices"
	ReasonRouteLimitExceeded                  = "RouteLimitExceeded"
	ReasonRoutedToFallback                    = "RoutedToFallback"
	ReasonRuleOrderNotExpressible             = "RuleOrderNotExpressible"
	ReasonVerifiedHeaderMatchUnsupported      = "VerifiedHeaderMatchUnsupported"
)

// modelRouting is agentGatewayRef.routing: Model; InferencePool routing is
// every other spec (the default).
var modelRouting = &capability.FieldValue{Path: "spec.agentGatewayRef.routing", Value: "Model"}

// inModelRouting refuses what agentgateway's model router cannot express.
func inModelRouting(path, value, what, instead string) capability.Row {
	return capability.Row{Path: path, Value: value, When: modelRouting, Verdict: capability.Refused, Reason: ReasonUnsupportedInModelRouting,
		Message: "agentGatewayRef.routing Model publishes one model per backend behind a catch-all route and cannot express " + what + "; remove it or " + instead}
}

// auditRefused refuses a field of the audit log, which the router-proxy
// writes: dropping it would lose records the spec asked for.
func auditRefused(field, except, value string) capability.Row {
	return capability.Row{Path: "spec.policy.auditLog." + field, Except: except, Value: value, Verdict: capability.Refused, Reason: ReasonUnsupportedOnAgentGateway,
		Message: "the audit log is written by the router-proxy, which AgentGateway does not run; configure agentgateway's access log instead and remove auditLog." + field + ", or use the Proxy data plane"}
}

// AgentGatewayOnRateLimit is what the AgentGateway plane does with a
// provider's 429: the generated objects set no retry and no failover on an
// answer's status (failover follows readiness only), so agentgateway
// relays it.
const AgentGatewayOnRateLimit = "the generated objects set no retry or failover on an answer's status (failover follows readiness only), so a provider's 429 reaches the client as the provider sent it"

// Capabilities implements targets.Target: what the AgentGateway plane
// ignores, refuses and requires of the spec, the proxy's timeouts included.
func (*Target) Capabilities() capability.Table {
	const pool = "use routing: InferencePool"
	rows := append(targets.ProxyWorkloadFields(ir.DataPlaneAgentGateway, true), targets.ProxyOnlyRows(ir.DataPlaneAgentGateway)...)
	rows = append(rows, targets.UpstreamQuotaRows(ir.DataPlaneAgentGateway, AgentGatewayOnRateLimit)...)
	return capability.Table{Rows: append(rows,
		capability.Row{Path: "spec.agentGatewayRef", Verdict: capability.Required, Reason: ReasonAgentGatewayRefRequired,
			Message: "dataPlane AgentGateway attaches the router to a pre-installed agentgateway Gateway; set spec.agentGatewayRef.name (and namespace) to that Gateway"},
		targets.GatewayRefRow(ir.DataPlaneAgentGateway),
		capability.Row{Path: "spec.rules[*].route.strategy", Except: wellknown.StrategyPrimaryFallback, Verdict: capability.Refused, Reason: ReasonUnsupportedOnAgentGateway,
			Message: "dataPlane AgentGateway compiles only strategy primary-fallback, not {value}; use primary-fallback or another data plane"},
		inModelRouting("spec.rules", "", "rules", pool),
		inModelRouting("spec.defaultRoute", "", "a defaultRoute", pool),
		// InferencePool routing selects in-cluster pods and refuses them too
		// (the emitter, UnsupportedOnAgentGateway).
		inModelRouting("spec.backends[*].external", "", "external backends", "use the Proxy or Gateway data plane, which route to external providers"),
		inModelRouting("spec.backends[*].resolution", "endpoint", "resolution: endpoint", pool),
		inModelRouting("spec.backends[*].endpointPicker", "", "per-backend endpoint pickers", pool),
		capability.Row{Path: "spec.backends[*].balancing", Verdict: capability.Ignored,
			Message: "balancing applies to the Proxy data plane only; on AgentGateway the InferencePool's endpoint picker places requests on pods"},
		capability.Row{Path: "spec.backends[*].modelInfo", Verdict: capability.Ignored,
			Message: "modelInfo is published on the router-proxy's /v1/models and applies to the Proxy data plane only; AgentGateway ignores it"},
		capability.Row{Path: "spec.backends[*].resolution", Value: "endpoint", Unless: modelRouting, Verdict: capability.Ignored,
			Message: "resolution: endpoint is how the router-proxy addresses pods; an InferencePool always addresses pods through its endpoint picker, so it is ignored"},
		capability.Row{Path: "spec.backends[*].timeout", Verdict: capability.Ignored,
			Message: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route (an HTTPRoute timeout would also cut off streaming responses), so it is ignored"},
		capability.Row{Path: "spec.backends[*].healthCheck", Verdict: capability.Ignored,
			Message: "healthCheck configures the router-proxy's probe of the backend; agentgateway does not probe backends (failover follows the InferenceService's readiness), so it is ignored"},
		capability.Row{Path: "spec.backends[*].costPerMillionTokens", Verdict: capability.Ignored,
			Message: "costPerMillionTokens feeds the router-proxy's budgets and audit log, which AgentGateway does not run; it is ignored"},
		capability.Row{Path: "spec.rules[*].match.latencySLOMs", Verdict: capability.Ignored,
			Message: "latencySLOMs promotes a fallback from the router-proxy's latency measurements; on AgentGateway failover follows readiness only, so it is ignored"},
		capability.Row{Path: "spec.rules[*].timeout", Verdict: capability.Ignored,
			Message: "timeout bounds the router-proxy's wait for response headers; agentgateway has no such bound on a route, so it is ignored"},
		capability.Row{Path: "spec.rules[*].route.poolActivation", Value: wellknown.PoolActivationIfIdle, Verdict: capability.Ignored,
			Message: "poolActivation steers the router-proxy's ModelPool swaps, which AgentGateway does not perform; it is ignored"},
		auditRefused("sink", "stdout", ""),
		auditRefused("includeRequestBody", "", "true"),
		auditRefused("callerHeader", "", ""),
		auditRefused("logClientAddress", "", "true"),
		auditRefused("trustedProxyCIDRs", "", ""),
		// The emitted AgentgatewayModels declare the Completions format
		// only (customFormats: what every LLMKube runtime speaks), so
		// agentgateway has no Messages or Responses route to the router's
		// models; a request in either API is not served by its rules.
		capability.Row{Feature: capability.MessagesAPI, Verdict: capability.Refused, Reason: ReasonMessagesAPIUnsupportedOnAgentGateway,
			Message: "dataPlane AgentGateway cannot serve an Anthropic Messages request (POST /v1/messages) under the router's rules: in routing Model the router's models are agentgateway Custom providers declaring the Completions format only (the chat completions LLMKube runtimes speak), so agentgateway has no Messages route to them; in routing InferencePool the body reaches the runtime untranslated; and the content classifier that keeps sensitive tool results local runs only in the router-proxy. Use dataPlane Proxy, which translates Messages for every backend kind"},
		capability.Row{Feature: capability.ResponsesAPI, Verdict: capability.Refused, Reason: ReasonResponsesAPIUnsupportedOnAgentGateway,
			Message: "dataPlane AgentGateway cannot serve an OpenAI Responses request (POST /v1/responses) under the router's rules: in routing Model the router's models are agentgateway Custom providers declaring the Completions format only (the chat completions LLMKube runtimes speak), so agentgateway has no Responses route to them; in routing InferencePool the body reaches the runtime untranslated. Use dataPlane Proxy, which translates Responses to chat completions for every backend kind"},
		// agentgateway's localRateLimit is a token bucket per proxy replica
		// (N per replica); remoteRateLimit needs an Envoy-protocol
		// rate-limit service this plane does not have among its
		// prerequisites (its budgets are refused for the same reason), and
		// that service counts fixed windows (2N around a boundary).
		capability.Row{Path: "spec.policy.rateLimits", Verdict: capability.Refused, Reason: ReasonRateLimitsUnsupportedOnAgentGateway,
			Message: "dataPlane AgentGateway cannot keep policy.rateLimits' meaning: its localRateLimit counts per agentgateway replica (N per replica, not N), and remoteRateLimit needs a rate-limit service outside this plane's prerequisites, which counts fixed minutes (2N around each boundary where the router allows N in any 60 seconds); remove rateLimits, or use dataPlane Proxy"},
		apiKeysRow(),
		capability.Row{Feature: capability.SwapLeases, Verdict: capability.Ignored, Reason: ReasonPoolActivationUnsupported,
			Message: "nothing activates a ModelPool member on AgentGateway, so while it is not resident it counts as not ready"},
	), Emits: []string{
		ReasonAllowlistNeedsServingBackend,
		ReasonDuplicateModelID,
		ReasonEndpointPickerRequired,
		ReasonModelIDNotExpressible,
		ReasonNoReadyBackend,
		ReasonNoRoute,
		ReasonPickerSharedAcrossInferenceServices,
		ReasonRouteLimitExceeded,
		ReasonRoutedToFallback,
		ReasonRuleOrderNotExpressible,
		ReasonVerifiedHeaderMatchUnsupported,
		ReasonAgentGatewayRefRequired, // a nil reference that passed the frontend: a bug
		ReasonUnsupportedOnAgentGateway,
		targets.ReasonInternalError,
		targets.ReasonGatewayRoutesOverlap,
		targets.ReasonUpstreamModelAssumed,
	}}
}
