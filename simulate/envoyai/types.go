package envoyai

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Envoy AI Gateway kinds as this model reads them, written from the
// CRDs of Envoy AI Gateway v1.1.0 (c217da8, storage version v1beta1;
// copies in ../shared/crds/envoy-ai-gateway, from
// manifests/charts/ai-gateway-crds-helm/templates/) and declared here on
// their own, not shared with targets/aigateway. Each struct carries the
// fields the model reads and the ones it knowingly ignores (they change
// nothing on the request path it follows: the API schema, costs, timeouts,
// the body's model override); decode refuses every other field, so a field
// the emitter misspells, or one the CRD declares that would change routing
// and that the model does not follow (a route backendRef's headerMutation,
// a bodyMutation, a backendRef namespace), is an error, not ignored.
// TestTypesFollowTheCRDs checks every JSON name and type here against the
// CRD's OpenAPI schema.

// ModelHeader is the header the AI Gateway sets from the body's model and
// routes on: AIModelHeaderKey, api/v1beta1/shared_types.go line 101 of
// envoyproxy/ai-gateway v1.1.0 (c217da8).
const ModelHeader = "x-ai-eg-model"

// aiGroupVersion is the version of the CRDs the model follows.
const aiGroupVersion = "aigateway.envoyproxy.io/v1beta1"

// object is what every kind shares: apiVersion, kind, metadata and a
// status the model does not read.
type object struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	metav1.ObjectMeta `json:"metadata"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// aiGatewayRoute is an AIGatewayRoute.
type aiGatewayRoute struct {
	object
	Spec struct {
		ParentRefs []gwapiv1.ParentReference `json:"parentRefs,omitempty"`
		Hostnames  []gwapiv1.Hostname        `json:"hostnames,omitempty"`
		Rules      []routeRule               `json:"rules,omitempty"`
		// LLMRequestCosts publish token counts for rate limiting; the
		// model charges budgets from BackendTrafficPolicies only.
		LLMRequestCosts []struct {
			MetadataKey string `json:"metadataKey"`
			Type        string `json:"type"`
			CEL         string `json:"cel,omitempty"`
		} `json:"llmRequestCosts,omitempty"`
	} `json:"spec"`
}

// routeRule is spec.rules[].
type routeRule struct {
	Name        string            `json:"name,omitempty"`
	Matches     []routeMatch      `json:"matches,omitempty"`
	BackendRefs []routeBackendRef `json:"backendRefs,omitempty"`
	Timeouts    *struct {
		Request        string `json:"request,omitempty"`
		BackendRequest string `json:"backendRequest,omitempty"`
	} `json:"timeouts,omitempty"`
	StreamIdleTimeout string `json:"streamIdleTimeout,omitempty"`
	ModelsOwnedBy     string `json:"modelsOwnedBy,omitempty"`
	ModelsCreatedAt   string `json:"modelsCreatedAt,omitempty"`
}

// routeMatch is spec.rules[].matches[]: its header matches ANDed.
type routeMatch struct {
	Headers []headerMatch `json:"headers,omitempty"`
}

// headerMatch is spec.rules[].matches[].headers[]: type Exact (the CRD's
// default, an absent type) or RegularExpression (RE2, full match).
type headerMatch struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

const matchRegex = "RegularExpression"

// headerMatchTypes are the CRD's enum of headers[].type.
var headerMatchTypes = []string{"Exact", matchRegex}

// routeBackendRef is spec.rules[].backendRefs[]: an AIServiceBackend of
// the route's namespace (group and kind absent). weight defaults to 1 and
// priority to 0 in the CRD.
type routeBackendRef struct {
	Name     string `json:"name"`
	Group    string `json:"group,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Weight   *int32 `json:"weight,omitempty"`
	Priority *int32 `json:"priority,omitempty"`
	// ModelNameOverride rewrites the model the backend is sent; routing
	// is already decided.
	ModelNameOverride string `json:"modelNameOverride,omitempty"`
}

// aiServiceBackend is an AIServiceBackend.
type aiServiceBackend struct {
	object
	Spec struct {
		Schema struct {
			Name    string `json:"name"`
			Prefix  string `json:"prefix,omitempty"`
			Version string `json:"version,omitempty"`
		} `json:"schema"`
		BackendRef struct {
			Group string `json:"group,omitempty"`
			Kind  string `json:"kind,omitempty"`
			Name  string `json:"name"`
		} `json:"backendRef"`
		// HeaderMutation: the model follows its removals (set is refused).
		HeaderMutation *struct {
			Remove []string `json:"remove,omitempty"`
		} `json:"headerMutation,omitempty"`
	} `json:"spec"`
}

// backendSecurityPolicy is a BackendSecurityPolicy of type APIKey or
// AnthropicAPIKey (credentialTypes; the others are refused).
type backendSecurityPolicy struct {
	object
	Spec struct {
		TargetRefs []struct {
			Group string `json:"group"`
			Kind  string `json:"kind"`
			Name  string `json:"name"`
		} `json:"targetRefs,omitempty"`
		Type            string        `json:"type"`
		APIKey          *secretAPIKey `json:"apiKey,omitempty"`
		AnthropicAPIKey *secretAPIKey `json:"anthropicAPIKey,omitempty"`
	} `json:"spec"`
}

// credentialTypes are the BackendSecurityPolicy types the model follows,
// of the CRD's enum of spec.type.
var credentialTypes = []string{"APIKey", "AnthropicAPIKey"}

type secretAPIKey struct {
	SecretRef struct {
		Name string `json:"name"`
	} `json:"secretRef"`
}

// decode reads an AI Gateway object strictly: the version the model
// follows, and no field the structs above do not declare.
func decode(u *unstructured.Unstructured, into any) error {
	if u.GetAPIVersion() != aiGroupVersion {
		return fmt.Errorf("apiVersion %q: the model follows %s", u.GetAPIVersion(), aiGroupVersion)
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("not an %s the model follows: %w", u.GetKind(), err)
	}
	return nil
}
