package routingtest

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
)

// APIKey is a case's API key (request.apiKey): a key of the router's
// Secret SecretName (policy.auth.apiKeys) named Name ("" : routing-test),
// sent as Authorization: Bearer, or as x-api-key with Header "x-api-key";
// Invalid sends a key the router does not hold.
type APIKey struct {
	SecretName string
	Name       string
	Header     string
	Invalid    bool
}

// apiKey decodes request.apiKey.
func (d *decoder) apiKey(p *field.Path, v any) *APIKey {
	m := d.objectAt(p, v)
	d.fields(p, m, []string{"secretName", "name", "header", "invalid"})
	k := &APIKey{SecretName: d.str(p.Child("secretName"), m["secretName"]), Name: d.str(p.Child("name"), m["name"]), Header: d.str(p.Child("header"), m["header"])}
	if iv, ok := m["invalid"]; ok {
		b, isBool := iv.(bool)
		if !isBool {
			d.errorf(p.Child("invalid"), "WrongType", "must be a boolean, not %s", typeName(iv))
		}
		k.Invalid = b
	}
	switch {
	case k.Header != "" && !strings.EqualFold(k.Header, "x-api-key") && !strings.EqualFold(k.Header, "authorization"):
		d.errorf(p.Child("header"), "UnknownValue", "header %q: send the key as authorization (Bearer, the default) or x-api-key", k.Header)
	case k.SecretName == "" && !k.Invalid:
		d.errorf(p.Child("secretName"), "RequiredField", "name the Secret of policy.auth.apiKeys the key is in, or set invalid: true for a key the router does not hold")
	}
	return k
}

// simulated is the key as the planes' request carries it.
func (k *APIKey) simulated() *simulate.APIKey {
	out := &simulate.APIKey{SecretName: k.SecretName, Name: k.Name, Invalid: k.Invalid}
	if strings.EqualFold(k.Header, "x-api-key") {
		out.Header = simulate.APIKeyHeader
	}
	return out
}

// keyTeam is the team a case's key authenticates on r: its Secret's entry's
// team; "" for an invalid key or a Secret r does not name.
func keyTeam(r *ir.Router, k *APIKey) string {
	a := r.Policy.Auth
	if a == nil || k == nil || k.Invalid {
		return ""
	}
	for _, s := range a.APIKeys {
		if s.SecretName == k.SecretName {
			return s.Team
		}
	}
	return ""
}
