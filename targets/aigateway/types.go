package aigateway

import (
	"github.com/llmkube/llmkube-compile/targets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Envoy AI Gateway v1beta1 kinds, limited to the fields this target
// emits. Field names and JSON tags follow
// ../shared/crds/envoy-ai-gateway (storage version v1beta1).

// AIGroupVersion is aigateway.envoyproxy.io/v1beta1.
var AIGroupVersion = schema.GroupVersion{Group: "aigateway.envoyproxy.io", Version: "v1beta1"}

// AIServiceBackend is one upstream as the AI Gateway sees it.
type AIServiceBackend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AIServiceBackendSpec `json:"spec"`
}

// AIServiceBackendSpec is the subset of fields emitted.
type AIServiceBackendSpec struct {
	Schema     VersionedAPISchema `json:"schema"`
	BackendRef BackendObjectRef   `json:"backendRef"`
	// HeaderMutation is applied by the AI Gateway's upstream filter before
	// the backend's credential is set (its removals go first, so a removed
	// Authorization is then set again by an APIKey BackendSecurityPolicy).
	HeaderMutation *HeaderMutation `json:"headerMutation,omitempty"`
}

// HeaderMutation removes request headers before they reach the backend
// (header names lowercase: the AI Gateway compares them with Envoy's
// lowercased header map).
type HeaderMutation struct {
	Remove []string `json:"remove,omitempty"`
}

// VersionedAPISchema names the API an upstream speaks.
type VersionedAPISchema struct {
	Name   string `json:"name"`
	Prefix string `json:"prefix,omitempty"`
}

// BackendObjectRef refers to an Envoy Gateway Backend (group and kind are
// always set: the CRD defaults them to a Service, which CEL then refuses).
type BackendObjectRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// AIGatewayRoute is the AI Gateway's multi-rule route. Its controller
// generates an HTTPRoute of the same name with the same rules, in order,
// plus a trailing path-only "route-not-found" rule.
type AIGatewayRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AIGatewayRouteSpec `json:"spec"`
}

// AIGatewayRouteSpec is the subset of fields emitted.
type AIGatewayRouteSpec struct {
	ParentRefs []gwapiv1.ParentReference `json:"parentRefs,omitempty"`
	// Hostnames are copied onto the HTTPRoute the AI Gateway generates
	// (internal/controller/ai_gateway_route.go).
	Hostnames       []gwapiv1.Hostname `json:"hostnames,omitempty"`
	Rules           []RouteRule        `json:"rules"`
	LLMRequestCosts []LLMRequestCost   `json:"llmRequestCosts,omitempty"`
}

// RouteRule is one AIGatewayRoute rule.
type RouteRule struct {
	Name              string            `json:"name,omitempty"`
	Matches           []RouteMatch      `json:"matches,omitempty"`
	BackendRefs       []RouteBackendRef `json:"backendRefs,omitempty"`
	Timeouts          *RouteTimeouts    `json:"timeouts,omitempty"`
	StreamIdleTimeout string            `json:"streamIdleTimeout,omitempty"`
}

// RouteMatch ANDs its header matches.
type RouteMatch struct {
	Headers []HeaderMatch `json:"headers,omitempty"`
}

// HeaderMatch matches one header exactly or by RE2 regular expression
// (full match).
type HeaderMatch struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Header match types.
const (
	MatchExact = "Exact"
	MatchRegex = "RegularExpression"
)

// RouteBackendRef names an AIServiceBackend.
type RouteBackendRef struct {
	Name              string `json:"name"`
	Weight            *int32 `json:"weight,omitempty"`
	Priority          *int32 `json:"priority,omitempty"`
	ModelNameOverride string `json:"modelNameOverride,omitempty"`
}

// RouteTimeouts are Gateway API duration strings.
type RouteTimeouts struct {
	Request string `json:"request,omitempty"`
}

// LLMRequestCost publishes a per-request cost into dynamic metadata
// (namespace io.envoy.ai_gateway) for rate limiting.
type LLMRequestCost struct {
	MetadataKey string `json:"metadataKey"`
	Type        string `json:"type"`
	CEL         string `json:"cel,omitempty"`
}

// BackendSecurityPolicy injects upstream credentials.
type BackendSecurityPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BackendSecurityPolicySpec `json:"spec"`
}

// BackendSecurityPolicySpec is the subset of fields emitted.
type BackendSecurityPolicySpec struct {
	TargetRefs      []PolicyTargetRef `json:"targetRefs"`
	Type            string            `json:"type"`
	APIKey          *SecretAPIKey     `json:"apiKey,omitempty"`
	AnthropicAPIKey *SecretAPIKey     `json:"anthropicAPIKey,omitempty"`
}

// PolicyTargetRef targets an AIServiceBackend.
type PolicyTargetRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// SecretAPIKey reads key "apiKey" of the named Secret.
type SecretAPIKey struct {
	SecretRef SecretRef `json:"secretRef"`
}

// SecretRef names a Secret in the policy's namespace.
type SecretRef struct {
	Name string `json:"name"`
}

// DeepCopyObject implementations: these objects are built, converted once
// and dropped, so a JSON round trip is enough.
func (in *AIServiceBackend) DeepCopyObject() runtime.Object {
	return targets.DeepCopyJSON(in, &AIServiceBackend{})
}

// DeepCopyObject implements runtime.Object.
func (in *AIGatewayRoute) DeepCopyObject() runtime.Object {
	return targets.DeepCopyJSON(in, &AIGatewayRoute{})
}

// DeepCopyObject implements runtime.Object.
func (in *BackendSecurityPolicy) DeepCopyObject() runtime.Object {
	return targets.DeepCopyJSON(in, &BackendSecurityPolicy{})
}
