package aigateway

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// The routing plan every routing kind reads: the spec's rules,
// BackendNameMatch and the default route as generated rules (genRule), in
// first-match-wins order, rewritten so that Envoy Gateway's precedence
// keeps it, split over the CRD limits and packed into routes. It emits
// nothing itself.

// routePlan is what the plan hands the routing steps: the generated rules
// in order, after splitting, and the same rules packed into the routes
// (one AIGatewayRoute per chunk).
type routePlan struct {
	rules  []*genRule
	chunks [][]*genRule
}

// buildRules turns spec rules, BackendNameMatch and the default route into
// generated rules in first-match-wins order, before order rewriting; their
// backend refs name the AIServiceBackends bk.
func (e *emitter) buildRules(bk aiBackends) []*genRule {
	r := e.r
	var out []*genRule
	var noFallThrough []int // rules that would fall through on the router-proxy
	for i := range r.Rules {
		rule := &r.Rules[i]
		if len(rule.Candidates) == 0 {
			// No backend advertises the required capabilities: the rule never
			// matches (the frontend warned), so it is not generated.
			continue
		}
		matches, ok := e.ruleMatches(i, rule)
		if !ok || len(matches) == 0 {
			continue
		}
		g := &genRule{name: rule.Name, origin: i, label: fmt.Sprintf("rule %q (%s)", rule.Name, diag.Rule(i)), matches: matches}
		e.routeBackends(g, rule, bk)
		if rule.Strategy != ir.StrategyWeighted && len(g.refs) > 0 {
			g.numRetries = int32(len(g.refs) - 1)
		} else if len(g.refs) > 0 {
			positive := int32(0)
			for _, ref := range g.refs {
				if *ref.Weight > 0 {
					positive++
				}
			}
			g.numRetries = max(positive-1, 0)
		}
		if len(g.backends) > 1 {
			for _, name := range g.backends {
				if ip := e.ipLiteral(name); ip != "" {
					e.diags.ErrorAt(diag.Rule(i).Child("route", "backends"), ReasonIPBackendFailover,
						"rule %q routes to %d backends and backend %q is the IP literal %s: Envoy Gateway puts IP-literal Backends in one EDS cluster (no locality priority, and every host gets the first backend's model, auth and schema) or, mixed with hostnames, splits them into weighted clusters at 1:1, so %s would become a split without failover; give the backend a hostname (a DNS name, or a Service in the cluster) or route this rule to it alone",
						rule.Name, len(g.backends), name, ip, rule.Strategy)
					break
				}
			}
		}
		g.headerTimeout = e.ruleHeaderTimeout(i, rule)
		if len(g.refs) > MaxBackendRefsPerRule {
			e.diags.ErrorAt(diag.Rule(i).Child("route", "backends"), ReasonTooManyBackends,
				"rule %q routes to %d backends; the generated HTTPRoute rule holds at most %d backendRefs and a rule's backends cannot be split without changing its failover order", rule.Name, len(g.refs), MaxBackendRefsPerRule)
		}
		for bi := range r.Policy.Budgets {
			if b := &r.Policy.Budgets[bi]; b.Scope == ir.BudgetScopeRule && b.RuleName == rule.Name {
				g.ruleBudgets = append(g.ruleBudgets, bi)
			}
		}
		out = append(out, g)
		if !rule.FailClosed && (i < len(r.Rules)-1 || r.Default.Backend != "" || r.Default.Strategy == ir.DefaultBackendNameMatch) {
			noFallThrough = append(noFallThrough, i)
		}
	}
	e.warnNoFallThrough(noFallThrough)
	if r.Default.Strategy == ir.DefaultBackendNameMatch {
		if r.Default.Backend != "" {
			e.diags.WarnAt(diag.Spec("defaultRouteStrategy"), ReasonNoFallThroughOnGateway,
				"on the gateway a request naming a backend's model always goes to that backend: when it is down the request fails with 503 instead of falling back to defaultRoute %q (the router-proxy skips an unhealthy name match)", r.Default.Backend)
		}
		for i := range r.Backends {
			b := &r.Backends[i]
			g := &genRule{
				name:    nameMatchPrefix + b.Name,
				origin:  originBackendNameMatch,
				label:   fmt.Sprintf("BackendNameMatch for backend %q", b.Name),
				matches: []match{{exactC(ModelHeader, b.ModelID)}},
			}
			g.refs = []RouteBackendRef{bk.ref(b.Name, nil, nil)}
			g.backends = []string{b.Name}
			g.headerTimeout = e.duration(diag.Backend(i).Child("timeout"), r.HeaderTimeout(nil, b))
			out = append(out, g)
		}
	}
	if name := r.Default.Backend; name != "" {
		b, _ := r.Backend(name)
		g := &genRule{name: defaultRuleName, origin: originDefaultRoute, label: "defaultRoute", matches: []match{{}}}
		g.refs = []RouteBackendRef{bk.ref(name, nil, nil)}
		g.backends = []string{name}
		g.headerTimeout = e.duration(diag.Spec("defaultRoute"), r.HeaderTimeout(nil, b))
		out = append(out, g)
	}
	return out
}

