// Binary tests of policy.rateLimits: the limits across replicas on the real
// Redis, per replica in memory, on the verified JWT team.
package main

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/test/redistest"
)

// rateConfig is one local backend behind JWT auth and the given limits;
// bearer signs a token for a team.
func rateConfig(t *testing.T, upstream string, limits ...proxyapi.RateLimit) (*proxyapi.Config, func(team string) string) {
	t.Helper()
	cfg := qwenConfig(upstream)
	auth, is := issuerAuth(t)
	cfg.Policy.Auth = auth
	cfg.Policy.RateLimits = limits
	return cfg, func(team string) string { return ecBearer(t, is, team) }
}

// fire sends n chat completions at once, spread over ps, with the headers
// hdr, and returns the answers.
func fire(t *testing.T, ps []*proc, n int, hdr ...string) []answer {
	t.Helper()
	out := make([]answer, n)
	client := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a, err := ps[i%len(ps)].request(client, http.MethodPost, chatPath, chat("qwen"), hdr...)
			if assert.NoError(t, err) {
				out[i] = a
			}
		})
	}
	wg.Wait()
	return out
}

// tally counts the served answers and checks every refusal: 429
// rate_limit_exceeded, Retry-After within the minute.
func tally(t *testing.T, as []answer) (served int) {
	t.Helper()
	for _, a := range as {
		switch a.code {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
			assert.Contains(t, a.body, `"code":"rate_limit_exceeded"`)
			exhausted := a.hdr.Get("X-Ratelimit-Remaining-Requests") == "0" || a.hdr.Get("X-Ratelimit-Remaining-Input-Tokens") == "0" ||
				a.hdr.Get("X-Ratelimit-Remaining-Output-Tokens") == "0"
			assert.True(t, exhausted, "a refusal's headers say which cap has nothing left: %v", a.hdr)
			secs, err := strconv.Atoi(a.hdr.Get("Retry-After"))
			if assert.NoError(t, err, a.hdr) {
				assert.True(t, secs >= 1 && secs <= 61, "Retry-After %d", secs)
			}
		default:
			t.Errorf("unexpected answer %d: %s", a.code, a.body)
		}
	}
	return served
}

// TestRateLimitAcrossReplicas: a team's requests per minute hold across two
// router-proxy processes on one Redis: of 3N requests sent at once, exactly
// N are served; the rest are 429 with Retry-After. The count is the
// verified team's (a forged team header neither escapes nor spends it),
// and another team has its own.
func TestRateLimitAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	const n = 10
	cfg, bearer := rateConfig(t, up.URL, proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: n})
	flags := storeFlags(rs.Addr)
	ps := []*proc{startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)}

	start := time.Now()
	red := bearer("red")
	as := fire(t, ps, 3*n, "Authorization", red, "X-Llmkube-Team", "blue")
	served := tally(t, as)
	if time.Since(start) < time.Minute { // the window did not roll under the test
		assert.Equal(t, n, served, "exactly N across both replicas")
	} else {
		assert.LessOrEqual(t, served, 2*n, "N per window")
	}
	for _, a := range as {
		if a.code == http.StatusOK {
			assert.Equal(t, strconv.Itoa(n), a.hdr.Get("X-Ratelimit-Limit-Requests"))
			assert.NotEmpty(t, a.hdr.Get("X-Ratelimit-Remaining-Requests"))
			assert.NotEmpty(t, a.hdr.Get("X-Ratelimit-Reset-Requests"))
		}
	}
	code, _ := ps[1].post(t, `{"model":"qwen"}`, "Authorization", bearer("blue"))
	assert.Equal(t, http.StatusOK, code, "the forged header spent nothing of blue's")

	for _, p := range ps {
		st := p.status(t)
		require.Len(t, st.RateLimits, 1)
		assert.Equal(t, proxyapi.RateLimitStatus{Name: "rpm", Counting: 2, Utilization: "1.000000"}, st.RateLimits[0], "every replica reports the shared count")
	}
}

