package agentgateway

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
)

// authPolicy compiles policy.auth into an AgentgatewayPolicy on the router's
// HTTPRoute: jwtAuthentication (Strict: no valid token, 401) with the
// issuer's remote JWKS, the verified team claim written to its header after
// the client's is removed, and, with allowlists, an Allow authorization whose
// CEL conditions name each team and its models (any other request is denied
// with 403). It runs after route selection, which is why a rule may not match
// on the verified header here (checkAuth refuses that).
func (e *emitter) authPolicy() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil || !e.routed {
		return
	}
	j := a.JWT
	claim := "jwt[" + strconv.Quote(j.TeamClaim) + "]"
	traffic := &TrafficPolicy{
		JWTAuthentication: &JWTAuthentication{
			Mode:      "Strict",
			Providers: []JWTProvider{{Issuer: j.Issuer, JWKS: JWKS{Remote: &RemoteJWKS{URL: j.JWKSURI}}}},
		},
		Transformation: &Transformation{Request: &TransformationSpec{
			Set: []HeaderExpression{{Name: j.HeaderKey, Value: claim}},
		}},
	}
	e.expressions = append(e.expressions, claim)
	if len(a.Allowlists) > 0 {
		var conds []string
		for _, al := range a.Allowlists {
			c := claim + " == " + strconv.Quote(al.Team)
			if len(al.Models) > 0 {
				var models []string
				for _, m := range al.Models {
					if wellknown.IsGlob(m) {
						models = append(models, ModelExpression+".matches("+strconv.Quote("^"+wellknown.GlobRE2(m)+"$")+")")
					} else {
						models = append(models, ModelExpression+" == "+strconv.Quote(m))
					}
				}
				c += " && (" + strings.Join(models, " || ") + ")"
			}
			conds = append(conds, c)
		}
		e.conditions = append(e.conditions, conds...)
		traffic.Authorization = &Authorization{Action: "Allow", Policy: AuthorizationPolicy{MatchExpressions: conds}}
	}
	e.add(&AgentgatewayPolicy{
		ObjectMeta: e.meta(naming.AgentGatewayAuthPolicyName(e.r.Name)),
		Spec: PolicySpec{
			TargetRefs: []PolicyTargetRef{{Group: gatewayAPIGroup, Kind: "HTTPRoute", Name: naming.AgentGatewayRouteName(e.r.Name)}},
			Traffic:    traffic,
		},
	}, AgentgatewayPolicyGVK)
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
				e.diags.Errorf(fmt.Sprintf("%s.match.headers[%s]", diag.RulePath(rule.Index), h.Name), "VerifiedHeaderMatchUnsupported",
					"rule %q matches %s, where the verified team lands; agentgateway verifies the token only after the HTTPRoute chose the rule, so the match would read the value the client sent. Match on the model instead, or use the Proxy or Gateway data plane", rule.Name, h.Name)
			}
		}
	}
}