// ref is a route rule's reference to a router backend: its
// AIServiceBackend and the model it is sent (aiBackends).
func (bk aiBackends) ref(backend string, weight, priority *int32) RouteBackendRef {
	a := bk[backend]
	return RouteBackendRef{Name: a.name, Weight: weight, Priority: priority, ModelNameOverride: a.model}
}

// maxNamed is how many rules one grouped warning names before it counts.
const maxNamed = 10

// warnNoFallThrough is one NoFallThroughOnGateway warning per router, naming
// its rules (a router of a thousand rules gets one line, not a thousand).
func (e *emitter) warnNoFallThrough(rules []int) {
	const why = "instead of continuing to later rules and the default route (the router-proxy's behaviour for a rule without failClosed)"
	switch len(rules) {
	case 0:
		return
	case 1:
		e.diags.WarnAt(diag.Rule(rules[0]).Child("failClosed"), ReasonNoFallThroughOnGateway,
			"on the gateway a matched rule never falls through: when every backend of rule %q is down its requests fail with 503 %s", e.r.Rules[rules[0]].Name, why)
		return
	}
	var names []string
	for _, i := range rules[:min(len(rules), maxNamed)] {
		names = append(names, fmt.Sprintf("%q", e.r.Rules[i].Name))
	}
	list := strings.Join(names, ", ")
	if more := len(rules) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	e.diags.WarnAt(diag.Spec("rules"), ReasonNoFallThroughOnGateway,
		"on the gateway a matched rule never falls through: when every backend of one of the %d rules %s is down its requests fail with 503 %s; set failClosed: true on them to make that explicit", len(rules), list, why)
}

// ipLiteral is the backend's upstream host when it is an IP address ("" for
// a hostname, or an in-cluster backend, always addressed by Service DNS).
func (e *emitter) ipLiteral(backend string) string {
	b, ok := e.r.Backend(backend)
	if !ok || b.External == nil || b.External.URL == "" {
		return ""
	}
	u, err := url.Parse(b.External.URL)
	if err != nil {
		return ""
	}
	if net.ParseIP(u.Hostname()) != nil {
		return u.Hostname()
	}
	return ""
}

// routeBackends maps a rule's capable backends: primary-fallback to
// priorities 0..n-1, weighted to weights (0 drains).
func (e *emitter) routeBackends(g *genRule, rule *ir.Rule, bk aiBackends) {
	for k, name := range rule.Candidates {
		b, _ := e.r.Backend(name)
		var ref RouteBackendRef
		if rule.Strategy == ir.StrategyWeighted {
			w := b.Weight
			ref = bk.ref(name, &w, nil)
		} else {
			p := int32(k)
			ref = bk.ref(name, nil, &p)
		}
		g.refs = append(g.refs, ref)
		g.backends = append(g.backends, name)
	}
}

// ruleHeaderTimeout is the one response-header timeout of a rule's
// dispatches: the rule's own, else its backends' when they agree.
func (e *emitter) ruleHeaderTimeout(i int, rule *ir.Rule) string {
	r := e.r
	if rule.Timeout > 0 {
		return e.duration(diag.Rule(i).Child("timeout"), rule.Timeout)
	}
	var first string
	var firstD string
	for _, name := range rule.Candidates {
		b, _ := r.Backend(name)
		d := r.HeaderTimeout(rule, b).String()
		if first == "" {
			first, firstD = name, d
			continue
		}
		if d != firstD {
			hint := "so set the rule's timeout"
			if hasSharedBudget(r) {
				// Any other value splits the router's traffic policies, and a
				// router or team budget cannot span them
				// (BudgetSpansTrafficPolicies): say the one that compiles.
				others := r.Timeouts.ResponseHeader
				if def, ok := r.Backend(r.Default.Backend); ok {
					others = r.HeaderTimeout(nil, def)
				}
				hint = fmt.Sprintf("so set the rule's timeout to %s, the one the router's default route uses: another value needs a second BackendTrafficPolicy, which the router's budgets cannot span", others)
			}
			e.diags.ErrorAt(diag.Rule(i).Child("timeout"), ReasonBackendTimeoutsDiffer,
				"rule %q sets no timeout and its backends wait %s (%s) and %s (%s) for response headers; the gateway applies one per-attempt timeout to a rule, %s", rule.Name, firstD, first, d, name, hint)
			return ""
		}
	}
	b, _ := r.Backend(first)
	return e.duration(e.backendPath(first).Child("timeout"), r.HeaderTimeout(rule, b))
}

