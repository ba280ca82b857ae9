package budget

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/test/redistest"
	"github.com/llmkube/llmkube-compile/test/tcprelay"
)

// These tests run the Store against a real redis-server through a loopback
// relay that can hold Redis's replies, to make a round trip time out while
// Redis still applies the command: the case a busy node produces. The
// router-proxy's process tests (cmd/router-proxy) cover the same paths as
// a user runs them.

// storeTimeout bounds the round trips of the tests' stores: long, so that
// no test leans on a fast round trip on a busy machine; heldPast shortens
// it around the one call whose reply a test holds.
const storeTimeout = 10 * time.Second

// heldPast runs f with every reply held and the store's round trips
// bounded by 100 ms, so each of f's round trips times out.
func heldPast(s *Store, hold *atomic.Bool, f func()) {
	s.timeout = 100 * time.Millisecond
	hold.Store(true)
	f()
	hold.Store(false)
	s.timeout = storeTimeout
}

// storeWith is a Store on addr for one router budget "cap" (an hour's
// window) with b's caps, round trips bounded by storeTimeout.
func storeWith(t *testing.T, addr string, b proxyapi.Budget) *Store {
	t.Helper()
	b.Name, b.Scope, b.Window = "cap", "router", proxyapi.Duration{Duration: time.Hour}
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"}, Policy: proxyapi.Policy{Budgets: []proxyapi.Budget{b}}}
	s, err := NewStore(cfg, StoreOptions{URL: "redis://" + addr + "/0", Timeout: storeTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func usdStore(t *testing.T, addr string) *Store {
	return storeWith(t, addr, proxyapi.Budget{MaxUSD: "100"})
}
func tokenStore(t *testing.T, addr string) *Store {
	return storeWith(t, addr, proxyapi.Budget{MaxTokens: 1000})
}

// A settlement whose reply times out has been applied by Redis all the
// same; its retry (the next flush) carries the same id and is not applied
// twice, so the count stays exact.
func TestSettlementRetryIsAppliedOnce(t *testing.T) {
	var hold atomic.Bool
	s := usdStore(t, tcprelay.Start(t, redistest.Start(t, "").Addr, tcprelay.Hold(&hold)))
	ch, ex, err := s.Admit(context.Background(), "", nil, 0)
	require.NoError(t, err)
	require.Nil(t, ex)
	ch.Add(10, engine.Money(3_000_000)) // 3 micro-dollars; Redis now holds the settle script
	ch, ex, err = s.Admit(context.Background(), "", nil, 0)
	require.NoError(t, err)
	require.Nil(t, ex)
	heldPast(s, &hold, func() {
		ch.Add(10, engine.Money(3_000_000)) // run by Redis (EVALSHA), its reply held past the timeout
	})
	s.mu.Lock()
	require.Len(t, s.pending, 1, "the unconfirmed settlement waits for a retry")
	s.mu.Unlock()
	s.flush(context.Background())
	s.mu.Lock()
	assert.Empty(t, s.pending)
	s.mu.Unlock()
	st := s.Status()
	require.Len(t, st, 1)
	assert.Equal(t, "0.000006", st[0].USDUsed, "the second settlement applied once, though sent twice")
	assert.Equal(t, int64(20), st[0].TokensUsed)
}

// One round trip that times out fails its own admission and nothing else:
// the store is not taken as down until DownAfterFailures in a row, so the
// next admission asks Redis again instead of being refused until the
// probe. A store that refuses connections is down after as many.
func TestOneSlowReplyIsNotAnOutage(t *testing.T) {
	var hold atomic.Bool
	redis := redistest.Start(t, "").Addr
	s := usdStore(t, tcprelay.Start(t, redis, tcprelay.Hold(&hold)))
	var err error
	heldPast(s, &hold, func() { _, _, err = s.Admit(context.Background(), "", nil, 0) })
	require.ErrorIs(t, err, ErrUnavailable, "fail closed: the slow admission is refused")
	healthy, _ := s.Healthy()
	assert.True(t, healthy, "one timeout is not an outage")
	_, ex, err := s.Admit(context.Background(), "", nil, 0)
	require.NoError(t, err, "the next admission is answered by Redis")
	require.Nil(t, ex)

	for range DownAfterFailures {
		heldPast(s, &hold, func() { _, _, err = s.Admit(context.Background(), "", nil, 0) })
		require.ErrorIs(t, err, ErrUnavailable)
	}
	healthy, _ = s.Healthy()
	assert.False(t, healthy, "timeouts in a row are an outage")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	refused := usdStore(t, closed)
	for range DownAfterFailures {
		_, _, err = refused.Admit(context.Background(), "", nil, 0)
		require.ErrorIs(t, err, ErrUnavailable)
	}
	healthy, _ = refused.Healthy()
	assert.False(t, healthy, "a refused connection is down: %v", err)
}

// An admission whose reply is lost (held past the timeout while Redis
// applies the reservation, or Redis killed after applying it) is refused
// to its client, so it must not stay counted: its cancellation, sent once
// the store answers, takes the reservation back. (Before, the count stayed
// one estimate high for every such admission.)
func TestLostAdmissionReplyIsNotCharged(t *testing.T) {
	var hold atomic.Bool
	s := tokenStore(t, tcprelay.Start(t, redistest.Start(t, "").Addr, tcprelay.Hold(&hold)))
	// Redis learns the scripts first: held, EVALSHA's NOSCRIPT reply would
	// keep the script from running at all.
	ch, _, err := s.Admit(context.Background(), "", nil, 0)
	require.NoError(t, err)
	ch.Add(0, 0)
	heldPast(s, &hold, func() { _, _, err = s.Admit(context.Background(), "", nil, 40) })
	require.ErrorIs(t, err, ErrUnavailable, "fail closed: the client got 503")
	s.flush(context.Background())
	s.mu.Lock()
	assert.Empty(t, s.pending, "the cancellation was sent")
	s.mu.Unlock()
	assert.Equal(t, int64(0), counted(t, s), "a refused request is not charged")

	// An admitted one still is, exactly: its estimate replaced by its usage.
	ch, ex, err := s.Admit(context.Background(), "", nil, 40)
	require.NoError(t, err)
	require.Nil(t, ex)
	ch.Add(15, 0)
	assert.Equal(t, int64(15), counted(t, s))
}

// The cancellation may reach Redis before the reservation it cancels (two
// connections, a reply held): the cancellation leaves a tombstone and the
// late reservation reserves nothing.
func TestCancellationBeforeItsReservation(t *testing.T) {
	s := tokenStore(t, redistest.Start(t, "").Addr)
	b := &s.budgets[0]
	r := reservation{key: s.counterKey(b, ""), id: s.settlementID(), b: 0, tokens: 40}
	s.correct(r, -r.tokens, 0) // the cancellation first
	got, err := reserve.Run(context.Background(), s.rdb, []string{r.key, r.id}, b.widthUS, b.maxTokens, b.maxMicro, r.tokens, 0, BucketsPerWindow, "").Int64Slice()
	require.NoError(t, err)
	assert.Equal(t, int64(2), got[0], "the reservation found its cancellation's tombstone")
	assert.Equal(t, int64(0), counted(t, s))
	s.correct(r, 15, 0) // and a settlement of it is a no-op too
	assert.Equal(t, int64(0), counted(t, s))
}

// counted is the first budget's token count in Redis (not Status, which
// falls back to the local count when Redis does not answer).
func counted(t *testing.T, s *Store) int64 {
	t.Helper()
	b := &s.budgets[0]
	r, err := usage.Run(context.Background(), s.rdb, []string{s.counterKey(b, "")}, b.widthUS, BucketsPerWindow).Int64Slice()
	require.NoError(t, err)
	return r[1]
}
