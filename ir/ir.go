// Package ir is the compiler's one typed, fully resolved model of a
// ModelRouter. The frontend (package compiler) builds it after decoding,
// defaulting and validating the API object and resolving what the router
// references; target emitters read only this. Every default has already been
// applied, every duration parsed and every reference resolved, so an emitter
// never re-derives semantics from the API types.
//
// The package holds no YAML and no Kubernetes client. It uses core/v1 types
// only for the pod scheduling settings that pass through unchanged.
package ir

import (
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	corev1 "k8s.io/api/core/v1"
)

// DataPlane names a compile target.
type DataPlane string

const (
	DataPlaneProxy        DataPlane = "Proxy"
	DataPlaneGateway      DataPlane = "Gateway"
	DataPlaneAgentGateway DataPlane = "AgentGateway"
)

// Router is one compiled ModelRouter.
type Router struct {
	Name      string
	Namespace string
	// UID is the ModelRouter's uid when known (from a cluster); emitters set an
	// owner reference only when it is non-empty.
	UID        string
	Generation int64
	DataPlane  DataPlane

	// Backends in declaration order.
	Backends []Backend
	// Rules in declaration order: first match wins.
	Rules   []Rule
	Default DefaultRoute
	Policy  Policy
	// Timeouts are the proxy-wide runtime timeouts, defaults applied.
	Timeouts Timeouts

	Proxy        ProxyDeployment
	Exposure     Exposure
	Gateway      *GatewayRef
	AgentGateway *AgentGateway
	// MCP is spec.mcpServer when enabled; nil otherwise.
	MCP *MCP

	// OTLP is the operator's OpenTelemetry collector (operator settings, not
	// the ModelRouter); nil when the operator named none. The router-proxy
	// exports its traces and GenAI metrics there whatever the audit sink, and
	// its audit log too with sink otlp.
	OTLP *OTLPExport
}

// Backend looks up a backend by name.
func (r *Router) Backend(name string) (*Backend, bool) {
	for i := range r.Backends {
		if r.Backends[i].Name == name {
			return &r.Backends[i], true
		}
	}
	return nil, false
}

// AttachedGateway is the Gateway the router attaches to on its data plane:
// spec.gatewayRef on Gateway, spec.agentGatewayRef on AgentGateway; ok is
// false on a plane without one. A reference to another plane's Gateway is
// lowered as written but ignored there (a FieldIgnored warning), so it is
// never the router's Gateway.
func (r *Router) AttachedGateway() (namespace, name string, ok bool) {
	switch {
	case r.DataPlane == DataPlaneGateway && r.Gateway != nil:
		return r.Gateway.Namespace, r.Gateway.Name, true
	case r.DataPlane == DataPlaneAgentGateway && r.AgentGateway != nil:
		return r.AgentGateway.Namespace, r.AgentGateway.Name, true
	}
	return "", "", false
}

// HasPooledBackend reports whether any backend is a ModelPool member.
func (r *Router) HasPooledBackend() bool {
	for i := range r.Backends {
		if r.Backends[i].Pool != nil {
			return true
		}
	}
	return false
}

// Tier says whether a backend stays inside the cluster.
type Tier string

const (
	TierLocal Tier = "local"
	TierCloud Tier = "cloud"
)

// Provider is an external backend's API surface.
type Provider string

const (
	ProviderAnthropic Provider = wellknown.ProviderAnthropic
	ProviderOpenAI    Provider = wellknown.ProviderOpenAI
	ProviderBedrock   Provider = wellknown.ProviderBedrock
	ProviderVertexAI  Provider = wellknown.ProviderVertexAI
	ProviderLiteLLM   Provider = wellknown.ProviderLiteLLM
)

// Resolution says how a local backend's upstream is addressed.
type Resolution string

const (
	ResolutionService  Resolution = "service"
	ResolutionEndpoint Resolution = "endpoint"
)

// Backend is a resolved dispatch destination.
type Backend struct {
	// Index is the backend's position in spec.backends, for field paths.
	Index int
	Name  string
	// ModelID is the published model id and the BackendNameMatch key:
	// displayName, else name.
	ModelID string
	Tier    Tier
	// TierExplicit is true when the spec set the tier rather than the compiler deriving it.
	TierExplicit bool

	// Exactly one of Local and External is set.
	Local    *LocalBackend
	External *ExternalBackend

	// Upstream is where requests go. For an external provider whose address
	// is only known at run time (Bedrock without a URL), URL is empty.
	Upstream Upstream
	// UpstreamModel is the model name every request carries to this backend,
	// whatever model the client asked for: the name the backend serves. Every
	// plane reads it from here (docs/router-proxy.md, "Upstream requests").
	UpstreamModel UpstreamModel

	Capabilities []string
	Cost         *Cost
	// Weight for weighted rules, default 1; 0 drains.
	Weight int32
	// Timeout is the backend's own response-header timeout, already capped at
	// the proxy default; 0 when unset.
	Timeout     time.Duration
	HealthCheck HealthCheck
	Pool        *PoolMembership
	ModelInfo   ModelInfo
	Resolution  Resolution
	Balancing   *Balancing
	// EndpointPicker is the EPP this backend's InferencePool uses
	// (AgentGateway), resolved through the reference's fallback order; nil
	// when none applies.
	EndpointPicker *ServiceRef
}

