package aigateway

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

type trafficGroup struct {
	key   string
	rules []*genRule
}

// trafficKey groups the rules that can share a BackendTrafficPolicy: the
// same per-attempt timeout and the same rule budgets.
func trafficKey(g *genRule) string { return g.headerTimeout + "|" + fmt.Sprint(g.ruleBudgets) }

// sharedBudgets are the indexes of the router's budgets over all its
// requests (router or team scope).
func (e *emitter) sharedBudgets() []int {
	var shared []int
	for i, b := range e.r.Policy.Budgets {
		if b.Scope != ir.BudgetScopeRule {
			shared = append(shared, i)
		}
	}
	return shared
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
func (e *emitter) checkBudgetSpan(rules []*genRule) {
	shared := e.sharedBudgets()
	if len(shared) == 0 {
		return
	}
	keys := map[string]bool{}
	for _, g := range rules {
		if g.headerTimeout == "" {
			continue
		}
		keys[trafficKey(g)] = true
	}
	if len(keys) > 1 {
		e.budgetsSpan(shared, len(keys))
	}
}

// trafficPolicies emits the BackendTrafficPolicies: one per group of rules
// sharing a per-attempt timeout and rule budgets. The policy carries retry
// across priorities, passive outlier ejection, active health checks and the
// budgets; Envoy Gateway applies a rule-level policy instead of (not merged
// with) a route-level one, so each rule gets exactly one. It returns how
// many budgets it compiled into rate limits.
func (e *emitter) trafficPolicies(plan routePlan, routes aiRoutes) int {
	var groups []*trafficGroup
	byKey := map[string]*trafficGroup{}
	for _, g := range plan.rules {
		key := trafficKey(g)
		tg := byKey[key]
		if tg == nil {
			tg = &trafficGroup{key: key}
			byKey[key] = tg
			groups = append(groups, tg)
		}
		tg.rules = append(tg.rules, g)
	}
	shared := e.sharedBudgets()
	if len(groups) > 1 {
		e.budgetsSpan(shared, len(groups))
		shared = nil
	}
	budgets := 0
	warnedExternal := map[string]bool{}
	for gi, tg := range groups {
		name := naming.GatewayTrafficPolicyName(e.r.Name, gi)
		spec := egv1a1.BackendTrafficPolicySpec{}
		if len(groups) == 1 {
			for _, rt := range routes.names {
				spec.TargetRefs = append(spec.TargetRefs, routeTarget(rt, ""))
			}
		} else {
			for _, g := range tg.rules {
				spec.TargetRefs = append(spec.TargetRefs, routeTarget(routes.of(g), g.name))
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
			rules := e.budgetRules(i, routes.usd)
			if len(rules) > 0 {
				budgets++
			}
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
		for _, g := range plan.rules {
			found = found || (g.origin >= 0 && e.r.Rules[g.origin].Name == b.RuleName)
		}
		if !found {
			e.diags.WarnAt(diag.Budget(i).Child("ruleName"), ReasonBudgetNeverApplies,
				"rule %q never matches on the gateway (no backend advertises its required capabilities), so budget %q caps nothing", b.RuleName, b.Name)
		}
	}
	return budgets
}

var windowUnits = map[time.Duration]egv1a1.RateLimitUnit{
	time.Second: egv1a1.RateLimitUnitSecond, time.Minute: egv1a1.RateLimitUnitMinute,
	time.Hour: egv1a1.RateLimitUnitHour, 24 * time.Hour: egv1a1.RateLimitUnitDay,
}

// budgetRules compiles one budget into global rate-limit rules (one per
// limit), shared across every target of the policy. A dollar limit counts
// in the unit of the USD cost the routes declare (usd).
func (e *emitter) budgetRules(i int, usd *usdCost) []egv1a1.RateLimitRule {
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
	if b.MaxUSD != "" && usd != nil {
		r, _ := decimal(b.MaxUSD)
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(usd.scale)), nil)))
		switch {
		case !r.IsInt():
			e.diags.ErrorAt(p.Child("maxUSD"), ReasonBudgetLimitNotExpressible,
				"budget %q caps %s USD, finer than the 1e-%d USD unit the cost expression counts in; drop the extra decimals", b.Name, b.MaxUSD, usd.scale)
		case !r.Num().IsUint64() || r.Num().Uint64() > math.MaxUint32:
			e.diags.ErrorAt(p.Child("maxUSD"), ReasonBudgetLimitTooLarge,
				"budget %q caps %s USD, %s units of 1e-%d USD, more than the %d a gateway rate limit counts per window (prices with more decimals need a finer unit)", b.Name, b.MaxUSD, r.Num(), usd.scale, uint64(math.MaxUint32))
		default:
			out = append(out, rule(r.Num().Uint64(), usd.key))
		}
	}
	if len(out) > 0 {
		e.diags.WarnAt(p.Child("windowSeconds"), ReasonBudgetWindowFixed,
			"budget %q counts in fixed %s windows on the gateway (the rate-limit service resets at each boundary), not a rolling window, so up to twice the limit can pass around a boundary", b.Name, strings.ToLower(string(unit)))
	}
	return out
}

func labelOf(g *genRule) string { return strings.TrimSpace(g.label) }

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
