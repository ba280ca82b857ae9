package agentgateway

import (
	"regexp"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// HTTPRoute limits (Gateway API standard channel).
const (
	maxRouteRules      = 16
	maxMatchesPerRule  = 64
	maxMatchesPerRoute = 127 // CEL: fewer than 128 across all rules
	maxHeadersPerMatch = 16
)

// condKind is how a header condition compares.
type condKind int

const (
	condExact   condKind = iota // exact, case-sensitive
	condFold                    // exact, case-insensitive (a (?i) regular expression)
	condGlob                    // a model glob, as a regular expression
	condPresent                 // the body has a model: ModelPresentHeader is "true"
)

// cond is one header condition of a match, kept with its meaning so that
// overlaps between rules can be judged.
type cond struct {
	name  string // as emitted
	kind  condKind
	value string // the literal, the glob, or "" for condPresent
}

func (c cond) header() gwv1.HTTPHeaderMatch {
	exact, re := gwv1.HeaderMatchExact, gwv1.HeaderMatchRegularExpression
	switch c.kind {
	case condExact:
		return gwv1.HTTPHeaderMatch{Type: &exact, Name: gwv1.HTTPHeaderName(c.name), Value: c.value}
	case condFold:
		return gwv1.HTTPHeaderMatch{Type: &re, Name: gwv1.HTTPHeaderName(c.name), Value: "(?i)^" + regexp.QuoteMeta(c.value) + "$"}
	case condGlob:
		return gwv1.HTTPHeaderMatch{Type: &re, Name: gwv1.HTTPHeaderName(c.name), Value: GlobRegexp(c.value)}
	default:
		// Any model, also one that is not visible ASCII, which no regular
		// expression matches in agentgateway (see ModelPresentHeader).
		return gwv1.HTTPHeaderMatch{Type: &exact, Name: ModelPresentHeader, Value: "true"}
	}
}

// GlobRegexp turns a models glob ("*" any run, "?" one character, everything
// else literal) into an anchored regular expression.
func GlobRegexp(glob string) string {
	return "^" + wellknown.GlobRE2(glob) + "$"
}

func globMatches(glob, s string) bool {
	return regexp.MustCompile(GlobRegexp(glob)).MatchString(s)
}

// disjoint reports whether no value satisfies both conditions on one header.
func disjoint(a, b cond) bool {
	if a.kind == condPresent || b.kind == condPresent {
		return false
	}
	literal := func(c cond) bool { return c.kind == condExact || c.kind == condFold }
	switch {
	case literal(a) && literal(b):
		if a.kind == condFold || b.kind == condFold {
			return !strings.EqualFold(a.value, b.value)
		}
		return a.value != b.value
	case literal(a) && b.kind == condGlob:
		return !globMatches(b.value, a.value)
	case a.kind == condGlob && literal(b):
		return !globMatches(a.value, b.value)
	}
	return false // two globs: assume they overlap
}

// overlap reports whether one request can satisfy both matches.
func overlap(a, b []cond) bool {
	for _, x := range a {
		for _, y := range b {
			if strings.EqualFold(x.name, y.name) && disjoint(x, y) {
				return false
			}
		}
	}
	return true
}

// ruleMatches expands a rule's match into HTTPRoute matches: one per
// combination of model pattern and classification value (each a list that
// ORs), every one with the model header, the exact headers and the task
// complexity (which AND).
func (e *emitter) ruleMatches(m *ir.Match) [][]cond {
	models := []cond{{name: ModelHeader, kind: condPresent}}
	if len(m.Models) > 0 {
		models = models[:0]
		for _, mod := range m.Models {
			if strings.ContainsAny(mod, "*?") {
				models = append(models, cond{name: ModelHeader, kind: condGlob, value: mod})
			} else {
				models = append(models, cond{name: ModelHeader, kind: condExact, value: mod})
			}
		}
	}
	var common []cond
	for _, h := range m.Headers {
		common = append(common, cond{name: h.Name, kind: condExact, value: h.Value})
	}
	if m.TaskComplexity != "" {
		common = append(common, cond{name: wellknown.TaskComplexityHeader, kind: condExact, value: m.TaskComplexity})
	}
	classes := []*cond{nil}
	if len(m.DataClassification) > 0 {
		classes = classes[:0]
		for _, c := range m.DataClassification {
			// The router-proxy compares classifications case-insensitively; a
			// case-sensitive match here would let "PII" past a fail-closed gate.
			classes = append(classes, &cond{name: e.r.Policy.Classification.HeaderKey, kind: condFold, value: c})
		}
	}
	var out [][]cond
	for _, mod := range models {
		for _, cl := range classes {
			conds := []cond{mod}
			conds = append(conds, common...)
			if cl != nil {
				conds = append(conds, *cl)
			}
			out = append(out, conds)
		}
	}
	return out
}

func toMatches(conds [][]cond) []gwv1.HTTPRouteMatch {
	out := make([]gwv1.HTTPRouteMatch, 0, len(conds))
	for _, cs := range conds {
		m := gwv1.HTTPRouteMatch{}
		for _, c := range cs {
			m.Headers = append(m.Headers, c.header())
		}
		out = append(out, m)
	}
	return out
}

func poolRef(name string) []gwv1.HTTPBackendRef {
	group, kind := gwv1.Group(inferenceGroup), gwv1.Kind("InferencePool")
	return []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
		Group: &group, Kind: &kind, Name: gwv1.ObjectName(name),
	}}}}
}

