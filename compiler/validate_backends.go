package compiler

import (
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// idleTimeoutRule bounds balancing.sessionAffinity.idleTimeout.
var idleTimeoutRule = durationRule{min: time.Minute, max: 24 * time.Hour}

func (v *validator) checkBackends() {
	names := make([]string, len(v.s.Backends))
	for i := range v.s.Backends {
		names[i] = v.s.Backends[i].Name
		path := diag.Backend(i)
		b := &v.s.Backends[i]
		v.checkBackendSource(path, b)
		v.checkExternalURL(path.Child("external"), b.External)
		v.checkBalancing(path, b)
		v.cappedTimeout(path.Child("timeout"), b.Timeout)
	}
	v.uniqueNames(diag.Spec("backends"), "name", ReasonDuplicateBackendName, "backend", names)
}

// checkBackendSource requires exactly one of external and inferenceServiceRef.
func (v *validator) checkBackendSource(path *field.Path, b *v1.RouterBackend) {
	switch {
	case b.External == nil && b.InferenceServiceRef == nil:
		v.diags.ErrorAt(path, ReasonBackendSourceRequired,
			"backend %q has no destination; set inferenceServiceRef for an in-cluster InferenceService or external for a provider", b.Name)
	case b.External != nil && b.InferenceServiceRef != nil:
		v.diags.ErrorAt(path, ReasonBackendSourceConflict,
			"backend %q sets both inferenceServiceRef and external; keep exactly one", b.Name)
	}
	if ref := b.InferenceServiceRef; ref != nil && ref.Name == "" {
		v.diags.ErrorAt(path.Child("inferenceServiceRef", "name"), ReasonRequired,
			"inferenceServiceRef.name is required: name the InferenceService in the router's namespace")
	}
}

// checkExternalURL requires a URL for litellm and an absolute http(s) URL
// whenever one is set.
func (v *validator) checkExternalURL(path *field.Path, x *v1.ExternalBackend) {
	if x == nil {
		return
	}
	at := path.Child("url")
	if x.URL == "" {
		if x.Provider == v1.ProviderLiteLLM {
			v.diags.ErrorAt(at, ReasonURLRequired,
				"provider litellm has no published endpoint; set url to the base URL of your LiteLLM proxy, such as http://litellm.ai.svc:4000")
		}
		return
	}
	u, err := url.Parse(x.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		v.diags.ErrorAt(at, ReasonInvalidURL,
			"%q is not an absolute http or https URL; write it as https://host[:port][/path]", x.URL)
	}
}

// checkBalancing checks a backend's balancing block. Affinity without
// LoadAware and maxLoadPercent are accepted with a warning, as the reference
// says the router does.
func (v *validator) checkBalancing(path *field.Path, b *v1.RouterBackend) {
	bal := b.Balancing
	if bal == nil {
		return
	}
	path = path.Child("balancing")
	if b.InferenceServiceRef == nil || b.External != nil || b.Resolution != v1.ResolutionEndpoint {
		v.diags.ErrorAt(path, ReasonBalancingRequiresEndpointResolution,
			"balancing places requests across an InferenceService's pods, so it needs an inferenceServiceRef backend with resolution: endpoint; set resolution: endpoint or remove balancing")
	}
	if bal.Mode != v1.BalancingLoadAware {
		if bal.PrefixAffinity != nil {
			v.diags.WarnAt(path.Child("prefixAffinity"), ReasonPrefixAffinityIgnored,
				"prefixAffinity requires mode: LoadAware and is ignored with mode %s; set balancing.mode: LoadAware to use it", bal.Mode)
		}
		if bal.SessionAffinity != nil {
			v.diags.WarnAt(path.Child("sessionAffinity"), ReasonSessionAffinityIgnored,
				"sessionAffinity requires mode: LoadAware and is ignored with mode %s; set balancing.mode: LoadAware to use it", bal.Mode)
		}
	}
	if sa := bal.SessionAffinity; sa != nil {
		sap := path.Child("sessionAffinity")
		v.headerTokens(sap.Child("headers"), sa.Headers)
		v.duration(sap.Child("idleTimeout"), sa.IdleTimeout, idleTimeoutRule)
		if sa.MaxLoadPercent != nil {
			v.diags.WarnAt(sap.Child("maxLoadPercent"), ReasonMaxLoadPercentDeprecated,
				"maxLoadPercent is deprecated and has no effect: sessions are placed from the session binding table; remove it")
		}
	}
}
