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
		TargetRefs []targetRef `json:"targetRefs"`
		Strategy   *struct {
			Inheritance string `json:"inheritance"`
		} `json:"strategy"`
		Traffic *struct {
			Phase             string `json:"phase"`
			JWTAuthentication *struct {
				Mode      string `json:"mode"`
				Providers []struct {
					Issuer string `json:"issuer"`
				} `json:"providers"`
			} `json:"jwtAuthentication"`
			Authorization  *authorization `json:"authorization"`
			Transformation *struct {
				Request *struct {
					Set    []headerExpr `json:"set"`
					Add    []headerExpr `json:"add"`
					Remove []string     `json:"remove"`
				} `json:"request"`
			} `json:"transformation"`
			DirectResponse *struct {
				Status int    `json:"status"`
				Body   string `json:"body"`
			} `json:"directResponse"`
		} `json:"traffic"`
	} `json:"spec"`
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