// ModelNames are the names the backend's model goes by, the names a
// team's allowlist (policy.auth.allowlists[].models) may give it: the
// backend's name and published id (displayName), and the external model,
// or the InferenceService's name and modelRef. An allowlist entry matching
// any of them allows the backend to serve the team (ir.Auth.Allows).
func (b *Backend) ModelNames() []string {
	names := []string{b.Name, b.ModelID}
	if b.External != nil {
		names = append(names, b.External.Model)
	}
	if b.Local != nil {
		names = append(names, b.Local.InferenceService, b.Local.ModelRef)
	}
	return wellknown.ModelNames(names...)
}

// HasCapabilities reports whether the backend advertises every capability.
func (b *Backend) HasCapabilities(required []string) bool {
	return wellknown.HasCapabilities(b.Capabilities, required)
}

// UpstreamModel is the model name a backend is sent, and how it was found.
type UpstreamModel struct {
	// Name is the model name sent upstream.
	Name string
	// Source is where Name comes from.
	Source UpstreamModelSource
}

// UpstreamModelSource is where a backend's upstream model name comes from.
type UpstreamModelSource string

const (
	// UpstreamModelExternal: an external backend's external.model.
	UpstreamModelExternal UpstreamModelSource = "external.model"
	// UpstreamModelServedName: --served-model-name in the InferenceService's
	// extraArgs (vLLM, SGLang; the first name when it gives several), what
	// the runtime is told to serve.
	UpstreamModelServedName UpstreamModelSource = "extraArgs --served-model-name"
	// UpstreamModelModelRef: the InferenceService's modelRef, which the
	// LLMKube operator passes to SGLang as --served-model-name.
	UpstreamModelModelRef UpstreamModelSource = "modelRef"
	// UpstreamModelAssumed: nothing on the InferenceService says what the
	// runtime serves (vLLM is handed the Model's source or its cache path;
	// llama.cpp, TGI and generic runtimes choose their own id). Name is the
	// InferenceService's modelRef, else its name, the model name LLMKube's own
	// gateway route sends to the runtime; the router-proxy learns the served
	// name from the backend's /v1/models instead, and the gateway planes,
	// which cannot, send Name.
	UpstreamModelAssumed UpstreamModelSource = "assumed"
)

// Known reports whether the name is what the backend is configured to serve
// rather than an assumption to be checked against the backend.
func (u UpstreamModel) Known() bool { return u.Source != UpstreamModelAssumed }

// LocalBackend is an in-cluster InferenceService.
type LocalBackend struct {
	InferenceService string
	// ModelRef is the InferenceService's spec.modelRef (the Model it
	// serves), "" when unknown.
	ModelRef string
	// Found is false when the InferenceService was not among the inputs; the
	// compiler then used the documented conventions (Service <name>, port 8080).
	Found bool
	// Ready is the InferenceService's readiness; true unless its status says otherwise.
	Ready bool
	// ServiceName and Port address the InferenceService's Service.
	ServiceName string
	Port        int32
	// Runtime is the InferenceService's serving runtime (vllm, llamacpp, ...), when known.
	Runtime string
	// PodSelector selects the InferenceService's pods (InferencePool, endpoint
	// resolution): the label the LLMKube operator stamps on every inference pod,
	// inference.llmkube.dev/service: <InferenceService name> (naming.InferenceServicePodSelector).
	PodSelector map[string]string
	// TargetPort is the port the inference pods serve on: the InferenceService's
	// containerPort when set, else its Service port (the operator runs the
	// runtime on the Service's port unless containerPort overrides it).
	TargetPort int32
}

// ExternalBackend is an out-of-cluster provider.
type ExternalBackend struct {
	Provider Provider
	Model    string
	// URL is the spec's URL, empty when the provider default applies.
	URL string
	// CredentialsSecret names the Secret holding the provider's keys; empty when none.
	CredentialsSecret string
	// Credentials lists the Secret keys the runtime reads and the environment
	// variables they are exposed as.
	Credentials []Credential
}