// headerValuePattern is Gateway API's pattern for an HTTPRoute header
// match value (v1.6 HTTPHeaderMatch.Value).
var headerValuePattern = regexp.MustCompile(`^[!-~]+([\t ]?[!-~]+)*$`)

// ruleMatches builds a rule's matches: the cross product of its models and
// classifications, each with the task-complexity and header conditions.
func (e *emitter) ruleMatches(i int, rule *ir.Rule) ([]match, bool) {
	m := &rule.Match
	p := diag.Rule(i).Child("match")
	var base match
	add := func(at *field.Path, c constraint) bool {
		u, ok, known := and(base, match{c})
		switch {
		case !known:
			e.diags.ErrorAt(at, ReasonMatchNotExpressible,
				"rule %q puts two different patterns on header %s, which one gateway header match cannot express", rule.Name, c.name)
			return false
		case !ok:
			e.diags.WarnAt(at, ReasonRuleNeverMatches,
				"rule %q requires two different values of header %s, so it never matches and is not generated", rule.Name, c.name)
			return false
		}
		base = u
		return true
	}
	if m.TaskComplexity != "" && !add(p.Child("taskComplexity"), patternC(wellknown.TaskComplexityHeader, caseInsensitive(m.TaskComplexity))) {
		return nil, false
	}
	for _, h := range m.Headers {
		if !add(p.Child("headers").Key(h.Name), exactC(h.Name, h.Value)) {
			return nil, false
		}
	}
	models := []*constraint{nil}
	if len(m.Models) > 0 {
		models = nil
		for k, model := range m.Models {
			pat, isGlob, ok := globPattern(model)
			if !ok {
				e.diags.ErrorAt(p.Child("models").Index(k), ReasonModelGlobUnsupported,
					"model glob %q has characters outside printable ASCII; the gateway's RE2 header match counts characters where the router-proxy counts bytes, so it would match different models. Use an ASCII pattern or list the models", model)
				return nil, false
			}
			c := exactC(ModelHeader, model)
			if isGlob {
				c = patternC(ModelHeader, pat)
			}
			models = append(models, &c)
		}
	}
	classes := []*constraint{nil}
	if len(m.DataClassification) > 0 {
		classes = nil
		for _, v := range m.DataClassification {
			pat := caseInsensitive(v)
			if slices.Contains(e.r.Policy.Classification.Sensitive, strings.ToLower(v)) {
				pat = listElement(v)
			}
			c := patternC(e.r.Policy.Classification.HeaderKey, pat)
			classes = append(classes, &c)
		}
	}
	var out []match
	for _, mc := range models {
		for _, cc := range classes {
			cur := base
			ok, known := true, true
			for _, c := range []*constraint{mc, cc} {
				if c == nil || !ok || !known {
					continue
				}
				cur, ok, known = and(cur, match{*c})
			}
			if !known {
				e.diags.ErrorAt(p, ReasonMatchNotExpressible,
					"rule %q puts two different patterns on one header (its headers overlap the model or classification header), which one gateway header match cannot express", rule.Name)
				return nil, false
			}
			if !ok {
				continue
			}
			for _, c := range cur {
				if !headerValuePattern.MatchString(c.value) {
					e.diags.ErrorAt(p, ReasonHeaderValueNotExpressible,
						"rule %q matches header %s on %q, which the HTTPRoute the AI Gateway generates cannot carry: Gateway API header values are visible ASCII with single spaces or tabs between words (%s), and the API server refuses the route", rule.Name, c.name, c.value, headerValuePattern)
					return nil, false
				}
			}
			if len(cur) > MaxHeadersPerMatch {
				e.diags.ErrorAt(p.Child("headers"), ReasonTooManyHeaderConditions,
					"rule %q has %d header conditions; a gateway match holds at most %d", rule.Name, len(cur), MaxHeadersPerMatch)
				return nil, false
			}
			out = append(out, cur)
		}
	}
	return out, true
}

