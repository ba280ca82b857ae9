package budget

// Rate limits (policy.rateLimits, docs/rate-limits.md): the requests, input
// tokens and output tokens one team or one API key may send per minute,
// beside the budgets and in the same stores. Each counter is a sliding
// window of wellknown.RateLimitWindow kept in one-second buckets (RateBuckets),
// as the budgets keep theirs: there is no boundary at which a fixed window's count
// resets (a fixed minute lets 2N through around its edge), and each
// admission is one atomic step on one counter, so N requests are admitted
// per window whatever the number of replicas (the Redis store, ratestore.go).
//
// Admission checks every cap before the request runs and counts the request
// and the prompt's estimate (its body's bytes / 4); settlement replaces the
// estimate with the prompt tokens the response reports and adds its
// completion tokens, to the bucket of the admission. A token cap is
// therefore overshot by at most the tokens of the requests in flight when
// it was reached: one request per replica at a time.

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// rateWidth is one bucket: a second.
const rateWidth = time.Second

// RateBuckets is how many seconds a count is kept in: the window's 60, plus
// the one the count was made in, so that a count made at t (in second
// floor(t)) leaves when second floor(t)+61 begins: between 60 and 61
// seconds after it, never before the window has passed. So at most N pass
// in any 60 seconds; with 60 buckets a count made late in its second would
// leave up to a second early (N+1 in 59 s). TestRateBucketsAreTheWindow
// holds it to wellknown.RateLimitWindow.
const RateBuckets = 61

// The dimensions one rate limit caps.
const (
	DimRequests = iota
	DimInputTokens
	DimOutputTokens
	numDims
)

// Subject is who a request comes from, as rate limits count it: the
// verified team and, for an API key, the key's name (never its value).
type Subject struct{ Team, Key string }

// Allowance is what an admitted request leaves of one dimension under the
// tightest limit that caps it: the x-ratelimit-* headers. Set is false when
// no applying limit caps the dimension.
type Allowance struct {
	Set              bool
	Limit, Remaining int64
	// Reset is how long until the count falls (the oldest counted second
	// leaves the window); 0 when nothing is counted.
	Reset time.Duration
}

// Quota is an admitted request's allowance of each dimension (DimRequests,
// DimInputTokens, DimOutputTokens).
type Quota [numDims]Allowance

// tighten keeps, per dimension, the allowance with the least remaining.
func (q *Quota) tighten(caps [numDims]int64, sums [numDims]int64, resets [numDims]time.Duration) {
	for d := range numDims {
		if caps[d] <= 0 {
			continue
		}
		a := Allowance{Set: true, Limit: caps[d], Remaining: max(caps[d]-sums[d], 0), Reset: resets[d]}
		if !q[d].Set || a.Remaining < q[d].Remaining || (a.Remaining == q[d].Remaining && a.Reset > q[d].Reset) {
			q[d] = a
		}
	}
}

// Limited is the limit that refused a request, when to retry, and its
// standing (the headers of the refusal: what is left of each of its caps).
type Limited struct {
	Limit      string
	RetryAfter time.Duration
	Quota      Quota
}

// RateCharge is an admitted request's share of the limits.
type RateCharge interface {
	// Settle replaces the prompt estimate with the usage the response
	// reported.
	Settle(inputTokens, outputTokens int64)
	// Release gives the admission back (a budget refused the request after
	// the limits admitted it).
	Release()
}

// Limiter admits requests against policy.rateLimits.
type Limiter interface {
	// AdmitRate counts a request of who, with estInput prompt tokens,
	// against every limit that counts it. A nil Limited admits it, with
	// the charge to settle (nil when no limit counts it) and what it left.
	AdmitRate(ctx context.Context, who Subject, estInput int64) (RateCharge, Quota, *Limited, error)
	RateStatus() []proxyapi.RateLimitStatus
}

// rateLimit is one compiled policy.rateLimits entry.
type rateLimit struct {
	cfg   proxyapi.RateLimit
	caps  [numDims]int64
	teams map[string]bool // nil: every team
	keys  map[string]bool // nil: every key
}