func sectionName(s string) *gwv1.SectionName {
	n := gwv1.SectionName(s)
	return &n
}

// poolRouting compiles routing: InferencePool.
func (e *emitter) poolRouting() {
	pools := map[string]string{}  // InferenceService -> pool name
	poolOf := map[string]string{} // backend -> pool name
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		if b.Local != nil {
			poolOf[b.Name] = e.pool(b, i, pools)
			if msg, ok := targets.AssumedUpstreamModel(ir.DataPlaneAgentGateway, b); ok {
				e.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), targets.ReasonUpstreamModelAssumed, "%s", msg)
			}
		}
	}
	rules, closed := e.poolRuleRoutes(poolOf)
	rules = append(rules, e.poolDefaultRoutes(poolOf)...)
	e.checkRouteLimits(rules)
	e.policy()
	if len(rules) == 0 {
		if e.diags.HasErrors() {
			return // refused: the errors say why, no route is generated anyway
		}
		// An HTTPRoute without rules defaults to a catch-all with no backend,
		// which would answer 503 for every path on the Gateway's listeners.
		e.diags.WarnAt(diag.Spec(), ReasonNoRoute,
			"no rule and no default route has a ready backend, so no HTTPRoute is generated; requests through the Gateway are not routed to this router")
		return
	}
	e.route(rules)
	e.failClosedPolicy(closed)
}

// poolRuleRoutes are the HTTPRoute rules of the router's rules, each to the
// pool of its first ready backend, and the names of the fail-closed rules
// left without one (closed).
func (e *emitter) poolRuleRoutes(poolOf map[string]string) (rules []gwv1.HTTPRouteRule, closed []string) {
	var checked []matchedRule
	for ri := range e.r.Rules {
		rule := &e.r.Rules[ri]
		if len(rule.Candidates) == 0 {
			continue // can never match (the frontend warned RuleNeverMatches)
		}
		p := diag.Rule(rule.Index)
		conds := e.ruleMatches(&rule.Match)
		e.checkMatchLimits(rule, conds)
		e.checkOrder(rule, conds, checked)
		checked = append(checked, matchedRule{rule.Name, conds})

		hr := gwv1.HTTPRouteRule{Name: sectionName("rule-" + rule.Name), Matches: toMatches(conds)}
		// Backends this plane refused (checkIgnored) are reported there and
		// nowhere else: they are no candidates here, ready or not.
		candidates := e.poolCandidates(rule.Candidates)
		if len(candidates) == 0 {
			continue
		}
		target, ok := e.firstReady(candidates)
		switch {
		case ok:
			if target != candidates[0] {
				e.diags.WarnAt(p.Child("route", "backends"), ReasonRoutedToFallback,
					"the InferenceService of backend %q has no ready replica, so rule %q routes to %q; the next compile moves it back once it is ready", candidates[0], rule.Name, target)
			}
			hr.BackendRefs = poolRef(poolOf[target])
			e.serves("rule-"+rule.Name, target, exactModels(&rule.Match))
			e.warnServedByOther(rule, candidates, target)
		case rule.FailClosed:
			e.diags.WarnAt(p.Child("route", "backends"), ReasonNoReadyBackend,
				"no backend of fail-closed rule %q has a ready InferenceService; its requests are refused with 503 until one is ready", rule.Name)
			closed = append(closed, "rule-"+rule.Name)
		default:
			e.diags.WarnAt(p.Child("route", "backends"), ReasonNoReadyBackend,
				"no backend of rule %q has a ready InferenceService; the rule is left out of the route until one is, and its requests fall through to later rules", rule.Name)
			continue
		}
		rules = append(rules, hr)
	}
	return rules, closed
}

