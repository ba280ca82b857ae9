package aigateway

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

type gwParentRef = gwapiv1.ParentReference

func gwKind(k string) *gwapiv1.Kind            { v := gwapiv1.Kind(k); return &v }
func gwObjectName(n string) gwapiv1.ObjectName { return gwapiv1.ObjectName(n) }

// hostnames are the router's gatewayRef.hostnames as Gateway API
// hostnames (nil: every host).
func hostnames(hs []string) []gwapiv1.Hostname {
	var out []gwapiv1.Hostname
	for _, h := range hs {
		out = append(out, gwapiv1.Hostname(h))
	}
	return out
}
func gwapiv1Namespace(ns string) *gwapiv1.Namespace {
	if ns == "" {
		return nil
	}
	v := gwapiv1.Namespace(ns)
	return &v
}

func parseGw(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

func ptr[T any](v T) *T { return &v }

// Cost metadata the AI Gateway publishes under io.envoy.ai_gateway.
const (
	costNamespace  = "io.envoy.ai_gateway"
	tokenCostKey   = "llmkube_total_tokens"
	usdCostKeyBase = "llmkube_usd_e"
)

// usdCost is the CEL cost of a request in units of 10^-scale USD.
type usdCost struct {
	scale int
	key   string
	expr  string
}

// decimal parses an exact decimal string.
func decimal(s string) (*big.Rat, int) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat), 0
	}
	dec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dec = len(s) - i - 1
	}
	return r, dec
}

// usdCostExpr builds the CEL cost of a request from each backend's
// costPerMillionTokens: per token, a price of P USD per million tokens is
// P·10^(scale-6) units of 10^-scale USD, an integer when scale is 6 plus the
// most decimals any price has.
func (e *emitter) usdCostExpr() *usdCost {
	scale := 6
	for i := range e.r.Backends {
		if c := e.r.Backends[i].Cost; c != nil {
			for _, p := range []string{c.PromptUSD, c.CompletionUSD} {
				if _, d := decimal(p); 6+d > scale {
					scale = 6 + d
				}
			}
		}
	}
	unit := func(p string) string {
		if p == "" {
			return "0u"
		}
		r, _ := decimal(p)
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-6)), nil)))
		return r.Num().String() + "u"
	}
	expr := "0u"
	for i := len(e.r.Backends) - 1; i >= 0; i-- {
		b := &e.r.Backends[i]
		if b.Cost == nil {
			continue
		}
		expr = fmt.Sprintf("%s ? input_tokens * %s + output_tokens * %s : %s",
			backendIs(e.r.Namespace, e.aiName[b.Name]), unit(b.Cost.PromptUSD), unit(b.Cost.CompletionUSD), expr)
	}
	return &usdCost{scale: scale, key: fmt.Sprintf("%s%d", usdCostKeyBase, scale), expr: expr}
}

// backendIs is the CEL test that the request went to the AIServiceBackend
// ns/name. At run time Envoy AI Gateway's extproc (v0.3 through v1.1) sets
// `backend` to the per-route-rule name
// "<namespace>/<AIServiceBackend>/route/<route>/rule/<i>/ref/<j>"
// (internalapi.PerRouteRuleRefBackendName), not the "<name>.<namespace>"
// of the API's doc comment; comparing with the latter priced every request
// at 0. The prefix, with its closing "/", names exactly one backend; the
// documented form is kept for versions that pass it.
func backendIs(ns, name string) string {
	return fmt.Sprintf("(backend.startsWith(%q) || backend == %q)", ns+"/"+name+"/", name+"."+ns)
}

// requestCosts declares the costs the budgets read.
func (e *emitter) requestCosts() []LLMRequestCost {
	var tokens, usd bool
	for _, b := range e.r.Policy.Budgets {
		tokens = tokens || b.MaxTokens > 0
		usd = usd || b.MaxUSD != ""
	}
	var out []LLMRequestCost
	if tokens {
		out = append(out, LLMRequestCost{MetadataKey: tokenCostKey, Type: "TotalToken"})
	}
	if usd {
		e.usdCost = e.usdCostExpr()
		out = append(out, LLMRequestCost{MetadataKey: e.usdCost.key, Type: "CEL", CEL: e.usdCost.expr})
	}
	return out
}

