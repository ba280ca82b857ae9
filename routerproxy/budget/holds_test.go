package budget

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/test/poll"
	"github.com/llmkube/llmkube-compile/test/redistest"
)

// holdsOn is the shared holds of router ns/r's backends "cloud" and
// "other" on the Redis at addr, and a channel of what its subscription
// applies (running until the test ends).
func holdsOn(t *testing.T, addr string) (*Store, *Holds, <-chan SharedHold) {
	t.Helper()
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"}}
	s, err := NewStore(cfg, StoreOptions{URL: "redis://" + addr + "/0", Timeout: storeTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	h := s.Holds([]string{"cloud", "other"})
	got := make(chan SharedHold, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx, 50*time.Millisecond, func(sh SharedHold) { got <- sh }) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, h, got
}

// next is the next hold applied (a generous bound: it is sent at once).
func next(t *testing.T, got <-chan SharedHold) SharedHold {
	t.Helper()
	return poll.Recv(t, got, 20*time.Second, "no hold was applied")
}

// subscribed waits until the channel has a subscriber (Run subscribed).
func subscribed(t *testing.T, s *Store, h *Holds, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		m, err := s.rdb.PubSubNumSub(context.Background(), h.channel).Result()
		return err == nil && m[h.channel] >= n
	}, 20*time.Second, 10*time.Millisecond, "the holds were never subscribed to")
}

// A published hold reaches every subscriber; one that ends earlier than
// the hold in the store neither replaces it nor is published (a hold is
// only ever extended); the key expires with the hold.
func TestHoldsPublishOnlyExtends(t *testing.T) {
	addr := redistest.Start(t, "").Addr
	s, h, got := holdsOn(t, addr)
	subscribed(t, s, h, 1)
	ctx := context.Background()
	now := time.Now()
	long := SharedHold{Backend: "cloud", Reason: "rate_limited", UntilMS: now.Add(30 * time.Second).UnixMilli()}
	require.NoError(t, h.Publish(ctx, long))
	assert.Equal(t, long, next(t, got))

	require.NoError(t, h.Publish(ctx, SharedHold{Backend: "cloud", Reason: "rate_limited", UntilMS: now.Add(10 * time.Second).UnixMilli()}))
	longer := SharedHold{Backend: "cloud", Reason: "quota_exhausted", UntilMS: now.Add(time.Hour).UnixMilli()}
	require.NoError(t, h.Publish(ctx, longer))
	// The subscription's catch-up may apply long a second time (it read the
	// store after long was set): harmless, a hold only extends.
	for sh := next(t, got); sh != longer; sh = next(t, got) {
		assert.Equal(t, long, sh, "the shorter hold was not published")
	}
	v, err := s.rdb.Get(ctx, h.prefix+"cloud").Result()
	require.NoError(t, err)
	assert.JSONEq(t, `{"backend":"cloud","reason":"quota_exhausted","untilMs":`+strconv.FormatInt(longer.UntilMS, 10)+`}`, v, "the key holds the reason and the end, nothing else")

	ttl, err := s.rdb.PTTL(ctx, h.prefix+"cloud").Result()
	require.NoError(t, err)
	assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "the key expires with the hold: %s", ttl)
	assert.NoError(t, h.Publish(ctx, SharedHold{Backend: "cloud", Reason: "rate_limited", UntilMS: now.Add(-time.Second).UnixMilli()}), "a hold already over is not shared")
}

// A subscription reads the holds already in the store: a replica that
// starts during a hold learns it; what the store holds is input, and a
// malformed value is dropped.
func TestHoldsCatchUpOnSubscribe(t *testing.T) {
	addr := redistest.Start(t, "").Addr
	s, h, _ := holdsOn(t, addr)
	ctx := context.Background()
	require.NoError(t, s.rdb.Set(ctx, h.prefix+"other", "not json", time.Minute).Err())
	held := SharedHold{Backend: "cloud", Reason: "rate_limited", UntilMS: time.Now().Add(30 * time.Second).UnixMilli()}
	require.NoError(t, h.Publish(ctx, held))

	_, _, got := holdsOn(t, addr)
	assert.Equal(t, held, next(t, got))
	select {
	case sh := <-got:
		t.Fatalf("applied %+v", sh)
	default:
	}
}

// A lost connection is subscribed again, and the holds published meanwhile
// are applied: Redis restarting loses no hold a replica learned after it.
func TestHoldsSurviveARedisRestart(t *testing.T) {
	rs := redistest.Start(t, "")
	s, h, got := holdsOn(t, rs.Addr)
	subscribed(t, s, h, 1)
	rs.Restart(t)

	_, hp, _ := holdsOn(t, rs.Addr)
	held := SharedHold{Backend: "cloud", Reason: "rate_limited", UntilMS: time.Now().Add(time.Minute).UnixMilli()}
	require.Eventually(t, func() bool { return hp.Publish(context.Background(), held) == nil }, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, held, next(t, got))
}
