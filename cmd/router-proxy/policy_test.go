// Binary tests of the router policies that hold state or identity:
// policy.auth and budgets in the shared store.
package main

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/redistest"
	"github.com/llmkube/llmkube-compile/test/tcprelay"
)

// TestAuthEndToEnd drives the real router-proxy binary with the config the
// compiler renders for testdata/proxy-jwt-allowlists, against a local issuer
// whose JWKS is on loopback.
func TestAuthEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/proxy-jwt-allowlists/input.yaml")
	is := trustIssuer(t, cfg)
	p, ups, auditPath := serveOnLoopback(t, cfg)

	token := func(team string) string { return is.Token(t, team) }

	// No token, or a bad one: 401 with a Bearer challenge, before routing.
	code, body := p.post(t, `{"model":"qwen3-32b"}`, "x-llmkube-team", "platform")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.Contains(t, body, `"type":"authentication_error"`)
	a := p.send(t, chatPath, `{"model":"qwen3-32b"}`, "Authorization", "Bearer "+token("platform")[:40]+"x")
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Equal(t, `Bearer realm="llmkube", error="invalid_token"`, a.hdr.Get("WWW-Authenticate"))
	// Two Authorization headers (RFC 6750 §3.1 invalid_request): 400, in
	// the shape of the API asked, whichever token comes first.
	two := []string{"Authorization", bearer(t, is, "research"), "Authorization", bearer(t, is, "platform")}
	a = p.send(t, chatPath, `{"model":"qwen3-gold"}`, two...)
	assert.Equal(t, http.StatusBadRequest, a.code, a.body)
	assert.Equal(t, `Bearer realm="llmkube", error="invalid_request"`, a.hdr.Get("WWW-Authenticate"))
	assert.Contains(t, a.body, `"code":"multiple_credentials"`)
	assert.Contains(t, a.body, "the request carries 2 Authorization headers")
	a = p.send(t, "/v1/messages", `{"model":"qwen3-gold","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, two...)
	assert.Equal(t, http.StatusBadRequest, a.code, a.body)
	assert.Contains(t, a.body, `"type":"error","error":{"type":"invalid_request_error"`)
	for _, u := range ups {
		assert.Zero(t, u.hits.Load(), "nothing unauthenticated reached a backend")
	}

	// The verified team routes, not the header the client sent.
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "platform"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "qwen-gold", served(t, body), "the platform rule matches the verified team")
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "research"), "x-llmkube-team", "platform")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "qwen", served(t, body), "a forged team header is replaced by the verified team")

	// Allowlists: default deny, per model.
	code, body = p.post(t, `{"model":"qwen3-gold"}`, "Authorization", bearer(t, is, "research"))
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "model_not_allowed")
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "sales"))
	assert.Equal(t, http.StatusForbidden, code, "an unlisted team")

	// /v1/models lists what the team may reach; /health stays open.
	code, _, _ = p.get(t, "/v1/models", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _, body = p.get(t, "/v1/models", token("research"))
	require.Equal(t, 200, code)
	assert.Contains(t, body, `"id":"qwen3-32b"`)
	assert.NotContains(t, body, "qwen3-gold")
	_, _, body = p.get(t, "/v1/models", token("platform"))
	assert.Contains(t, body, "qwen3-gold")
	code, _, _ = p.get(t, "/health", "")
	assert.Equal(t, 200, code)

	// The team budget keys on the verified team: research exhausts its own
	// and cannot spend platform's by forging the header.
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "research"), "x-big-usage", "1")
	require.Equal(t, 200, code)
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "research"), "x-llmkube-team", "platform")
	assert.Equal(t, http.StatusTooManyRequests, code, body)
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer(t, is, "platform"))
	assert.Equal(t, 200, code, "platform's budget is untouched")

	entries, _ := stopForAudit(t, p, auditPath)
	var forbidden *proxyapi.AuditEntry
	outcomes, statuses := map[string]int{}, map[int]int{}
	for _, e := range entries {
		outcomes[e.Outcome]++
		if e.Outcome == proxyapi.OutcomeUnauthorized {
			statuses[e.Status]++
		}
		if e.Outcome == proxyapi.OutcomeForbidden && forbidden == nil {
			forbidden = &e
		}
	}
	assert.Equal(t, 4, outcomes[proxyapi.OutcomeUnauthorized])
	assert.Equal(t, map[int]int{401: 2, 400: 2}, statuses, "two tokens are an auth refusal with status 400")
	assert.Equal(t, 2, outcomes[proxyapi.OutcomeForbidden])
	require.NotNil(t, forbidden)
	assert.Equal(t, "research", forbidden.Team, "the audit names the verified team")
	assert.Equal(t, "qwen3-gold", forbidden.Model)
}

// storeFlags are the flags of a router-proxy on the Redis at addr. The
// round-trip timeout is 10 s, not the default 100 ms: these tests are about
// what the replicas share, and on a busy machine a loopback round trip can
// outlast 100 ms (TestSlowBudgetStore and
// TestSlowBudgetStoreReplyFailsOnlyItsRequest are about the timeout).
func storeFlags(addr string) []string {
	return []string{"--budget-store", "redis://" + addr + "/0", "--budget-store-timeout", "10s"}
}

// qwenConfig is one local backend, qwen, with a cost, and no policy but
// the audit on stdout.
func qwenConfig(upstream string) *proxyapi.Config {
	return &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "shared", Namespace: "team"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 10 * time.Second}, Quarantine: proxyapi.Duration{Duration: time.Second}},
		Backends: []proxyapi.Backend{{Name: "qwen", ModelID: "qwen", Kind: proxyapi.KindLocal, Tier: "local", URL: upstream, Weight: 1,
			Cost: &proxyapi.Cost{PromptUSD: "10", CompletionUSD: "10"}, HealthCheck: probeEvery(time.Hour)}},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "qwen"},
		Policy:  proxyapi.Policy{Audit: proxyapi.Audit{Sink: "stdout"}},
	}
}

// budgetConfig is qwenConfig behind a router budget (or a USD one).
func budgetConfig(upstream string, b proxyapi.Budget) *proxyapi.Config {
	cfg := qwenConfig(upstream)
	b.Name, b.Scope = "cap", "router"
	cfg.Policy.Budgets = []proxyapi.Budget{b}
	return cfg
}

// tokensUsed waits until p's first budget reports want tokens (a response
// settles its usage after its last byte is written) and returns its status.
func tokensUsed(t *testing.T, p *proc, want int64) proxyapi.BudgetStatus {
	t.Helper()
	var st proxyapi.BudgetStatus
	require.Eventually(t, func() bool {
		st = p.status(t).Budgets[0]
		return st.TokensUsed == want
	}, 5*time.Second, 10*time.Millisecond, "tokens used: want %d", want)
	return st
}

// hammer sends requests from 64 clients spread over the replicas until
// every replica refuses with 429 (or n requests); it returns how many were
// served.
func hammer(t *testing.T, ps []*proc, n int) int64 {
	t.Helper()
	var served, refused atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for c := range 64 {
		wg.Go(func() {
			p := ps[c%len(ps)]
			for next.Add(1) <= int64(n) && refused.Load() < 200 {
				a, err := p.request(client, http.MethodPost, chatPath, chat("qwen"), "Content-Type", "application/json")
				if err != nil {
					continue
				}
				switch a.code {
				case http.StatusOK:
					served.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return served.Load()
}

// TestSharedBudgetAcrossReplicas: three router-proxy processes on one Redis
// enforce one 10,000-token budget under 64 concurrent clients; what they
// admit stays within the documented bound (in-flight requests times the
// estimate's error), every replica reports the same use, the count survives
// restarting every replica (TestSharedBudgetWindowRolls has the window).
func TestSharedBudgetAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen") // answers 10 prompt + 5 completion tokens
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 10_000, Window: proxyapi.Duration{Duration: time.Hour}})
	flags := storeFlags(rs.Addr)
	var ps []*proc
	for range 3 {
		ps = append(ps, startProxy(t, cfg, flags...))
	}
	served := hammer(t, ps, 5000)
	// Each request reserves its prompt estimate (60 bytes / 4 = 15 tokens)
	// and settles at the 15 it used, so the cap holds to within what the 64
	// requests in flight when it was reached add past it.
	const perRequest, inflight = 15, 64
	admitted := served * perRequest
	assert.GreaterOrEqual(t, admitted, int64(10_000-inflight*perRequest), "the budget was used up")
	assert.LessOrEqual(t, admitted, int64(10_000+inflight*perRequest), "one count across the replicas (three separate counts would admit about 30,000)")

	var used []int64
	for _, p := range ps {
		st := p.status(t)
		require.Len(t, st.Budgets, 1)
		used = append(used, st.Budgets[0].TokensUsed)
		require.NotNil(t, st.BudgetStore)
		assert.True(t, st.BudgetStore.Healthy)
	}
	assert.Equal(t, used[0], used[1], "every replica reports the shared count")
	assert.Equal(t, used[0], used[2])
	assert.Equal(t, admitted, used[0])

	// Restart every replica: the count is in Redis, not in them.
	for _, p := range ps {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p := startProxy(t, cfg, flags...)
	code, _ := p.post(t, `{"model":"qwen"}`)
	assert.Equal(t, http.StatusTooManyRequests, code, "the exhausted budget survives the restart")
	assert.Equal(t, used[0], p.status(t).Budgets[0].TokensUsed)
}

// TestSharedBudgetWindowRolls: capacity returns on the schedule the rolling
// window implies, and Retry-After says when.
func TestSharedBudgetWindowRolls(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	const window = 10 * time.Second
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 30, Window: proxyapi.Duration{Duration: window}})
	p := startProxy(t, cfg, storeFlags(rs.Addr)...)
	// The first reservation is made after this, so capacity cannot return
	// before window minus one bucket from here (the window rolls a bucket at
	// a time); a 10-s window leaves the two posts and the refusal time
	// enough on a busy machine.
	first := time.Now()
	for range 2 { // 2 x 15 tokens
		code, _ := p.post(t, `{"model":"qwen"}`)
		require.Equal(t, 200, code)
	}
	a := p.send(t, chatPath, `{"model":"qwen"}`)
	require.Equal(t, http.StatusTooManyRequests, a.code)
	retry, err := strconv.Atoi(a.hdr.Get("Retry-After"))
	require.NoError(t, err)
	assert.LessOrEqual(t, retry, int(window/time.Second), "the oldest bucket leaves the window within it")
	require.Eventually(t, func() bool {
		code, _ := p.post(t, `{"model":"qwen"}`)
		return code == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "capacity returns as the window rolls")
	assert.GreaterOrEqual(t, time.Since(first), window-window/budget.BucketsPerWindow, "not before the window has rolled")
}

// TestAbandonedReservationExpires: a replica killed while its request is in
// flight never settles; its reservation still counts on every replica (the
// budget is not overspent by a crash) and leaves with the window (the budget
// is not lost to it forever).
func TestAbandonedReservationExpires(t *testing.T) {
	rs := redistest.Start(t, "")
	release := make(chan struct{})
	hang := newStub(t, nil, func(_ http.ResponseWriter, r *http.Request, _ string) {
		select { // never answers while the test runs
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	// A 10-s window: replica b starts and reads the reservation within it,
	// however busy the machine.
	cfg := budgetConfig(hang.URL, proxyapi.Budget{MaxTokens: 1000, Window: proxyapi.Duration{Duration: 10 * time.Second}})
	flags := storeFlags(rs.Addr)
	a := startProxy(t, cfg, flags...)
	go func() {
		_, _ = postQuiet(a, chat("qwen"))
	}()
	require.Eventually(t, func() bool { return a.status(t).Budgets[0].TokensUsed == 15 }, 5*time.Second, 10*time.Millisecond,
		"the in-flight request reserved its 15-token estimate")
	_ = a.cmd.Process.Kill()
	<-a.done

	b := startProxy(t, cfg, flags...)
	assert.Equal(t, int64(15), b.status(t).Budgets[0].TokensUsed, "another replica sees the unsettled reservation")
	require.Eventually(t, func() bool { return b.status(t).Budgets[0].TokensUsed == 0 }, time.Minute, 100*time.Millisecond,
		"the abandoned reservation leaves with the window")
}

// TestSharedUSDBudget: the same with a USD cap, counted in integer
// micro-dollars.
func TestSharedUSDBudget(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen") // 15 tokens at $10 per million: $0.00015 a request
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxUSD: "0.3", Window: proxyapi.Duration{Duration: time.Hour}})
	flags := storeFlags(rs.Addr)
	ps := []*proc{startProxy(t, cfg, flags...), startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)}
	served := hammer(t, ps, 5000)
	// Reservations carry no cost (the backend is not known at admission),
	// so the bound is the 64 in-flight requests' cost.
	assert.GreaterOrEqual(t, served, int64(2000), "$0.30 buys 2,000 requests")
	assert.LessOrEqual(t, served, int64(2000+64))
	// The last requests served may settle their cost after hammer has seen
	// their answers: wait for the count to stop at the exact sum.
	var st proxyapi.Status
	var used float64
	require.Eventually(t, func() bool {
		st = ps[1].status(t)
		var err error
		used, err = strconv.ParseFloat(st.Budgets[0].USDUsed, 64)
		require.NoError(t, err)
		return math.Abs(float64(served)*0.00015-used) < 1e-9
	}, 5*time.Second, 10*time.Millisecond, "exact micro-dollars, no float drift")
	assert.Equal(t, "1.000000", st.Budgets[0].Utilization)
}

// TestBudgetStoreDown: with Redis killed mid-run, a fail-closed proxy
// answers 503 at once (no hang, no panic) and says so in /status; once Redis
// is back it admits again. A fail-open proxy serves meanwhile and adds what
// it served to the shared count when Redis returns.
func TestBudgetStoreDown(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	closed := startProxy(t, cfg, storeFlags(rs.Addr)...)
	open := startProxy(t, cfg, append(storeFlags(rs.Addr), "--budget-store-failure", "open")...)
	code, _ := closed.post(t, `{"model":"qwen"}`)
	require.Equal(t, 200, code)

	rs.Stop()
	// Down after budget.DownAfterFailures failed round trips in a row; each
	// of them answers 503 within the timeout.
	for range budget.DownAfterFailures {
		code, body := closed.post(t, `{"model":"qwen"}`)
		assert.Equal(t, http.StatusServiceUnavailable, code, body)
		assert.Contains(t, body, "budget_store_unavailable")
	}
	st := closed.status(t)
	require.NotNil(t, st.BudgetStore)
	assert.False(t, st.BudgetStore.Healthy)
	assert.Equal(t, "closed", st.BudgetStore.Failure)
	assert.NotEmpty(t, st.BudgetStore.Message)
	for range 10 {
		code, _ = open.post(t, `{"model":"qwen"}`)
		assert.Equal(t, 200, code, "fail open serves")
	}
	assert.Contains(t, open.metrics(t), "llmkube_router_budget_store_healthy{router=\"shared\"} 0")

	redistest.Start(t, rs.Addr) // back, empty (no persistence)
	require.Eventually(t, func() bool {
		code, _ := closed.post(t, `{"model":"qwen"}`)
		return code == 200
	}, 10*time.Second, 100*time.Millisecond, "fail closed recovers")
	require.Eventually(t, func() bool {
		return open.status(t).Budgets[0].TokensUsed >= 10*15
	}, 10*time.Second, 100*time.Millisecond, "fail open reconciles what it served while Redis was down")
	assert.True(t, open.status(t).BudgetStore.Healthy)
}

// TestSlowBudgetStore: a store that never answers (a loopback proxy that
// holds Redis's replies) fails the admission at --budget-store-timeout
// instead of holding the request: without the timeout the request would
// wait for ever, and the client's minute ends the test.
func TestSlowBudgetStore(t *testing.T) {
	rs := redistest.Start(t, "")
	var hold atomic.Bool
	hold.Store(true)
	silent := holdProxy(t, rs.Addr, &hold)
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	p := startProxy(t, cfg, "--budget-store", "redis://"+silent+"/0", "--budget-store-timeout", "100ms")
	a, err := p.request(&http.Client{Timeout: time.Minute}, http.MethodPost, chatPath, `{"model":"qwen"}`)
	require.NoError(t, err, "the admission timeout is honoured, not the store's silence")
	assert.Equal(t, http.StatusServiceUnavailable, a.code, a.body)
	assert.Contains(t, a.body, "budget_store_unavailable")
}

// holdProxy forwards TCP to target; while hold is set, Redis's replies wait
// (the commands have reached Redis and run).
func holdProxy(t *testing.T, target string, hold *atomic.Bool) string {
	return tcprelay.Start(t, target, tcprelay.Hold(hold))
}

// TestSlowBudgetStoreReplyFailsOnlyItsRequest: on a busy node one Redis
// reply slower than --budget-store-timeout fails that admission (closed:
// 503) and nothing more; the next request is admitted at once, not refused
// until the store's probe, and /status still calls the store healthy.
func TestSlowBudgetStoreReplyFailsOnlyItsRequest(t *testing.T) {
	rs := redistest.Start(t, "")
	var hold atomic.Bool
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	// 400 ms: the posts before and after the held one (the latter on a new
	// connection: the timed-out one is dropped) answer within it on a busy
	// machine, and the hold (every reply, the store's probes' too) stays
	// well under the probe's 1-s interval, so at most the held admission
	// and one probe fail in a row, fewer than budget.DownAfterFailures.
	p := startProxy(t, cfg, "--budget-store", "redis://"+holdProxy(t, rs.Addr, &hold)+"/0", "--budget-store-timeout", "400ms")
	code, body := p.post(t, `{"model":"qwen"}`)
	require.Equal(t, http.StatusOK, code, body)
	hold.Store(true)
	code, body = p.post(t, `{"model":"qwen"}`)
	hold.Store(false)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "budget_store_unavailable")
	code, body = p.post(t, `{"model":"qwen"}`)
	assert.Equal(t, http.StatusOK, code, "one slow reply is not an outage: %s", body)
	require.NotNil(t, p.status(t).BudgetStore)
	assert.True(t, p.status(t).BudgetStore.Healthy)
}

// TestSharedTeamBudgetUnderJWT: a team budget keyed on the verified team
// holds across two replicas: a team that spent its budget through one
// replica is refused by the other, even when it forges another team's
// header, while another team is still served.
func TestSharedTeamBudgetUnderJWT(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 150, Window: proxyapi.Duration{Duration: time.Hour}})
	cfg.Policy.Budgets[0].Scope, cfg.Policy.Budgets[0].HeaderKey = "team", "x-llmkube-team"
	auth, is := issuerAuth(t)
	cfg.Policy.Auth = auth
	flags := storeFlags(rs.Addr)
	a, b := startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)
	bearer := func(team string) string { return ecBearer(t, is, team) }
	for range 10 { // 10 x 15 tokens: team red's whole budget, through replica a
		code, body := a.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"))
		require.Equal(t, 200, code, body)
	}
	// Each request reserves its 4-token estimate and settles at its 15
	// after the response has reached the client: wait for the settles.
	tokensUsed(t, b, 150)
	code, _ := b.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"))
	assert.Equal(t, http.StatusTooManyRequests, code, "replica b sees red's spending")
	code, _ = b.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"), "x-llmkube-team", "blue")
	assert.Equal(t, http.StatusTooManyRequests, code, "a forged team header does not spend another team's budget")
	code, _ = b.post(t, `{"model":"qwen"}`, "Authorization", bearer("blue"))
	assert.Equal(t, 200, code, "blue has its own budget")
	st := tokensUsed(t, b, 165) // both teams, summed
	assert.Equal(t, "1.000000", st.Utilization, "the highest team's share")
}

// TestVerifiedTeamSurvivesConnection: with policy.auth.jwt, a client that
// names the team header in Connection does not strip the verified team
// before the upstream (nor smuggle its own).
func TestVerifiedTeamSurvivesConnection(t *testing.T) {
	teams, auths := make(chan []string, 4), make(chan []string, 4)
	up := newStub(t, nil, func(w http.ResponseWriter, r *http.Request, _ string) {
		teams <- r.Header.Values("X-Llmkube-Team")
		auths <- r.Header.Values("Authorization")
		providertest.JSON(w, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	cfg := oneBackend(up.URL, proxyapi.KindLocal)
	auth, is := issuerAuth(t)
	cfg.Policy.Auth = auth
	p := startProxy(t, cfg)
	code, body := p.post(t, `{"model":"a"}`, "Authorization", bearer(t, is, "research"), "Connection", "x-llmkube-team", "x-llmkube-team", "platform")
	require.Equal(t, 200, code, body)
	assert.Equal(t, []string{"research"}, <-teams)
	assert.Empty(t, <-auths, "the caller's JWT reached the local backend")
}