// Credential maps one Secret key to the environment variable the proxy reads.
type Credential struct {
	// Purpose is what the key is for, e.g. "apiKey", "awsAccessKeyId".
	Purpose  string
	Key      string
	Env      string
	Optional bool
}

// Upstream is a resolved base URL and its parts.
type Upstream struct {
	URL    string
	Scheme string
	Host   string
	Port   int32
	// Path is the base path below which API paths are appended ("" or "/v1" style).
	Path string
}

// Cost is the informational price per million tokens, as exact decimal strings.
type Cost struct {
	PromptUSD     string
	CompletionUSD string
}

// HealthCheck is the active probe for a backend.
type HealthCheck struct {
	Path     string
	Interval time.Duration
	Timeout  time.Duration
	// Set is true when the spec asked for more than the defaults (a plane
	// that cannot probe says so only then).
	Set bool
}

// PoolMembership places a backend's InferenceService in a ModelPool.
type PoolMembership struct {
	Pool    string
	Members []string
	// Default is the member warmed on a cold pool.
	Default    string
	SwapBudget time.Duration
}

// ModelInfo is published on /v1/models.
type ModelInfo struct {
	// Set is true when the spec set modelInfo (the other fields carry defaults either way).
	Set bool
	// ContextLength is 0 when unknown.
	ContextLength    int64
	InputModalities  []string
	OutputModalities []string
}

// BalancingMode selects pod placement for endpoint-resolution backends.
type BalancingMode string

const (
	BalancingRoundRobin BalancingMode = "RoundRobin"
	BalancingLoadAware  BalancingMode = "LoadAware"
)

// Balancing is pod-level placement; only meaningful with endpoint resolution.
// PrefixAffinity and SessionAffinity are nil unless Mode is LoadAware: the
// compiler drops them (with a warning) otherwise.
type Balancing struct {
	Mode            BalancingMode
	PrefixAffinity  *PrefixAffinity
	SessionAffinity *SessionAffinity
}

// PrefixAffinity places requests by remembered prompt blocks.
type PrefixAffinity struct {
	BlockBytes           int32
	MaxBlocksPerEndpoint int32
}

// SessionAffinity keeps a session on its pod.
type SessionAffinity struct {
	// Headers are lowercased, in priority order.
	Headers     []string
	IdleTimeout time.Duration
}

// ServiceRef names a Service and port in the router's namespace.
type ServiceRef struct {
	Name string
	Port int32
}

// Strategy selects how a rule uses its backends.
type Strategy string

const (
	StrategyPrimaryFallback Strategy = wellknown.StrategyPrimaryFallback
	StrategyWeighted        Strategy = wellknown.StrategyWeighted
	StrategyShadow          Strategy = wellknown.StrategyShadow
)

// PoolActivation decides what happens when a pooled backend is not resident.
type PoolActivation string

const (
	PoolActivationWait   PoolActivation = wellknown.PoolActivationWait
	PoolActivationIfIdle PoolActivation = wellknown.PoolActivationIfIdle
)

// Rule is one routing rule.
type Rule struct {
	Name string
	// Index is the rule's position in spec.rules.
	Index int
	Match Match
	// Backends are the rule's declared backends in order.
	Backends []string
	// Candidates are the declared backends that advertise every required
	// capability, in order: the only ones that ever serve the rule. Empty
	// means the rule can never match.
	Candidates     []string
	Strategy       Strategy
	PoolActivation PoolActivation
	FailClosed     bool
	// Sensitive is true when the rule matches a sensitive classification.
	Sensitive bool
	// Timeout is the rule's own response-header timeout, capped at the proxy
	// default; 0 when unset.
	Timeout time.Duration
}

// HeaderTimeout resolves the response-header timeout for a dispatch of this
// rule to a backend: rule || backend || proxy default.
func (r *Router) HeaderTimeout(rule *Rule, b *Backend) time.Duration {
	var fromRule, fromBackend time.Duration
	if rule != nil {
		fromRule = rule.Timeout
	}
	if b != nil {
		fromBackend = b.Timeout
	}
	return wellknown.HeaderTimeout(fromRule, fromBackend, r.Timeouts.ResponseHeader)
}

// Match holds a rule's conditions, ANDed. Empty fields do not constrain.
type Match struct {
	Models []string
	// Headers are exact-value matches; names are lowercased and sorted.
	Headers              []HeaderMatch
	DataClassification   []string
	TaskComplexity       string
	RequiredCapabilities []string
	// LatencySLO is the P95 first-token target; 0 when unset.
	LatencySLO time.Duration
}

