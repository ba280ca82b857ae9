package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitedProvider is a loopback OpenAI-compatible provider that refuses
// every request for its quota with body and headers; posts counts what
// it was sent.
type limitedProvider struct{ *stub }

func newLimitedProvider(t *testing.T, body string, hdr ...string) limitedProvider {
	isPost := func(r *http.Request) bool { return r.Method == http.MethodPost }
	return limitedProvider{newStub(t, isPost, func(w http.ResponseWriter, r *http.Request, _ string) {
		if !isPost(r) {
			return
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, body)
	})}
}

func (p limitedProvider) posts() int { return len(p.received()) }

// quotaConfig routes every request to the external backends in order,
// then to the local fallback when one is given.
func quotaConfig(t *testing.T, fallback string, ext ...string) *proxyapi.Config {
	d := func(x time.Duration) proxyapi.Duration { return proxyapi.Duration{Duration: x} }
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: d(time.Minute), StreamIdle: d(time.Minute), Quarantine: d(time.Minute)},
	}
	fileAudit(t, cfg)
	var names []string
	for i, u := range ext {
		n := "cloud" + strconv.Itoa(i)
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: n, ModelID: n, Kind: proxyapi.KindExternal, Provider: "openai", Tier: "cloud", URL: u, Model: "gpt-4o", Weight: 1})
		names = append(names, n)
	}
	if fallback != "" {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: "local", ModelID: "local", Kind: proxyapi.KindLocal, Tier: "local", URL: fallback, Weight: 1})
		names = append(names, "local")
	}
	cfg.Rules = []proxyapi.Rule{{Name: "chat", Backends: names, Strategy: "primary-fallback"}}
	cfg.Default = proxyapi.DefaultRoute{Strategy: "Static"}
	return cfg
}

// servedLocally posts n chats to p and asserts that the local fallback
// serves each.
func servedLocally(t *testing.T, p *proc, n int) {
	t.Helper()
	for i := range n {
		code, body := p.post(t, chat("chat"))
		require.Equal(t, 200, code, body)
		assert.Equal(t, "local", served(t, body), "request %d", i)
	}
}

// The built router-proxy holds a provider that answered 429 with
// Retry-After: 30: the next requests, sent at once (30 s is far longer
// than the test), are served by the fallback and the provider is sent
// nothing; /status says until when, and the audit why.
func TestQuotaRateLimitedProviderIsNotSentAgain(t *testing.T) {
	prov := newLimitedProvider(t, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "30")
	local := newUpstream(t, "local")
	cfg := quotaConfig(t, local.URL, prov.URL)
	p := startProxy(t, cfg)

	before := time.Now()
	const n = 10
	servedLocally(t, p, n)
	assert.EqualValues(t, 1, prov.posts(), "the rate-limited provider is sent nothing inside its reset")
	assert.EqualValues(t, n, local.posts.Load())

	st := p.status(t)
	require.Equal(t, "cloud0", st.Backends[0].Name)
	until := st.Backends[0].RateLimitedUntil
	assert.False(t, until.Before(before.Add(29*time.Second)), "held until %s", until)
	assert.False(t, until.After(time.Now().Add(31*time.Second)), "held until %s", until)
	assert.True(t, st.Backends[0].Healthy, "a rate limit is no health verdict")
	assert.False(t, st.Backends[0].Quarantined)

	entries, _ := stopForAudit(t, p, cfg.Policy.Audit.FilePath)
	require.Len(t, entries, n)
	assert.Equal(t, 2, entries[0].Attempts)
	require.Len(t, entries[0].Held, 1)
	assert.Contains(t, entries[0].Held[0], "cloud0: status 429 (rate_limited by its provider; held until ")
	for _, e := range entries[1:] {
		assert.Equal(t, 1, e.Attempts)
		require.Len(t, e.Held, 1)
		assert.True(t, strings.HasPrefix(e.Held[0], "cloud0: rate_limited until "), e.Held[0])
	}
}

// insufficient_quota holds the provider for spec.proxy.quotaExhaustedHold
// (here 45m), whatever short Retry-After came with it.
func TestQuotaExhaustedProviderIsSkippedForTheConfiguredHold(t *testing.T) {
	prov := newLimitedProvider(t, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "Retry-After", "1")
	local := newUpstream(t, "local")
	cfg := quotaConfig(t, local.URL, prov.URL)
	cfg.Timeouts.QuotaExhaustedHold = proxyapi.Duration{Duration: 45 * time.Minute}
	p := startProxy(t, cfg)

	before := time.Now()
	servedLocally(t, p, 5)
	assert.EqualValues(t, 1, prov.posts())
	b := p.status(t).Backends[0]
	assert.True(t, b.RateLimitedUntil.IsZero())
	assert.False(t, b.QuotaExhaustedUntil.Before(before.Add(45*time.Minute)), "held until %s", b.QuotaExhaustedUntil)
	assert.False(t, b.QuotaExhaustedUntil.After(time.Now().Add(45*time.Minute)), "held until %s", b.QuotaExhaustedUntil)
	assert.Contains(t, b.Message, "quota_exhausted")
}

// When every provider is limited the client sees 429 with the earliest
// reset as Retry-After; while they are held nothing is sent.
func TestQuotaEveryProviderLimitedAnswersTheEarliestReset(t *testing.T) {
	const body = `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	a := newLimitedProvider(t, body, "Retry-After", "300")
	b := newLimitedProvider(t, body, "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "2m0s")
	p := startProxy(t, quotaConfig(t, "", a.URL, b.URL))

	retryAfter := func() (int, int) {
		a := p.send(t, chatPath, chat("chat"))
		secs, err := strconv.Atoi(a.hdr.Get("Retry-After"))
		require.NoError(t, err, "Retry-After %q", a.hdr.Get("Retry-After"))
		return a.code, secs
	}
	code, secs := retryAfter()
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.True(t, secs > 60 && secs <= 120, "the earliest reset (2m), not %ds", secs)
	code, secs = retryAfter()
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.True(t, secs > 60 && secs <= 120, "the earliest reset (2m), not %ds", secs)
	assert.EqualValues(t, 1, a.posts(), "nothing sent while held")
	assert.EqualValues(t, 1, b.posts(), "nothing sent while held")
}

// A rule that is not failClosed falls through to the default route once
// its one provider is held: the request the provider refused is answered
// 429, and its Retry-After says to retry now (1), not after the
// provider's reset (300 s), because the retry is served by the default
// route at once.
func TestQuotaHeldRuleThatFallsThroughAnswersRetryNow(t *testing.T) {
	prov := newLimitedProvider(t, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "300")
	local := newUpstream(t, "local")
	cfg := quotaConfig(t, "", prov.URL)
	cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: "local", ModelID: "local", Kind: proxyapi.KindLocal, Tier: "local", URL: local.URL, Weight: 1})
	cfg.Default = proxyapi.DefaultRoute{Strategy: "Static", Backend: "local"}
	p := startProxy(t, cfg)

	a := p.send(t, chatPath, chat("chat"))
	assert.Equal(t, http.StatusTooManyRequests, a.code)
	assert.Equal(t, "1", a.hdr.Get("Retry-After"), "a retry now is served by the default route")

	code, body := p.post(t, chat("chat"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local", served(t, body), "the retry, sent at once, is served")
	assert.EqualValues(t, 1, prov.posts())
}
