package routerproxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

// rateProxy is a JWT router with limits; the upstream answers with its own
// x-ratelimit-* headers, which must not reach the client.
func rateProxy(t *testing.T, limits []proxyapi.RateLimit, budgets ...proxyapi.Budget) (*harness, func(team string) string) {
	t.Helper()
	is := authtest.NewIssuer(t)
	a := newStub(t, "a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ratelimit-Remaining-Requests", "9999")
		okHandler("a")(w, r)
	})
	cfg := config(backend("a", a.URL))
	cfg.Policy.Auth = &proxyapi.Auth{JWT: is.JWT()}
	cfg.Policy.RateLimits = limits
	cfg.Policy.Budgets = budgets
	cfg.SetDefaults()
	require.NoError(t, cfg.Validate())
	h := start(t, cfg, withJWKS)
	return h, func(team string) string {
		return "Bearer " + is.Token(t, team)
	}
}

// TestRateLimitPerTeam: a team's requests per minute, counted on the
// verified team (not the header the client sends); the headers on every
// counted answer; 429 rate_limit_exceeded with Retry-After in the OpenAI,
// Anthropic Messages and Responses shapes; the audit entry, the metric and
// /status.
func TestRateLimitPerTeam(t *testing.T) {
	h, token := rateProxy(t, []proxyapi.RateLimit{{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 2}})
	ml := token("ml")
	for i := range 2 {
		code, body, hdr := h.post(t, chat("a"), "Authorization", ml, "X-Llmkube-Team", "someone-else")
		require.Equal(t, 200, code, body)
		assert.Equal(t, "2", hdr.Get("X-Ratelimit-Limit-Requests"))
		assert.Equal(t, strconv.Itoa(1-i), hdr.Get("X-Ratelimit-Remaining-Requests"), "the router's count, not the upstream's")
		reset, err := time.ParseDuration(hdr.Get("X-Ratelimit-Reset-Requests"))
		require.NoError(t, err)
		assert.True(t, reset > 0 && reset <= 61*time.Second, "reset %v", reset)
		assert.Empty(t, hdr.Get("X-Ratelimit-Limit-Tokens"), "no token cap")
	}
	code, body, hdr := h.post(t, chat("a"), "Authorization", ml)
	require.Equal(t, 429, code, body)
	secs, err := strconv.Atoi(hdr.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, secs >= 1 && secs <= 61, "Retry-After %d", secs)
	assert.Equal(t, "0", hdr.Get("X-Ratelimit-Remaining-Requests"), "the refusal carries the headers too")
	assert.Equal(t, "2", hdr.Get("X-Ratelimit-Limit-Requests"))
	var e struct {
		Error struct{ Type, Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	assert.Equal(t, "rate_limit_exceeded", e.Error.Code)
	assert.Equal(t, "rate_limit_error", e.Error.Type)
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeRateLimited, ent.Outcome)
	assert.Equal(t, "rpm", ent.RateLimit)
	assert.Equal(t, "ml", ent.Team)

	code, body, hdr = h.do(t, "/v1/messages", `{"model":"a","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "Authorization", ml)
	require.Equal(t, 429, code, body)
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	assert.JSONEq(t, `"rate_limit_error"`, mustField(t, body, "error", "type"), body)
	code, body, _ = h.do(t, "/v1/responses", `{"model":"a","input":"hi"}`, "Authorization", ml)
	require.Equal(t, 429, code, body)
	assert.JSONEq(t, `"rate_limit_exceeded"`, mustField(t, body, "error", "code"), body)

	code, body, _ = h.post(t, chat("a"), "Authorization", token("web"))
	assert.Equal(t, 200, code, "another team has its own count: %s", body)

	st := h.srv.Status()
	require.Len(t, st.RateLimits, 1)
	assert.Equal(t, proxyapi.RateLimitStatus{Name: "rpm", Counting: 2, Utilization: "1.000000"}, st.RateLimits[0])
	h.srv.refreshGauges()
	rec := httptest.NewRecorder()
	h.srv.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Contains(t, rec.Body.String(), `llmkube_router_rate_limit_rejections_total{limit="rpm",router="r"} 3`)
	assert.Contains(t, rec.Body.String(), `llmkube_router_rate_limit_utilization{limit="rpm",router="r"} 1`)
}

// mustField is the JSON of body's member at path.
func mustField(t *testing.T, body string, path ...string) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	for _, p := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, body)
		v = m[p]
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestRateLimitReleasedWhenABudgetRefuses: a request a budget refuses
// after the limits admitted it does not count against them.
func TestRateLimitReleasedWhenABudgetRefuses(t *testing.T) {
	h, token := rateProxy(t, []proxyapi.RateLimit{{Name: "rpm", Scope: proxyapi.RateLimitScopeTeam, RequestsPerMinute: 2}},
		proxyapi.Budget{Name: "tiny", Scope: proxyapi.ScopeTeam, MaxTokens: 1})
	ml := token("ml")
	h.okChat(t, chat("a"), "Authorization", ml)
	for range 3 {
		code, body, _ := h.post(t, chat("a"), "Authorization", ml)
		require.Equal(t, 429, code, body)
		assert.Equal(t, proxyapi.OutcomeBudgetExceeded, h.last(t).Outcome, "the budget refuses, not the rate limit: its refusals gave the count back")
	}
}

// TestRateLimitPerKey: a scope key limit counts each API key by name
// (auth.Identity.Key, which policy.auth.apiKeys fills): two keys of one
// team have their own counts, a JWT request (no key) is not counted, and
// the tokens headers follow the input-token cap.
func TestRateLimitPerKey(t *testing.T) {
	h, _ := rateProxy(t, []proxyapi.RateLimit{{Name: "per-key", Scope: proxyapi.RateLimitScopeKey, RequestsPerMinute: 1, InputTokensPerMinute: 1000}})
	admit := func(id auth.Identity) (*httptest.ResponseRecorder, bool) {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		_, ok := h.srv.admitRateLimits(rec, r, id, 400, &proxyapi.AuditEntry{})
		return rec, ok
	}
	rec, ok := admit(auth.Identity{Team: "ml", Key: "batch"})
	require.True(t, ok)
	assert.Equal(t, "0", rec.Header().Get("X-Ratelimit-Remaining-Requests"))
	assert.Equal(t, "1000", rec.Header().Get("X-Ratelimit-Limit-Input-Tokens"))
	assert.Equal(t, "900", rec.Header().Get("X-Ratelimit-Remaining-Input-Tokens"), "the prompt's estimate: 400 bytes / 4")
	assert.Equal(t, "900", rec.Header().Get("X-Ratelimit-Remaining-Tokens"))

	rec, ok = admit(auth.Identity{Team: "ml", Key: "batch"})
	require.False(t, ok)
	assert.Equal(t, 429, rec.Code)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))

	_, ok = admit(auth.Identity{Team: "ml", Key: "notebook"})
	assert.True(t, ok, "another key of the same team has its own count")
	for range 3 {
		rec, ok = admit(auth.Identity{Team: "ml"})
		assert.True(t, ok, "a JWT carries no key: not counted")
		assert.Empty(t, rec.Header().Get("X-Ratelimit-Limit-Requests"))
	}
}