// IsEmpty reports whether the match always matches.
func (m *Match) IsEmpty() bool {
	return len(m.Models) == 0 && len(m.Headers) == 0 && len(m.DataClassification) == 0 &&
		m.TaskComplexity == "" && len(m.RequiredCapabilities) == 0
}

// HeaderMatch is an exact header match.
type HeaderMatch struct {
	Name  string
	Value string
}

// DefaultStrategy decides what happens when no rule matches.
type DefaultStrategy string

const (
	DefaultStatic           DefaultStrategy = "Static"
	DefaultBackendNameMatch DefaultStrategy = "BackendNameMatch"
)

// DefaultRoute is the no-rule-matched behaviour.
type DefaultRoute struct {
	Strategy DefaultStrategy
	// Backend is empty when there is no default route.
	Backend string
}

// ClassificationMode is how a request's classification is determined.
type ClassificationMode string

const (
	ClassificationHeaderOnly ClassificationMode = "header-only"
	ClassificationDetector   ClassificationMode = "detector"
	ClassificationHybrid     ClassificationMode = "hybrid"
)

// Policy holds the cross-cutting controls.
type Policy struct {
	Classification Classification
	Budgets        []Budget
	// BudgetStore is where the budgets are counted; nil: in memory, per replica.
	BudgetStore *BudgetStore
	Audit       Audit
	Auth        *Auth
	// RateLimits are policy.rateLimits (Proxy plane only).
	RateLimits []RateLimit
}

// RateLimitScope is what one rate-limit counter belongs to.
type RateLimitScope string

const (
	RateLimitScopeTeam RateLimitScope = "team"
	RateLimitScopeKey  RateLimitScope = "key"
)

// RateLimit caps the requests and tokens per minute of each verified team
// or API key (policy.rateLimits).
type RateLimit struct {
	Name  string
	Scope RateLimitScope
	// Teams and Keys, when set, are the only ones counted.
	Teams, Keys []string
	// The caps per minute; 0 is unset.
	RequestsPerMinute, InputTokensPerMinute, OutputTokensPerMinute int64
}

// Classification configures how requests are classified.
type Classification struct {
	Mode      ClassificationMode
	HeaderKey string
	// Sensitive values, lowercased.
	Sensitive []string
}

// BudgetScope is what a budget applies to.
type BudgetScope string

const (
	BudgetScopeRouter BudgetScope = "router"
	BudgetScopeRule   BudgetScope = "rule"
	BudgetScopeTeam   BudgetScope = "team"
)

// Budget caps tokens and cost over a rolling window.
type Budget struct {
	Name  string
	Scope BudgetScope
	// RuleName is set for rule scope.
	RuleName string
	// HeaderKey is set for team scope.
	HeaderKey string
	// MaxTokens is 0 when unset.
	MaxTokens int64
	// MaxUSD is an exact decimal string, empty when unset.
	MaxUSD string
	Window time.Duration
}

// AuditSink is where audit entries go.
type AuditSink string

const (
	AuditSinkStdout AuditSink = "stdout"
	AuditSinkFile   AuditSink = "file"
	AuditSinkOTLP   AuditSink = "otlp"
)

// Audit configures audit entries.
type Audit struct {
	Sink               AuditSink
	FilePath           string
	IncludeRequestBody bool
	CallerHeader       string
	LogClientAddress   bool
	// TrustedProxies are normalised CIDRs (a single address becomes /32 or /128).
	TrustedProxies []string
}

// BudgetStore is the operator's shared budget store (Redis).
type BudgetStore struct {
	URL string
	// PasswordSecret/PasswordKey name the Secret key holding its password.
	PasswordSecret, PasswordKey string
	// Failure is closed or open.
	Failure string
}

// OTLPExport is an OTLP/HTTP collector the router-proxy exports to.
type OTLPExport struct {
	Endpoint string
	// Headers is OTEL_EXPORTER_OTLP_HEADERS's value ("" when none).
	Headers string
	// HeadersSecret/HeadersSecretKey name a Secret key holding the headers instead.
	HeadersSecret, HeadersSecretKey string
}

// Auth is request authentication and authorization.
type Auth struct {
	JWT        *JWT
	Allowlists []Allowlist
	// APIKeys are the Secrets of API keys and their teams
	// (policy.auth.apiKeys); see APIKeySource.
	APIKeys []APIKeySource
}

// APIKeySource is one Secret of API keys: every data key is a key (its name
// the data key, its value the key), each authenticating Team until
// ExpiresAt (nil: no expiry).
type APIKeySource struct {
	SecretName string
	Team       string
	ExpiresAt  *time.Time
}

