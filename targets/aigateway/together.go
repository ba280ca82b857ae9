package aigateway

import (
	"fmt"
	"strings"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// CheckTogether implements targets.Together. Routers attached to one Gateway
// share a virtual host unless their gatewayRef.hostnames are disjoint: Envoy
// Gateway merges the rules of every route of a host into one virtual host
// (no hostnames: the `*` host) and ranks them together, breaking ties
// across routes by creation time. A request that two routers' rules can
// both meet (a catch-all default route meets every request) is then served
// by whichever Envoy ranks first, and the other router's rule is dead for
// it: router beta's clients asking for an unknown model reach alpha's
// backend. Both routers are refused, naming each other, since which one wins
// is not knowable from the spec.
func (*Target) CheckTogether(rs []*ir.Router) []diag.List { return together.CheckTogether(rs) }

var _ targets.TogetherOne = (*Target)(nil)

// CheckOne implements targets.TogetherOne: CheckTogether's diagnostics for
// r, comparing r with each of the others only.
func (*Target) CheckOne(r *ir.Router, others []*ir.Router) diag.List {
	return together.CheckOne(r, others)
}

// together compares routers that attach to one Gateway and share a virtual
// host (shareHosts) by their AIGatewayRoutes' matches, after the shared-auth
// check of each Gateway's routers.
var together = &targets.RouteOverlap[match]{
	Group:   sharedWithAuth,
	Share:   shareHosts,
	Matches: routerMatches,
	Overlap: overlap,
	Refuse: func(out *diag.List, other *ir.Router, key, where string, mine, theirs match) {
		out.ErrorAt(diag.Spec("gatewayRef"), targets.ReasonGatewayRoutesOverlap, "ModelRouter %s/%s attaches to the same Gateway %s (%s), and a request meeting %s here and %s there is served by whichever route Envoy Gateway ranks first (creation time breaks ties), so one router's rule is dead for it; give the routers disjoint gatewayRef.hostnames, put them on different Gateways, or merge them into one router",
			other.Namespace, other.Name, key, where, mine, theirs)
	},
}

// shareHosts reports whether two routers on one Gateway can take one
// request: their gatewayRef.hostnames overlap (none takes every host).
func shareHosts(a, b *ir.Router) (string, bool) {
	x, y, ok := targets.HostnamesOverlap(a.Gateway.Hostnames, b.Gateway.Hostnames)
	switch {
	case !ok:
		return "", false
	case x == "":
		return "every hostname", true
	default:
		return fmt.Sprintf("hostnames %s and %s", x, y), true
	}
}

// hasAuth reports whether a router authenticates its callers.
func hasAuth(r *ir.Router) bool { return r.Policy.Auth != nil && r.Policy.Auth.JWT != nil }

// sharedWithAuth refuses a router with policy.auth that shares a host of
// its Gateway with another router, and that other router. Envoy
// authenticates on the route it picks before the AI Gateway's ext_proc sets
// the model header (any router's path-only route-not-found rule), and
// routes afterwards. So on a shared host one router's requirement (or none)
// decides whether a token was checked for another router's backend. The
// authorization on our routes still refuses what our own provider did not
// verify (see securityPolicy), so nothing gets through, but the routers
// fail each other's callers: the authenticated router's callers get 403
// when the other's route-not-found ranks first, and the other's callers get
// 401 in the opposite order, which creation time decides.
//
// Disjoint gatewayRef.hostnames put the routers in different virtual hosts,
// where neither's routes are picked for the other's requests. What they
// still share is the Gateway's ClientTrafficPolicy (see clientPolicy):
// Gateway-wide, the oldest wins. So routers on disjoint hostnames may share
// a Gateway when none authenticates, or when all do with the same team
// header (every router's policy removes the same header, whichever wins);
// a router without policy.auth would lose the client's team header its
// rules, budgets and allowlists read. Whether the Gateway holds anything
// else is checked by the controller.
func sharedWithAuth(rs []*ir.Router, key string, members []int, out []diag.List, first bool) {
	for n, me := range members {
		if first && n > 0 {
			break // only rs[0] (members[0]) is asked for
		}
		r := rs[me]
		var others, header, mixed []string
		authOther := false
		mixedHeader := "" // the team header the authenticated one of a mixed pair removes
		for _, o := range members {
			other := rs[o]
			if o == me {
				continue
			}
			name := other.Namespace + "/" + other.Name
			if _, shared := shareHosts(r, other); shared {
				others = append(others, name)
				authOther = authOther || hasAuth(other)
				continue
			}
			switch {
			case hasAuth(r) && hasAuth(other) && !strings.EqualFold(r.Policy.Auth.JWT.HeaderKey, other.Policy.Auth.JWT.HeaderKey):
				header = append(header, fmt.Sprintf("%s (team header %s)", name, other.Policy.Auth.JWT.HeaderKey))
			case hasAuth(r) != hasAuth(other):
				mixed = append(mixed, name)
				if hasAuth(r) {
					mixedHeader = r.Policy.Auth.JWT.HeaderKey
				} else {
					mixedHeader = other.Policy.Auth.JWT.HeaderKey
				}
			}
		}
		switch {
		case len(others) > 0 && hasAuth(r):
			out[me].ErrorAt(diag.Spec("policy", "auth"), ReasonGatewaySharedWithAuth,
				"this router authenticates its callers and shares Gateway %s with ModelRouter %s on overlapping hostnames; Envoy checks a token on the route it picks before the model is known (another router's route-not-found rule when that ranks first) and routes afterwards, so the routers would refuse each other's callers depending on creation order. Give the routers disjoint gatewayRef.hostnames, or the router with policy.auth a Gateway of its own", key, strings.Join(others, ", "))
		case len(others) > 0 && authOther:
			out[me].ErrorAt(diag.Spec("gatewayRef"), ReasonGatewaySharedWithAuth,
				"Gateway %s is shared, on overlapping hostnames, with ModelRouter %s, which authenticates its callers; Envoy checks a token on the route it picks before the model is known, so this router's callers could be asked for that router's token depending on creation order. Give the routers disjoint gatewayRef.hostnames, or the authenticated router a Gateway of its own", key, strings.Join(others, ", "))
		}
		if len(header) > 0 {
			out[me].ErrorAt(diag.Spec("policy", "auth", "jwt", "headerKey"), ReasonGatewaySharedWithAuth,
				"Gateway %s is shared with ModelRouter %s, which authenticates with another team header; each router removes the client's copy of its team header with a ClientTrafficPolicy, which applies to the whole Gateway and of which only the oldest is in force, so one router's team header could be forged. Use the same headerKey, or separate Gateways", key, strings.Join(header, ", "))
		}
		if len(mixed) > 0 {
			out[me].ErrorAt(diag.Spec("gatewayRef"), ReasonGatewaySharedWithAuth,
				"Gateway %s is shared, on disjoint hostnames, with ModelRouter %s; a router with policy.auth removes the client's %s header on the whole Gateway (a ClientTrafficPolicy applies to every hostname), so a router without it would never see the header its rules, budgets and allowlists read. Authenticate every router on the Gateway, or give the router with policy.auth a Gateway of its own",
				key, strings.Join(mixed, ", "), mixedHeader)
		}
	}
}

// routerMatches are every match the router's AIGatewayRoutes carry.
func routerMatches(r *ir.Router) []match {
	e := &emitter{r: r}
	var out []match
	for _, g := range e.buildRules(aiBackends{}) {
		out = append(out, g.matches...)
	}
	return out
}

// overlap finds a match of each list that one request can meet (a meet that
// cannot be decided counts: the check is conservative).
func overlap(as, bs []match) (match, match, bool) {
	for _, a := range as {
		for _, b := range bs {
			if _, ok, known := and(a, b); ok || !known {
				return a, b, true
			}
		}
	}
	return nil, nil, false
}
