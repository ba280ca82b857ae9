package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxy/auth/authtest"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// redisServer is a real redis-server (Debian's package, installed by
// hack/install-test-deps.sh) on a loopback port.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T, addr string) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server is not installed: run hack/install-test-deps.sh (make test does)")
	if addr == "" {
		addr = freeAddr(t)
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--protected-mode", "yes")
	require.NoError(t, cmd.Start())
	r := &redisServer{addr: addr, cmd: cmd}
	t.Cleanup(r.stop)
	require.Eventually(t, func() bool { return redisPing(addr) }, 10*time.Second, 20*time.Millisecond, "redis-server did not start")
	return r
}

func (r *redisServer) stop() {
	if r.cmd.ProcessState == nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

func redisPing(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// budgetConfig is one local backend behind a router budget (or a USD one).
func budgetConfig(upstream string, b proxyapi.Budget) *proxyapi.Config {
	b.Name, b.Scope = "cap", "router"
	return &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "shared", Namespace: "team"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 10 * time.Second}, Quarantine: proxyapi.Duration{Duration: time.Second}},
		Backends: []proxyapi.Backend{{Name: "qwen", ModelID: "qwen", Kind: proxyapi.KindLocal, Tier: "local", URL: upstream, Weight: 1,
			Cost: &proxyapi.Cost{PromptUSD: "10", CompletionUSD: "10"}, HealthCheck: proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: time.Hour}, Timeout: proxyapi.Duration{Duration: time.Second}}}},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "qwen"},
		Policy:  proxyapi.Policy{Budgets: []proxyapi.Budget{b}, Audit: proxyapi.Audit{Sink: "stdout"}},
	}
}

