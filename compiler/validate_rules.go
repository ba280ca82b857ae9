package compiler

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
)

func (v *validator) checkRules() {
	names := make([]string, len(v.s.Rules))
	for i := range v.s.Rules {
		rule := &v.s.Rules[i]
		names[i] = rule.Name
		path := diag.Rule(i)
		v.checkRouteReferences(path.Child("route", "backends"), rule.Route.Backends)
		v.checkStrategy(path, rule)
		v.checkSensitiveRule(path, rule)
		v.checkMatch(path, rule)
		v.cappedTimeout(path.Child("timeout"), rule.Timeout)
	}
	v.uniqueNames(diag.Spec("rules"), "name", ReasonDuplicateRuleName, "rule", names)
}

// checkRouteReferences requires every entry of route.backends to name a
// declared backend, once.
func (v *validator) checkRouteReferences(list *field.Path, names []string) {
	seen := map[string]int{}
	for j, n := range names {
		at := list.Index(j)
		if _, ok := v.backends[n]; !ok {
			v.unknownBackend(at, n)
		}
		if k, dup := seen[n]; dup {
			v.diags.ErrorAt(at, ReasonDuplicateRouteBackend,
				"backend %q is already listed at %s; list each backend once", n, list.Index(k))
			continue
		}
		seen[n] = j
	}
}

func (v *validator) checkDefaultRoute() {
	if n := v.s.DefaultRoute; n != "" {
		if _, ok := v.backends[n]; !ok {
			v.unknownBackend(diag.Spec("defaultRoute"), n)
		}
		return
	}
	// routing: Model routes every backend by its model id without rules.
	if len(v.s.Rules) == 0 && v.s.DefaultRouteStrategy == v1.DefaultRouteStatic && !v.modelRouting() {
		v.diags.WarnAt(diag.Spec("defaultRoute"), ReasonNoRoute,
			"the router has no rules, no defaultRoute and defaultRouteStrategy Static, so every request is refused with 503; set defaultRoute or add a rule")
	}
}

func (v *validator) unknownBackend(at *field.Path, name string) {
	declared := make([]string, 0, len(v.s.Backends))
	for _, b := range v.s.Backends {
		declared = append(declared, b.Name)
	}
	v.diags.ErrorAt(at, ReasonUnknownBackend,
		"backend %q is not declared in spec.backends (declared: %s)", name, quoted(declared))
}

// checkStrategy checks what each strategy needs of its backends (which
// strategies the data plane compiles is its table's).
func (v *validator) checkStrategy(path *field.Path, rule *v1.RouterRule) {
	route := &rule.Route
	// Only backends that advertise every required capability ever serve the
	// rule (under every strategy), so strategy needs are judged on those.
	backends, at := v.capableBackendsOf(rule)
	list := path.Child("route", "backends")
	switch route.Strategy {
	case v1.StrategyShadow:
		if len(route.Backends) == 1 || (len(route.Backends) > 1 && len(backends) == 1) {
			v.diags.ErrorAt(list, ReasonShadowNeedsTwoBackends,
				"strategy shadow serves from the first backend and mirrors to the others, so it needs at least two backends that advertise the rule's required capabilities; add one or use primary-fallback")
		}
		// Any backend after the first may receive copies (the ones after
		// whichever served), so none of them may be pooled.
		for k, b := range backends {
			if p := v.res.pool[b.Name]; p != nil && at[k] > 0 {
				v.diags.ErrorAt(list.Index(at[k]), ReasonShadowTargetPooled,
					"backend %q is a member of ModelPool %q and cannot be a shadow target: mirrored copies would swap the pool's shared GPU slot; remove it from this rule or put it first", b.Name, p.Name)
			}
		}
	case v1.StrategyWeighted:
		positive := false
		for _, b := range backends {
			positive = positive || *b.Weight > 0
		}
		if len(backends) > 0 && !positive {
			v.diags.ErrorAt(list, ReasonNoPositiveWeight,
				"every backend of this weighted rule that advertises its required capabilities has weight 0, so it can never serve; give at least one of them a positive weight")
		}
		// Two members of one pool share one GPU slot and would swap on every
		// other request. Backends on the same InferenceService are one member.
		first := map[string]string{} // pool -> InferenceService of its first member in the rule
		for k, b := range backends {
			p := v.res.pool[b.Name]
			if p == nil {
				continue
			}
			isvc := b.InferenceServiceRef.Name
			if other, seen := first[p.Name]; !seen {
				first[p.Name] = isvc
			} else if other != isvc {
				v.diags.ErrorAt(list.Index(at[k]), ReasonWeightedPoolConflict,
					"backend %q (InferenceService %q) and InferenceService %q are both members of ModelPool %q; a weighted rule would swap them on every other request. Keep one pool member in this rule or use primary-fallback",
					b.Name, isvc, other, p.Name)
			}
		}
	}
}

// capableBackendsOf returns the rule's declared backends that advertise every
// required capability, with their positions in route.backends.
func (v *validator) capableBackendsOf(rule *v1.RouterRule) (out []*v1.RouterBackend, at []int) {
	var required []string
	if rule.Match != nil {
		required = rule.Match.RequiredCapabilities
	}
	all, idx := v.backendsOf(rule.Route.Backends)
	for k, b := range all {
		if wellknown.HasCapabilities(b.Capabilities, required) {
			out = append(out, b)
			at = append(at, idx[k])
		}
	}
	return out, at
}

