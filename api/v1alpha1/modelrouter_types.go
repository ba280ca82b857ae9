/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModelRouter exposes one OpenAI-compatible endpoint that dispatches requests
// across in-cluster InferenceService backends and external providers
// according to declarative routing rules.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mr
// +kubebuilder:printcolumn:name="DataPlane",type=string,JSONPath=".spec.dataPlane"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ModelRouter struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of ModelRouter
	// +required
	Spec ModelRouterSpec `json:"spec"`

	// status defines the observed state of ModelRouter
	// +optional
	Status ModelRouterStatus `json:"status,omitempty"`
}

// ModelRouterList is a list of ModelRouters.
//
// +kubebuilder:object:root=true
type ModelRouterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModelRouter `json:"items"`
}

func init() {
	register(&ModelRouter{}, &ModelRouterList{})
}

// ModelRouterSpec defines the desired state of ModelRouter.
type ModelRouterSpec struct {
	// DataPlane selects how this ModelRouter serves traffic. "Proxy" (default)
	// provisions the managed router-proxy Deployment and Service and routes
	// in-process. "Gateway" compiles the backends and rules onto a
	// pre-installed Envoy AI Gateway. "AgentGateway" compiles them onto a
	// pre-installed agentgateway data plane (see agentGatewayRef). In Gateway
	// and AgentGateway mode the router-proxy is not provisioned.
	// +kubebuilder:validation:Enum=Proxy;Gateway;AgentGateway
	// +optional
	DataPlane DataPlane `json:"dataPlane,omitempty"`

	// GatewayRef identifies the pre-installed Gateway
	// (gateway.networking.k8s.io) the generated AIGatewayRoute attaches to when
	// DataPlane is "Gateway". Required in Gateway mode; ignored otherwise.
	// +optional
	GatewayRef *RouterGatewayRef `json:"gatewayRef,omitempty"`

	// AgentGatewayRef identifies the pre-installed agentgateway data plane the
	// generated InferencePool, HTTPRoute and model-extraction
	// AgentgatewayPolicy attach to when DataPlane is "AgentGateway". Required in
	// AgentGateway mode; ignored otherwise. When the Gateway is in another
	// namespace, the AgentgatewayPolicy lives in the Gateway's namespace, is not
	// owner-referenced, and is cleaned up via a finalizer on this ModelRouter.
	// A Gateway that already carries another PreRouting transformation policy
	// refuses the router (ConflictingPreRoutingPolicy).
	// +optional
	AgentGatewayRef *AgentGatewayRef `json:"agentGatewayRef,omitempty"`

	// Backends are the candidate destinations the router can dispatch to.
	// Order is not significant; selection is rule-driven. At least one backend
	// must be declared.
	// +kubebuilder:validation:MinItems=1
	// +required
	Backends []RouterBackend `json:"backends"`

	// Rules are evaluated in declaration order. The first matching rule wins.
	// If no rule matches, the fallback is governed by DefaultRouteStrategy,
	// ending at DefaultRoute. If nothing resolves, the request is rejected
	// with HTTP 503.
	// +optional
	Rules []RouterRule `json:"rules,omitempty"`

	// DefaultRoute names a backend used when no rule matches. Must reference
	// the Name of an entry in Backends.
	// +optional
	DefaultRoute string `json:"defaultRoute,omitempty"`

	// DefaultRouteStrategy decides what happens when no rule matches. "Static"
	// (default) routes to DefaultRoute. "BackendNameMatch" first tries to match
	// the request's model to a backend name, falling back to DefaultRoute only
	// if none matches. Fail-closed rules are evaluated first and still gate
	// before any name match.
	// +kubebuilder:validation:Enum=Static;BackendNameMatch
	// +optional
	DefaultRouteStrategy DefaultRouteStrategy `json:"defaultRouteStrategy,omitempty"`

	// Endpoint defines the Kubernetes Service the router-proxy is exposed
	// through. Mirrors the shape used by InferenceService.
	// +optional
	Endpoint *EndpointSpec `json:"endpoint,omitempty"`

	// Policy holds cross-cutting controls (budgets, classification, audit,
	// authentication).
	// +optional
	Policy *RouterPolicy `json:"policy,omitempty"`

	// Proxy configures the managed router-proxy Deployment (replicas, image
	// override, resources, scheduling) and the name of its Service. Defaults
	// apply when omitted.
	// +optional
	Proxy *ProxySpec `json:"proxy,omitempty"`

	// MCPServer optionally exposes this router as a Model Context Protocol
	// endpoint: on dataPlane Proxy the router-proxy serves /mcp (Streamable
	// HTTP, stateless), one tool per model, under the router's rules and
	// policy, with OAuth 2.1 bearer tokens verified as policy.auth.jwt says.
	// +optional
	MCPServer *MCPServerSpec `json:"mcpServer,omitempty"`
}

