package budget

import (
	"context"
	"github.com/redis/go-redis/v9"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/test/redistest"
)

var (
	teamRPM = proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 3}
	keyTPM  = proxyapi.RateLimit{Name: "tpm", Scope: proxyapi.RateLimitScopeKey, Keys: []string{"batch"}, InputTokensPerMinute: 100, OutputTokensPerMinute: 50}
)

// TestRateMemoryRequests: N requests per team per sliding minute, another
// team counted apart, a request without a team not counted; the refusal
// answers when the oldest second leaves the window, and it does leave.
func TestRateMemoryRequests(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	m := NewRateMemory([]proxyapi.RateLimit{teamRPM}, c.Now)
	ctx := context.Background()
	ml := Subject{Team: "ml"}
	for i := range 3 {
		ch, q, lim, err := m.AdmitRate(ctx, ml, 10)
		require.NoError(t, err)
		require.Nil(t, lim, "request %d", i)
		require.NotNil(t, ch)
		assert.Equal(t, Allowance{Set: true, Limit: 3, Remaining: int64(2 - i), Reset: 61*time.Second - time.Duration(i)*10*time.Second}, q[DimRequests], "request %d", i)
		assert.False(t, q[DimInputTokens].Set)
		c.Step(10 * time.Second)
	}
	_, _, lim, err := m.AdmitRate(ctx, ml, 10)
	require.NoError(t, err)
	require.NotNil(t, lim)
	assert.Equal(t, "rpm", lim.Limit)
	assert.Equal(t, 31*time.Second, lim.RetryAfter, "the first request (made at the start of its second) leaves the window 61 s after it")
	assert.Equal(t, Allowance{Set: true, Limit: 3, Remaining: 0, Reset: 31 * time.Second}, lim.Quota[DimRequests], "the refusal's standing")

	_, _, lim, _ = m.AdmitRate(ctx, Subject{Team: "web"}, 10)
	assert.Nil(t, lim, "another team has its own counter")
	ch, q, lim, _ := m.AdmitRate(ctx, Subject{}, 10)
	assert.Nil(t, lim)
	assert.Nil(t, ch, "a request without a verified team is not counted")
	assert.False(t, q[DimRequests].Set)

	c.Step(30 * time.Second)
	_, _, lim, _ = m.AdmitRate(ctx, ml, 10)
	require.NotNil(t, lim, "60 s after the first request it is still counted")
	c.Step(time.Second)
	_, q, lim, _ = m.AdmitRate(ctx, ml, 10)
	require.Nil(t, lim, "the first second left the window")
	assert.Equal(t, int64(0), q[DimRequests].Remaining)

	st := m.RateStatus()
	require.Len(t, st, 1)
	assert.Equal(t, proxyapi.RateLimitStatus{Name: "rpm", Counting: 2, Utilization: "1.000000"}, st[0])
}

// TestRateBucketsAreTheWindow: the buckets are the window's seconds and
// the one a count is made in.
func TestRateBucketsAreTheWindow(t *testing.T) {
	assert.Equal(t, int64(wellknown.RateLimitWindow/rateWidth)+1, int64(RateBuckets))
}

// TestRateMemoryNeverEarly: a count made at the very end of its second is
// still counted a minute later: at most N in any 60 seconds.
func TestRateMemoryNeverEarly(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(3_000_000, 999_000_000))
	m := NewRateMemory([]proxyapi.RateLimit{{Name: "one", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 1}}, c.Now)
	ctx := context.Background()
	_, _, lim, _ := m.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.Nil(t, lim)
	c.Step(59*time.Second + 2*time.Millisecond) // 59.002 s later: the next second's start + 59 s
	_, _, lim, _ = m.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NotNil(t, lim, "not within a minute")
	c.Step(time.Second) // 60.002 s after it
	_, _, lim, _ = m.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.Nil(t, lim, "a minute has passed")
}