// applyOrderAndLimits rewrites matches to keep first-match-wins order, splits
// rules over the per-rule match limit and routes over the per-route limits,
// and refuses what cannot be kept.
func (e *emitter) applyOrderAndLimits(rules []*genRule) routePlan {
	for _, c := range preserveOrder(rules) {
		e.diags.ErrorAt(e.ruleField(rules[c.earlier]), ReasonRuleOrderNotPreserved, "%s", c.describe(rules))
	}
	if e.diags.HasErrors() {
		return routePlan{}
	}
	// Split a rule's matches into consecutive rules with the same backends.
	var flat []*genRule
	for _, g := range rules {
		if len(g.matches) <= MaxMatchesPerRule {
			flat = append(flat, g)
			continue
		}
		for part, k := 1, 0; k < len(g.matches); part, k = part+1, k+MaxMatchesPerRule {
			cp := *g
			cp.matches = g.matches[k:min(k+MaxMatchesPerRule, len(g.matches))]
			if part > 1 {
				cp.name = fmt.Sprintf("%s%s%d", g.name, partSeparator, part)
			}
			flat = append(flat, &cp)
		}
	}
	// Pack in order into routes.
	var chunks [][]*genRule
	var cur []*genRule
	n := 0
	for _, g := range flat {
		if len(cur) == MaxRulesPerRoute || n+len(g.matches) > MaxMatchesPerRoute {
			chunks = append(chunks, cur)
			cur, n = nil, 0
		}
		cur = append(cur, g)
		n += len(g.matches)
	}
	if len(cur) > 0 || len(chunks) == 0 {
		chunks = append(chunks, cur)
	}
	if len(chunks) > 1 {
		e.checkSplit(chunks)
	}
	return routePlan{rules: flat, chunks: chunks}
}

// checkSplit refuses a split whose precedence would depend on the order the
// gateway sorts routes in (creation time): equally ranked matches of
// different rules that one request can satisfy, in different routes, or a
// catch-all match (which ties with every route's route-not-found rule).
func (e *emitter) checkSplit(chunks [][]*genRule) {
	for ci, chunk := range chunks {
		for _, g := range chunk {
			for _, a := range g.matches {
				if len(a) == 0 {
					e.diags.ErrorAt(e.ruleField(g), ReasonTooManyRules,
						"the router needs %d AIGatewayRoutes (at most %d rules and %d matches each), and %s matches every request, which would tie with the route-not-found rule of the other routes, ordered by creation time; reduce the rules or backends (BackendNameMatch adds one rule per backend)",
						len(chunks), MaxRulesPerRoute, MaxMatchesPerRoute, g.label)
					return
				}
				for _, later := range chunks[ci+1:] {
					for _, h := range later {
						if h.origin == g.origin && h.origin >= 0 {
							continue
						}
						for _, b := range h.matches {
							if b.rank() != a.rank() {
								continue
							}
							if _, ok, _ := and(a, b); ok {
								e.diags.ErrorAt(e.ruleField(g), ReasonTooManyRules,
									"the router needs %d AIGatewayRoutes (at most %d rules and %d matches each), and %s and %s fall into different routes with equally ranked matches one request can meet (%s, %s); across routes the gateway breaks such ties by creation time, not declaration order. Reduce the rules or backends",
									len(chunks), MaxRulesPerRoute, MaxMatchesPerRoute, g.label, h.label, a, b)
								return
							}
						}
					}
				}
			}
		}
	}
}

func (e *emitter) ruleField(g *genRule) *field.Path {
	switch {
	case g.origin >= 0:
		return diag.Rule(g.origin)
	case g.origin == originBackendNameMatch:
		return diag.Spec("defaultRouteStrategy")
	default:
		return diag.Spec("defaultRoute")
	}
}

// hasSharedBudget reports whether the router has a budget over all its
// requests (router or team scope), which needs one traffic policy.
func hasSharedBudget(r *ir.Router) bool {
	for _, b := range r.Policy.Budgets {
		if b.Scope != ir.BudgetScopeRule {
			return true
		}
	}
	return false
}
