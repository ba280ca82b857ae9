package routerproxy

// policy.rateLimits at intake (docs/rate-limits.md): a request is counted
// per verified team or API key after routing, before the budgets; over a
// limit it is answered 429 with Retry-After, and every answer to a request
// a limit counts carries the x-ratelimit-* headers, as OpenAI names them.

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

// rateMetrics are the rate limits' series.
type rateMetrics struct {
	rejected *prometheus.CounterVec
	util     *prometheus.GaugeVec
}

// initRateLimits sets the server's limiter (opts.RateLimits, shared through
// the budget store, or in memory per replica) and registers its metrics.
func (s *Server) initRateLimits(opts Options, now func() time.Time) {
	s.limits = opts.RateLimits
	if s.limits == nil {
		s.limits = budget.NewRateMemory(s.cfg.Policy.RateLimits, now)
	}
	c := prometheus.Labels{"router": s.cfg.Router.Name}
	s.rl.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_rate_limit_rejections_total", Help: "Requests refused with 429 by a rate limit (policy.rateLimits).", ConstLabels: c}, []string{"limit"})
	s.rl.util = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_rate_limit_utilization", Help: "Highest fraction of a rate limit's cap any team or key uses in the last minute.", ConstLabels: c}, []string{"limit"})
	s.m.reg.MustRegister(s.rl.rejected, s.rl.util)
}

// The response headers of a counted request: OpenAI's names for requests
// and tokens; "tokens" is the input-token cap when one applies, else the
// output-token cap, and the two have their own names besides.
var rateHeaders = [...]struct{ limit, remaining, reset string }{
	budget.DimRequests:     {"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
	budget.DimInputTokens:  {"X-Ratelimit-Limit-Input-Tokens", "X-Ratelimit-Remaining-Input-Tokens", "X-Ratelimit-Reset-Input-Tokens"},
	budget.DimOutputTokens: {"X-Ratelimit-Limit-Output-Tokens", "X-Ratelimit-Remaining-Output-Tokens", "X-Ratelimit-Reset-Output-Tokens"},
}

var tokensHeaders = struct{ limit, remaining, reset string }{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}

// admitRateLimits counts the request against the limits of who it comes
// from, or refuses it: 429 rate_limit_exceeded over a limit, 503 when the
// store fails closed. The charge (nil when no limit counts the request) is
// settled with the response's usage.
func (s *Server) admitRateLimits(w http.ResponseWriter, r *http.Request, id auth.Identity, bodyLen int, ent *proxyapi.AuditEntry) (budget.RateCharge, bool) {
	if len(s.cfg.Policy.RateLimits) == 0 {
		return nil, true
	}
	ch, q, lim, err := s.limits.AdmitRate(r.Context(), budget.Subject{Team: id.Team, Key: id.Key}, engine.EstimateUsage(int64(bodyLen), 0).PromptTokens)
	if err != nil {
		// The budgets' answer: the store is down and fails closed.
		refuseAs(w, ent, refBudgetStoreDown, err.Error(), "rate limits cannot be checked: "+err.Error())
		return nil, false
	}
	if lim != nil {
		setRateHeaders(w.Header(), lim.Quota)
		ent.RateLimit = lim.Limit
		s.rl.rejected.WithLabelValues(lim.Limit).Inc()
		secs := retryAfter(w, lim.RetryAfter)
		refuseAs(w, ent, refRateLimited, "rate limit "+lim.Limit+" reached", "rate limit "+lim.Limit+" reached for its one-minute window; retry after "+secs+"s")
		return nil, false
	}
	setRateHeaders(w.Header(), q)
	return ch, true
}

// setRateHeaders writes what the request left of each capped dimension.
func setRateHeaders(h http.Header, q budget.Quota) {
	set := func(names struct{ limit, remaining, reset string }, a budget.Allowance) {
		h.Set(names.limit, strconv.FormatInt(a.Limit, 10))
		h.Set(names.remaining, strconv.FormatInt(a.Remaining, 10))
		h.Set(names.reset, resetValue(a.Reset))
	}
	for d, a := range q {
		if a.Set {
			set(rateHeaders[d], a)
		}
	}
	switch {
	case q[budget.DimInputTokens].Set:
		set(tokensHeaders, q[budget.DimInputTokens])
	case q[budget.DimOutputTokens].Set:
		set(tokensHeaders, q[budget.DimOutputTokens])
	}
}

// resetValue is a reset as OpenAI writes it: seconds with a unit ("12s",
// "0.5s"), rounded up to the millisecond.
func resetValue(d time.Duration) string {
	ms := int64(math.Ceil(float64(d) / float64(time.Millisecond)))
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
}

// isRateHeader reports whether k is one of the headers a counted request's
// answer carries from the router's own limits: an upstream's value (a
// provider's own limits, on the router's credential) must not replace it.
func isRateHeader(k string) bool {
	if k == tokensHeaders.limit || k == tokensHeaders.remaining || k == tokensHeaders.reset {
		return true
	}
	for _, n := range rateHeaders {
		if k == n.limit || k == n.remaining || k == n.reset {
			return true
		}
	}
	return false
}

// keepOurs reports whether the upstream's header k is left out of the
// answer: the router's limits set it already.
func keepOurs(h http.Header, k string) bool {
	_, set := h[k]
	return set && isRateHeader(k)
}

// settleRateLimits settles the limits' charge with the usage.
func settleRateLimits(ch budget.RateCharge, u engine.Usage) {
	if ch != nil {
		ch.Settle(u.PromptTokens, u.CompletionTokens)
	}
}

// releaseRateLimits gives the admission back (a budget refused the request).
func releaseRateLimits(ch budget.RateCharge) {
	if ch != nil {
		ch.Release()
	}
}

// refreshRateGauges updates the utilization gauges from the limiter.
func (s *Server) refreshRateGauges() {
	for _, l := range s.limits.RateStatus() {
		f, _ := strconv.ParseFloat(l.Utilization, 64)
		s.rl.util.WithLabelValues(l.Name).Set(f)
	}
}
