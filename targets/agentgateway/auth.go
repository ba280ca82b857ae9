package agentgateway

import (
	"strings"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// callerTokenHeader is the header jwtAuthentication reads the caller's
// token from (its default location, which authPolicy keeps).
const callerTokenHeader = "authorization"

// authPolicy compiles policy.auth into an AgentgatewayPolicy on the router's
// HTTPRoute: jwtAuthentication (Strict: no valid token, 401) with the
// issuer's remote JWKS and policy.auth.jwt.audiences, and the verified team
// claim written to its header after the client's is removed. It runs after
// route selection, which is why a rule may not match on the verified header
// here (checkAuth refuses that).
//
// The transformation also removes the caller's Authorization, the one
// header the JWT policy read, so the caller's token reaches no backend (a
// pool's pods, its endpoint picker, a model's provider), as on the other
// planes. agentgateway's jwtAuthentication removes a token it verified
// (crates/agentgateway/src/http/jwt.rs, Jwt::apply); the transformation
// says so in the output, whatever mode a policy merged from the Gateway
// leaves the token in. It runs after jwtAuthentication and authorization
// (httpproxy.rs), so it removes nothing they read.
//
// The allowlists go where no other policy can widen them and where the model
// they judge is the one served:
//   - routing InferencePool: one Require authorization on the route, whose
//     single condition ORs the entries. agentgateway ORs the Allow rules of
//     every policy on the Gateway, listener, route and rule
//     (store/binds.rs), so an Allow could be widened by a foreign Allow; a
//     Require must hold whatever else allows. The model is read from the
//     body, as the extraction policy that chose the rule reads it.
//   - routing Model: a Require authorization on each AgentgatewayModel
//     (modelAuthorization), which the model router evaluates on the model it
//     resolved (from a Vertex, Gemini or Bedrock path before the body) and
//     which no route policy merges with. The route carries no authorization,
//     so GET /v1/models answers with the models the team may use.
func (e *emitter) authPolicy() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil || !e.routed {
		return
	}
	claim := e.teamClaim()
	traffic := &TrafficPolicy{
		JWTAuthentication: &JWTAuthentication{
			Mode:      "Strict",
			Providers: []JWTProvider{{Issuer: a.JWT.Issuer, Audiences: a.JWT.Audiences, JWKS: JWKS{Remote: &RemoteJWKS{URL: a.JWT.JWKSURI}}}},
		},
		Transformation: &Transformation{Request: e.authTransformation()},
	}
	e.expressions = append(e.expressions, claim)
	if len(a.Allowlists) > 0 && e.g.Routing != ir.AgentGatewayRoutingModel {
		var conds []string
		for _, al := range a.Allowlists {
			c := claim + " == " + CELString(al.Team)
			if len(al.Models) > 0 {
				var models []string
				for _, m := range al.Models {
					if wellknown.IsGlob(m) {
						models = append(models, ModelExpression+".matches("+CELString("^"+wellknown.GlobRE2(m)+"$")+")")
					} else {
						models = append(models, ModelExpression+" == "+CELString(m))
					}
				}
				c += " && (" + strings.Join(models, " || ") + ")"
			}
			conds = append(conds, "("+c+")")
		}
		cond := strings.Join(conds, " || ")
		e.conditions = append(e.conditions, cond)
		traffic.Authorization = &Authorization{Action: "Require", Policy: AuthorizationPolicy{MatchExpressions: []string{cond}}}
	}
	e.add(&AgentgatewayPolicy{
		ObjectMeta: e.meta(naming.AgentGatewayAuthPolicyName(e.r.Name)),
		Spec: PolicySpec{
			TargetRefs: []PolicyTargetRef{{Group: gatewayAPIGroup, Kind: "HTTPRoute", Name: naming.AgentGatewayRouteName(e.r.Name)}},
			Traffic:    traffic,
		},
	}, AgentgatewayPolicyGVK)
}

// authTransformation is the request transformation policy.auth needs on
// every route rule: the verified team claim in its header (the client's
// value replaced) and the caller's Authorization removed; nil without
// policy.auth.jwt. A rule's own transformation (upstreamModelPolicies)
// replaces the route's in agentgateway, so it carries these too.
func (e *emitter) authTransformation() *TransformationSpec {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return nil
	}
	return &TransformationSpec{
		Set:    []HeaderExpression{{Name: a.JWT.HeaderKey, Value: e.teamClaim()}},
		Remove: []string{callerTokenHeader},
	}
}

// served is what one HTTPRoute rule (routing InferencePool) sends its pool:
// the backend, and the exact model names its matches admit (nil: any).
type served struct {
	backend string
	models  []string
}

// serves records that the HTTPRoute rule section is served by backend and
// carries requests for models (nil: any model).
func (e *emitter) serves(section, backend string, models []string) {
	if e.servedBy == nil {
		e.servedBy = map[string]served{}
	}
	e.servedBy[section] = served{backend, models}
}

