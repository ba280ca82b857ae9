package aigateway

import (
	"slices"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// securityPolicy compiles policy.auth: JWT validation (the issuer, its
// remote JWKS, policy.auth.jwt.audiences) with the team claim copied to its
// header, and authorization that admits only what this
// router's own provider verified.
//
// On a shared Gateway, Envoy runs jwt_authn on the route it picked before
// the AI Gateway's ext_proc set x-ai-eg-model (another router's path-only
// route-not-found rule, say, which asks for no token), and rbac on the route
// picked after it. So authentication can run with another router's
// requirement, or none; the authorization is what holds on our route. It is
// always default-deny, and every Allow rule names our provider, whose name
// is ours alone (naming.GatewayJWTProviderName): Envoy Gateway stores
// verified claims under the provider's name, so a token that our provider
// did not verify (no token, or one another router's provider accepted) has
// no claims there and is refused with 403. Without allowlists, the one rule
// admits any token our provider verified (its iss claim is our issuer).
func (e *emitter) securityPolicy(plan routePlan, routes aiRoutes) {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return
	}
	j := a.JWT
	spec := egv1a1.SecurityPolicySpec{}
	for _, rt := range routes.names {
		spec.TargetRefs = append(spec.TargetRefs, routeTarget(rt, ""))
	}
	providerName := naming.GatewayJWTProviderName(e.r.Namespace, e.r.Name, j.Provider)
	provider := egv1a1.JWTProvider{
		Name:           providerName,
		Issuer:         j.Issuer,
		Audiences:      j.Audiences,
		RemoteJWKS:     &egv1a1.RemoteJWKS{URI: j.JWKSURI},
		ClaimToHeaders: []egv1a1.ClaimToHeader{{Claim: j.TeamClaim, Header: j.HeaderKey}},
	}
	// Route matching reads the team header: have Envoy pick the route again
	// after the verified claim replaced it.
	for _, g := range plan.rules {
		for _, m := range g.matches {
			if _, ok := m.get(j.HeaderKey); ok {
				provider.RecomputeRoute = ptr(true)
			}
		}
	}
	spec.JWT = &egv1a1.JWT{Providers: []egv1a1.JWTProvider{provider}}
	spec.Authorization = e.authorization(providerName, nil)
	e.add(&egv1a1.SecurityPolicy{ObjectMeta: e.meta(naming.GatewaySecurityPolicyName(e.r.Name)), Spec: spec}, gvkSP)
	e.servingPolicies(plan, routes, provider)
}

// servingPolicies hold the allowlists on the backend that serves: the
// route's authorization judges the team and the model it asked for
// (x-ai-eg-model), but the rule the request matched (by its model, its
// headers, a classification label the client sends) decides the backends.
// For each generated rule with a backend some listed team's allowlist does
// not name (ir.Backend.ModelNames), a SecurityPolicy on that rule (its
// HTTPRoute section) admits only the teams that may use every backend of
// the rule: the gateway may fail over to any of them, so it cannot serve a
// team by a subset as the router-proxy does. Envoy Gateway applies the
// rule's SecurityPolicy instead of the route's, so it repeats the same JWT
// provider (our provider's name: claims stay where the authorization reads
// them). A forged label can take a request to another rule, never past
// its allowlist.
func (e *emitter) servingPolicies(plan routePlan, routes aiRoutes, provider egv1a1.JWTProvider) {
	a := e.r.Policy.Auth
	if len(a.Allowlists) == 0 {
		return
	}
	for _, g := range plan.rules {
		allowed := func(al ir.Allowlist) bool {
			for _, name := range g.backends {
				if b, ok := e.r.Backend(name); !ok || !al.Allows(b.ModelNames()...) {
					return false
				}
			}
			return true
		}
		if !slices.ContainsFunc(a.Allowlists, func(al ir.Allowlist) bool { return !allowed(al) }) {
			continue // every listed team may use every backend: the route's policy decides
		}
		e.warnPartlyAllowed(g, allowed)
		e.add(&egv1a1.SecurityPolicy{
			ObjectMeta: e.meta(naming.GatewayRuleSecurityPolicyName(e.r.Name, g.name)),
			Spec: egv1a1.SecurityPolicySpec{
				PolicyTargetReferences: egv1a1.PolicyTargetReferences{TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{routeTarget(routes.of(g), g.name)}},
				JWT:                    &egv1a1.JWT{Providers: []egv1a1.JWTProvider{provider}},
				Authorization:          e.authorization(provider.Name, allowed),
			},
		}, gvkSP)
	}
}

