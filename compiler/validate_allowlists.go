package compiler

// The allowlist checks read the lowered router: they compare each team's
// allowlist with the names each backend's model goes by
// (ir.Backend.ModelNames: the InferenceService's modelRef is known only once
// references are resolved), the same names every plane matches an allowlist
// against when it decides which backend may serve a team.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// checkAllowlists warns about allowlists that lock a team out of what the
// router would serve it: an entry naming no model of the router (a typo
// such as gpt4.1, with the nearest name), and a rule or default route that
// would serve a team's allowed model only by backends outside its allowlist,
// whose requests are then refused 403 model_not_allowed.
func checkAllowlists(r *ir.Router) diag.List {
	a := r.Policy.Auth
	if !a.Authenticates() {
		return nil
	}
	var diags diag.List
	known := routerModelNames(r)
	for i, e := range a.Allowlists {
		entry := diag.Spec("policy", "auth", "allowlists").Index(i)
		for k, m := range e.Models {
			if namesModel(r, known, m) {
				continue
			}
			hint := "; the router's models are " + strings.Join(known, ", ")
			if near := nearestName(m, known); near != "" {
				hint = "; did you mean " + near + "?"
			}
			diags.WarnAt(entry.Child("models").Index(k), ReasonAllowlistModelUnknown,
				"team %q is allowed model %q, which names no model of this router (no backend's name, displayName, external model, InferenceService or modelRef, and no rule's match.models): no backend may serve the team by this entry%s", e.Team, m, hint)
		}
		if len(e.Models) == 0 {
			continue // every model: nothing is refused
		}
		checkPublishedIDs(r, e, a.TeamHeader(), entry.Child("models"), &diags)
		for ri := range r.Rules {
			checkRuleForTeam(r, &r.Rules[ri], e, a.TeamHeader(), &diags)
		}
		if d, ok := r.Backend(r.Default.Backend); ok && !e.Allows(d.ModelNames()...) {
			diags.WarnAt(diag.Spec("defaultRoute"), ReasonAllowlistRuleRefusesTeam,
				"team %q's requests that reach the default route will be refused 403 model_not_allowed: its backend %q (model %s) is not in the team's allowlist (%s); they are never served elsewhere. Add one of those names to the team's allowlist if it may use the model, or have a rule serve the team's models before the default route",
				e.Team, d.Name, strings.Join(d.ModelNames(), ", "), strings.Join(e.Models, ", "))
		}
	}
	return diags
}

// checkPublishedIDs warns when a team's allowlist names a backend's model
// by another of its names (the external model, the InferenceService's
// modelRef) but not by the id the router publishes it under (displayName,
// else name): /v1/models and the MCP tools/list, which list published ids
// the team may ask for, then hide the model from the team, and a request
// naming that id is refused, while a request naming the allowed name is
// served. A team allowed [gpt-4.1] by a backend named cloud-gpt sees an
// empty /v1/models and an agent no tool.
func checkPublishedIDs(r *ir.Router, e ir.Allowlist, teamHeader string, p *field.Path, diags *diag.List) {
	var hidden, fixes []string
	published := map[string]bool{}
	for i := range r.Backends {
		published[r.Backends[i].ModelID] = true
	}
	for i := range r.Backends {
		b := &r.Backends[i]
		if e.Allows(b.ModelID) || !e.Allows(b.ModelNames()...) || !teamMayReach(r, b.Name, e, teamHeader) {
			continue
		}
		as := ""
		for _, m := range e.Models {
			if !wellknown.IsGlob(m) && wellknown.AllowlistAllows([]string{m}, b.ModelNames()...) {
				as = m
				break
			}
		}
		if as == "" {
			hidden = append(hidden, fmt.Sprintf("%s (published as %s)", b.Name, b.ModelID))
			continue
		}
		hidden = append(hidden, fmt.Sprintf("%s (published as %s, allowed as %s)", b.Name, b.ModelID, as))
		if !published[as] { // one backend per published id: the first
			published[as] = true
			fixes = append(fixes, fmt.Sprintf("displayName: %s on backend %s", as, b.Name))
		}
	}
	if len(hidden) == 0 {
		return
	}
	hint := "add the published ids to the allowlist, or set each backend's displayName to the name the team asks for"
	if len(fixes) > 0 {
		hint = "set " + strings.Join(fixes, ", ") + ", or add the published ids to the allowlist"
	}
	lists := "/v1/models does"
	if r.MCP != nil {
		lists = "/v1/models and the MCP endpoint's tools/list do"
	}
	diags.WarnAt(p, ReasonAllowlistHidesPublishedModel,
		"team %q's allowlist (%s) names backends by another name of their model than the id the router publishes them under (displayName, else name): %s. %s not show them to the team, and a request naming a published id is refused 403 model_not_allowed; %s",
		e.Team, strings.Join(e.Models, ", "), strings.Join(hidden, "; "), lists, hint)
}