// status reads one replica's /status.
func (p *proc) status(t *testing.T) proxyapi.Status {
	t.Helper()
	resp, err := http.Get("http://" + p.admin + wellknown.StatusPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	var st proxyapi.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
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
				resp, err := client.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"qwen","messages":[{"role":"user","content":"hi"}]}`))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
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
// restarting every replica, and capacity returns as the window rolls.
func TestSharedBudgetAcrossReplicas(t *testing.T) {
	rs := startRedis(t, "")
	up := newUpstream(t, "qwen") // answers 10 prompt + 5 completion tokens
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 10_000, Window: proxyapi.Duration{Duration: 6 * time.Second}})
	flags := []string{"--budget-store", "redis://" + rs.addr + "/0"}
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

	// The rolling window: capacity returns once the window has passed.
	require.Eventually(t, func() bool {
		code, _ := p.post(t, `{"model":"qwen"}`)
		return code == http.StatusOK
	}, 10*time.Second, 200*time.Millisecond, "capacity returns as the 6s window rolls")
}

// TestSharedUSDBudget: the same with a USD cap, counted in integer
// micro-dollars.
func TestSharedUSDBudget(t *testing.T) {
	rs := startRedis(t, "")
	up := newUpstream(t, "qwen") // 15 tokens at $10 per million: $0.00015 a request
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxUSD: "0.3", Window: proxyapi.Duration{Duration: time.Hour}})
	flags := []string{"--budget-store", "redis://" + rs.addr + "/0"}
	ps := []*proc{startProxy(t, cfg, flags...), startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)}
	served := hammer(t, ps, 5000)
	// Reservations carry no cost (the backend is not known at admission),
	// so the bound is the 64 in-flight requests' cost.
	assert.GreaterOrEqual(t, served, int64(2000), "$0.30 buys 2,000 requests")
	assert.LessOrEqual(t, served, int64(2000+64))
	st := ps[1].status(t)
	used, err := strconv.ParseFloat(st.Budgets[0].USDUsed, 64)
	require.NoError(t, err)
	assert.InDelta(t, float64(served)*0.00015, used, 1e-9, "exact micro-dollars, no float drift")
	assert.Equal(t, "1.000000", st.Budgets[0].Utilization)
}

// TestBudgetStoreDown: with Redis killed mid-run, a fail-closed proxy
// answers 503 at once (no hang, no panic) and says so in /status; once Redis
// is back it admits again. A fail-open proxy serves meanwhile and adds what
// it served to the shared count when Redis returns.
func TestBudgetStoreDown(t *testing.T) {
	rs := startRedis(t, "")
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	url := "redis://" + rs.addr + "/0"
	closed := startProxy(t, cfg, "--budget-store", url)
	open := startProxy(t, cfg, "--budget-store", url, "--budget-store-failure", "open")
	code, _ := closed.post(t, `{"model":"qwen"}`)
	require.Equal(t, 200, code)

	rs.stop()
	start := time.Now()
	code, body := closed.post(t, `{"model":"qwen"}`)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "budget_store_unavailable")
	assert.Less(t, time.Since(start), 2*time.Second, "no hang")
	st := closed.status(t)
	require.NotNil(t, st.BudgetStore)
	assert.False(t, st.BudgetStore.Healthy)
	assert.Equal(t, "closed", st.BudgetStore.Failure)
	assert.NotEmpty(t, st.BudgetStore.Message)
	for range 10 {
		code, _ = open.post(t, `{"model":"qwen"}`)
		assert.Equal(t, 200, code, "fail open serves")
	}
	resp, err := http.Get("http://" + open.admin + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(metrics), "llmkube_router_budget_store_healthy{router=\"shared\"} 0")

	startRedis(t, rs.addr) // back, empty (no persistence)
	require.Eventually(t, func() bool {
		code, _ := closed.post(t, `{"model":"qwen"}`)
		return code == 200
	}, 10*time.Second, 100*time.Millisecond, "fail closed recovers")
	require.Eventually(t, func() bool {
		return open.status(t).Budgets[0].TokensUsed >= 10*15
	}, 10*time.Second, 100*time.Millisecond, "fail open reconciles what it served while Redis was down")
	assert.True(t, open.status(t).BudgetStore.Healthy)
}

// TestSlowBudgetStore: a store answering slower than --budget-store-timeout
// (a loopback proxy that delays Redis's replies) fails the admission within
// that timeout instead of holding the request.
func TestSlowBudgetStore(t *testing.T) {
	rs := startRedis(t, "")
	slow := delayProxy(t, rs.addr, 500*time.Millisecond)
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	p := startProxy(t, cfg, "--budget-store", "redis://"+slow+"/0", "--budget-store-timeout", "100ms")
	start := time.Now()
	code, body := p.post(t, `{"model":"qwen"}`)
	elapsed := time.Since(start)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Less(t, elapsed, 450*time.Millisecond, "the admission timeout is honoured, not the store's delay")
}

// delayProxy forwards TCP to target, holding every reply chunk for delay.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c) }()
				buf := make([]byte, 32<<10)
				for ctx.Err() == nil {
					n, err := s.Read(buf)
					if n > 0 {
						time.Sleep(delay)
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSharedTeamBudgetUnderJWT: a team budget keyed on the verified team
// holds across two replicas: a team that spent its budget through one
// replica is refused by the other, even when it forges another team's
// header, while another team is still served.
func TestSharedTeamBudgetUnderJWT(t *testing.T) {
	rs := startRedis(t, "")
	is := authtest.NewIssuer(t)
	up := newUpstream(t, "qwen")
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 150, Window: proxyapi.Duration{Duration: time.Hour}})
	cfg.Policy.Budgets[0].Scope, cfg.Policy.Budgets[0].HeaderKey = "team", "x-llmkube-team"
	cfg.Policy.Auth = &proxyapi.Auth{JWT: &proxyapi.JWT{Issuer: authtest.IssuerURL, JWKSURI: is.Server.URL, TeamClaim: "team", HeaderKey: "x-llmkube-team"}}
	flags := []string{"--budget-store", "redis://" + rs.addr + "/0"}
	a, b := startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)
	bearer := func(team string) string {
		return "Bearer " + is.Sign(t, jwt.SigningMethodES256, "ec-1", authtest.Claims(team))
	}
	for range 10 { // 10 x 15 tokens: team red's whole budget, through replica a
		code, body := a.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"))
		require.Equal(t, 200, code, body)
	}
	code, _ := b.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"))
	assert.Equal(t, http.StatusTooManyRequests, code, "replica b sees red's spending")
	code, _ = b.post(t, `{"model":"qwen"}`, "Authorization", bearer("red"), "x-llmkube-team", "blue")
	assert.Equal(t, http.StatusTooManyRequests, code, "a forged team header does not spend another team's budget")
	code, _ = b.post(t, `{"model":"qwen"}`, "Authorization", bearer("blue"))
	assert.Equal(t, 200, code, "blue has its own budget")
	st := b.status(t).Budgets[0]
	assert.Equal(t, int64(165), st.TokensUsed, "both teams, summed")
	assert.Equal(t, "1.000000", st.Utilization, "the highest team's share")
}