// GatewayRef identifies a pre-installed Gateway (gateway.networking.k8s.io).
type GatewayRef struct {
	// Name is the Gateway's name.
	// +required
	Name string `json:"name"`

	// Namespace is the Gateway's namespace. Empty means the referring object's
	// own namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// RouterGatewayRef is a ModelRouter's spec.gatewayRef: the Gateway of the
// Gateway data plane, and optionally the hostnames the router claims on it.
type RouterGatewayRef struct {
	// Name is the Gateway's name.
	// +required
	Name string `json:"name"`

	// Namespace is the Gateway's namespace. Empty means the ModelRouter's own
	// namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Hostnames limit the generated AIGatewayRoutes to these hosts (an
	// extension of the reference, docs/targets/gateway.md#hostnames). Envoy
	// Gateway gives each hostname a virtual host of its own, so routers whose
	// hostnames are disjoint never rank against each other, and routers with
	// policy.auth may then share a Gateway. Empty: every host.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`
}

// AgentGatewayRef identifies the agentgateway Gateway of the AgentGateway data
// plane and how the router compiles onto it.
type AgentGatewayRef struct {
	// Name is the agentgateway Gateway's name.
	// +required
	Name string `json:"name"`

	// Namespace is the Gateway's namespace. Empty means the ModelRouter's own
	// namespace. The pools, the referenced InferenceServices and the
	// EndpointPicker Service live in the ModelRouter's namespace regardless.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Routing selects the compile target. "InferencePool" (the default) is the
	// Gateway API Inference Extension path. "Model" uses agentgateway's model
	// router (v1.6.0+): one AgentgatewayModel per backend, matched on its
	// displayName (else name), behind one catch-all HTTPRoute; spec.rules,
	// spec.defaultRoute, external backends, resolution: endpoint and
	// per-backend endpoint pickers are refused in this mode.
	// +kubebuilder:validation:Enum=InferencePool;Model
	// +optional
	Routing AgentGatewayRouting `json:"routing,omitempty"`

	// EndpointPicker names the router-wide default EPP Service, in this
	// ModelRouter's namespace. A backend's own endpointPicker overrides it.
	// +optional
	EndpointPicker string `json:"endpointPicker,omitempty"`

	// EndpointPickerPort is the port the default EPP Service listens on. Set
	// together with endpointPicker.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	EndpointPickerPort *int32 `json:"endpointPickerPort,omitempty"`

	// Hostnames limit the generated HTTPRoute to these hosts. routing: Model
	// only, where it or sectionName is required.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`

	// SectionName names the Gateway listener the generated HTTPRoute attaches
	// to. routing: Model only, where it or hostnames is required.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// RouterBackend is one candidate destination for routed requests. Exactly one
// of InferenceServiceRef or External must be set.
type RouterBackend struct {
	// Name is the stable identifier used by rules and observability labels.
	// Must be lowercase alphanumeric or '-'.
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]{0,62}$`
	// +required
	Name string `json:"name"`

	// DisplayName is published as the model id on /v1/models and used by
	// BackendNameMatch to resolve a request's model to a backend. When unset,
	// Name is used for both.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// InferenceServiceRef references an in-cluster InferenceService in the
	// ModelRouter's namespace. Mutually exclusive with External.
	// Requests reach it under the model name its runtime serves, whatever
	// model the client asked for (an llmkube-compile extension): the first
	// --served-model-name in the InferenceService's extraArgs, else for
	// SGLang its modelRef; otherwise the router-proxy reads the name from
	// the backend's /v1/models, and the gateway planes send the modelRef (or
	// the InferenceService's name).
	// +optional
	InferenceServiceRef *corev1.LocalObjectReference `json:"inferenceServiceRef,omitempty"`

	// External describes an out-of-cluster provider (Anthropic, OpenAI, or a
	// LiteLLM proxy). Mutually exclusive with InferenceServiceRef.
	// +optional
	External *ExternalBackend `json:"external,omitempty"`

	// Tier classifies the backend for rule matching. "local" backends are
	// served from inside the cluster; "cloud" backends egress the cluster
	// boundary. Fail-closed rules can only route to local-tier backends. No API
	// default: when unset the compiler derives it (inferenceServiceRef → local,
	// external → cloud).
	// +kubebuilder:validation:Enum=local;cloud
	// +optional
	Tier Tier `json:"tier,omitempty"`

	// Resolution selects how a local backend's upstream address is resolved.
	// "service" (the default) dispatches to the InferenceService's ClusterIP
	// Service. "endpoint" has the router-proxy track the ready pods behind the
	// Service and balance across them. External backends ignore this field.
	// +kubebuilder:validation:Enum=service;endpoint
	// +optional
	Resolution Resolution `json:"resolution,omitempty"`

	// Balancing places requests across this backend's pods by load and keeps a
	// session on its pod until it runs hot. Requires resolution: endpoint.
	// Unset keeps round-robin. Proxy data plane only.
	// +optional
	Balancing *BalancingSpec `json:"balancing,omitempty"`

	// EndpointPicker selects the Endpoint Picker (EPP) for this backend's
	// InferencePool on dataPlane: AgentGateway. When unset, the backend uses
	// the picker another backend on the same InferenceService names, else
	// spec.agentGatewayRef.endpointPicker. Ignored by the Proxy and Gateway
	// data planes.
	// +optional
	EndpointPicker *EndpointPickerSpec `json:"endpointPicker,omitempty"`

	// Capabilities advertised by this backend (e.g. "tools", "vision",
	// "long-context"). Rules can require capabilities to filter candidates.
	// +optional
	Capabilities []string `json:"capabilities,omitempty"`

	// Weight is used by the "weighted" strategy: higher values receive
	// proportionally more traffic. Default 1 when unset. 0 drains the backend
	// from weighted rules. A weighted rule needs at least one backend with a
	// positive weight.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// Timeout caps how long the proxy waits for this backend to begin sending
	// response headers (a duration). Resolution order at dispatch time:
	// rule.timeout || backend.timeout || spec.proxy.responseHeaderTimeout.
	// +optional
	Timeout string `json:"timeout,omitempty"`

	// CostPerMillionTokens is informational, in USD. Used for cost-aware
	// metrics, budgets and audit-log enrichment.
	// +optional
	CostPerMillionTokens *CostSpec `json:"costPerMillionTokens,omitempty"`

	// HealthCheck overrides the default health probe applied to this backend
	// by the router-proxy.
	// +optional
	HealthCheck *HealthCheckSpec `json:"healthCheck,omitempty"`

	// ModelInfo describes what this backend's model accepts and how much
	// context it holds, published on its /v1/models entry. Informational only.
	// Proxy data plane only.
	// +optional
	ModelInfo *ModelInfoSpec `json:"modelInfo,omitempty"`
}

// ExternalBackend describes an out-of-cluster provider.
type ExternalBackend struct {
	// Provider identifies the upstream API surface. For "litellm", URL must
	// point at a running LiteLLM proxy speaking the OpenAI-compatible API.
	// +kubebuilder:validation:Enum=anthropic;openai;bedrock;vertex_ai;litellm
	// +required
	Provider Provider `json:"provider"`

	// URL is the base URL for the provider. Required for "litellm"; optional
	// for first-party providers, which use their published default.
	// +optional
	URL string `json:"url,omitempty"`

	// Model is the upstream model identifier passed through to the provider
	// (e.g. "claude-opus-4-7", "gpt-5", a LiteLLM model alias). Every request
	// this backend serves is sent with it, whatever model the client asked
	// for.
	// +required
	Model string `json:"model"`

	// CredentialsSecretRef points to a Secret containing the provider
	// credentials. Conventional keys: ANTHROPIC_API_KEY, OPENAI_API_KEY,
	// LITELLM_MASTER_KEY. The router-proxy reads them as environment variables.
	// +optional
	CredentialsSecretRef *corev1.LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// BalancingSpec places requests across a backend's pods.
type BalancingSpec struct {
	// Mode is RoundRobin or LoadAware: the pod with the least work, read from
	// the engine's own metrics where a runtime profile exists (vLLM) and from
	// in-flight requests otherwise.
	// +kubebuilder:validation:Enum=RoundRobin;LoadAware
	// +optional
	Mode BalancingMode `json:"mode,omitempty"`

	// PrefixAffinity sends a request to the pod most likely to hold its
	// prompt's prefix in KV cache, traded against that pod's load. Set it (an
	// empty object takes the defaults) to turn it on. Requires mode: LoadAware;
	// with RoundRobin it is ignored with a PrefixAffinityIgnored warning event.
	// +optional
	PrefixAffinity *PrefixAffinitySpec `json:"prefixAffinity,omitempty"`

	// SessionAffinity places a new session on the least-loaded pod and keeps it
	// there unless that pod is queuing and clearly busier than another.
	// Requires mode: LoadAware; with RoundRobin it is ignored with a
	// SessionAffinityIgnored warning event.
	// +optional
	SessionAffinity *SessionAffinitySpec `json:"sessionAffinity,omitempty"`
}

// PrefixAffinitySpec tunes prefix-cache-aware placement.
type PrefixAffinitySpec struct {
	// BlockBytes is the size of the prompt blocks the router hashes, in bytes
	// of the request's tools, system prompt and messages. Defaults to 1024.
	// +kubebuilder:validation:Minimum=256
	// +kubebuilder:validation:Maximum=16384
	// +optional
	BlockBytes *int32 `json:"blockBytes,omitempty"`

	// MaxBlocksPerEndpoint bounds the blocks the router remembers per pod; the
	// least recently sent go first. Defaults to 16384.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=262144
	// +optional
	MaxBlocksPerEndpoint *int32 `json:"maxBlocksPerEndpoint,omitempty"`
}

// SessionAffinitySpec keeps a session on one pod.
type SessionAffinitySpec struct {
	// Headers identify a session, in priority order; the first present with a
	// non-empty value is the key. Compared case-insensitively. Each name is an
	// RFC 7230 header token.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +required
	Headers []string `json:"headers"`

	// IdleTimeout is how long a session may go without a request before the
	// router forgets its pod (a duration). Defaults to 30m. Must be between 1m
	// and 24h.
	// +optional
	IdleTimeout string `json:"idleTimeout,omitempty"`

	// MaxLoadPercent is deprecated and has no effect. It is still accepted so
	// existing manifests keep applying.
	// +kubebuilder:validation:Minimum=101
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxLoadPercent *int32 `json:"maxLoadPercent,omitempty"`
}

// EndpointPickerSpec selects the EPP for a backend's InferencePool.
type EndpointPickerSpec struct {
	// Service names an EPP Service in the ModelRouter's namespace.
	// +optional
	Service *EndpointPickerService `json:"service,omitempty"`
}

// EndpointPickerService is an EPP Service in the ModelRouter's namespace.
type EndpointPickerService struct {
	// Name is the EPP Service's name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Port is the port the EPP Service listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
}

// CostSpec is a backend's price per million tokens, in USD.
type CostSpec struct {
	// PromptUSD is the cost per million prompt (input) tokens, in USD.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	PromptUSD string `json:"promptUSD,omitempty"`

	// CompletionUSD is the cost per million completion (output) tokens, in USD.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	CompletionUSD string `json:"completionUSD,omitempty"`
}

// HealthCheckSpec overrides a backend's health probe.
type HealthCheckSpec struct {
	// Path is the HTTP path probed for health. Defaults to "/health" for local
	// backends and to the provider's documented health route for external
	// providers.
	// +optional
	Path string `json:"path,omitempty"`

	// IntervalSeconds is how often the router-proxy probes the backend.
	// +kubebuilder:validation:Minimum=1
	// +optional
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`

	// TimeoutSeconds is the maximum time a single probe may take.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// ModelInfoSpec describes a backend's model on /v1/models.
type ModelInfoSpec struct {
	// ContextLength is the context window one request gets, in tokens. When
	// unset, it is filled from the InferenceService: vllmConfig.maxModelLen
	// (or --max-model-len in extraArgs) for vLLM, and contextSize divided
	// across parallelSlots for llama.cpp. Other runtimes publish none.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ContextLength *int64 `json:"contextLength,omitempty"`

	// InputModalities the model accepts. When unset, a backend whose
	// capabilities include "vision" publishes ["text", "image"], any other
	// ["text"]. When set, it wins over capabilities.
	// +kubebuilder:validation:MaxItems=5
	// +optional
	InputModalities []string `json:"inputModalities,omitempty"`

	// OutputModalities the model produces. Defaults to ["text"].
	// +kubebuilder:validation:MaxItems=5
	// +optional
	OutputModalities []string `json:"outputModalities,omitempty"`
}

// RouterRule is one routing rule.
type RouterRule struct {
	// Name is used in audit logs and metrics labels.
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]{0,62}$`
	// +required
	Name string `json:"name"`

	// Match groups all match conditions (AND semantics). If omitted the rule
	// always matches.
	// +optional
	Match *RuleMatch `json:"match,omitempty"`

	// Route is the action taken when this rule matches.
	// +required
	Route RuleRoute `json:"route"`

	// FailClosed: when true, if no backend in Route.Backends is healthy or
	// otherwise eligible, the router rejects the request with HTTP 503 rather
	// than falling through to DefaultRoute or subsequent rules. Matched
	// requests are never served by any other route.
	// +optional
	FailClosed bool `json:"failClosed,omitempty"`

	// Timeout caps how long the proxy waits for the upstream to begin sending
	// response headers on dispatches matched by this rule (a duration). It
	// overrides RouterBackend.Timeout and the proxy default.
	// +optional
	Timeout string `json:"timeout,omitempty"`
}

// RuleMatch holds a rule's match conditions; all declared ones must hold.
type RuleMatch struct {
	// Models matches the OpenAI-style "model" field in the request body. Glob
	// patterns are supported (e.g. "qwen3-*").
	// +optional
	Models []string `json:"models,omitempty"`

	// DataClassification matches if the request carries any of these
	// classifications: read from the header named by
	// policy.classification.headerKey, and under classification mode
	// detector or hybrid found in the body by the content classifier.
	// +optional
	DataClassification []string `json:"dataClassification,omitempty"`

	// TaskComplexity matches the inbound complexity hint (header
	// x-llmkube-task-complexity).
	// +kubebuilder:validation:Enum=simple;moderate;complex
	// +optional
	TaskComplexity TaskComplexity `json:"taskComplexity,omitempty"`

	// RequiredCapabilities filters backends: the rule only matches if at least
	// one backend in Route.Backends advertises every listed capability, and on
	// dataPlane: Proxy only those backends serve the rule's requests.
	// +optional
	RequiredCapabilities []string `json:"requiredCapabilities,omitempty"`

	// Headers performs exact-match equality on inbound HTTP headers
	// (case-insensitive header names).
	// +optional
	Headers map[string]string `json:"headers,omitempty"`

	// LatencySLOMs is a P95 first-token-latency target in milliseconds; when
	// the primary backend exceeds it the rule promotes its fallback. Honored
	// only by the "primary-fallback" strategy.
	// +kubebuilder:validation:Minimum=1
	// +optional
	LatencySLOMs *int32 `json:"latencySLOMs,omitempty"`
}

// RuleRoute is the action a rule takes.
type RuleRoute struct {
	// Backends is an ordered list of RouterBackend.Name values. For
	// "primary-fallback" the first entry is the primary and the rest are tried
	// in order on failure; "weighted" distributes by weight; "shadow" serves
	// as primary-fallback does and mirrors copies to the entries after the one
	// that served, and needs at least two.
	// +kubebuilder:validation:MinItems=1
	// +required
	Backends []string `json:"backends"`

	// Strategy selects how multiple backends are used. dataPlane: Gateway
	// rejects shadow; dataPlane: AgentGateway compiles only primary-fallback.
	// +kubebuilder:validation:Enum=primary-fallback;weighted;shadow
	// +optional
	Strategy Strategy `json:"strategy,omitempty"`

	// PoolActivation decides what the proxy does when a backend is a
	// non-resident ModelPool member and the resident member is busy. "Wait"
	// (default) holds the request, bounded by the pool's swapBudget. "IfIdle"
	// skips the pooled backend while the incumbent is busy.
	// +kubebuilder:validation:Enum=Wait;IfIdle
	// +optional
	PoolActivation PoolActivation `json:"poolActivation,omitempty"`
}

// EndpointSpec defines the Kubernetes Service in front of the router-proxy.
type EndpointSpec struct {
	// Port is the service port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`

	// Path is the HTTP path for the inference endpoint.
	// +optional
	Path string `json:"path,omitempty"`

	// Type is the Kubernetes service type (ClusterIP, NodePort, LoadBalancer).
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	Type EndpointType `json:"type,omitempty"`

	// NodePort pins the NodePort when type is NodePort, instead of
	// auto-assigning one from the 30000-32767 range.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	// +optional
	NodePort *int32 `json:"nodePort,omitempty"`

	// ExternalTrafficPolicy sets the Service's externalTrafficPolicy. Local
	// preserves the client source IP. Unset keeps the Kubernetes default
	// (Cluster). Requires type NodePort or LoadBalancer.
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy ExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// APIKeySecretRef names a Secret key holding the API key callers must
	// present as "Authorization: Bearer <key>". Shared with InferenceService;
	// not supported on ModelRouter.
	// +optional
	APIKeySecretRef *corev1.SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// Gateway opts into Envoy AI Gateway exposure. Shared with
	// InferenceService.
	// +optional
	Gateway *EndpointGatewaySpec `json:"gateway,omitempty"`
}

// EndpointGatewaySpec opts an endpoint into Envoy AI Gateway exposure.
type EndpointGatewaySpec struct {
	// Enabled is the opt-in switch. When false (or when Gateway is nil), no
	// gateway resources are generated.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// GatewayRef identifies the pre-installed Gateway the generated
	// AIGatewayRoute attaches to.
	// +required
	GatewayRef GatewayRef `json:"gatewayRef"`

	// ModelName is the OpenAI "model" string clients send, matched by the
	// generated route rule.
	// +optional
	ModelName string `json:"modelName,omitempty"`
}

// RouterPolicy holds cross-cutting controls.
type RouterPolicy struct {
	// Budgets caps token and dollar consumption per scope over a rolling
	// window. Empty means no budget enforcement.
	// +optional
	Budgets []BudgetSpec `json:"budgets,omitempty"`

	// Classification configures how the router determines the data
	// classification of an inbound request.
	// +optional
	Classification *ClassificationSpec `json:"classification,omitempty"`

	// AuditLog controls structured audit emission. Auditing is always on; this
	// tunes the destination and verbosity.
	// +optional
	AuditLog *AuditLogSpec `json:"auditLog,omitempty"`

	// Auth configures request authentication (JWT) and authorization
	// (allowlists). nil means no authentication is enforced.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty"`

	// RateLimits cap the requests and tokens per minute of each verified
	// team (scope team) or API key (scope key), beside the budgets, and are
	// counted in the same budget store (shared by every replica with
	// --budget-store). A request over a limit is answered 429 with
	// Retry-After; every answer carries the x-ratelimit-* headers. They
	// require policy.auth: a limit keyed on a header the client chooses
	// could be escaped by changing it. An extension of the reference, which
	// has no rate limits (see docs/rate-limits.md). Proxy data plane only.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	RateLimits []RateLimitSpec `json:"rateLimits,omitempty"`
}

// RateLimitSpec caps what one team or one API key may send per minute, over
// a sliding 60-second window in one-second buckets (at most N in any 60
// seconds; see docs/rate-limits.md). An extension of the reference.
type RateLimitSpec struct {
	// Name identifies this limit for metrics, status, and audit logs.
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]{0,62}$`
	// +required
	Name string `json:"name"`

	// Scope is what has one counter: "team", each verified team (a JWT's
	// team claim, or an API key's team); "key", each API key (by its name,
	// policy.auth.apiKeys). A request with no team (or, for scope key, not
	// authenticated by an API key) is not counted by the limit.
	// +kubebuilder:validation:Enum=team;key
	// +required
	Scope RateLimitScope `json:"scope"`

	// Teams, when set, are the only teams the limit counts (each with its
	// own counter); unset counts every team.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Teams []string `json:"teams,omitempty"`

	// Keys, when set, are the only API keys (by name) a scope key limit
	// counts (each with its own counter); unset counts every key. Scope
	// key only.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Keys []string `json:"keys,omitempty"`

	// RequestsPerMinute caps the requests admitted per minute. At least one
	// of the three limits must be set.
	// +kubebuilder:validation:Minimum=1
	// +optional
	RequestsPerMinute *int64 `json:"requestsPerMinute,omitempty"`

	// InputTokensPerMinute caps the prompt tokens per minute: a request is
	// admitted while the count is under it, reserving the prompt's estimate
	// (its body's bytes / 4), which the usage the response reports replaces.
	// +kubebuilder:validation:Minimum=1
	// +optional
	InputTokensPerMinute *int64 `json:"inputTokensPerMinute,omitempty"`

	// OutputTokensPerMinute caps the completion tokens per minute: a
	// request is admitted while the count is under it, and its completion
	// is counted from the usage the response reports.
	// +kubebuilder:validation:Minimum=1
	// +optional
	OutputTokensPerMinute *int64 `json:"outputTokensPerMinute,omitempty"`
}

// BudgetSpec caps consumption for one scope over a rolling window.
type BudgetSpec struct {
	// Name identifies this budget for metrics, status, and audit logs.
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]{0,62}$`
	// +required
	Name string `json:"name"`

	// Scope determines what the budget applies to: "router" (all traffic),
	// "rule" (one named rule, see RuleName) or "team" (a request header, see
	// HeaderKey).
	// +kubebuilder:validation:Enum=router;rule;team
	// +required
	Scope BudgetScope `json:"scope"`

	// RuleName is required when Scope=rule. References a RouterRule.Name.
	// +optional
	RuleName string `json:"ruleName,omitempty"`

	// HeaderKey is the request header carrying the team identifier when
	// Scope=team. Defaults to "x-llmkube-team".
	// +optional
	HeaderKey string `json:"headerKey,omitempty"`

	// MaxTokens caps total tokens (prompt + completion) over the window.
	// Either MaxTokens or MaxUSD (or both) must be set.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxTokens *int64 `json:"maxTokens,omitempty"`

	// MaxUSD caps total estimated cost in USD over the window, computed from
	// RouterBackend.CostPerMillionTokens.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	MaxUSD string `json:"maxUSD,omitempty"`

	// WindowSeconds is the rolling window over which the cap is evaluated.
	// +kubebuilder:validation:Minimum=1
	// +optional
	WindowSeconds *int32 `json:"windowSeconds,omitempty"`
}

