package aigateway

import (
	"strings"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// aiBackend is a router backend as the routes name it: its
// AIServiceBackend and the model the AI Gateway rewrites the body's to.
type aiBackend struct{ name, model string }

// aiBackends is what the AIServiceBackend step hands the routes and the
// cost expression, by router backend name.
type aiBackends map[string]aiBackend

// aiServiceBackends emits an AIServiceBackend per Backend emitted: the API
// schema the AI Gateway speaks to it and the caller's credentials it
// removes. Every router backend is handed on, emitted or refused, so that
// the rule checks still run on a refused one.
func (e *emitter) aiServiceBackends(served []servedBackend) aiBackends {
	bk := aiBackends{}
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		// Every backend is sent the model it serves (docs/router-proxy.md,
		// "Upstream requests"): the AI Gateway rewrites the body's model.
		bk[b.Name] = aiBackend{name: naming.GatewayBackendName(e.r.Name, b.Name), model: b.UpstreamModel.Name}
		if msg, ok := targets.AssumedUpstreamModel(ir.DataPlaneGateway, b); ok {
			e.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), targets.ReasonUpstreamModelAssumed, "%s", msg)
		}
	}
	for _, s := range served {
		e.add(&AIServiceBackend{
			ObjectMeta: e.meta(s.name),
			Spec: AIServiceBackendSpec{
				Schema:         s.schema,
				BackendRef:     BackendObjectRef{Group: egGroup, Kind: "Backend", Name: s.name},
				HeaderMutation: e.callerCredentials(s.b),
			},
		}, gvkAIBackend)
	}
	return bk
}

// callerCredentials removes the caller's credentials on the way to a
// backend. Envoy Gateway forwards a verified JWT (its jwt_authn providers
// are built with forward: true), and the AI Gateway's upstream auth sets
// only the provider's own header (x-api-key for Anthropic) or nothing (a
// backend without credentials), so without this the caller's bearer token
// reached third-party providers. An external backend never receives a
// credential header of the caller's (wellknown.CredentialHeaders; the
// provider's key is set after the removal). A local backend keeps the
// client's headers as on the router-proxy (a runtime's --api-key is sent as
// Authorization), except that with policy.auth.jwt the Authorization header
// carried the caller's JWT, which the gateway consumed: it is removed too.
func (e *emitter) callerCredentials(b *ir.Backend) *HeaderMutation {
	var remove []string
	switch {
	case b.External != nil:
		for _, h := range wellknown.CredentialHeaders {
			remove = append(remove, strings.ToLower(h))
		}
	case e.r.Policy.Auth != nil && e.r.Policy.Auth.JWT != nil:
		remove = []string{"authorization"}
	default:
		return nil
	}
	return &HeaderMutation{Remove: remove}
}