// checkSensitiveRule closes the regulated-data gate: a rule matching a
// sensitive classification must be fail-closed and reach only local-tier
// backends. Tiers are already derived (external -> cloud unless attested).
func (v *validator) checkSensitiveRule(path *field.Path, rule *v1.RouterRule) {
	if rule.Match == nil {
		return
	}
	sensitiveSet := v.s.Policy.Classification.SensitiveClassifications
	var matched []string
	for _, c := range rule.Match.DataClassification {
		if sensitive([]string{c}, sensitiveSet) {
			matched = append(matched, c)
		}
	}
	if len(matched) == 0 {
		v.checkFailClosedRule(path, rule)
		return
	}
	if !rule.FailClosed {
		v.diags.ErrorAt(path.Child("failClosed"), ReasonFailClosedRequired,
			"rule %q matches sensitive classifications %s and must set failClosed: true, so matched requests are never served by another route",
			rule.Name, quoted(matched))
	}
	backends, at := v.backendsOf(rule.Route.Backends)
	for k, b := range backends {
		if b.Tier != v1.TierLocal {
			v.diags.ErrorAt(path.Child("route", "backends").Index(at[k]), ReasonCloudBackendInSensitiveRule,
				"rule %q matches sensitive classifications %s but backend %q has tier %s; sensitive rules may route only to local-tier backends (an external backend is cloud unless it sets tier: local)",
				rule.Name, quoted(matched), b.Name, b.Tier)
		}
	}
}

// checkFailClosedRule holds every fail-closed rule to the reference:
// "Fail-closed rules can only route to local-tier backends", whatever it
// matches on (models, headers), not only sensitive classifications.
func (v *validator) checkFailClosedRule(path *field.Path, rule *v1.RouterRule) {
	if !rule.FailClosed {
		return
	}
	backends, at := v.backendsOf(rule.Route.Backends)
	for k, b := range backends {
		if b.Tier != v1.TierLocal {
			v.diags.ErrorAt(path.Child("route", "backends").Index(at[k]), ReasonCloudBackendInFailClosedRule,
				"rule %q is failClosed but backend %q has tier %s; fail-closed rules may route only to local-tier backends (an external backend is cloud unless it sets tier: local)",
				rule.Name, b.Name, b.Tier)
		}
	}
}

// checkMatch warns about match conditions that cannot take effect.
func (v *validator) checkMatch(path *field.Path, rule *v1.RouterRule) {
	m := rule.Match
	if m == nil {
		return
	}
	for i, c := range m.DataClassification {
		if strings.TrimSpace(c) == "" {
			v.diags.ErrorAt(path.Child("match", "dataClassification").Index(i), ReasonRequired,
				"an empty classification matches no request header value; remove it or name a classification such as pii")
		}
	}
	names := make([]string, 0, len(m.Headers))
	for h := range m.Headers {
		names = append(names, h)
	}
	slices.Sort(names)
	for _, h := range names {
		v.headerToken(path.Child("match", "headers").Key(h), h)
	}
	if m.LatencySLOMs != nil && rule.Route.Strategy != v1.StrategyPrimaryFallback {
		v.diags.WarnAt(path.Child("match", "latencySLOMs"), ReasonLatencySLOIgnored,
			"latencySLOMs is honored only by strategy primary-fallback and is ignored by %s; remove it or change the strategy", rule.Route.Strategy)
	}
	if len(m.RequiredCapabilities) > 0 {
		backends, _ := v.backendsOf(rule.Route.Backends)
		capable := false
		for _, b := range backends {
			capable = capable || wellknown.HasCapabilities(b.Capabilities, m.RequiredCapabilities)
		}
		if len(backends) > 0 && !capable {
			v.diags.WarnAt(path.Child("match", "requiredCapabilities"), ReasonRuleNeverMatches,
				"no backend in route.backends advertises every required capability (%s), so rule %q can never match; add the capabilities to a backend or route to one that has them",
				strings.Join(m.RequiredCapabilities, ", "), rule.Name)
		}
	}
}

// checkClassification holds the content classifier's modes (detector,
// hybrid) to what keeps their promise: the router-proxy runs the
// classifier, so the tables of the planes without it refuse them; the classes the detectors
// yield must be sensitive, so the rules that match them are fail-closed and
// local; and a class no rule matches is refused with 503 at run time, which
// is closed but worth a warning.
func (v *validator) checkClassification() {
	c := v.s.Policy.Classification
	v.headerToken(diag.Spec("policy", "classification", "headerKey"), c.HeaderKey)
	if c.Mode != v1.ClassificationDetector && c.Mode != v1.ClassificationHybrid {
		return
	}
	mode := diag.Spec("policy", "classification", "mode")
	if v.refuses("spec.policy.classification.mode") {
		return
	}
	for _, class := range wellknown.DetectorClasses() {
		if !sensitive([]string{class}, c.SensitiveClassifications) {
			v.diags.ErrorAt(diag.Spec("policy", "classification", "sensitiveClassifications"), ReasonDetectorClassNotSensitive,
				"classification mode %s yields %q, which must be in sensitiveClassifications so that the rules matching it are failClosed and local; add %q",
				c.Mode, class, class)
			continue
		}
		routed := false
		for _, rule := range v.s.Rules {
			routed = routed || (rule.Match != nil && sensitive(rule.Match.DataClassification, []string{class}))
		}
		if !routed {
			v.diags.WarnAt(mode, ReasonDetectorClassUnrouted,
				"classification mode %s yields %q but no rule matches it, so every request the classifier finds %s in is refused with 503; add a failClosed rule with match.dataClassification [%s] and local backends",
				c.Mode, class, class, class)
		}
	}
}