// ClassificationSpec configures request data classification.
type ClassificationSpec struct {
	// Mode determines how a request's classification is determined.
	// "header-only" (default) trusts the request header. "detector" runs the
	// router-proxy's content classifier on the request's texts (pii: payment
	// cards, US SSNs, IBANs, email addresses, phone numbers; phi: medical
	// record numbers, ICD-10 diagnoses, health terms next to an identifier)
	// and ignores the header; "hybrid" takes both, so a client can add a
	// classification but never remove one the classifier found. In both, a
	// request classified sensitive matches only the rules for its
	// classification and never the default route. Both need dataPlane: Proxy.
	// +kubebuilder:validation:Enum=header-only;detector;hybrid
	// +optional
	Mode ClassificationMode `json:"mode,omitempty"`

	// HeaderKey is the request header carrying the classification. Defaults to
	// "x-llmkube-classification".
	// +optional
	HeaderKey string `json:"headerKey,omitempty"`

	// SensitiveClassifications trigger fail-closed validation: any rule
	// matching one of these values must have FailClosed=true and reference
	// only local-tier backends. Defaults to ["pii", "phi"].
	// +optional
	SensitiveClassifications []string `json:"sensitiveClassifications,omitempty"`
}

// AuditLogSpec tunes audit-log destination and verbosity.
type AuditLogSpec struct {
	// Sink selects the audit-log destination: "stdout" (default), "file"
	// (FilePath inside the proxy container) or "otlp".
	// +kubebuilder:validation:Enum=stdout;file;otlp
	// +optional
	Sink AuditSink `json:"sink,omitempty"`

	// FilePath is the destination when Sink=file. Defaults to
	// "/var/log/mlx-router/audit.log".
	// +optional
	FilePath string `json:"filePath,omitempty"`

	// IncludeRequestBody includes the OpenAI request body in every audit
	// entry. Disabled by default.
	// +optional
	IncludeRequestBody bool `json:"includeRequestBody,omitempty"`

	// CallerHeader names a request header whose value is added to every audit
	// entry as caller. A header that carries a credential (Authorization,
	// Proxy-Authorization, Cookie, X-Api-Key, Api-Key, X-Goog-Api-Key) is
	// refused.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	CallerHeader string `json:"callerHeader,omitempty"`

	// LogClientAddress adds the address of the request's sender to every audit
	// entry as client. Off by default.
	// +optional
	LogClientAddress bool `json:"logClientAddress,omitempty"`

	// TrustedProxyCIDRs lists the proxies in front of the router whose
	// X-Forwarded-For is believed, as CIDRs or single addresses. Requires
	// logClientAddress.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	TrustedProxyCIDRs []string `json:"trustedProxyCIDRs,omitempty"`
}

