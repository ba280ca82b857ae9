package aigateway

import (
	"strings"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// backendSecurityPolicies emits a BackendSecurityPolicy per external
// backend with credentials (the provider's API key, set on the way out), or
// refuses the providers whose signing the gateway needs in another layout.
// It returns how many it emitted.
func (e *emitter) backendSecurityPolicies(bk aiBackends) int {
	n := 0
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		if b.External != nil && e.credentials(i, b, bk[b.Name].name) {
			n++
		}
	}
	return n
}

// credentials maps an external backend's Secret onto a
// BackendSecurityPolicy on its AIServiceBackend name, or refuses; it
// reports whether it emitted one.
func (e *emitter) credentials(i int, b *ir.Backend, name string) bool {
	x := b.External
	p := diag.Backend(i).Child("external", "credentialsSecretRef")
	switch x.Provider {
	case ir.ProviderBedrock, ir.ProviderVertexAI:
		if x.CredentialsSecret == "" {
			e.diags.ErrorAt(p, ReasonCredentialsRequired,
				"the gateway must sign every %s request, so the backend needs credentials; set credentialsSecretRef (and see the next refusal for the layout)", x.Provider)
			return false
		}
		want := "an AWS shared-credentials file under key \"credentials\" plus the region on the policy"
		if x.Provider == ir.ProviderVertexAI {
			want = "a service-account file plus the GCP project name and region on the policy"
		}
		keys := make([]string, 0, len(x.Credentials))
		for _, c := range x.Credentials {
			keys = append(keys, c.Key)
		}
		e.diags.ErrorAt(p, ReasonCredentialsLayoutUnsupported,
			"Secret %q holds %s as separate keys (%s), the layout the router-proxy reads; the gateway's BackendSecurityPolicy needs %s, which this Secret layout and ModelRouter do not provide. Use the Proxy data plane for this backend",
			x.CredentialsSecret, x.Provider, strings.Join(keys, ", "), want)
		return false
	}
	if x.CredentialsSecret == "" {
		return false
	}
	spec := BackendSecurityPolicySpec{
		TargetRefs: []PolicyTargetRef{{Group: aiGatewayGroup, Kind: "AIServiceBackend", Name: name}},
	}
	key := &SecretAPIKey{SecretRef: SecretRef{Name: x.CredentialsSecret}}
	if x.Provider == ir.ProviderAnthropic {
		spec.Type, spec.AnthropicAPIKey = "AnthropicAPIKey", key
	} else {
		spec.Type, spec.APIKey = "APIKey", key
	}
	e.add(&BackendSecurityPolicy{ObjectMeta: e.meta(name), Spec: spec}, gvkBSP)
	conventional := ""
	if len(x.Credentials) > 0 {
		conventional = x.Credentials[0].Key
	}
	e.diags.WarnAt(p, ReasonGatewaySecretKey,
		"the gateway reads the API key from key \"apiKey\" of Secret %q, the router-proxy from key %s; the Secret must hold the key under \"apiKey\" for the gateway (a missing key fails every request to %s)",
		x.CredentialsSecret, conventional, b.Name)
	return true
}