// teamMayReach reports whether a request of the team may be routed to the
// backend: it is the default route (BackendNameMatch reaches every backend
// by its id), or a candidate of a rule the team reaches. A backend only
// another team's rule serves is none of its /v1/models.
func teamMayReach(r *ir.Router, backend string, e ir.Allowlist, teamHeader string) bool {
	if r.Default.Backend == backend || (r.Default.Strategy == ir.DefaultBackendNameMatch && r.Default.Backend != "") {
		return true
	}
	for ri := range r.Rules {
		if slices.Contains(r.Rules[ri].Candidates, backend) && teamReaches(&r.Rules[ri], e, teamHeader) {
			return true
		}
	}
	return false
}

// checkRuleForTeam warns when a rule a team can reach with a model it is
// allowed would serve it by backends outside its allowlist: with none left,
// its requests there are refused; with some, they are served only by those.
func checkRuleForTeam(r *ir.Router, rule *ir.Rule, e ir.Allowlist, teamHeader string, diags *diag.List) {
	if len(rule.Candidates) == 0 || !teamReaches(rule, e, teamHeader) {
		return
	}
	var outside, inside []string
	for _, name := range rule.Candidates {
		b, _ := r.Backend(name)
		if e.Allows(b.ModelNames()...) {
			inside = append(inside, name)
		} else {
			outside = append(outside, name+" ("+strings.Join(b.ModelNames(), ", ")+")")
		}
	}
	if len(outside) == 0 {
		return
	}
	which := "its requests"
	if len(rule.Match.DataClassification) > 0 {
		which = "its requests classified " + strings.Join(rule.Match.DataClassification, " or ")
		if r.Policy.Classification.Mode != ir.ClassificationDetector {
			which += " (by a label the client adds, too)"
		}
	}
	p := diag.Rule(rule.Index).Child("route", "backends")
	if len(inside) == 0 {
		diags.WarnAt(p, ReasonAllowlistRuleRefusesTeam,
			"team %q is allowed %s, but rule %q serves %s only by backends whose model its allowlist does not name: %s; they will be refused 403 model_not_allowed, never served elsewhere. Add one of those names to the team's allowlist if it may use them",
			e.Team, strings.Join(e.Models, ", "), rule.Name, which, strings.Join(outside, "; "))
		return
	}
	diags.WarnAt(p, ReasonAllowlistRuleRefusesTeam,
		"team %q is allowed %s, so rule %q serves %s only by %s: its allowlist does not name the model of %s, which never serves the team (no failover or mirror to them; a data plane that cannot serve a team by part of a rule's backends refuses it there, and says so)",
		e.Team, strings.Join(e.Models, ", "), rule.Name, which, strings.Join(inside, ", "), strings.Join(outside, "; "))
}

// teamReaches reports whether a request of the team for a model it is
// allowed may match the rule: the rule's models meet the allowlist's (both
// globs count as meeting), and a match on the verified team header names
// this team.
func teamReaches(rule *ir.Rule, e ir.Allowlist, teamHeader string) bool {
	for _, h := range rule.Match.Headers {
		if strings.EqualFold(h.Name, teamHeader) && h.Value != e.Team {
			return false
		}
	}
	if len(rule.Match.Models) == 0 {
		return true
	}
	for _, rm := range rule.Match.Models {
		for _, am := range e.Models {
			if wellknown.Glob(rm, am) || wellknown.Glob(am, rm) || (wellknown.IsGlob(rm) && wellknown.IsGlob(am)) {
				return true
			}
		}
	}
	return false
}

// routerModelNames is every name a model of the router goes by: its
// backends' model names and the plain ids its rules match, sorted.
func routerModelNames(r *ir.Router) []string {
	var names []string
	for i := range r.Backends {
		names = append(names, r.Backends[i].ModelNames()...)
	}
	for _, rule := range r.Rules {
		for _, m := range rule.Match.Models {
			if !wellknown.IsGlob(m) {
				names = append(names, m)
			}
		}
	}
	names = wellknown.ModelNames(names...)
	sort.Strings(names)
	return names
}

// namesModel reports whether an allowlist model (a glob or an id) names a
// model of the router: one of its names, or an id a rule's glob matches.
func namesModel(r *ir.Router, known []string, m string) bool {
	if wellknown.AllowlistAllows([]string{m}, known...) {
		return true
	}
	for _, rule := range r.Rules {
		for _, g := range rule.Match.Models {
			if wellknown.Glob(g, m) || (wellknown.IsGlob(g) && wellknown.IsGlob(m)) {
				return true
			}
		}
	}
	return false
}

// nearestName is the name closest to s (at most a third of its letters
// off, as nearestField), or "".
func nearestName(s string, names []string) string {
	best, bestDist := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestDist || (d == bestDist && n < best) {
			best, bestDist = n, d
		}
	}
	return best
}
