package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/test/redistest"
)

// rateLimitedBody is OpenAI's answer to a request over its rate limit.
const rateLimitedBody = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`

// rateLimitedUntil waits until p's /status holds backend 0 for its
// provider's rate limit and returns until when. The bound is generous (a
// busy machine); the hold it waits for lasts 30 s.
func rateLimitedUntil(t *testing.T, p *proc) time.Time {
	t.Helper()
	var until time.Time
	require.Eventually(t, func() bool {
		until = p.status(t).Backends[0].RateLimitedUntil
		return !until.IsZero()
	}, 20*time.Second, 20*time.Millisecond, "the replica never learned the hold another replica published")
	return until
}

// Two replicas on one Redis share a provider's rate limit: replica A is
// answered 429 Retry-After: 30, and replica B, which never asked the
// provider, holds it to the same reset and serves its requests from the
// fallback, sending the provider nothing. A third replica started during
// the hold learns it from the store when it subscribes.
func TestQuotaHoldIsSharedAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	prov := newLimitedProvider(t, rateLimitedBody, "Retry-After", "30")
	local := newUpstream(t, "local")
	flags := storeFlags(rs.Addr)
	a := startProxy(t, quotaConfig(t, local.URL, prov.URL), flags...)
	b := startProxy(t, quotaConfig(t, local.URL, prov.URL), flags...)

	before := time.Now()
	code, body := a.post(t, chat("chat"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local", served(t, body), "the fallback serves the refused request")
	require.EqualValues(t, 1, prov.posts())
	heldA := a.status(t).Backends[0].RateLimitedUntil
	require.False(t, heldA.IsZero(), "A holds the provider it was refused by")

	heldB := rateLimitedUntil(t, b)
	assert.WithinDuration(t, heldA, heldB, time.Second, "B holds to A's reset")
	assert.False(t, heldB.Before(before.Add(29*time.Second)), "held until %s", heldB)
	const n = 10
	servedLocally(t, b, n)
	assert.EqualValues(t, 1, prov.posts(), "no replica sends the provider anything inside its reset")
	stB := b.status(t).Backends[0]
	assert.True(t, stB.Healthy, "a shared hold is no health verdict")
	assert.False(t, stB.Quarantined)

	c := startProxy(t, quotaConfig(t, local.URL, prov.URL), flags...)
	assert.WithinDuration(t, heldA, rateLimitedUntil(t, c), time.Second, "a replica started during the hold reads it from the store")
	code, body = c.post(t, chat("chat"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local", served(t, body))
	assert.EqualValues(t, 1, prov.posts())
	assert.EqualValues(t, n+2, local.posts.Load())
}

// The holds' store down stops nothing: a replica whose Redis is gone
// still serves, and holds on what its own provider told it.
func TestQuotaHoldWithoutTheStoreStaysLocal(t *testing.T) {
	rs := redistest.Start(t, "")
	prov := newLimitedProvider(t, rateLimitedBody, "Retry-After", "30")
	local := newUpstream(t, "local")
	cfg := quotaConfig(t, local.URL, prov.URL)
	p := startProxy(t, cfg, storeFlags(rs.Addr)...)
	rs.Stop()

	servedLocally(t, p, 5)
	assert.EqualValues(t, 1, prov.posts(), "held on this replica")
	assert.False(t, p.status(t).Backends[0].RateLimitedUntil.IsZero())
}