// TestRateMemoryTokens: input tokens reserve the estimate and settle to the
// reported prompt; output tokens count at settlement; a scope key limit
// counts only the keys it lists, and a release gives the admission back.
func TestRateMemoryTokens(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(2_000_000, 0))
	m := NewRateMemory([]proxyapi.RateLimit{keyTPM}, c.Now)
	ctx := context.Background()
	batch := Subject{Team: "ml", Key: "batch"}

	ch, _, _, _ := m.AdmitRate(ctx, Subject{Team: "ml"}, 500)
	assert.Nil(t, ch, "a JWT request carries no key")
	ch, _, _, _ = m.AdmitRate(ctx, Subject{Team: "ml", Key: "other"}, 500)
	assert.Nil(t, ch, "a key the limit does not list")

	ch, q, lim, _ := m.AdmitRate(ctx, batch, 80)
	require.Nil(t, lim)
	assert.Equal(t, int64(20), q[DimInputTokens].Remaining)
	ch.Settle(30, 50)
	_, _, lim, _ = m.AdmitRate(ctx, batch, 10)
	require.NotNil(t, lim, "50 output tokens reach the cap of 50")

	m2 := NewRateMemory([]proxyapi.RateLimit{keyTPM}, c.Now)
	ch, _, _, _ = m2.AdmitRate(ctx, batch, 100)
	_, _, lim, _ = m2.AdmitRate(ctx, batch, 1)
	require.NotNil(t, lim, "the estimate counts until settled")
	ch.Release()
	_, q, lim, _ = m2.AdmitRate(ctx, batch, 1)
	require.Nil(t, lim, "released")
	assert.Equal(t, int64(99), q[DimInputTokens].Remaining)
}

// rateStore is a Store on addr for limits, round trips bounded by
// storeTimeout.
func rateStore(t *testing.T, addr, failure string, limits ...proxyapi.RateLimit) *Store {
	t.Helper()
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"}, Policy: proxyapi.Policy{RateLimits: limits}}
	s, err := NewStore(cfg, StoreOptions{URL: "redis://" + addr + "/0", Timeout: storeTimeout, Failure: failure})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestStoreRateLimitAcrossReplicas: two stores (two replicas) on one Redis
// admit exactly N requests of a team between them, however they race; the
// refused ones are told a retry within the minute, and settlement counts
// output tokens once.
func TestStoreRateLimitAcrossReplicas(t *testing.T) {
	addr := redistest.Start(t, "").Addr
	const n = 7
	lim := proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: n, OutputTokensPerMinute: 1_000_000}
	a, b := rateStore(t, addr, "", lim), rateStore(t, addr, "", lim)
	var served, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 3 * n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, q, l, err := s.AdmitRate(context.Background(), Subject{Team: "ml"}, 5)
			if !assert.NoError(t, err) {
				return
			}
			if l != nil {
				refused.Add(1)
				assert.Equal(t, "rpm", l.Limit)
				assert.True(t, l.RetryAfter > 0 && l.RetryAfter <= RateBuckets*rateWidth, "retry after %v", l.RetryAfter)
				assert.Equal(t, Allowance{Set: true, Limit: n, Remaining: 0, Reset: l.Quota[DimRequests].Reset}, l.Quota[DimRequests])
				assert.Equal(t, l.RetryAfter, l.Quota[DimRequests].Reset, "the oldest request leaves the window when the retry is due")
				return
			}
			served.Add(1)
			assert.Equal(t, int64(n), q[DimRequests].Limit)
			assert.True(t, q[DimRequests].Reset > 0 && q[DimRequests].Reset <= RateBuckets*rateWidth)
			ch.Settle(5, 10)
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(n), served.Load(), "exactly N across both replicas")
	assert.Equal(t, int32(2*n), refused.Load())

	st := a.RateStatus()
	require.Len(t, st, 1)
	assert.Equal(t, proxyapi.RateLimitStatus{Name: "rpm", Counting: 1, Utilization: "1.000000"}, st[0])
	assert.Equal(t, st, b.RateStatus(), "every replica reports the shared count")
	r, err := usage.Run(context.Background(), a.rdb, []string{a.rateKey(&a.rates[0], "team:ml")}, rateWidthUS, RateBuckets).Int64Slice()
	require.NoError(t, err)
	assert.Equal(t, []int64{n, 5 * n, 10 * n}, r, "requests, input and output of the served ones, each settled once")
}

// TestStoreRateLimitReleaseAndDown: a release gives the request back; with
// the store down a fail-closed store refuses with ErrUnavailable and a
// fail-open one counts on the replica.
func TestStoreRateLimitReleaseAndDown(t *testing.T) {
	addr := redistest.Start(t, "").Addr
	lim := proxyapi.RateLimit{Name: "one", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 1}
	s := rateStore(t, addr, "", lim)
	ctx := context.Background()
	ch, _, l, err := s.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NoError(t, err)
	require.Nil(t, l)
	_, _, l, _ = s.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NotNil(t, l)
	ch.Release()
	_, _, l, _ = s.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.Nil(t, l, "released")

	closed := rateStore(t, "127.0.0.1:1", "closed", lim)
	closed.timeout = 200 * time.Millisecond
	_, _, _, err = closed.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.ErrorIs(t, err, ErrUnavailable)

	open := rateStore(t, "127.0.0.1:1", "open", lim)
	open.timeout = 200 * time.Millisecond
	_, _, l, err = open.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NoError(t, err)
	require.Nil(t, l)
	_, _, l, err = open.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NoError(t, err)
	require.NotNil(t, l, "counted on the replica while the store is down")
}

