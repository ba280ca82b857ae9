package routerproxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// withClock makes c the engine's and the server's clock: a hold ends when
// the test moves it, never by waiting.
func withClock(c *clocktesting.FakeClock) func(*Options) {
	return func(o *Options) { o.Engine.Now = c.Now }
}

// limitHandler answers as a provider whose quota refuses the request.
func limitHandler(status int, body string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

const (
	openaiRateLimited = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	openaiNoQuota     = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
)

func externalBackend(name, url string) proxyapi.Backend {
	b := backend(name, url)
	b.Kind, b.Tier, b.Provider, b.Model = proxyapi.KindExternal, "cloud", "openai", "gpt-4o"
	return b
}

func adminGet(t *testing.T, h *harness, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.srv.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return string(b)
}

// A provider's 429 with Retry-After: 30 holds its backend: the fallback
// serves and the provider is sent nothing until the reset; after it, it
// serves again. /status, the metrics and the audit say so.
func TestQuotaRateLimitHoldsUntilTheReset(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	var limited sync.Mutex
	limiting := true
	oai := newStub(t, "oai", func(w http.ResponseWriter, r *http.Request) {
		limited.Lock()
		l := limiting
		limited.Unlock()
		if l {
			limitHandler(429, openaiRateLimited, "Retry-After", "30", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1s")(w, r)
			return
		}
		okHandler("oai")(w, r)
	})
	local := newStub(t, "local", nil)
	cfg := config(externalBackend("oai", oai.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "oai", "local")}
	h := start(t, cfg, withClock(clock))

	body := h.okChat(t, chat("x"))
	assert.Equal(t, "local", servedBy(t, body))
	ent := h.last(t)
	assert.Equal(t, 2, ent.Attempts)
	require.Len(t, ent.Held, 1)
	assert.Contains(t, ent.Held[0], "oai: status 429 (rate_limited by its provider; held until 2026-12-07T21:00:30Z, from retry-after)")

	for i := range 5 {
		body = h.okChat(t, chat("x"))
		assert.Equal(t, "local", servedBy(t, body), "request %d", i)
		ent = h.last(t)
		assert.Equal(t, 1, ent.Attempts, "the held backend is not tried")
		assert.Equal(t, []string{"oai: rate_limited until 2026-12-07T21:00:30Z"}, ent.Held)
	}
	assert.EqualValues(t, 1, oai.hits.Load(), "nothing more sent inside the announced reset")
	eng := h.srv.Engine()
	assert.False(t, eng.Quarantined(eng.Backend("oai")), "a rate limit is no quarantine")
	assert.True(t, eng.Backend("oai").Healthy())

	status := adminGet(t, h, wellknown.StatusPath)
	assert.Contains(t, status, `"rateLimitedUntil":"2026-12-07T21:00:30Z"`)
	metrics := adminGet(t, h, "/metrics")
	assert.Contains(t, metrics, `llmkube_router_upstream_holds_total{backend="oai",reason="rate_limited",router="r"} 1`)
	assert.Contains(t, metrics, `llmkube_router_backend_held_seconds{backend="oai",reason="rate_limited",router="r"} 30`)

	clock.Step(30 * time.Second)
	limited.Lock()
	limiting = false
	limited.Unlock()
	h.okChat(t, chat("x"))
	assert.Equal(t, "oai", h.last(t).Backend, "the reset passed: the primary serves again")
	assert.EqualValues(t, 2, oai.hits.Load())
	assert.NotContains(t, adminGet(t, h, wellknown.StatusPath), "rateLimitedUntil")
}

// insufficient_quota holds the backend for the configured
// quota-exhausted hold, not for the answer's short Retry-After.
func TestQuotaExhaustedHoldsForTheConfiguredTime(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	oai := newStub(t, "oai", limitHandler(429, openaiNoQuota, "Retry-After", "1"))
	local := newStub(t, "local", nil)
	cfg := config(externalBackend("oai", oai.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "oai", "local")}
	cfg.Timeouts.QuotaExhaustedHold = dur(7 * time.Minute)
	h := start(t, cfg, withClock(clock))

	body := h.okChat(t, chat("x"))
	assert.Equal(t, "local", servedBy(t, body))
	assert.Contains(t, adminGet(t, h, wellknown.StatusPath), `"quotaExhaustedUntil":"2026-12-07T21:07:00Z"`)
	clock.Step(7*time.Minute - time.Second)
	h.okChat(t, chat("x"))
	assert.EqualValues(t, 1, oai.hits.Load(), "still held a second before the end")
	assert.Contains(t, adminGet(t, h, "/metrics"), `llmkube_router_upstream_holds_total{backend="oai",reason="quota_exhausted",router="r"} 1`)
	clock.Step(time.Second)
	_, _, _ = h.post(t, chat("x"))
	assert.EqualValues(t, 2, oai.hits.Load(), "tried again once the hold ends")
}

// When every backend is limited the client is answered 429 with the
// earliest reset as Retry-After; while they are held nothing is sent, in
// each protocol's error shape.
func TestQuotaEveryBackendLimited(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	a := newStub(t, "a", limitHandler(429, openaiRateLimited, "Retry-After", "30"))
	b := newStub(t, "b", limitHandler(429, openaiRateLimited, "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "12s"))
	cfg := config(externalBackend("a", a.URL), externalBackend("b", b.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "a", "b")}
	h := start(t, cfg, withClock(clock))

	code, body, hdr := h.post(t, chat("x"))
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "12", hdr.Get("Retry-After"), "the earliest reset")
	typ, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "rate_limit_error", typ)
	assert.Equal(t, "upstream_rate_limited", c)
	assert.Equal(t, proxyapi.OutcomeAllFailed, h.last(t).Outcome)

	clock.Step(2 * time.Second)
	code, body, hdr = h.post(t, chat("x"))
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "10", hdr.Get("Retry-After"))
	_, c, _ = providertest.OpenAIError(t, body)
	assert.Equal(t, "upstream_rate_limited", c)
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeUpstreamHeld, ent.Outcome)
	assert.Equal(t, 0, ent.Attempts)
	assert.ElementsMatch(t, []string{"a (rate_limited)", "b (rate_limited)"}, ent.Held)

	code, body, hdr = h.do(t, "/v1/responses", `{"model":"x","input":"hi"}`)
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "10", hdr.Get("Retry-After"))
	_, c, _ = providertest.OpenAIError(t, body)
	assert.Equal(t, "upstream_rate_limited", c)

	code, body, hdr = h.do(t, "/v1/messages", `{"model":"x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "10", hdr.Get("Retry-After"))
	mtyp, _ := anthropicShape(t, body)
	assert.Equal(t, "rate_limit_error", mtyp)

	assert.EqualValues(t, 1, a.hits.Load(), "nothing sent while held")
	assert.EqualValues(t, 1, b.hits.Load(), "nothing sent while held")
}

// An external backend's 4xx that is no quota signal is the client's answer,
// relayed whole (its body was read for the signal and given back).
func TestQuotaOtherClientErrorIsRelayed(t *testing.T) {
	const bad = `{"error":{"message":"Invalid 'messages': empty array.","type":"invalid_request_error","param":"messages","code":"empty_array"}}`
	oai := newStub(t, "oai", limitHandler(400, bad))
	local := newStub(t, "local", nil)
	cfg := config(externalBackend("oai", oai.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "oai", "local")}
	h := start(t, cfg)
	code, body, _ := h.post(t, chat("x"))
	assert.Equal(t, 400, code)
	assert.Equal(t, bad, strings.TrimSpace(body))
	reason, _ := h.srv.Engine().Held(h.srv.Engine().Backend("oai"))
	assert.Equal(t, engine.NotHeld, reason)
	assert.EqualValues(t, 0, local.hits.Load())
}

// Each translated provider's own 429 (Anthropic rate_limit_error with
// retry-after, Bedrock ThrottlingException, Vertex RESOURCE_EXHAUSTED)
// holds its backend: until the provider's Retry-After, or for the
// rate-limit hold when it announced none.
func TestQuotaTranslatedProvidersAreHeld(t *testing.T) {
	for _, tc := range []struct {
		name string
		be   func(t *testing.T) (proxyapi.Backend, map[string]string, interface{ SetMode(providertest.Mode) })
		hold time.Duration
	}{
		{"anthropic", func(t *testing.T) (proxyapi.Backend, map[string]string, interface{ SetMode(providertest.Mode) }) {
			fake := providertest.NewAnthropic(t, testAnthropicKey)
			return anthropicBackend("cloud", fake.URL), map[string]string{"LLMKUBE_CLOUD_ANTHROPIC_API_KEY": testAnthropicKey}, fake
		}, 7 * time.Second},
		{"bedrock", func(t *testing.T) (proxyapi.Backend, map[string]string, interface{ SetMode(providertest.Mode) }) {
			fake := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret}, "us-east-2", testBRModel)
			b := bedrockBackend("cloud", fake.URL)
			return b, bedrockTestEnv, fake
		}, 3 * time.Second},
		{"vertex", func(t *testing.T) (proxyapi.Backend, map[string]string, interface{ SetMode(providertest.Mode) }) {
			fake := providertest.NewVertex(t, "proj-1", "global", testGemini)
			return vertexBackend("cloud", fake.URL+"/v1/projects/proj-1/locations/global"), map[string]string{"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": fake.ServiceAccountJSON}, fake
		}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
			b, env, fake := tc.be(t)
			fake.SetMode(providertest.RateLimited)
			local := newStub(t, "local", nil)
			cfg := config(b, backend("local", local.URL))
			cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "cloud", "local")}
			cfg.Timeouts.RateLimitHold = dur(3 * time.Second)
			h := start(t, cfg, withEnv(env), withClock(clock))
			body := h.okChat(t, chat("x"))
			assert.Equal(t, "local", servedBy(t, body))
			reason, until := h.srv.Engine().Held(h.srv.Engine().Backend("cloud"))
			assert.Equal(t, engine.HoldRateLimited, reason)
			assert.Equal(t, clock.Now().Add(tc.hold), until)
		})
	}
}

// A request whose held primary's fallback fails with a 5xx is answered 429
// with the hold's reset, not 502: a retry then is served.
func TestQuotaHeldAndFailedIsRetryAfter(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	a := newStub(t, "a", limitHandler(429, openaiRateLimited, "Retry-After", "20"))
	b := newStub(t, "b", statusHandler(500))
	cfg := config(externalBackend("a", a.URL), backend("b", b.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "a", "b")}
	cfg.Timeouts.Quarantine = dur(time.Nanosecond) // b stays eligible: every request reaches it
	h := start(t, cfg, withClock(clock))
	code, body, hdr := h.post(t, chat("x"))
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "20", hdr.Get("Retry-After"))
	clock.Step(time.Second)
	code, body, hdr = h.post(t, chat("x"))
	require.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Equal(t, "19", hdr.Get("Retry-After"))
	assert.EqualValues(t, 1, a.hits.Load())
	assert.EqualValues(t, 2, b.hits.Load())
}

// A Messages request passed through to Anthropic reads Anthropic's own
// 429 (its retry-after and anthropic-ratelimit-* headers, raw): the backend
// is held and the next Messages requests go to the fallback, translated.
func TestQuotaMessagesPassThroughIsHeld(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	fake.SetMode(providertest.RateLimited)
	local := newStub(t, "local", nil)
	cfg := config(anthropicBackend("claude", fake.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "claude", "local")}
	h := start(t, cfg, withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}), withClock(clock))
	body := `{"model":"x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	code, got, _ := h.do(t, "/v1/messages", body)
	require.Equal(t, 200, code, got)
	sent := len(fake.Requests())
	reason, until := h.srv.Engine().Held(h.srv.Engine().Backend("claude"))
	assert.Equal(t, engine.HoldRateLimited, reason)
	assert.Equal(t, clock.Now().Add(7*time.Second), until, "the fake's retry-after")
	for range 3 {
		code, got, _ = h.do(t, "/v1/messages", body)
		require.Equal(t, 200, code, got)
		assert.Equal(t, "local", h.last(t).Backend)
	}
	assert.Len(t, fake.Requests(), sent)
}
