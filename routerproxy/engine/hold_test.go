package engine

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdEngine has rule "chat" over a and b (primary-fallback), rule "closed"
// (failClosed) over a alone, and a fake clock.
func holdEngine(t *testing.T) (*Engine, *time.Time) {
	t.Helper()
	now := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{
			{Name: "a", Kind: proxyapi.KindExternal, Provider: "openai", Tier: "cloud", URL: "http://a", Weight: 1},
			{Name: "b", Kind: proxyapi.KindExternal, Provider: "openai", Tier: "cloud", URL: "http://b", Weight: 1},
		},
		Rules: []proxyapi.Rule{
			{Name: "closed", Backends: []string{"a"}, Strategy: "primary-fallback", FailClosed: true, Match: proxyapi.Match{Models: []string{"closed"}}},
			{Name: "chat", Backends: []string{"a", "b"}, Strategy: "primary-fallback"},
		},
		Default: proxyapi.DefaultRoute{Strategy: proxyapi.DefaultStatic},
	}
	e, err := New(cfg, Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	return e, &now
}

func firstBackend(t *testing.T, e *Engine, model string) (string, error) {
	t.Helper()
	rt, err := e.Route(&Request{Model: model}, Classification{})
	if err != nil {
		return "", err
	}
	a := rt.Next()
	require.NotNil(t, a)
	return a.Backend.Name(), nil
}

func TestHoldSkipsUntilTheReset(t *testing.T) {
	e, now := holdEngine(t)
	a := e.Backend("a")
	until := e.Hold(a, HoldRateLimited, 30*time.Second)
	assert.Equal(t, now.Add(30*time.Second), until)

	got, err := firstBackend(t, e, "gpt")
	require.NoError(t, err)
	assert.Equal(t, "b", got, "a held: the fallback serves")
	assert.True(t, a.Healthy(), "a hold is no health verdict")
	assert.False(t, e.Quarantined(a), "a hold is no quarantine")
	st := e.Status(a)
	assert.Equal(t, now.Add(30*time.Second), st.RateLimitedUntil)
	assert.True(t, st.QuotaExhaustedUntil.IsZero())

	*now = now.Add(29 * time.Second)
	got, _ = firstBackend(t, e, "gpt")
	assert.Equal(t, "b", got, "still inside the reset")
	*now = now.Add(time.Second)
	got, _ = firstBackend(t, e, "gpt")
	assert.Equal(t, "a", got, "the reset passed: the primary serves again")
	assert.True(t, e.Status(a).RateLimitedUntil.IsZero())
}

func TestHoldDurations(t *testing.T) {
	e, now := holdEngine(t)
	a := e.Backend("a")
	assert.Equal(t, now.Add(time.Second), e.Hold(a, HoldRateLimited, 0), "no announced reset: the default rate-limit hold")
	assert.Equal(t, now.Add(5*time.Second), e.Hold(a, HoldRateLimited, 5*time.Second))
	assert.Equal(t, now.Add(5*time.Second), e.Hold(a, HoldRateLimited, 2*time.Second), "never shortened")
	b := e.Backend("b")
	assert.Equal(t, now.Add(10*time.Minute), e.Hold(b, HoldRateLimited, 24*time.Hour), "capped at the quota-exhausted hold")
	assert.Equal(t, now.Add(10*time.Minute), e.Hold(b, HoldQuotaExhausted, 0))
	reason, _ := e.Held(b)
	assert.Equal(t, HoldQuotaExhausted, reason, "a spent quota inside a rate-limit hold as long says so")

	e2, now2 := holdEngine(t)
	e2.cfg.Timeouts.QuotaExhaustedHold.Duration = 3 * time.Minute
	a2 := e2.Backend("a")
	assert.Equal(t, now2.Add(3*time.Minute), e2.Hold(a2, HoldQuotaExhausted, 0), "the configured quota-exhausted hold")
	reason, until := e2.Held(a2)
	assert.Equal(t, HoldQuotaExhausted, reason)
	assert.Equal(t, now2.Add(3*time.Minute), until)
	assert.Equal(t, now2.Add(3*time.Minute), e2.Status(a2).QuotaExhaustedUntil)
}

