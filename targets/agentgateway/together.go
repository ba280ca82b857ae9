package agentgateway

import (
	"fmt"
	"strings"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// CheckTogether implements targets.Together. agentgateway keeps one route
// table per listener and host: the HTTPRoutes of every router attached to a
// listener are ranked together by their matches (path, method, number of
// headers, query) and ties between routes go to the route key
// "<namespace>/<name>.<rule>" alphabetically, not to creation time
// (crates/agentgateway/src/types/agent.rs RouteSet; see
// simulate/agentgateway). So when two routers share a listener and a
// hostname, a request that a match of each can meet is served by whichever
// sorts first: router chat's `.+` default route takes router models' models.
// Both routers are refused, naming each other. Routers separate by listener
// (agentGatewayRef.sectionName), by hostnames, or by matching disjoint
// models.
func (*Target) CheckTogether(rs []*ir.Router) []diag.List { return together.CheckTogether(rs) }

var _ targets.TogetherOne = (*Target)(nil)

// CheckOne implements targets.TogetherOne: CheckTogether's diagnostics for
// r, comparing r with each of the others only.
func (*Target) CheckOne(r *ir.Router, others []*ir.Router) diag.List {
	return together.CheckOne(r, others)
}

// together compares routers that attach to one Gateway and share a route
// table (shareListener) by their HTTPRoute matches.
var together = &targets.RouteOverlap[routerMatch]{
	Share:   func(a, b *ir.Router) (string, bool) { return shareListener(a.AgentGateway, b.AgentGateway) },
	Matches: routerMatches,
	Overlap: overlapping,
	Refuse: func(out *diag.List, other *ir.Router, key, where string, mine, theirs routerMatch) {
		out.ErrorAt(diag.Spec("agentGatewayRef"), targets.ReasonGatewayRoutesOverlap, "ModelRouter %s/%s attaches to Gateway %s too (%s), and a request meeting %s here and %s there is served by whichever route agentgateway ranks first (more header matches first, then namespace/name alphabetically), so one router's rule is dead for it; give the routers different agentGatewayRef.sectionName listeners or disjoint hostnames, make their models disjoint, or merge them into one router",
			other.Namespace, other.Name, key, where, mine, theirs)
	},
}

// routerMatch is one HTTPRoute match a router generates: header conditions,
// or the catch-all of routing Model.
type routerMatch struct {
	rule     string
	conds    []cond
	catchAll bool
}

func (m routerMatch) String() string {
	if m.catchAll {
		return fmt.Sprintf("rule %q (every path)", m.rule)
	}
	var parts []string
	for _, c := range m.conds {
		switch c.kind {
		case condPresent:
			// The header the route matches (see cond.header), not the model
			// header: a reader comparing with the HTTPRoute finds it.
			parts = append(parts, ModelPresentHeader+" = true")
		case condGlob:
			parts = append(parts, c.name+" ~ "+c.value)
		default:
			parts = append(parts, c.name+" = "+c.value)
		}
	}
	return fmt.Sprintf("rule %q (%s)", m.rule, strings.Join(parts, ", "))
}

// routerMatches are every match the router's HTTPRoute can carry, whatever
// is ready now (readiness changes without the spec changing, and the check
// must not come and go with it).
func routerMatches(r *ir.Router) []routerMatch {
	if r.AgentGateway.Routing == ir.AgentGatewayRoutingModel {
		return []routerMatch{{rule: "models", catchAll: true}}
	}
	e := &emitter{r: r, g: r.AgentGateway}
	var out []routerMatch
	for i := range r.Rules {
		rule := &r.Rules[i]
		if len(rule.Candidates) == 0 {
			continue
		}
		for _, c := range e.ruleMatches(&rule.Match) {
			out = append(out, routerMatch{rule: "rule-" + rule.Name, conds: c})
		}
	}
	if r.Default.Strategy == ir.DefaultBackendNameMatch {
		for i := range r.Backends {
			b := &r.Backends[i]
			if b.Local != nil {
				out = append(out, routerMatch{rule: "model-" + b.Name, conds: []cond{{name: ModelHeader, kind: condExact, value: b.ModelID}}})
			}
		}
	}
	if r.Default.Backend != "" {
		out = append(out, routerMatch{rule: "default", conds: []cond{{name: ModelHeader, kind: condPresent}}})
	}
	return out
}

// overlapping finds a match of each router that one request can meet.
func overlapping(as, bs []routerMatch) (routerMatch, routerMatch, bool) {
	for _, a := range as {
		for _, b := range bs {
			if a.catchAll || b.catchAll || overlap(a.conds, b.conds) {
				return a, b, true
			}
		}
	}
	return routerMatch{}, routerMatch{}, false
}

// shareListener reports whether two routers' routes can land in one route
// table: a common listener (no sectionName attaches to all of them) and a
// common host (no hostnames takes every host).
func shareListener(a, b *ir.AgentGateway) (string, bool) {
	if a.SectionName != "" && b.SectionName != "" && a.SectionName != b.SectionName {
		return "", false
	}
	listener := "every listener"
	switch {
	case a.SectionName != "":
		listener = "listener " + a.SectionName
	case b.SectionName != "":
		listener = "listener " + b.SectionName
	}
	if len(a.Hostnames) == 0 || len(b.Hostnames) == 0 {
		return listener + ", every hostname", true
	}
	if x, y, ok := targets.HostnamesOverlap(a.Hostnames, b.Hostnames); ok {
		return fmt.Sprintf("%s, hostnames %s and %s", listener, x, y), true
	}
	return "", false
}