var windowUnits = map[time.Duration]egv1a1.RateLimitUnit{
	time.Second: egv1a1.RateLimitUnitSecond, time.Minute: egv1a1.RateLimitUnitMinute,
	time.Hour: egv1a1.RateLimitUnitHour, 24 * time.Hour: egv1a1.RateLimitUnitDay,
}

// budgetRules compiles one budget into global rate-limit rules (one per
// limit), shared across every target of the policy.
func (e *emitter) budgetRules(i int) []egv1a1.RateLimitRule {
	b := &e.r.Policy.Budgets[i]
	p := diag.Budget(i)
	unit, ok := windowUnits[b.Window]
	if !ok {
		e.diags.ErrorAt(p.Child("windowSeconds"), ReasonBudgetWindowUnsupported,
			"budget %q counts over %s; the gateway's global rate limits count over one second, minute, hour or day, and scaling the limit to another window would change what it allows. Use windowSeconds 1, 60, 3600 or 86400", b.Name, b.Window)
		return nil
	}
	var sel []egv1a1.RateLimitSelectCondition
	if b.Scope == ir.BudgetScopeTeam {
		sel = []egv1a1.RateLimitSelectCondition{{Headers: []egv1a1.HeaderMatch{{Name: b.HeaderKey, Type: ptr(egv1a1.HeaderMatchDistinct)}}}}
	}
	rule := func(limit uint64, key string) egv1a1.RateLimitRule {
		return egv1a1.RateLimitRule{
			ClientSelectors: sel,
			Limit:           egv1a1.RateLimitValue{Requests: uint32(limit), Unit: unit},
			Cost: &egv1a1.RateLimitCost{
				Request:  &egv1a1.RateLimitCostSpecifier{From: egv1a1.RateLimitCostFromNumber, Number: ptr(uint64(0))},
				Response: &egv1a1.RateLimitCostSpecifier{From: egv1a1.RateLimitCostFromMetadata, Metadata: &egv1a1.RateLimitCostMetadata{Namespace: costNamespace, Key: key}},
			},
			Shared: ptr(true),
		}
	}
	var out []egv1a1.RateLimitRule
	if b.MaxTokens > 0 {
		if b.MaxTokens > math.MaxUint32 {
			e.diags.ErrorAt(p.Child("maxTokens"), ReasonBudgetLimitTooLarge,
				"budget %q allows %d tokens; a gateway rate limit counts at most %d per window", b.Name, b.MaxTokens, uint64(math.MaxUint32))
		} else {
			out = append(out, rule(uint64(b.MaxTokens), tokenCostKey))
		}
	}
	if b.MaxUSD != "" && e.usdCost != nil {
		r, _ := decimal(b.MaxUSD)
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e.usdCost.scale)), nil)))
		switch {
		case !r.IsInt():
			e.diags.ErrorAt(p.Child("maxUSD"), ReasonBudgetLimitNotExpressible,
				"budget %q caps %s USD, finer than the 1e-%d USD unit the cost expression counts in; drop the extra decimals", b.Name, b.MaxUSD, e.usdCost.scale)
		case !r.Num().IsUint64() || r.Num().Uint64() > math.MaxUint32:
			e.diags.ErrorAt(p.Child("maxUSD"), ReasonBudgetLimitTooLarge,
				"budget %q caps %s USD, %s units of 1e-%d USD, more than the %d a gateway rate limit counts per window (prices with more decimals need a finer unit)", b.Name, b.MaxUSD, r.Num(), e.usdCost.scale, uint64(math.MaxUint32))
		default:
			out = append(out, rule(r.Num().Uint64(), e.usdCost.key))
		}
	}
	if len(out) > 0 {
		e.budgets++
		e.diags.WarnAt(p.Child("windowSeconds"), ReasonBudgetWindowFixed,
			"budget %q counts in fixed %s windows on the gateway (the rate-limit service resets at each boundary), not a rolling window, so up to twice the limit can pass around a boundary", b.Name, strings.ToLower(string(unit)))
	}
	return out
}