// AuthSpec configures request authentication and authorization.
type AuthSpec struct {
	// JWT enables JSON Web Token validation: requests without a valid token
	// are rejected with HTTP 401 before any model dispatch.
	// +optional
	JWT *JWTSpec `json:"jwt,omitempty"`

	// Allowlists restricts which verified team may reach which model. Empty
	// means no authorization is enforced. A non-empty list is default-Deny.
	// Requires JWT; an entry with an empty or duplicate Team is rejected.
	// Unlike the reference, which checks an allowlist against the requested
	// (resolved) model name only, an allowlist also holds on the backend
	// that serves: a request is served only by backends whose model the
	// team's entry names, so a rule chosen by a classification label the
	// client adds, or by the content classifier, can narrow where a request
	// is served, never widen what the team may use. A rule (or the default
	// route) that leaves a team no such backend refuses its request with 403
	// model_not_allowed; it never falls through to another rule.
	// +optional
	Allowlists []AllowlistEntry `json:"allowlists,omitempty"`

	// APIKeys admits callers by API keys held in Kubernetes Secrets of the
	// router's namespace, beside or instead of JWT: each entry names a Secret
	// and the team its keys belong to. An extension of the reference, which
	// authenticates only by JWT. Every data key of a Secret is one API key:
	// the data key is the key's name (the audit records
	// "<secretName>/<dataKey>", never the value), its value the key itself
	// (surrounding whitespace trimmed), e.g. kubectl create secret generic
	// analytics-keys --from-literal=batch=<random key>. The format is Envoy
	// Gateway's apiKeyAuth credential format. A key is accepted as
	// "Authorization: Bearer <key>" or "x-api-key: <key>"; its team is
	// verified exactly as a JWT's teamClaim is: allowlists, team budgets,
	// classification and the MCP endpoint read it, and it is written to
	// jwt.headerKey (x-llmkube-team without jwt). On dataPlane Proxy the
	// router-proxy reads the Secrets from a read-only volume and takes a
	// changed Secret (rotation) without a restart. A value that is a key of
	// two entries admits nobody. See docs/api-keys.md.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=secretName
	// +optional
	APIKeys []APIKeySource `json:"apiKeys,omitempty"`
}

