package agentgateway

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The parts of each upstream kind the model reads, decoded from the
// objects' JSON (field names as in ../shared/crds and Gateway API v1).

type meta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
}

type parentRef struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	SectionName string `json:"sectionName"`
}

type httpRoute struct {
	Meta meta `json:"metadata"`
	Spec struct {
		ParentRefs []parentRef `json:"parentRefs"`
		Hostnames  []string    `json:"hostnames"`
		Rules      []struct {
			Name        string       `json:"name"`
			Matches     []routeMatch `json:"matches"`
			BackendRefs []struct {
				Group string `json:"group"`
				Kind  string `json:"kind"`
				Name  string `json:"name"`
			} `json:"backendRefs"`
		} `json:"rules"`
	} `json:"spec"`
}

type routeMatch struct {
	Path *struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"path"`
	Method  string `json:"method"`
	Headers []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
	QueryParams []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"queryParams"`
}

type targetRef struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName"`
}

// targetSelector attaches a policy to every same-namespace object of a
// kind whose labels include matchLabels (the CRD's other attachment form:
// exactly one of targetRefs and targetSelectors per policy).
type targetSelector struct {
	Group       string            `json:"group"`
	Kind        string            `json:"kind"`
	MatchLabels map[string]string `json:"matchLabels"`
	SectionName string            `json:"sectionName"`
}

type authorization struct {
	Action string `json:"action"`
	Policy struct {
		MatchExpressions []string `json:"matchExpressions"`
	} `json:"policy"`
}

type headerExpr struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type policy struct {
	Meta meta `json:"metadata"`
	Spec struct {
		TargetRefs      []targetRef      `json:"targetRefs"`
		TargetSelectors []targetSelector `json:"targetSelectors"`
		Strategy        *struct {
			Inheritance string `json:"inheritance"`
		} `json:"strategy"`
		Traffic *struct {
			Phase             string `json:"phase"`
			JWTAuthentication *struct {
				Mode      string `json:"mode"`
				Providers []struct {
					Issuer    string   `json:"issuer"`
					Audiences []string `json:"audiences"`
				} `json:"providers"`
			} `json:"jwtAuthentication"`
			Authorization  *authorization `json:"authorization"`
			Transformation *struct {
				Request *struct {
					Set    []headerExpr `json:"set"`
					Add    []headerExpr `json:"add"`
					Remove []string     `json:"remove"`
					// Body is a CEL expression whose value replaces the body.
					Body string `json:"body"`
				} `json:"request"`
			} `json:"transformation"`
			DirectResponse *struct {
				Status int    `json:"status"`
				Body   string `json:"body"`
			} `json:"directResponse"`
		} `json:"traffic"`
	} `json:"spec"`
}

// attaches reports whether the policy attaches to the named object of a
// kind in its namespace (section "" the whole object), by a targetRef or by
// a targetSelector whose matchLabels the object's labels hold.
func (p *policy) attaches(kind string, obj meta, section string) bool {
	if p.Meta.Namespace != obj.Namespace {
		return false
	}
	for _, t := range p.Spec.TargetRefs {
		if t.Kind == kind && t.Name == obj.Name && t.SectionName == section {
			return true
		}
	}
	for _, t := range p.Spec.TargetSelectors {
		if t.Kind == kind && t.SectionName == section && labelsHold(obj.Labels, t.MatchLabels) {
			return true
		}
	}
	return false
}

// labelsHold: every want label is on the object with the same value (an
// empty matchLabels selects every object of the kind).
func labelsHold(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func (p *policy) override() bool {
	return p.Spec.Strategy != nil && p.Spec.Strategy.Inheritance == "Override"
}

func (p *policy) preRouting() bool {
	return p.Spec.Traffic != nil && p.Spec.Traffic.Phase == "PreRouting"
}

type agwModel struct {
	Meta meta `json:"metadata"`
	Spec struct {
		ParentRefs []parentRef `json:"parentRefs"`
		Match      *struct {
			Model string `json:"model"`
		} `json:"match"`
		Visibility string `json:"visibility"`
		Policies   *struct {
			Authorization *authorization `json:"authorization"`
			// Transformations set fields of the request body sent to the
			// provider, each to its CEL expression's value.
			Transformations []struct {
				Field      string `json:"field"`
				Expression string `json:"expression"`
			} `json:"transformations"`
		} `json:"policies"`
	} `json:"spec"`
}

// modelName is what match.model matches (metadata.name when unset).
func (m *agwModel) modelName() string {
	if m.Spec.Match != nil && m.Spec.Match.Model != "" {
		return m.Spec.Match.Model
	}
	return m.Meta.Name
}

func decode(o *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// appendDecoded decodes o as a T onto list.
func appendDecoded[T any](o *unstructured.Unstructured, list *[]*T) error {
	v := new(T)
	if err := decode(o, v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}