// warnPartlyAllowed says where a team may use some backends of a rule but
// not every one: the router-proxy would serve it by those, the gateway
// refuses it on the rule.
func (e *emitter) warnPartlyAllowed(g *genRule, allowed func(ir.Allowlist) bool) {
	if g.origin < 0 {
		return // BackendNameMatch and the default route have one backend
	}
	for _, al := range e.r.Policy.Auth.Allowlists {
		if allowed(al) {
			continue
		}
		var some []string
		for _, name := range g.backends {
			if b, ok := e.r.Backend(name); ok && al.Allows(b.ModelNames()...) {
				some = append(some, name)
			}
		}
		if len(some) > 0 {
			e.diags.WarnAt(diag.Rule(g.origin).Child("route", "backends"), ReasonAllowlistNeedsEveryBackend,
				"team %q may use %s but not every backend of %s, and Envoy may fail over to any of them, so the gateway refuses the team's requests there with 403 (the router-proxy serves them by %s only)",
				al.Team, strings.Join(some, ", "), g.label, strings.Join(some, ", "))
		}
	}
}

// authorization is the default-deny authorization of the router's provider:
// one Allow rule per allowlist entry that admit accepts (nil: all), or,
// without allowlists, one for any token the provider verified.
func (e *emitter) authorization(providerName string, admit func(ir.Allowlist) bool) *egv1a1.Authorization {
	a, j := e.r.Policy.Auth, e.r.Policy.Auth.JWT
	authz := &egv1a1.Authorization{DefaultAction: ptr(egv1a1.AuthorizationActionDeny)}
	if len(a.Allowlists) == 0 {
		authz.Rules = []egv1a1.AuthorizationRule{{
			Name:   ptr(naming.GatewayAuthenticatedRuleName),
			Action: egv1a1.AuthorizationActionAllow,
			Principal: &egv1a1.Principal{JWT: &egv1a1.JWTPrincipal{
				Provider: providerName,
				Claims:   []egv1a1.JWTClaim{{Name: "iss", Values: []string{j.Issuer}}},
			}},
		}}
	}
	for i, al := range a.Allowlists {
		if admit != nil && !admit(al) {
			continue
		}
		p := &egv1a1.Principal{JWT: &egv1a1.JWTPrincipal{
			Provider: providerName,
			Claims:   []egv1a1.JWTClaim{{Name: j.TeamClaim, Values: []string{al.Team}}},
		}}
		if len(al.Models) > 0 {
			models := append([]string(nil), al.Models...)
			sort.Strings(models)
			p.Headers = []egv1a1.AuthorizationHeaderMatch{{Name: ModelHeader, Values: models}}
		}
		authz.Rules = append(authz.Rules, egv1a1.AuthorizationRule{
			Name:      ptr(naming.GatewayAllowRuleName(al.Team, i)),
			Action:    egv1a1.AuthorizationActionAllow,
			Principal: p,
		})
	}
	return authz
}

// refuseAllowlistGlobs refuses allowlist models that are globs: Envoy
// Gateway's authorization compares header values exactly (the rule lists
// values, no pattern), so "qwen3-*" would admit only a model literally
// named so, while the router-proxy admits every model the glob matches.
func (e *emitter) refuseAllowlistGlobs() {
	a := e.r.Policy.Auth
	if a == nil {
		return
	}
	for i, al := range a.Allowlists {
		for k, m := range al.Models {
			if wellknown.IsGlob(m) {
				e.diags.ErrorAt(diag.Spec("policy", "auth", "allowlists").Index(i).Child("models").Index(k), ReasonAllowlistGlobUnsupportedOnGateway,
					"team %q is allowed models matching %q, but Envoy Gateway's authorization compares the model header with exact values only, so the glob would admit no model it stands for; list the model ids the team may reach, or use the Proxy data plane", al.Team, m)
			}
		}
	}
}