// APIKeySource is one Secret of API keys and the team they authenticate.
type APIKeySource struct {
	// SecretName is the Secret, in the router's namespace, whose every data
	// key is one API key (name: the data key; key: its value).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	SecretName string `json:"secretName"`

	// Team is the team every key of the Secret authenticates, as a JWT's
	// verified teamClaim would name it.
	// +kubebuilder:validation:MinLength=1
	// +required
	Team string `json:"team"`

	// ExpiresAt, when set, is when the Secret's keys stop being accepted:
	// from then on a request with one is refused 401 expired_api_key. Unset:
	// the keys do not expire (remove or rotate them to revoke).
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// JWTSpec configures JWT validation.
type JWTSpec struct {
	// Provider is a short name for the JWT provider (e.g. "keycloak").
	// +kubebuilder:validation:MinLength=1
	// +required
	Provider string `json:"provider"`

	// Issuer is the OIDC issuer URL that must match the token's "iss" claim.
	// +kubebuilder:validation:MinLength=1
	// +required
	Issuer string `json:"issuer"`

	// JWKSURI is the remote JWKS endpoint the gateway fetches signing keys
	// from. It must be https, or plain http only to a loopback or
	// cluster-local host (localhost, a loopback, private or link-local
	// address, a single-label Service name, or a name under .svc,
	// .svc.cluster.local or .cluster.local): keys fetched in plain text from
	// anywhere else could be replaced on the way. Stricter than the
	// reference, which takes any URL.
	// +kubebuilder:validation:MinLength=1
	// +required
	JWKSURI string `json:"jwksURI"`

	// TeamClaim is the JWT claim that identifies the tenant (e.g. "team"). Its
	// verified value is copied into HeaderKey.
	// +kubebuilder:validation:MinLength=1
	// +required
	TeamClaim string `json:"teamClaim"`

	// HeaderKey is the request header the verified TeamClaim value lands in.
	// Defaults to "x-llmkube-team".
	// +optional
	HeaderKey string `json:"headerKey,omitempty"`

	// Audiences, when set, are the audiences this router accepts: a token's
	// "aud" claim must name one of them (RFC 7519 §4.1.3), so a token minted
	// for another service is refused with 401. An extension of the
	// reference, which checks no audience. On dataPlane Proxy, with
	// mcpServer, the HTTP API also accepts mcpServer.resourceURL (the MCP
	// endpoint's tokens are this router's) and, without audiences, accepts
	// only it; /mcp accepts only resourceURL. Without audiences and
	// mcpServer no audience is checked. Each entry is at most 2048 bytes,
	// without surrounding whitespace; at most 64 entries.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=2048
	// +listType=set
	// +optional
	Audiences []string `json:"audiences,omitempty"`
}

// AllowlistEntry grants one team the models it may reach.
type AllowlistEntry struct {
	// Team is the verified teamClaim value this entry grants access to.
	// +kubebuilder:validation:MinLength=1
	// +required
	Team string `json:"team"`

	// Models is the set of model names this team may reach (globs: '*' any
	// run, '?' one character). Empty means all models. A request is allowed
	// when both the model it asks for and the model of the backend that
	// serves it are named. A backend's model goes by the backend's name,
	// its displayName, its external model, or its InferenceService's name
	// and modelRef; any of them names it.
	// +optional
	Models []string `json:"models,omitempty"`
}

// ProxySpec configures the managed router-proxy Deployment and Service.
type ProxySpec struct {
	// Replicas is the desired number of router-proxy pods. Defaults to 1.
	// Pinned to 1 when any backend resolves to a ModelPool member.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Image overrides the default router-proxy container image.
	// +optional
	Image string `json:"image,omitempty"`

	// ImagePullSecrets are passed through to the router-proxy pod spec.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Resources sets the pod's compute resource requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// ServiceName names the data-plane Service in front of the router-proxy
	// pods. Unset keeps the generated name, <router>-router-proxy. Must be a
	// DNS-1035 label and must not equal the admin Service's name. Ignored
	// unless dataPlane is Proxy.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// NodeSelector pins the router-proxy pod to nodes matching these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are applied to the router-proxy pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity is passed through to the router-proxy pod. The proxy pods carry
	// the stable labels app: <router>-router-proxy and
	// inference.llmkube.dev/model-router: <router> to select on.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints are passed through to the router-proxy pod.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// RuntimeClassName selects a Kubernetes RuntimeClass for the router-proxy
	// pod. Unset leaves the pod spec unchanged.
	// +optional
	RuntimeClassName string `json:"runtimeClassName,omitempty"`

	// PodLabels are merged into the router-proxy pod's labels. The operator's
	// own labels win on collision; selectors use only those.
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are merged into the router-proxy pod's annotations. The
	// operator's own annotations win on collision.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// RevisionHistoryLimit caps how many old ReplicaSets the proxy Deployment
	// keeps. Unset keeps 3; 0 keeps none.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// ResponseHeaderTimeout caps how long the proxy waits for the upstream to
	// begin sending response headers (a duration). Default 120s. Per-rule and
	// per-backend timeouts cannot extend it.
	// +optional
	ResponseHeaderTimeout string `json:"responseHeaderTimeout,omitempty"`

	// StreamIdleTimeout caps how long a response body may go without a byte
	// from the upstream once its headers have arrived (a duration). Default
	// 300s; "0s" disables the guard.
	// +optional
	StreamIdleTimeout string `json:"streamIdleTimeout,omitempty"`

	// QuarantineDuration is how long the proxy skips a backend after a 5xx or
	// network error before a half-open probe (a duration). Default 15s.
	// +optional
	QuarantineDuration string `json:"quarantineDuration,omitempty"`

	// RateLimitHold is how long the proxy skips an external backend after
	// its provider's rate limit (a 429, a Bedrock ThrottlingException, a
	// Vertex RESOURCE_EXHAUSTED) when the answer announced no reset (a
	// duration). With Retry-After or the provider's rate-limit reset
	// headers the backend is skipped until that reset, capped at
	// quotaExhaustedHold. Default 1s. Not a quarantine: the backend stays
	// healthy and is not probed harder. An extension of the reference;
	// docs/upstream-quota.md.
	// +optional
	RateLimitHold string `json:"rateLimitHold,omitempty"`

	// QuotaExhaustedHold is how long the proxy skips an external backend
	// whose provider said its quota or credit is spent (OpenAI
	// insufficient_quota, Anthropic billing_error or a credit balance too
	// low, Bedrock ServiceQuotaExceededException, a Vertex per-day quota)
	// (a duration). Default 10m. An extension of the reference;
	// docs/upstream-quota.md.
	// +optional
	QuotaExhaustedHold string `json:"quotaExhaustedHold,omitempty"`

	// DrainTimeout is how long a router-proxy replica keeps serving in-flight
	// requests after SIGTERM (a duration). Sets --shutdown-timeout and
	// terminationGracePeriodSeconds (this value plus 5s). Unset renders
	// nothing (the proxy default is 30s). Must be between 1s and 1h.
	// +optional
	DrainTimeout string `json:"drainTimeout,omitempty"`

	// PodDisruptionBudget configures the router-proxy's PodDisruptionBudget,
	// an extension of the reference, which names none. One is rendered
	// whenever replicas is more than 1 (maxUnavailable 1), so a node drain
	// or a cluster upgrade evicts the replicas one at a time instead of all
	// at once. docs/reliability.md.
	// +optional
	PodDisruptionBudget *ProxyDisruptionBudget `json:"podDisruptionBudget,omitempty"`
}

// ProxyDisruptionBudget overrides the router-proxy's PodDisruptionBudget.
type ProxyDisruptionBudget struct {
	// Enabled renders the PodDisruptionBudget (true) or none (false). Unset:
	// rendered when replicas is more than 1.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MaxUnavailable is how many router-proxy pods a voluntary disruption
	// (eviction) may take down at once. Default 1. At least 1: a budget of 0
	// would block every node drain.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxUnavailable *int32 `json:"maxUnavailable,omitempty"`
}

// MCPServerSpec configures Model Context Protocol exposure.
type MCPServerSpec struct {
	// Enabled toggles MCP exposure. Default false. Needs dataPlane: Proxy,
	// policy.auth.jwt and resourceURL.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// ResourceURL is the MCP endpoint's URL as its clients reach it, for
	// example https://models.example.com/mcp: the resource of the OAuth 2.0
	// protected-resource metadata (RFC 9728) and the audience every bearer
	// token must name (RFC 8707). An extension of the reference, which has no
	// field for it. An absolute https URL (http only for localhost) without
	// a query or fragment, at most 2048 bytes.
	// +optional
	ResourceURL string `json:"resourceURL,omitempty"`
}

// ModelRouterStatus defines the observed state of ModelRouter.
type ModelRouterStatus struct {
	// Phase is a coarse summary of the router's state.
	// +kubebuilder:validation:Enum=Pending;Provisioning;Ready;Degraded;Failed
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Endpoint is the in-cluster URL clients should hit. Populated once the
	// router-proxy Service is ready.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// ActiveRules is the count of rules that validated against current
	// backend state.
	// +optional
	ActiveRules int32 `json:"activeRules,omitempty"`

	// Backends reports the resolved address and health of every backend.
	// +optional
	Backends []BackendStatus `json:"backends,omitempty"`

	// BudgetUtilization summarises current budget consumption.
	// +optional
	BudgetUtilization []BudgetUtilization `json:"budgetUtilization,omitempty"`

	// Gateway reports dataPlane: Gateway exposure. nil in other modes.
	// +optional
	Gateway *GatewayStatus `json:"gateway,omitempty"`

	// AgentGateway reports dataPlane: AgentGateway exposure. nil in other
	// modes.
	// +optional
	AgentGateway *AgentGatewayStatus `json:"agentGateway,omitempty"`

	// LastUpdated is the timestamp of the last status reconciliation.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// conditions represent the current state of the ModelRouter resource.
	// Standard condition types: Validated, BackendsReady, Available, Degraded,
	// GatewayReady, AgentGatewayReady.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BackendStatus is the observed state of one backend.
type BackendStatus struct {
	// Name matches RouterBackend.Name.
	// +required
	Name string `json:"name"`

	// Tier mirrors RouterBackend.Tier for convenience.
	// +optional
	Tier Tier `json:"tier,omitempty"`

	// Address is the resolved upstream URL the router-proxy dispatches to.
	// +optional
	Address string `json:"address,omitempty"`

	// Healthy reflects the most recent probe results: it turns false after
	// two failed probes in a row and true again at the next passing one
	// (one lost probe refuses no traffic). The most recent probe's time is
	// LastProbeTime and a failure's reason is in Message.
	// +optional
	Healthy bool `json:"healthy,omitempty"`

	// LastProbeTime is when the proxy last completed a health probe.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`

	// Message provides extra context, especially when Healthy is false.
	// +optional
	Message string `json:"message,omitempty"`
}

// BudgetUtilization is the consumption of one budget.
type BudgetUtilization struct {
	// Name matches BudgetSpec.Name.
	// +required
	Name string `json:"name"`

	// TokensUsed is the rolling-window token count.
	// +optional
	TokensUsed int64 `json:"tokensUsed,omitempty"`

	// USDUsed is the rolling-window estimated cost in USD.
	// +optional
	USDUsed string `json:"usdUsed,omitempty"`

	// Utilization is the fraction of the budget consumed, 0.0 to 1.0; the
	// maximum of the two when both MaxTokens and MaxUSD are set.
	// +optional
	Utilization string `json:"utilization,omitempty"`
}

// GatewayStatus is the observed state of dataPlane: Gateway exposure.
type GatewayStatus struct {
	// RouteReady indicates the AIGatewayRoute and its backing resources
	// reconciled.
	// +optional
	RouteReady bool `json:"routeReady,omitempty"`

	// Endpoint is the gateway address clients send OpenAI requests to.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// ModelName is the resolved model-name match value (InferenceService path
	// only; empty for ModelRouter).
	// +optional
	ModelName string `json:"modelName,omitempty"`

	// AuthEnabled indicates a SecurityPolicy enforcing JWT authentication was
	// compiled for this route.
	// +optional
	AuthEnabled bool `json:"authEnabled,omitempty"`
}

// AgentGatewayStatus is the observed state of dataPlane: AgentGateway
// exposure.
type AgentGatewayStatus struct {
	// PoolReady indicates the generated InferencePool(s) reconciled.
	// +optional
	PoolReady bool `json:"poolReady,omitempty"`

	// Endpoint is the agentgateway address clients send OpenAI requests to.
	// Empty until the pool is ready.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
}
