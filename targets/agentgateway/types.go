package agentgateway

import (
	"github.com/llmkube/llmkube-compile/targets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The agentgateway.dev/v1alpha1 types this target emits, limited to the
// fields it sets. Field names and shapes follow the CRDs in
// ../shared/crds/agentgateway (the newest, top-level copies); the envtest
// suite applies every golden output to those CRDs with strict field
// validation, so a misspelt field fails a test.

// GroupVersion is agentgateway's API group and its only version.
var GroupVersion = schema.GroupVersion{Group: "agentgateway.dev", Version: "v1alpha1"}

// Kinds and groups referenced by the generated objects.
const (
	gatewayAPIGroup = "gateway.networking.k8s.io"
	inferenceGroup  = "inference.networking.k8s.io"
)

// AgentgatewayPolicy attaches traffic policy to Gateways, routes or backends.
type AgentgatewayPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PolicySpec `json:"spec"`
}

// PolicySpec is the part of AgentgatewayPolicy.spec this target sets.
type PolicySpec struct {
	TargetRefs []PolicyTargetRef `json:"targetRefs"`
	Traffic    *TrafficPolicy    `json:"traffic,omitempty"`
}

// PolicyTargetRef names what a policy attaches to (same namespace); with
// SectionName, one listener of a Gateway or one rule of a route.
type PolicyTargetRef struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

// TrafficPolicy is spec.traffic.
type TrafficPolicy struct {
	// Phase is PostRouting (the default) or PreRouting.
	Phase             string             `json:"phase,omitempty"`
	JWTAuthentication *JWTAuthentication `json:"jwtAuthentication,omitempty"`
	Authorization     *Authorization     `json:"authorization,omitempty"`
	Transformation    *Transformation    `json:"transformation,omitempty"`
	DirectResponse    *DirectResponse    `json:"directResponse,omitempty"`
}

// DirectResponse is spec.traffic.directResponse: agentgateway answers with
// it after the route's authentication and authorization, before any backend.
type DirectResponse struct {
	Status int32  `json:"status"`
	Body   string `json:"body,omitempty"`
}

// JWTAuthentication is spec.traffic.jwtAuthentication.
type JWTAuthentication struct {
	// Mode Strict refuses a request without a valid token.
	Mode      string        `json:"mode"`
	Providers []JWTProvider `json:"providers"`
}

// JWTProvider is one accepted issuer; with Audiences, a token's aud must
// name one of them (unset: any audience).
type JWTProvider struct {
	Issuer    string   `json:"issuer"`
	Audiences []string `json:"audiences,omitempty"`
	JWKS      JWKS     `json:"jwks"`
}

// JWKS is where a provider's keys come from.
type JWKS struct {
	Remote *RemoteJWKS `json:"remote,omitempty"`
}

// RemoteJWKS fetches the keys from a URL.
type RemoteJWKS struct {
	URL string `json:"url"`
}

// Authorization is spec.traffic.authorization: CEL conditions over the
// request and the verified claims.
type Authorization struct {
	Action string              `json:"action"`
	Policy AuthorizationPolicy `json:"policy"`
}

// AuthorizationPolicy lists the conditions; with Allow, a request that
// meets none is denied.
type AuthorizationPolicy struct {
	MatchExpressions []string `json:"matchExpressions"`
}

// Transformation is spec.traffic.transformation.
type Transformation struct {
	Request *TransformationSpec `json:"request,omitempty"`
}

// TransformationSpec sets headers from CEL expressions and, with Body,
// replaces the request body with a CEL expression's value (a string or
// bytes as they are; agentgateway sends an empty body when it fails).
type TransformationSpec struct {
	Set    []HeaderExpression `json:"set,omitempty"`
	Remove []string           `json:"remove,omitempty"`
	Body   string             `json:"body,omitempty"`
}

// HeaderExpression sets a header to the value of a CEL expression.
type HeaderExpression struct {
	Name string `json:"name"`
	// Value is a CEL expression, not a literal.
	Value string `json:"value"`
}

// AgentgatewayModel is one model served by agentgateway's model router.
type AgentgatewayModel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelSpec `json:"spec"`
}

// ModelSpec is the part of AgentgatewayModel.spec this target sets: a
// concrete model with the Custom provider.
type ModelSpec struct {
	ParentRefs []ParentRef    `json:"parentRefs"`
	Match      *ModelMatch    `json:"match,omitempty"`
	Provider   string         `json:"provider,omitempty"`
	Custom     *CustomTarget  `json:"custom,omitempty"`
	Policies   *ModelPolicies `json:"policies,omitempty"`
}

// ModelPolicies is AgentgatewayModel.spec.policies: authorization is
// evaluated by the model router on the model it resolved.
type ModelPolicies struct {
	Authorization *Authorization `json:"authorization,omitempty"`
	// Transformations set fields of the request body sent to the model's
	// provider, each to a CEL expression's value: the served model name.
	Transformations []FieldTransformation `json:"transformations,omitempty"`
}

// FieldTransformation sets the request body's Field to Expression's value.
type FieldTransformation struct {
	Field      string `json:"field"`
	Expression string `json:"expression"`
}

// ParentRef is a Gateway API ParentReference.
type ParentRef struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace,omitempty"`
	SectionName string `json:"sectionName,omitempty"`
}

// ModelMatch selects the requests (by their body's model) this model serves.
type ModelMatch struct {
	Model string `json:"model,omitempty"`
}

// CustomTarget is a self-hosted OpenAI-compatible server.
type CustomTarget struct {
	BackendRef BackendRef     `json:"backendRef"`
	Formats    []CustomFormat `json:"formats"`
}

// BackendRef is a same-namespace Service (with port) or InferencePool.
type BackendRef struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Name  string `json:"name"`
	Port  int32  `json:"port,omitempty"`
}

// CustomFormat is an API format the custom server speaks.
type CustomFormat struct {
	Type string `json:"type"`
}

// DeepCopyObject implements runtime.Object.
func (p *AgentgatewayPolicy) DeepCopyObject() runtime.Object {
	return targets.DeepCopyJSON(p, &AgentgatewayPolicy{})
}

// DeepCopyObject implements runtime.Object.
func (m *AgentgatewayModel) DeepCopyObject() runtime.Object {
	return targets.DeepCopyJSON(m, &AgentgatewayModel{})
}