func TestEveryCandidateHeldIsHeldError(t *testing.T) {
	e, now := holdEngine(t)
	e.Hold(e.Backend("a"), HoldRateLimited, 40*time.Second)
	e.Hold(e.Backend("b"), HoldQuotaExhausted, 0)

	_, err := e.Route(&Request{Model: "gpt"}, Classification{})
	var h *HeldError
	require.ErrorAs(t, err, &h)
	assert.Equal(t, now.Add(40*time.Second), h.Until, "the earliest end")
	assert.ElementsMatch(t, []string{"a (rate_limited)", "b (quota_exhausted)"}, h.Backends)
	assert.ErrorIs(t, err, ErrNoRoute)

	_, err = e.Route(&Request{Model: "closed"}, Classification{})
	require.ErrorAs(t, err, &h, "a failClosed rule whose backends are held answers the hold too")
	assert.ErrorIs(t, err, ErrFailClosed)

	// A backend down for another reason is no hold: no HeldError.
	e2, _ := holdEngine(t)
	for range ProbesFailedToUnhealthy {
		e2.ReportProbe(e2.Backend("a"), false, "down")
		e2.ReportProbe(e2.Backend("b"), false, "down")
	}
	_, err = e2.Route(&Request{Model: "gpt"}, Classification{})
	assert.False(t, errors.As(err, &h))
	assert.ErrorIs(t, err, ErrNoRoute)
}

func TestRouteRetryAfter(t *testing.T) {
	e, _ := holdEngine(t)
	rt, err := e.Route(&Request{Model: "gpt"}, Classification{})
	require.NoError(t, err)
	assert.Zero(t, rt.RetryAfter())
	e.Hold(e.Backend("b"), HoldRateLimited, 20*time.Second)
	e.Hold(e.Backend("a"), HoldRateLimited, 7*time.Second)
	assert.Equal(t, 7*time.Second, rt.RetryAfter())
}

// Answers arriving together keep the latest reset, whatever their order.
func TestHoldConcurrentKeepsTheLatest(t *testing.T) {
	e, now := holdEngine(t)
	a := e.Backend("a")
	var wg sync.WaitGroup
	for i := 1; i <= 16; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); e.Hold(a, HoldRateLimited, time.Duration(i)*time.Second) }()
	}
	wg.Wait()
	_, until := e.Held(a)
	assert.Equal(t, now.Add(16*time.Second), until)
}

// A hold another replica learned (HoldUntil) skips the backend to its end,
// only ever extends, and an end already past or an unknown reason does
// nothing.
func TestHoldUntilFromAnotherReplica(t *testing.T) {
	e, now := holdEngine(t)
	a := e.Backend("a")
	assert.False(t, e.HoldUntil(a, HoldRateLimited, now.Add(-time.Second)), "an end already past")
	assert.False(t, e.HoldUntil(a, NotHeld, now.Add(time.Minute)), "no reason")
	reason, _ := e.Held(a)
	assert.Equal(t, NotHeld, reason)

	assert.True(t, e.HoldUntil(a, HoldRateLimited, now.Add(30*time.Second)))
	got, err := firstBackend(t, e, "gpt")
	require.NoError(t, err)
	assert.Equal(t, "b", got, "a held: the fallback serves")
	assert.False(t, e.HoldUntil(a, HoldRateLimited, now.Add(10*time.Second)), "a shorter hold does not shorten it")
	reason, until := e.Held(a)
	assert.Equal(t, HoldRateLimited, reason)
	assert.Equal(t, now.Add(30*time.Second), until)

	assert.True(t, e.HoldUntil(a, HoldQuotaExhausted, now.Add(time.Hour)))
	reason, until = e.Held(a)
	assert.Equal(t, HoldQuotaExhausted, reason)
	assert.Equal(t, now.Add(time.Hour), until)
	assert.Equal(t, HoldQuotaExhausted, ParseHoldReason(HoldQuotaExhausted.String()))
	assert.Equal(t, NotHeld, ParseHoldReason("quarantined"))
}
