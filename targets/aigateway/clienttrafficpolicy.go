package aigateway

import (
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
)

// clientPolicy removes the client's own copy of the verified team header
// before Envoy does anything else with the request. Envoy's jwt_authn
// appends the claim to a header the client already sent, and the
// rate-limit descriptor takes the first value, route matching the joined
// ones: without this, a caller could charge another team's budget, escape
// its own, or (with a token lacking the claim) match another team's rule.
// earlyRequestHeaders run before routing and every HTTP filter. A
// ClientTrafficPolicy targets a whole Gateway and lives in its namespace;
// a router with policy.auth has its Gateway to itself (GatewaySharedWithAuth),
// so this is the only one of ours there. One of the platform team's own on
// the same Gateway takes precedence when older (or listener-scoped): the
// controller then reports ours Conflicted (PolicyConflicted). It comes
// with the SecurityPolicy: a router with policy.auth.jwt.
func (e *emitter) clientPolicy() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return
	}
	j := a.JWT
	gw := e.r.Gateway
	cross := gw.Namespace != e.r.Namespace
	m := e.meta(naming.GatewayClientPolicyName(e.r.Namespace, e.r.Name, cross))
	targets.ToGatewayNamespace(&m, gw.Namespace, e.r)
	e.add(&egv1a1.ClientTrafficPolicy{
		ObjectMeta: m,
		Spec: egv1a1.ClientTrafficPolicySpec{
			PolicyTargetReferences: egv1a1.PolicyTargetReferences{TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{{
				LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gatewayAPIGrp, Kind: "Gateway", Name: gwapiv1.ObjectName(gw.Name)},
			}}},
			Headers: &egv1a1.HeaderSettings{
				EarlyRequestHeaders: &egv1a1.HTTPHeaderFilter{Remove: []string{strings.ToLower(j.HeaderKey)}},
			},
		},
	}, gvkCTP)
}