// matchedRule is a rule already compiled to HTTPRoute matches, which a
// later rule must not outrank.
type matchedRule struct {
	name  string
	conds [][]cond
}

// checkMatchLimits refuses a rule whose matches Gateway API cannot hold:
// too many header conditions in one match, or too many matches.
func (e *emitter) checkMatchLimits(rule *ir.Rule, conds [][]cond) {
	p := diag.Rule(rule.Index)
	for _, c := range conds {
		if len(c) > maxHeadersPerMatch {
			e.diags.ErrorAt(p.Child("match"), ReasonRouteLimitExceeded,
				"rule %q needs %d header conditions in one HTTPRoute match, more than the %d Gateway API allows; match on fewer headers", rule.Name, len(c), maxHeadersPerMatch)
			break
		}
	}
	if len(conds) > maxMatchesPerRule {
		e.diags.ErrorAt(p.Child("match"), ReasonRouteLimitExceeded,
			"rule %q expands to %d HTTPRoute matches (models x dataClassification), more than the %d Gateway API allows in one rule; list fewer models or classifications", rule.Name, len(conds), maxMatchesPerRule)
	}
}

// checkOrder refuses a rule that an HTTPRoute would rank above an earlier
// one: Gateway API ranks a match with more header conditions above an
// earlier one, where the router-proxy takes the first rule that matches.
func (e *emitter) checkOrder(rule *ir.Rule, conds [][]cond, earlier []matchedRule) {
	for _, prev := range earlier {
		if e.outranks(conds, prev.conds) {
			e.diags.ErrorAt(diag.Rule(rule.Index).Child("match"), ReasonRuleOrderNotExpressible,
				"rule %q matches more headers than the earlier rule %q and some request matches both; the router-proxy would serve it by %q (first match), but an HTTPRoute ranks the match with more headers first. Make the rules exclusive (for example a different exact model or header value) or put rule %q first",
				rule.Name, prev.name, prev.name, rule.Name)
			return
		}
	}
}

// poolDefaultRoutes are the HTTPRoute rules after the router's rules: one
// per ready backend for BackendNameMatch, then the default backend's.
func (e *emitter) poolDefaultRoutes(poolOf map[string]string) []gwv1.HTTPRouteRule {
	var rules []gwv1.HTTPRouteRule
	if e.r.Default.Strategy == ir.DefaultBackendNameMatch {
		for i := range e.r.Backends {
			b := &e.r.Backends[i]
			if b.Local == nil || !b.Local.Ready {
				continue
			}
			conds := [][]cond{{{name: ModelHeader, kind: condExact, value: b.ModelID}}}
			e.serves("model-"+b.Name, b.Name, []string{b.ModelID})
			rules = append(rules, gwv1.HTTPRouteRule{
				Name:        sectionName("model-" + b.Name),
				Matches:     toMatches(conds),
				BackendRefs: poolRef(poolOf[b.Name]),
			})
		}
	}
	name := e.r.Default.Backend
	if name == "" {
		return rules
	}
	b, ok := e.r.Backend(name)
	switch {
	case !ok || b.Local == nil:
	case b.Local.Ready:
		e.serves("default", name, nil)
		rules = append(rules, gwv1.HTTPRouteRule{
			Name:        sectionName("default"),
			Matches:     toMatches([][]cond{{{name: ModelHeader, kind: condPresent}}}),
			BackendRefs: poolRef(poolOf[name]),
		})
	default:
		e.diags.WarnAt(diag.Spec("defaultRoute"), ReasonNoReadyBackend,
			"the InferenceService of default backend %q has no ready replica; requests no rule matches find no route until it is ready", name)
	}
	return rules
}