type trafficGroup struct {
	key   string
	rules []*genRule
}

// budgetsSpan reports each router-wide budget (shared) that n
// BackendTrafficPolicies would split into n buckets.
func (e *emitter) budgetsSpan(shared []int, n int) {
	for _, i := range shared {
		e.diags.ErrorAt(diag.Budget(i), ReasonBudgetSpansTrafficPolicies,
			"budget %q must count every request of the router in one bucket, but the router's rules need %d BackendTrafficPolicies (they differ in response-header timeout or rule budgets) and the gateway keeps one bucket per policy. Give the rules one timeout and drop rule-scope budgets, or use the Proxy data plane",
			e.r.Policy.Budgets[i].Name, n)
	}
}

// checkBudgetSpan is trafficPolicies' budget check, run right after the
// rules are built even when an earlier check failed, so that the router's
// problems come in one pass, not one round each. A rule whose timeout is
// already an error ("") counts as taking whichever the others take.
func (e *emitter) checkBudgetSpan() {
	var shared []int
	for i, b := range e.r.Policy.Budgets {
		if b.Scope != ir.BudgetScopeRule {
			shared = append(shared, i)
		}
	}
	if len(shared) == 0 {
		return
	}
	keys := map[string]bool{}
	for _, g := range e.rules {
		if g.headerTimeout == "" {
			continue
		}
		keys[g.headerTimeout+"|"+fmt.Sprint(g.ruleBudgets)] = true
	}
	if len(keys) > 1 {
		e.budgetsSpan(shared, len(keys))
	}
}

// trafficPolicies emits the BackendTrafficPolicies: one per group of rules
// sharing a per-attempt timeout and rule budgets. The policy carries retry
// across priorities, passive outlier ejection, active health checks and the
// budgets; Envoy Gateway applies a rule-level policy instead of (not merged
// with) a route-level one, so each rule gets exactly one.
func (e *emitter) trafficPolicies(rules []*genRule) {
	var groups []*trafficGroup
	byKey := map[string]*trafficGroup{}
	for _, g := range e.rules {
		key := g.headerTimeout + "|" + fmt.Sprint(g.ruleBudgets)
		tg := byKey[key]
		if tg == nil {
			tg = &trafficGroup{key: key}
			byKey[key] = tg
			groups = append(groups, tg)
		}
		tg.rules = append(tg.rules, g)
	}
	var shared []int
	for i, b := range e.r.Policy.Budgets {
		if b.Scope != ir.BudgetScopeRule {
			shared = append(shared, i)
		}
	}
	if len(groups) > 1 {
		e.budgetsSpan(shared, len(groups))
		shared = nil
	}
	warnedExternal := map[string]bool{}
	for gi, tg := range groups {
		name := naming.GatewayTrafficPolicyName(e.r.Name, gi)
		spec := egv1a1.BackendTrafficPolicySpec{}
		if len(groups) == 1 {
			for _, rt := range e.routes {
				spec.TargetRefs = append(spec.TargetRefs, routeTarget(rt, ""))
			}
		} else {
			for _, g := range tg.rules {
				spec.TargetRefs = append(spec.TargetRefs, routeTarget(e.routeOf(g), g.name))
			}
		}
		first := tg.rules[0]
		retries := int32(0)
		for _, g := range tg.rules {
			retries = max(retries, g.numRetries)
		}
		retry := &egv1a1.Retry{
			NumRetries:             ptr(retries),
			NumAttemptsPerPriority: ptr(int32(1)),
			RetryOn: &egv1a1.RetryOn{Triggers: []egv1a1.TriggerEnum{
				egv1a1.Error5XX, egv1a1.Reset, egv1a1.ConnectFailure, egv1a1.RefusedStream,
			}},
		}
		if first.headerTimeout != "" {
			retry.PerRetry = &egv1a1.PerRetryPolicy{Timeout: ptr(gwapiv1.Duration(first.headerTimeout))}
		}
		spec.Retry = retry
		q := e.duration(diag.Spec("proxy", "quarantineDuration"), e.r.Timeouts.Quarantine)
		spec.HealthCheck = &egv1a1.HealthCheck{
			Passive: &egv1a1.PassiveHealthCheck{
				SplitExternalLocalOriginErrors: ptr(true),
				Interval:                       ptr(gwapiv1.Duration("1s")),
				Consecutive5xxErrors:           ptr(uint32(1)),
				ConsecutiveLocalOriginFailures: ptr(uint32(1)),
				BaseEjectionTime:               ptr(gwapiv1.Duration(q)),
				MaxEjectionPercent:             ptr(int32(100)),
			},
			Active: e.activeHealthCheck(tg, warnedExternal),
		}
		var rl []egv1a1.RateLimitRule
		var budgetNames []string
		for _, i := range append(append([]int(nil), shared...), first.ruleBudgets...) {
			rules := e.budgetRules(i)
			rl = append(rl, rules...)
			for range rules {
				budgetNames = append(budgetNames, e.r.Policy.Budgets[i].Name)
			}
		}
		meta := e.meta(name)
		if len(rl) > 0 {
			spec.RateLimit = &egv1a1.RateLimitSpec{Global: &egv1a1.GlobalRateLimit{Rules: rl}}
			meta.Annotations = map[string]string{naming.AnnotationBudgetRules: strings.Join(budgetNames, ",")}
		}
		e.add(&egv1a1.BackendTrafficPolicy{ObjectMeta: meta, Spec: spec}, gvkBTP)
	}
	// Rule budgets of rules that are never generated cap nothing.
	for i, b := range e.r.Policy.Budgets {
		if b.Scope != ir.BudgetScopeRule {
			continue
		}
		found := false
		for _, g := range e.rules {
			found = found || (g.origin >= 0 && e.r.Rules[g.origin].Name == b.RuleName)
		}
		if !found {
			e.diags.WarnAt(diag.Budget(i).Child("ruleName"), ReasonBudgetNeverApplies,
				"rule %q never matches on the gateway (no backend advertises its required capabilities), so budget %q caps nothing", b.RuleName, b.Name)
		}
	}
}