// TestTokenRateLimitAcrossReplicas: output tokens per minute, counted from
// the usage each response reports, hold across the replicas: once red's
// settled output reaches the cap, the other replica refuses red too.
func TestTokenRateLimitAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen") // 10 prompt + 5 completion tokens
	cfg, bearer := rateConfig(t, up.URL, proxyapi.RateLimit{Name: "tpm", Scope: proxyapi.RateLimitScopeTeam, InputTokensPerMinute: 1000, OutputTokensPerMinute: 50})
	flags := storeFlags(rs.Addr)
	a, b := startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)
	red := bearer("red")
	for i := range 10 { // 10 x 5 output tokens: the cap
		p := a
		if i%2 == 1 {
			p = b
		}
		code, body := p.post(t, `{"model":"qwen"}`, "Authorization", red)
		require.Equal(t, http.StatusOK, code, body)
	}
	// A response settles its usage after its last byte reached the client.
	require.Eventually(t, func() bool {
		st := b.status(t).RateLimits
		return len(st) == 1 && st[0].Utilization == "1.000000"
	}, 10*time.Second, 10*time.Millisecond)
	as := fire(t, []*proc{a, b}, 4, "Authorization", red)
	assert.Equal(t, 0, tally(t, as), "the output cap holds on both replicas")

	code, body := a.post(t, `{"model":"qwen"}`, "Authorization", bearer("blue"))
	require.Equal(t, http.StatusOK, code, body)
	as = fire(t, []*proc{a}, 1, "Authorization", bearer("blue"))
	require.Equal(t, http.StatusOK, as[0].code)
	h := as[0].hdr
	assert.Equal(t, "1000", h.Get("X-Ratelimit-Limit-Input-Tokens"))
	assert.Equal(t, "50", h.Get("X-Ratelimit-Limit-Output-Tokens"))
	assert.Equal(t, "1000", h.Get("X-Ratelimit-Limit-Tokens"), "tokens names the input cap")
	assert.NotEmpty(t, h.Get("X-Ratelimit-Remaining-Tokens"))
}

// TestRateLimitInMemoryPerReplica: without --budget-store each replica
// counts on its own: two replicas serve N each.
func TestRateLimitInMemoryPerReplica(t *testing.T) {
	up := newUpstream(t, "qwen")
	const n = 3
	cfg, bearer := rateConfig(t, up.URL, proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: n})
	ps := []*proc{startProxy(t, cfg), startProxy(t, cfg)}
	start := time.Now()
	for _, p := range ps {
		served := tally(t, fire(t, []*proc{p}, 2*n, "Authorization", bearer("red")))
		if time.Since(start) < time.Minute {
			assert.Equal(t, n, served, "N on this replica")
		} else {
			assert.LessOrEqual(t, served, 2*n, "N per window")
		}
	}
}

// TestRateLimitStoreDown: the budget store's failure modes hold for the
// rate limits: while Redis is down a fail-closed replica refuses with 503
// budget_store_unavailable, a fail-open one counts on its own (N, then
// 429), and the closed one serves again once Redis is back.
func TestRateLimitStoreDown(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	const n = 3
	cfg, bearer := rateConfig(t, up.URL, proxyapi.RateLimit{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: n})
	closed := startProxy(t, cfg, storeFlags(rs.Addr)...)
	open := startProxy(t, cfg, append(storeFlags(rs.Addr), "--budget-store-failure", "open")...)
	red := bearer("red")
	code, body := closed.post(t, `{"model":"qwen"}`, "Authorization", red)
	require.Equal(t, http.StatusOK, code, body)

	rs.Stop()
	for range budget.DownAfterFailures {
		code, body := closed.post(t, `{"model":"qwen"}`, "Authorization", red)
		assert.Equal(t, http.StatusServiceUnavailable, code, body)
		assert.Contains(t, body, "budget_store_unavailable")
	}
	start := time.Now()
	served := 0
	for range 2 * n {
		code, body := open.post(t, `{"model":"qwen"}`, "Authorization", red)
		switch code {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
			assert.Contains(t, body, "rate_limit_exceeded")
		default:
			t.Errorf("fail open answered %d: %s", code, body)
		}
	}
	if time.Since(start) < time.Minute {
		assert.Equal(t, n, served, "fail open counts on the replica")
	}

	redistest.Start(t, rs.Addr) // back, empty (no persistence)
	require.Eventually(t, func() bool {
		code, _ := closed.post(t, `{"model":"qwen"}`, "Authorization", red)
		return code == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "fail closed recovers")
}