// roundTrips counts the commands a Store sends to Redis.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRequestsOnlyLimitIsNotSettled: a limit that caps requests alone is
// decided at admission; settling its usage would be one more Redis round
// trip per request for nothing, so a request costs one round trip. A limit
// that caps tokens is settled.
func TestRequestsOnlyLimitIsNotSettled(t *testing.T) {
	addr := redistest.Start(t, "").Addr
	ctx := context.Background()
	for _, tc := range []struct {
		lim  proxyapi.RateLimit
		want int64
	}{
		{proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 10}, 1},
		{proxyapi.RateLimit{Name: "tpm", Scope: proxyapi.RateLimitScopeTeam, OutputTokensPerMinute: 1000}, 2},
	} {
		s := rateStore(t, addr, "", tc.lim)
		h := &roundTrips{}
		s.rdb.AddHook(h)
		// A first request loads the scripts (EVALSHA, then EVAL on NOSCRIPT).
		ch, _, _, err := s.AdmitRate(ctx, Subject{Team: "ml"}, 5)
		require.NoError(t, err)
		ch.Settle(5, 10)
		h.n.Store(0)
		ch, _, lim, err := s.AdmitRate(ctx, Subject{Team: "ml"}, 5)
		require.NoError(t, err)
		require.Nil(t, lim)
		ch.Settle(5, 10)
		assert.Equal(t, tc.want, h.n.Load(), "%s: Redis commands for one admitted and settled request", tc.lim.Name)
	}
}

// TestBoundedCounter: the counters of a team-scoped budget or rate limit
// are bounded; past MaxTeamsPerBudget keys the idle ones are dropped, and
// while none is idle every further key shares one overflow counter.
func TestBoundedCounter(t *testing.T) {
	type ctr struct{ busy bool }
	idle := func(c *ctr) bool { return !c.busy }
	m := map[string]*ctr{}
	for i := range MaxTeamsPerBudget {
		boundedCounter(m, strconv.Itoa(i), idle).busy = true
	}
	first := m["0"]
	assert.Same(t, first, boundedCounter(m, "0", idle), "a known key keeps its counter")

	a := boundedCounter(m, "new-a", idle)
	a.busy = true
	assert.Same(t, a, boundedCounter(m, "new-b", idle), "past the bound, new keys share one counter")
	assert.Nil(t, m["new-a"])
	assert.Equal(t, MaxTeamsPerBudget+1, len(m), "the keys and the overflow counter")

	first.busy, m["1"].busy = false, false
	c := boundedCounter(m, "new-c", idle)
	assert.NotSame(t, a, c, "idle keys were dropped, so a new key gets its own counter")
	assert.Same(t, c, m["new-c"])
	assert.Nil(t, m["0"])
	assert.Nil(t, m["1"])
}

// TestStatusWhileTheStoreIsDown: while Redis does not answer, the budgets'
// and the rate limits' status is this replica's own count.
func TestStatusWhileTheStoreIsDown(t *testing.T) {
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"}, Policy: proxyapi.Policy{
		Budgets:    []proxyapi.Budget{{Name: "cap", Scope: "router", MaxTokens: 1000, Window: proxyapi.Duration{Duration: time.Hour}}},
		RateLimits: []proxyapi.RateLimit{{Name: "one", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 5}},
	}}
	s, err := NewStore(cfg, StoreOptions{URL: "redis://127.0.0.1:1/0", Timeout: storeTimeout, Failure: "open"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	ch, ex, err := s.Admit(ctx, "", nil, 0)
	require.NoError(t, err)
	require.Nil(t, ex)
	ch.Add(100, 0)
	_, _, l, err := s.AdmitRate(ctx, Subject{Team: "ml"}, 1)
	require.NoError(t, err)
	require.Nil(t, l)

	st := s.Status()
	require.Len(t, st, 1)
	assert.Equal(t, int64(100), st[0].TokensUsed, "this replica's count")
	assert.Equal(t, []proxyapi.RateLimitStatus{{Name: "one", Counting: 1, Utilization: "0.200000"}}, s.RateStatus())
}