func compileRateLimits(cfg []proxyapi.RateLimit) []rateLimit {
	set := func(names []string) map[string]bool {
		if len(names) == 0 {
			return nil
		}
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	out := make([]rateLimit, 0, len(cfg))
	for _, c := range cfg {
		out = append(out, rateLimit{cfg: c, caps: [numDims]int64{c.RequestsPerMinute, c.InputTokensPerMinute, c.OutputTokensPerMinute},
			teams: set(c.Teams), keys: set(c.Keys)})
	}
	return out
}

// maxSubject bounds the part of a counter's name that comes from a team or
// key name (as a team budget cuts its team).
const maxSubject = 128

// subject is the counter of l the request of who is counted on, or false
// when l does not count it: no verified team, a team (or key) l does not
// list, or, for scope key, a request not authenticated by an API key.
func (l *rateLimit) subject(who Subject) (string, bool) {
	if who.Team == "" || (l.teams != nil && !l.teams[who.Team]) {
		return "", false
	}
	s := "team:" + who.Team
	if l.cfg.Scope == proxyapi.RateLimitScopeKey {
		if who.Key == "" || (l.keys != nil && !l.keys[who.Key]) {
			return "", false
		}
		s = "key:" + who.Key
	}
	if len(s) > maxSubject {
		s = s[:maxSubject]
	}
	return s, true
}

// over reports whether sums reach a cap.
func (l *rateLimit) over(sums [numDims]int64) bool {
	for d := range numDims {
		if l.caps[d] > 0 && sums[d] >= l.caps[d] {
			return true
		}
	}
	return false
}

// RateMemory keeps the rate-limit counters in memory, per replica. It is
// safe for concurrent use.
type RateMemory struct {
	now    func() time.Time
	limits []*memLimit
}

type memLimit struct {
	rateLimit
	mu       sync.Mutex
	subjects map[string]*rateCounter
}

type rateCounter struct {
	epoch [RateBuckets]int64 // the second each slot holds
	n     [RateBuckets][numDims]int64
}

// NewRateMemory compiles the rate limits of a config.
func NewRateMemory(cfg []proxyapi.RateLimit, now func() time.Time) *RateMemory {
	if now == nil {
		now = time.Now
	}
	m := &RateMemory{now: now}
	for _, l := range compileRateLimits(cfg) {
		m.limits = append(m.limits, &memLimit{rateLimit: l, subjects: map[string]*rateCounter{}})
	}
	return m
}

// memCharge is a request's reservation on each counter that admitted it.
type memCharge struct {
	now func() time.Time
	res []memReservation
}

type memReservation struct {
	l        *memLimit
	subject  string
	ep       int64 // the second it was counted in
	estInput int64
}

// AdmitRate implements Limiter.
func (m *RateMemory) AdmitRate(_ context.Context, who Subject, estInput int64) (RateCharge, Quota, *Limited, error) {
	var q Quota
	if len(m.limits) == 0 {
		return nil, q, nil, nil
	}
	now := m.now().UnixNano()
	ch := &memCharge{now: m.now}
	for _, l := range m.limits {
		subj, ok := l.subject(who)
		if !ok {
			continue
		}
		ep, sums, resets, retry, admitted := l.admit(subj, estInput, now)
		if !admitted {
			ch.Release()
			lim := &Limited{Limit: l.cfg.Name, RetryAfter: retry}
			lim.Quota.tighten(l.caps, sums, resets)
			return nil, Quota{}, lim, nil
		}
		ch.res = append(ch.res, memReservation{l: l, subject: subj, ep: ep, estInput: estInput})
		q.tighten(l.caps, sums, resets)
	}
	if len(ch.res) == 0 {
		return nil, q, nil, nil
	}
	return ch, q, nil, nil
}

// admit counts one request on subj's counter unless a cap is reached, and
// returns the bucket, the sums after it and when each dimension's count
// falls; refused, how long until it is under every cap.
func (l *memLimit) admit(subj string, estInput, now int64) (ep int64, sums [numDims]int64, resets [numDims]time.Duration, retry time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ep = now / int64(rateWidth)
	c := l.counter(subj, ep)
	sums = c.sum(ep)
	if l.over(sums) {
		for d := range numDims {
			resets[d] = c.reset(d, ep, now)
		}
		return ep, sums, resets, c.retry(&l.rateLimit, sums, ep, now), false
	}
	i := c.slot(ep)
	c.n[i][DimRequests]++
	c.n[i][DimInputTokens] += estInput
	sums[DimRequests]++
	sums[DimInputTokens] += estInput
	for d := range numDims {
		resets[d] = c.reset(d, ep, now)
	}
	return ep, sums, resets, 0, true
}

// counter is subj's counter, made on first use; past MaxTeamsPerBudget
// subjects (after dropping the idle ones) further ones share one.
func (l *memLimit) counter(subj string, ep int64) *rateCounter {
	return boundedCounter(l.subjects, subj, func(c *rateCounter) bool { return c.sum(ep) == [numDims]int64{} })
}

// slot is the slot of second ep, cleared when it held an older second.
func (c *rateCounter) slot(ep int64) int {
	i := int(ep % RateBuckets)
	if c.epoch[i] != ep {
		c.epoch[i], c.n[i] = ep, [numDims]int64{}
	}
	return i
}

// live reports whether second e is still inside the window ending at ep.
func live(e, ep int64) bool { return ep-e < RateBuckets }

func (c *rateCounter) sum(ep int64) [numDims]int64 {
	var s [numDims]int64
	for i := range RateBuckets {
		if live(c.epoch[i], ep) {
			for d := range numDims {
				s[d] += c.n[i][d]
			}
		}
	}
	return s
}

// retry is how long until enough seconds leave the window to bring sums
// under every cap of l.
func (c *rateCounter) retry(l *rateLimit, sums [numDims]int64, ep, now int64) time.Duration {
	for age := int64(RateBuckets - 1); age >= 0; age-- {
		e := ep - age
		i := int(e % RateBuckets)
		if c.epoch[i] != e {
			continue
		}
		for d := range numDims {
			sums[d] -= c.n[i][d]
		}
		if !l.over(sums) {
			return time.Duration((e+RateBuckets)*int64(rateWidth) - now)
		}
	}
	return rateWidth
}

// reset is how long until dimension d's oldest counted second leaves the
// window; 0 when nothing is counted.
func (c *rateCounter) reset(d int, ep, now int64) time.Duration {
	for age := int64(RateBuckets - 1); age >= 0; age-- {
		e := ep - age
		i := int(e % RateBuckets)
		if c.epoch[i] == e && c.n[i][d] != 0 {
			return time.Duration((e+RateBuckets)*int64(rateWidth) - now)
		}
	}
	return 0
}

// add adds delta to dimension d of second ep, when it is still counted.
func (l *memLimit) add(subj string, ep int64, d int, delta int64, now int64) {
	if delta == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.subjects[subj]
	i := int(ep % RateBuckets)
	if c == nil || c.epoch[i] != ep || !live(ep, now/int64(rateWidth)) {
		return // it has left the window
	}
	c.n[i][d] += delta
}

func (ch *memCharge) Settle(input, output int64) {
	if ch == nil {
		return
	}
	now := ch.now().UnixNano()
	for _, r := range ch.res {
		r.l.add(r.subject, r.ep, DimInputTokens, input-r.estInput, now)
		r.l.add(r.subject, r.ep, DimOutputTokens, output, now)
	}
	ch.res = nil
}

func (ch *memCharge) Release() {
	if ch == nil {
		return
	}
	now := ch.now().UnixNano()
	for _, r := range ch.res {
		r.l.add(r.subject, r.ep, DimRequests, -1, now)
		r.l.add(r.subject, r.ep, DimInputTokens, -r.estInput, now)
	}
	ch.res = nil
}

// RateStatus reports each limit's counters: how many are counting, and the
// highest use of any cap by any of them.
func (m *RateMemory) RateStatus() []proxyapi.RateLimitStatus {
	out := make([]proxyapi.RateLimitStatus, 0, len(m.limits))
	ep := m.now().UnixNano() / int64(rateWidth)
	for _, l := range m.limits {
		st := proxyapi.RateLimitStatus{Name: l.cfg.Name}
		util := 0.0
		l.mu.Lock()
		for _, c := range l.subjects {
			s := c.sum(ep)
			if s == [numDims]int64{} {
				continue
			}
			st.Counting++
			util = max(util, l.utilization(s))
		}
		l.mu.Unlock()
		st.Utilization = formatUtilization(util)
		out = append(out, st)
	}
	return out
}

func formatUtilization(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

// utilization is the highest fraction of a cap sums use.
func (l *rateLimit) utilization(sums [numDims]int64) float64 {
	u := 0.0
	for d := range numDims {
		if l.caps[d] > 0 {
			u = max(u, float64(sums[d])/float64(l.caps[d]))
		}
	}
	return min(u, 1)
}