// servingPolicies hold the allowlists on the backend that serves (routing
// InferencePool): the route's Require judges the team and the model it
// asked for, but the rule the request matched (by its model, its headers,
// a classification label the client sends) decides the backend. For each
// backend some team's allowlist does not name (ir.Backend.ModelNames), a
// Require on the HTTPRoute rules it serves admits only the teams that may
// use it. agentgateway adds a rule's authorization to the route's (a
// Require must hold whatever else allows), so a forged label can take a
// request to another rule, never past its allowlist. A backend every team
// may use needs none. Routing Model needs none: there the backend is the
// model the request named, which modelAuthorization judges.
func (e *emitter) servingPolicies() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil || len(a.Allowlists) == 0 || len(e.servedBy) == 0 {
		return
	}
	serving := e.servingRules(nil)
	claim := e.teamClaim()
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		refs := serving[b.Name]
		if len(refs) == 0 {
			continue
		}
		var conds []string
		for _, al := range a.Allowlists {
			if al.Allows(b.ModelNames()...) {
				conds = append(conds, claim+" == "+CELString(al.Team))
			}
		}
		if len(conds) == len(a.Allowlists) {
			continue // every listed team may use it: the route's Require decides
		}
		cond := "false"
		if len(conds) > 0 {
			cond = strings.Join(conds, " || ")
		}
		e.conditions = append(e.conditions, cond)
		e.add(&AgentgatewayPolicy{
			ObjectMeta: e.meta(naming.AgentGatewayServingAuthPolicyName(e.r.Name, b.Name)),
			Spec: PolicySpec{
				TargetRefs: refs,
				Traffic:    &TrafficPolicy{Authorization: &Authorization{Action: "Require", Policy: AuthorizationPolicy{MatchExpressions: []string{cond}}}},
			},
		}, AgentgatewayPolicyGVK)
	}
}

// warnServedByOther says where a team's allowlist names a candidate of a
// rule but not the one that serves it here (its first ready backend): the
// router-proxy would serve the team by the one it may use, this plane
// refuses it on the rule.
func (e *emitter) warnServedByOther(rule *ir.Rule, candidates []string, target string) {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return
	}
	t, _ := e.r.Backend(target)
	for _, al := range a.Allowlists {
		if al.Allows(t.ModelNames()...) {
			continue
		}
		for _, name := range candidates {
			if b, ok := e.r.Backend(name); ok && name != target && al.Allows(b.ModelNames()...) {
				e.diags.WarnAt(diag.Rule(rule.Index).Child("route", "backends"), ReasonAllowlistNeedsServingBackend,
					"team %q may use backend %q of rule %q but not %q, which serves the rule here (its first ready backend), so agentgateway refuses the team's requests there with 403 (the router-proxy serves them by %q)",
					al.Team, name, rule.Name, target, name)
				break
			}
		}
	}
}

func (e *emitter) teamClaim() string {
	return "jwt[" + CELString(e.r.Policy.Auth.JWT.TeamClaim) + "]"
}

// modelAuthorization is the authorization of one AgentgatewayModel in
// routing Model when allowlists are set: the teams whose entry lists no
// models or a model (exact or glob) that matches this model id. A model no
// team may use gets the condition false.
func (e *emitter) modelAuthorization(modelID string) *Authorization {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil || len(a.Allowlists) == 0 {
		return nil
	}
	claim := e.teamClaim()
	var teams, conds []string
	for _, al := range a.Allowlists {
		ok := len(al.Models) == 0
		for _, m := range al.Models {
			ok = ok || wellknown.Glob(m, modelID)
		}
		if ok && !contains(teams, al.Team) {
			teams = append(teams, al.Team)
			conds = append(conds, claim+" == "+CELString(al.Team))
		}
	}
	cond := "false"
	if len(conds) > 0 {
		cond = strings.Join(conds, " || ")
	}
	e.conditions = append(e.conditions, cond)
	return &Authorization{Action: "Require", Policy: AuthorizationPolicy{MatchExpressions: []string{cond}}}
}

// checkAuth refuses what agentgateway cannot enforce as the router-proxy
// does: the route is chosen before the token is verified, so a rule matching
// the verified team header would match the client's value instead.
func (e *emitter) checkAuth() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return
	}
	for i := range e.r.Rules {
		rule := &e.r.Rules[i]
		for _, h := range rule.Match.Headers {
			if strings.EqualFold(h.Name, a.JWT.HeaderKey) {
				e.diags.ErrorAt(diag.Rule(rule.Index).Child("match", "headers").Key(h.Name), ReasonVerifiedHeaderMatchUnsupported,
					"rule %q matches %s, where the verified team lands; agentgateway verifies the token only after the HTTPRoute chose the rule, so the match would read the value the client sent. Match on the model instead, or use the Proxy or Gateway data plane", rule.Name, h.Name)
			}
		}
	}
}