// TeamHeader is the header the verified team is written to:
// policy.auth.jwt.headerKey, or the default team header with API keys only.
func (a *Auth) TeamHeader() string {
	if a != nil && a.JWT != nil && a.JWT.HeaderKey != "" {
		return a.JWT.HeaderKey
	}
	return wellknown.TeamHeader
}

// Authenticates reports whether the router verifies a team (JWT or API
// keys): allowlists and team budgets then read a verified one.
func (a *Auth) Authenticates() bool {
	return a != nil && (a.JWT != nil || len(a.APIKeys) > 0)
}

// JWT validates inbound tokens and maps a claim onto a header.
type JWT struct {
	Provider  string
	Issuer    string
	JWKSURI   string
	TeamClaim string
	HeaderKey string
	// Audiences, when set, are the aud values a token must name one of
	// (policy.auth.jwt.audiences); empty checks no audience (the router-proxy
	// adds the MCP resource URL, see proxyapi.Config.HTTPAudiences).
	Audiences []string
}

// Allowlist grants a team some models (all when Models is empty).
type Allowlist struct {
	Team   string
	Models []string
}

// Allows reports whether the entry lets its team use a model going by any
// of names (the models glob language; an entry without models allows
// every model).
func (e Allowlist) Allows(names ...string) bool {
	return wellknown.AllowlistAllows(e.Models, names...)
}

// Entry is the team's allowlist entry, when allowlists are set and name it.
func (a *Auth) Entry(team string) (Allowlist, bool) {
	if a == nil {
		return Allowlist{}, false
	}
	for _, e := range a.Allowlists {
		if e.Team == team {
			return e, true
		}
	}
	return Allowlist{}, false
}

// Timeouts are the proxy-wide runtime timeouts.
type Timeouts struct {
	ResponseHeader time.Duration
	// StreamIdle is 0 when the guard is disabled.
	StreamIdle time.Duration
	Quarantine time.Duration
	// RateLimitHold and QuotaExhaustedHold are the upstream quota holds
	// (docs/upstream-quota.md).
	RateLimitHold      time.Duration
	QuotaExhaustedHold time.Duration
	// Drain is 0 when unset: the proxy's own default applies and nothing is
	// rendered on the pod template.
	Drain time.Duration
}

// ProxyDeployment is the managed router-proxy workload.
type ProxyDeployment struct {
	Image                string
	Replicas             int32
	RevisionHistoryLimit int32
	// MaxUnavailable is the PodDisruptionBudget's maxUnavailable; 0 renders
	// no PodDisruptionBudget.
	MaxUnavailable int32
	// ServiceName is the data-plane Service's name (generated unless set).
	ServiceName               string
	Resources                 corev1.ResourceRequirements
	Affinity                  *corev1.Affinity
	Tolerations               []corev1.Toleration
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	NodeSelector              map[string]string
	RuntimeClassName          string
	ImagePullSecrets          []corev1.LocalObjectReference
	PodLabels                 map[string]string
	PodAnnotations            map[string]string
}

// Exposure is the Kubernetes Service in front of the router-proxy.
type Exposure struct {
	Type corev1.ServiceType
	Port int32
	// NodePort is 0 when the cluster allocates it.
	NodePort int32
	// ExternalTrafficPolicy is empty when the Kubernetes default applies.
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy
	Path                  string
}

// GatewayRef identifies a Gateway (Envoy AI Gateway plane).
type GatewayRef struct {
	Name string
	// Namespace is always set: the frontend defaults it to the router's.
	Namespace string
	// Hostnames are the hosts the router claims on the Gateway (none:
	// every host).
	Hostnames []string
}

// AgentGatewayRouting is the AgentGateway compile mode.
type AgentGatewayRouting string

const (
	AgentGatewayRoutingInferencePool AgentGatewayRouting = "InferencePool"
	AgentGatewayRoutingModel         AgentGatewayRouting = "Model"
)

// AgentGateway identifies the agentgateway Gateway and how to route on it.
type AgentGateway struct {
	Name string
	// Namespace is always set: the frontend defaults it to the router's.
	Namespace string
	Routing   AgentGatewayRouting
	// EndpointPicker is the router-wide default EPP; nil when unset.
	EndpointPicker *ServiceRef
	Hostnames      []string
	SectionName    string
}

// MCP is the router's Model Context Protocol endpoint (router-proxy only).
type MCP struct {
	// ResourceURL is the endpoint as clients reach it: the protected
	// resource's identifier and the audience tokens must name.
	ResourceURL string
}
