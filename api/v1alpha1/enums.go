/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import "github.com/llmkube/llmkube-compile/api/wellknown"

// The enum validation markers sit on the fields, not on these types, so a
// status field can reuse a type (BackendStatus.Tier) without an enum.

// DataPlane selects how a ModelRouter serves traffic.
type DataPlane string

const (
	DataPlaneProxy        DataPlane = "Proxy"
	DataPlaneGateway      DataPlane = "Gateway"
	DataPlaneAgentGateway DataPlane = "AgentGateway"

	// DefaultDataPlane is the reference's spec.dataPlane when unset, next
	// to the planes (compiler.DefaultDataPlane applies it: the compiler
	// names no plane).
	DefaultDataPlane = DataPlaneProxy
)

// DefaultRouteStrategy decides what happens when no rule matches.
type DefaultRouteStrategy string

const (
	DefaultRouteStatic           DefaultRouteStrategy = "Static"
	DefaultRouteBackendNameMatch DefaultRouteStrategy = "BackendNameMatch"
)

// Tier classifies a backend as in-cluster (local) or egressing (cloud).
type Tier string

const (
	TierLocal Tier = "local"
	TierCloud Tier = "cloud"
)

// Provider identifies an external backend's upstream API surface.
type Provider string

const (
	ProviderAnthropic Provider = "anthropic"
	ProviderOpenAI    Provider = "openai"
	ProviderBedrock   Provider = "bedrock"
	ProviderVertexAI  Provider = "vertex_ai"
	ProviderLiteLLM   Provider = "litellm"
)

// AgentGatewayRouting selects the AgentGateway compile target.
type AgentGatewayRouting string

const (
	RoutingInferencePool AgentGatewayRouting = "InferencePool"
	RoutingModel         AgentGatewayRouting = "Model"
)

// Resolution selects how a local backend's upstream address is resolved.
type Resolution string

const (
	ResolutionService  Resolution = "service"
	ResolutionEndpoint Resolution = "endpoint"
)

// BalancingMode selects how requests are placed across a backend's pods.
type BalancingMode string

const (
	BalancingRoundRobin BalancingMode = "RoundRobin"
	BalancingLoadAware  BalancingMode = "LoadAware"
)

// TaskComplexity is the inbound complexity hint a rule can match.
type TaskComplexity string

const (
	TaskComplexitySimple   TaskComplexity = "simple"
	TaskComplexityModerate TaskComplexity = "moderate"
	TaskComplexityComplex  TaskComplexity = "complex"
)

// Strategy selects how a rule uses its backends.
type Strategy string

const (
	StrategyPrimaryFallback Strategy = wellknown.StrategyPrimaryFallback
	StrategyWeighted        Strategy = wellknown.StrategyWeighted
	StrategyShadow          Strategy = wellknown.StrategyShadow
)

// PoolActivation decides how a rule treats a non-resident ModelPool member.
type PoolActivation string

const (
	PoolActivationWait   PoolActivation = wellknown.PoolActivationWait
	PoolActivationIfIdle PoolActivation = wellknown.PoolActivationIfIdle
)

// EndpointType is the Kubernetes Service type of an endpoint.
type EndpointType string

const (
	EndpointTypeClusterIP    EndpointType = "ClusterIP"
	EndpointTypeNodePort     EndpointType = "NodePort"
	EndpointTypeLoadBalancer EndpointType = "LoadBalancer"
)

// ExternalTrafficPolicy is an endpoint Service's externalTrafficPolicy.
type ExternalTrafficPolicy string

const (
	ExternalTrafficPolicyCluster ExternalTrafficPolicy = "Cluster"
	ExternalTrafficPolicyLocal   ExternalTrafficPolicy = "Local"
)

// RateLimitScope is what one rate-limit counter belongs to.
type RateLimitScope string

const (
	RateLimitScopeTeam RateLimitScope = "team"
	RateLimitScopeKey  RateLimitScope = "key"
)

// BudgetScope determines what a budget applies to.
type BudgetScope string

const (
	ScopeRouter BudgetScope = "router"
	ScopeRule   BudgetScope = "rule"
	ScopeTeam   BudgetScope = "team"
)

// ClassificationMode determines how a request's classification is found.
type ClassificationMode string

const (
	ClassificationHeaderOnly ClassificationMode = "header-only"
	ClassificationDetector   ClassificationMode = "detector"
	ClassificationHybrid     ClassificationMode = "hybrid"
)

// AuditSink selects the audit-log destination.
type AuditSink string

const (
	SinkStdout AuditSink = "stdout"
	SinkFile   AuditSink = "file"
	SinkOTLP   AuditSink = "otlp"
)

// Phase is a coarse summary of a ModelRouter's state.
type Phase string

const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseReady        Phase = "Ready"
	PhaseDegraded     Phase = "Degraded"
	PhaseFailed       Phase = "Failed"
)

// Condition types of status.conditions.
const (
	// ConditionValidated: the spec passed static validation.
	ConditionValidated = "Validated"
	// ConditionBackendsReady: all referenced backends are reachable and healthy.
	ConditionBackendsReady = "BackendsReady"
	// ConditionAvailable: the router-proxy is serving traffic.
	ConditionAvailable = "Available"
	// ConditionDegraded: at least one backend is unhealthy but the router can
	// still serve other routes.
	ConditionDegraded = "Degraded"
	// ConditionGatewayReady: (dataPlane: Gateway) the gateway resources
	// reconciled.
	ConditionGatewayReady = "GatewayReady"
	// ConditionAgentGatewayReady: (dataPlane: AgentGateway) the InferencePool,
	// HTTPRoute and AgentgatewayPolicy reconciled.
	ConditionAgentGatewayReady = "AgentGatewayReady"
	// ConditionMCPServing: (spec.mcpServer.enabled) the router-proxy serves
	// the MCP endpoint at /mcp; absent when MCP is not enabled.
	ConditionMCPServing = "MCPServing"
)

// ReadyCondition is the condition type that reports a data plane's
// readiness: Available for the router-proxy, <plane>Ready for a gateway.
func ReadyCondition(dp DataPlane) string {
	switch dp {
	case DataPlaneGateway:
		return ConditionGatewayReady
	case DataPlaneAgentGateway:
		return ConditionAgentGatewayReady
	}
	return ConditionAvailable
}