func routeTarget(route, section string) gwapiv1.LocalPolicyTargetReferenceWithSectionName {
	t := gwapiv1.LocalPolicyTargetReferenceWithSectionName{
		LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gatewayAPIGrp, Kind: httpRouteKind, Name: gwapiv1.ObjectName(route)},
	}
	if section != "" {
		t.SectionName = ptr(gwapiv1.SectionName(section))
	}
	return t
}

func (e *emitter) routeOf(g *genRule) string {
	// routes are filled in chunk order; find the chunk holding g.
	idx := 0
	for _, obj := range e.objects {
		rt, ok := obj.Obj.(*AIGatewayRoute)
		if !ok {
			continue
		}
		for _, rr := range rt.Spec.Rules {
			if rr.Name == g.name {
				return e.routes[idx]
			}
		}
		idx++
	}
	return e.routes[0]
}

// activeHealthCheck probes a group's backends when none needs credentials and they
// all share one probe (the gateway applies one probe to every backend of a
// rule). Providers with credentials are not probed actively: the probe would carry
// no credentials and fail; passive ejection covers them.
func (e *emitter) activeHealthCheck(tg *trafficGroup, warned map[string]bool) *egv1a1.ActiveHealthCheck {
	var hc *ir.HealthCheck
	same := true
	external := false
	for _, g := range tg.rules {
		for _, name := range g.backends {
			b, _ := e.r.Backend(name)
			if b.External != nil && len(b.External.Credentials) > 0 {
				// Say so only where the spec asked for a probe.
				external = true
				if b.HealthCheck.Set && !warned[name] {
					warned[name] = true
					e.diags.WarnAt(e.backendPath(name).Child("healthCheck"), ReasonActiveHealthCheckNotApplied,
						"the gateway's active probes carry no provider credentials, so backend %q is not probed actively; passive outlier detection ejects it after a failed request for the quarantine duration", name)
				}
				continue
			}
			if hc == nil {
				hc = &b.HealthCheck
			} else if *hc != b.HealthCheck {
				same = false
			}
		}
	}
	if hc == nil || external {
		return nil
	}
	if !same {
		labels := make([]string, 0, len(tg.rules))
		for _, g := range tg.rules {
			labels = append(labels, labelOf(g))
		}
		e.diags.WarnAt(diag.Spec("backends"), ReasonActiveHealthCheckSkipped,
			"the backends of %s use different health checks and the gateway applies one probe per rule, so they are not probed actively; passive outlier detection ejects a failing backend", strings.Join(labels, ", "))
		return nil
	}
	return &egv1a1.ActiveHealthCheck{
		Type:               egv1a1.ActiveHealthCheckerTypeHTTP,
		Interval:           ptr(gwapiv1.Duration(e.duration(diag.Spec("backends"), hc.Interval))),
		Timeout:            ptr(gwapiv1.Duration(e.duration(diag.Spec("backends"), hc.Timeout))),
		UnhealthyThreshold: ptr(uint32(1)),
		HealthyThreshold:   ptr(uint32(1)),
		HTTP:               &egv1a1.HTTPActiveHealthChecker{Path: hc.Path, ExpectedStatuses: []egv1a1.HTTPStatus{200}},
	}
}

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
func (e *emitter) securityPolicy() {
	a := e.r.Policy.Auth
	if a == nil || a.JWT == nil {
		return
	}
	j := a.JWT
	spec := egv1a1.SecurityPolicySpec{}
	for _, rt := range e.routes {
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
	for _, g := range e.rules {
		for _, m := range g.matches {
			if _, ok := m.get(j.HeaderKey); ok {
				provider.RecomputeRoute = ptr(true)
			}
		}
	}
	spec.JWT = &egv1a1.JWT{Providers: []egv1a1.JWTProvider{provider}}
	spec.Authorization = e.authorization(providerName, nil)
	e.add(&egv1a1.SecurityPolicy{ObjectMeta: e.meta(naming.GatewaySecurityPolicyName(e.r.Name)), Spec: spec}, gvkSP)
	e.servingPolicies(provider)
	e.clientPolicy()
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
func (e *emitter) servingPolicies(provider egv1a1.JWTProvider) {
	a := e.r.Policy.Auth
	if len(a.Allowlists) == 0 {
		return
	}
	for _, g := range e.rules {
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
				PolicyTargetReferences: egv1a1.PolicyTargetReferences{TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{routeTarget(e.routeOf(g), g.name)}},
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
// controller then reports ours Conflicted (PolicyConflicted).
func (e *emitter) clientPolicy() {
	j := e.r.Policy.Auth.JWT
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

// summary says what was compiled, for status.
func (e *emitter) summary() string {
	spec := 0
	seen := map[int]bool{}
	for _, g := range e.rules {
		if g.origin >= 0 && !seen[g.origin] {
			seen[g.origin] = true
			spec++
		}
	}
	parts := []string{
		plural(len(e.r.Backends), "backend"),
		plural(spec, "rule"),
	}
	if e.r.Default.Strategy == ir.DefaultBackendNameMatch {
		parts = append(parts, "BackendNameMatch")
	}
	if e.r.Default.Backend != "" {
		parts = append(parts, "default route")
	}
	if e.budgets > 0 {
		parts = append(parts, plural(e.budgets, "budget"))
	}
	if e.bsps > 0 {
		parts = append(parts, plural(e.bsps, "upstream credential"))
	}
	if a := e.r.Policy.Auth; a != nil && a.JWT != nil {
		parts = append(parts, "JWT enforced")
		if n := len(a.Allowlists); n > 0 {
			parts = append(parts, plural(n, "team allowlist"))
		}
	}
	s := strings.Join(parts, ", ")
	gw := e.r.Gateway
	s += fmt.Sprintf(" on gateway %s/%s", gw.Namespace, gw.Name)
	if len(e.routes) > 1 {
		s += fmt.Sprintf(" (%d AIGatewayRoutes)", len(e.routes))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