// checkRouteLimits refuses a route Gateway API cannot hold: too many rules
// or too many matches in all.
func (e *emitter) checkRouteLimits(rules []gwv1.HTTPRouteRule) {
	total := 0
	for _, r := range rules {
		total += len(r.Matches)
	}
	switch {
	case len(rules) > maxRouteRules:
		e.diags.ErrorAt(diag.Spec("rules"), ReasonRouteLimitExceeded,
			"the router compiles to %d HTTPRoute rules (rules, one per backend for BackendNameMatch, and the default route), more than the %d Gateway API allows", len(rules), maxRouteRules)
	case total > maxMatchesPerRoute:
		e.diags.ErrorAt(diag.Spec("rules"), ReasonRouteLimitExceeded,
			"the router compiles to %d HTTPRoute matches, more than the %d Gateway API allows in one route; list fewer models or classifications", total, maxMatchesPerRoute)
	}
}

// failClosedPolicy answers 503 on the fail-closed rules that have no ready
// backend. Such a rule keeps its matches and has no backendRefs, on which
// agentgateway alone would answer 500 (NoValidBackends); a direct response
// on the rule (an AgentgatewayPolicy targeting the HTTPRoute's section) runs
// after the route's authentication and authorization and before backend
// selection (proxy/httpproxy.rs apply_request_policies).
func (e *emitter) failClosedPolicy(rules []string) {
	if len(rules) == 0 {
		return
	}
	route := naming.AgentGatewayRouteName(e.r.Name)
	var refs []PolicyTargetRef
	for _, r := range rules {
		refs = append(refs, PolicyTargetRef{Group: gatewayAPIGroup, Kind: "HTTPRoute", Name: route, SectionName: r})
	}
	e.add(&AgentgatewayPolicy{
		ObjectMeta: e.meta(naming.DNSLabel(e.r.Name, "agentgateway-fail-closed")),
		Spec: PolicySpec{
			TargetRefs: refs,
			Traffic: &TrafficPolicy{DirectResponse: &DirectResponse{
				Status: 503,
				Body:   `{"error":{"message":"no backend of this fail-closed rule is ready","type":"service_unavailable","code":"no_ready_backend"}}`,
			}},
		},
	}, AgentgatewayPolicyGVK)
}

// outranks reports whether a later rule's matches would take precedence over
// an earlier rule's on a request both match: more header conditions win in
// Gateway API, before list order.
func (e *emitter) outranks(later, earlier [][]cond) bool {
	for _, l := range later {
		for _, m := range earlier {
			if len(l) > len(m) && overlap(l, m) {
				return true
			}
		}
	}
	return false
}

// firstReady is the first candidate whose InferenceService is ready.
// poolCandidates are the candidates an InferencePool can serve: the local
// backends (an external one is refused on this plane).
func (e *emitter) poolCandidates(candidates []string) []string {
	var out []string
	for _, name := range candidates {
		if b, ok := e.r.Backend(name); ok && b.Local != nil {
			out = append(out, name)
		}
	}
	return out
}

func (e *emitter) firstReady(candidates []string) (string, bool) {
	for _, name := range candidates {
		if b, ok := e.r.Backend(name); ok && b.Local != nil && b.Local.Ready {
			return name, true
		}
	}
	return "", false
}
