package aigateway

import (
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// Reasons of the Gateway plane's rows.
const (
	ReasonGatewayRefRequired               = "GatewayRefRequired"
	ReasonUnsupportedOnGateway             = "UnsupportedOnGateway"
	ReasonModelPoolUnsupportedOnGateway    = "ModelPoolUnsupportedOnGateway"
	ReasonAuditFieldUnsupportedOnGateway   = "AuditFieldUnsupportedOnGateway"
	ReasonAuditSinkUnsupportedOnGateway    = "AuditSinkUnsupportedOnGateway"
	ReasonMessagesAPIUnsupportedOnGateway  = "MessagesAPIUnsupportedOnGateway"
	ReasonResponsesAPIUnsupportedOnGateway = "ResponsesAPIUnsupportedOnGateway"
	ReasonRateLimitsUnsupportedOnGateway   = "RateLimitsUnsupportedOnGateway"
)

// Reasons the Gateway emitter gives on top of its rows' (Table.Emits): what
// the fields alone do not decide (a combination, a limit, an encoding).
const (
	ReasonActiveHealthCheckNotApplied       = "ActiveHealthCheckNotApplied"
	ReasonActiveHealthCheckSkipped          = "ActiveHealthCheckSkipped"
	ReasonAllowlistGlobUnsupportedOnGateway = "AllowlistGlobUnsupportedOnGateway"
	// ReasonAllowlistNeedsEveryBackend: a team may use some backends of a
	// rule but not all; Envoy may fail over to any, so the team is refused
	// there (the router-proxy serves it by the ones it may use).
	ReasonAllowlistNeedsEveryBackend   = "AllowlistNeedsEveryBackend"
	ReasonBackendTimeoutsDiffer        = "BackendTimeoutsDiffer"
	ReasonBudgetLimitNotExpressible    = "BudgetLimitNotExpressible"
	ReasonBudgetLimitTooLarge          = "BudgetLimitTooLarge"
	ReasonBudgetNeverApplies           = "BudgetNeverApplies"
	ReasonBudgetSpansTrafficPolicies   = "BudgetSpansTrafficPolicies"
	ReasonBudgetWindowFixed            = "BudgetWindowFixed"
	ReasonBudgetWindowUnsupported      = "BudgetWindowUnsupported"
	ReasonCredentialsLayoutUnsupported = "CredentialsLayoutUnsupported"
	ReasonCredentialsRequired          = "CredentialsRequired"
	ReasonDurationNotExpressible       = "DurationNotExpressible"
	ReasonGatewaySecretKey             = "GatewaySecretKey"
	// ReasonGatewaySharedWithAuth: a router with policy.auth shares its
	// Gateway with another ModelRouter (refused, Together) or with routes
	// not its own (the Degraded reason of its status).
	ReasonGatewaySharedWithAuth        = "GatewaySharedWithAuth"
	ReasonHeaderValueNotExpressible    = "HeaderValueNotExpressible"
	ReasonIPBackendFailover            = "IPBackendFailover"
	ReasonMatchNotExpressible          = "MatchNotExpressible"
	ReasonModelGlobUnsupported         = "ModelGlobUnsupported"
	ReasonNoFallThroughOnGateway       = "NoFallThroughOnGateway"
	ReasonProviderHostUnknown          = "ProviderHostUnknown"
	ReasonRuleNeverMatches             = "RuleNeverMatches"
	ReasonRuleOrderNotPreserved        = "RuleOrderNotPreserved"
	ReasonStreamIdleBelowHeaderTimeout = "StreamIdleBelowHeaderTimeout"
	ReasonTooManyBackends              = "TooManyBackends"
	ReasonTooManyHeaderConditions      = "TooManyHeaderConditions"
	ReasonTooManyRules                 = "TooManyRules"
	ReasonURLPathUnsupported           = "URLPathUnsupported"
)

// GatewayOnRateLimit is what the Gateway plane does with a provider's 429:
// the BackendTrafficPolicy's retry (policy.go) triggers on 5xx, reset,
// connect-failure and refused-stream only, and Envoy's outlier detection
// counts 5xx and local-origin failures only.
const GatewayOnRateLimit = "Envoy retries another backend only on a 5xx, a reset, a connect failure or a refused stream (the BackendTrafficPolicy's retryOn), so a provider's 429 reaches the client as the provider sent it"

// Capabilities implements targets.Target: what the Gateway plane ignores,
// refuses and requires of the spec. The proxy's timeouts are read (they
// become Envoy's traffic policy).
func (*Target) Capabilities() capability.Table {
	rows := append(targets.ProxyWorkloadFields(ir.DataPlaneGateway, false), targets.ProxyOnlyRows(ir.DataPlaneGateway)...)
	rows = append(rows, targets.UpstreamQuotaRows(ir.DataPlaneGateway, GatewayOnRateLimit)...)
	return capability.Table{Rows: append(rows,
		capability.Row{Path: "spec.gatewayRef", Verdict: capability.Required, Reason: ReasonGatewayRefRequired,
			Message: "dataPlane Gateway attaches the router to a pre-installed Envoy AI Gateway; set spec.gatewayRef.name (and namespace) to that Gateway"},
		targets.AgentGatewayRefRow(ir.DataPlaneGateway),
		targets.EndpointPickerRow(ir.DataPlaneGateway),
		capability.Row{Path: "spec.rules[*].route.strategy", Value: "shadow", Verdict: capability.Refused, Reason: ReasonUnsupportedOnGateway,
			Message: "dataPlane Gateway cannot mirror requests, so strategy shadow is refused; use primary-fallback or weighted, or the Proxy data plane"},
		capability.Row{Path: "spec.backends[*].balancing", Verdict: capability.Ignored,
			Message: "balancing applies to the Proxy data plane only and is ignored on Gateway"},
		capability.Row{Path: "spec.backends[*].resolution", Value: "endpoint", Verdict: capability.Ignored,
			Message: "resolution: endpoint applies to the Proxy data plane only; the gateway addresses the InferenceService's Service"},
		capability.Row{Path: "spec.backends[*].modelInfo", Verdict: capability.Ignored,
			Message: "modelInfo is published by the router-proxy's /v1/models and is ignored on Gateway"},
		// As on AgentGateway: failover still follows errors and health, only
		// the promotion on latency is lost, and refusing the router would
		// lose all of it.
		capability.Row{Path: "spec.rules[*].match.latencySLOMs", Verdict: capability.Ignored,
			Message: "latencySLOMs promotes a fallback from the router-proxy's first-token latency measurements; the gateway measures no first-token latency and cannot reorder priorities at run time, so failover follows errors and health only and latencySLOMs is ignored"},
		// The gateway writes no router audit log: what only such a log
		// holds is refused (the Envoy access log is configured on the
		// EnvoyProxy).
		capability.Row{Path: "spec.policy.auditLog.sink", Except: "stdout", Verdict: capability.Refused, Reason: ReasonAuditSinkUnsupportedOnGateway,
			Message: "the gateway writes no router audit log, so sink {value} cannot be honoured; request records come from the Envoy access log configured on the EnvoyProxy. Remove sink or use the Proxy data plane"},
		capability.Row{Path: "spec.policy.auditLog.includeRequestBody", Value: "true", Verdict: capability.Refused, Reason: ReasonAuditFieldUnsupportedOnGateway,
			Message: "the gateway cannot add request bodies to audit entries; remove includeRequestBody or use the Proxy data plane"},
		capability.Row{Path: "spec.policy.auditLog.callerHeader", Verdict: capability.Refused, Reason: ReasonAuditFieldUnsupportedOnGateway,
			Message: "the gateway cannot add the {value} header to audit entries; remove callerHeader or use the Proxy data plane"},
		capability.Row{Path: "spec.policy.auditLog.logClientAddress", Value: "true", Verdict: capability.Refused, Reason: ReasonAuditFieldUnsupportedOnGateway,
			Message: "the gateway cannot add the client address to audit entries; remove logClientAddress or use the Proxy data plane"},
		capability.Row{Path: "spec.policy.auditLog.trustedProxyCIDRs", Verdict: capability.Refused, Reason: ReasonAuditFieldUnsupportedOnGateway,
			Message: "the gateway writes no router audit entries whose client address trusted proxies could decide; remove trustedProxyCIDRs or use the Proxy data plane"},
		// A client's API picks the AI Gateway's endpoint, not the route:
		// AIGatewayRoute v1.1 (shared/crds) has no input schema and no
		// path match, and each endpoint translates only to some backend
		// schemas. The router's meaning is its rule's backend, whatever
		// it speaks; where the gateway cannot keep it, the request is
		// refused rather than served elsewhere.
		capability.Row{Feature: capability.MessagesAPI, Verdict: capability.Refused, Reason: ReasonMessagesAPIUnsupportedOnGateway,
			Message: "dataPlane Gateway cannot serve an Anthropic Messages request (POST /v1/messages) under the router's rules: Envoy AI Gateway takes Messages at its own endpoint (/anthropic/v1/messages) and translates them for some backend schemas only (Anthropic, AWSAnthropic, GCPAnthropic and, by release, others), never for a GCPVertexAI (Gemini) backend; AIGatewayRoute has no input schema or path match, so the router cannot keep a Messages client to the backends that take it, and a rule that chooses another one fails instead of serving. The gateway model this compiler checks against (Envoy AI Gateway v1.1.0) does not serve that endpoint, so nothing here can vouch for it either. Use dataPlane Proxy, which serves Messages to every backend kind, translated where needed"},
		capability.Row{Feature: capability.ResponsesAPI, Verdict: capability.Refused, Reason: ReasonResponsesAPIUnsupportedOnGateway,
			Message: "dataPlane Gateway cannot serve an OpenAI Responses request (POST /v1/responses) under the router's rules: Envoy AI Gateway passes /v1/responses to backends that implement the Responses API themselves (OpenAI), not translated to chat completions for the in-cluster runtimes the router's fail-closed rules send sensitive requests to, nor for Anthropic, Bedrock or Vertex AI backends; AIGatewayRoute has no input schema or path match to keep a Responses client to the backends that take it, so a rule that chooses another one fails instead of serving. Use dataPlane Proxy, which serves Responses to every backend kind, translated to chat completions where needed"},
		// A local rate limit counts per Envoy replica: N per replica is not
		// the router's N. The global one (the budgets' rate-limit service)
		// counts fixed windows: a minute's counter resets on the minute, so
		// N at the end of one minute and N at the start of the next pass
		// within a second. A budget over an hour or a day takes that with
		// a warning (BudgetWindowFixed); a per-minute limit exists to bound
		// exactly such a burst, and doubling it is not the limit asked for.
		// A scope key limit counts API keys, which this plane does not
		// issue.
		capability.Row{Path: "spec.policy.rateLimits", Verdict: capability.Refused, Reason: ReasonRateLimitsUnsupportedOnGateway,
			Message: "dataPlane Gateway cannot keep policy.rateLimits' meaning: a local rate limit counts per Envoy replica (N per replica, not N), and the global rate-limit service counts fixed minutes, so 2N requests or tokens can pass within a second around each minute's boundary where the router allows N in any 60 seconds; remove rateLimits (a budget with windowSeconds: 60 is the fixed-minute cap this plane can keep), or use dataPlane Proxy"},
		apiKeysRow(),
		capability.Row{Feature: capability.SwapLeases, Verdict: capability.Refused, Reason: ReasonModelPoolUnsupportedOnGateway,
			Message: "the gateway cannot swap pool members into the shared GPU slot, so a backend on a ModelPool member is refused; use the Proxy data plane for pooled backends"},
	), Emits: []string{
		ReasonActiveHealthCheckNotApplied,
		ReasonActiveHealthCheckSkipped,
		ReasonAllowlistGlobUnsupportedOnGateway,
		ReasonAllowlistNeedsEveryBackend,
		ReasonBackendTimeoutsDiffer,
		ReasonBudgetLimitNotExpressible,
		ReasonBudgetLimitTooLarge,
		ReasonBudgetNeverApplies,
		ReasonBudgetSpansTrafficPolicies,
		ReasonBudgetWindowFixed,
		ReasonBudgetWindowUnsupported,
		ReasonCredentialsLayoutUnsupported,
		ReasonCredentialsRequired,
		ReasonDurationNotExpressible,
		ReasonGatewaySecretKey,
		ReasonGatewaySharedWithAuth,
		ReasonHeaderValueNotExpressible,
		ReasonIPBackendFailover,
		ReasonMatchNotExpressible,
		ReasonModelGlobUnsupported,
		ReasonNoFallThroughOnGateway,
		ReasonProviderHostUnknown,
		ReasonRuleNeverMatches,
		ReasonRuleOrderNotPreserved,
		ReasonStreamIdleBelowHeaderTimeout,
		ReasonTooManyBackends,
		ReasonTooManyHeaderConditions,
		ReasonTooManyRules,
		ReasonURLPathUnsupported,
		targets.ReasonInternalError,
		targets.ReasonGatewayRoutesOverlap,
		targets.ReasonUpstreamModelAssumed,
	}}
}
