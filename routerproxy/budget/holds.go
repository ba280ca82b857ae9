// Upstream quota holds shared across replicas (docs/upstream-quota.md).
//
// A replica that learns a backend's provider hold (routerproxy/engine/hold.go) writes
// it to the budget store, one key per router and backend (value: the
// reason and the end, expiring at the end), and publishes it on the
// router's channel. Every replica subscribes and applies what it is told
// to its own engine, so the request path reads only the in-memory hold:
// no Redis round trip per request, one message per hold per replica.
// A subscription (the first, and each one after a lost connection) first
// reads the keys of the router's external backends (one MGET), so a
// replica that starts, or reconnects, during a hold learns it too.
//
// Holds are an optimisation: while Redis is down each replica holds on
// what it learns itself (as without a store), and serving never waits on
// Redis. A hold carries a backend name, a reason and a time, never a key
// or a credential.

package budget

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmkube/llmkube-compile/routerproxy/internal/tick"
)

// SharedHold is one backend's quota hold as the replicas share it.
type SharedHold struct {
	Backend string `json:"backend"`
	// Reason is engine.HoldReason's String: rate_limited or quota_exhausted.
	Reason string `json:"reason"`
	// UntilMS is the hold's end, unix milliseconds.
	UntilMS int64 `json:"untilMs"`
}

// Until is the hold's end.
func (h SharedHold) Until() time.Time { return time.UnixMilli(h.UntilMS).UTC() }

// Holds shares a router's upstream quota holds through the budget store.
type Holds struct {
	rdb     *redis.Client
	prefix  string // "llmkube:{ns/router}:hold:"
	channel string
	timeout time.Duration
	log     *slog.Logger
	// backends are the router's external backends: the keys a
	// subscription reads to catch up.
	backends []string
}

// Holds shares the holds of backends (the router's external backends)
// over the store's connection.
func (s *Store) Holds(backends []string) *Holds {
	base := strings.TrimSuffix(s.prefix, "budget:")
	return &Holds{rdb: s.rdb, prefix: base + "hold:", channel: base + "holds", timeout: s.timeout, log: s.log, backends: backends}
}

// publishHold sets the hold's key unless it already holds as long or
// longer (answers arrive out of order; a hold is only ever extended), with
// the hold's time left as its expiry, and tells the subscribers.
var publishHold = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, h = pcall(cjson.decode, cur)
  if ok and type(h) == 'table' and tonumber(h.untilMs) and tonumber(h.untilMs) >= tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
`)

// Publish shares a hold this replica learned. It is called off the
// request path; an error (the store down) leaves the hold local.
func (h *Holds) Publish(ctx context.Context, hold SharedHold) error {
	left := time.Until(hold.Until()).Milliseconds()
	if left <= 0 {
		return nil
	}
	v, err := json.Marshal(hold)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	return publishHold.Run(ctx, h.rdb, []string{h.prefix + hold.Backend}, string(v), hold.UntilMS, left, h.channel).Err()
}

// Run subscribes to the router's holds and calls apply with each one
// (its own publications too: apply only extends), until ctx ends. A lost
// connection is retried every retry, and each new subscription first
// reads the holds already in the store.
func (h *Holds) Run(ctx context.Context, retry time.Duration, apply func(SharedHold)) {
	ps := h.rdb.Subscribe(ctx, h.channel)
	// Receive waits for a message without a deadline: closing the
	// subscription is what ends it.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	defer ps.Close()
	for ctx.Err() == nil {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.log.Debug("quota holds: subscription", "error", err.Error())
			// go-redis reconnects and subscribes again on the next
			// Receive; wait a little so an outage is not a busy loop.
			if !tick.Sleep(ctx, retry) {
				return
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				h.catchUp(ctx, apply)
			}
		case *redis.Message:
			if sh, ok := h.decode(m.Payload); ok {
				apply(sh)
			}
		}
	}
}

// catchUp applies the holds already in the store.
func (h *Holds) catchUp(ctx context.Context, apply func(SharedHold)) {
	if len(h.backends) == 0 {
		return
	}
	keys := make([]string, len(h.backends))
	for i, b := range h.backends {
		keys[i] = h.prefix + b
	}
	ctx, cancel := context.WithTimeout(ctx, 10*h.timeout)
	defer cancel()
	vs, err := h.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		h.log.Debug("quota holds: catch up", "error", err.Error())
		return
	}
	for _, v := range vs {
		if s, ok := v.(string); ok {
			if sh, ok := h.decode(s); ok {
				apply(sh)
			}
		}
	}
}

// decode reads one published hold; a malformed one is logged and dropped
// (the store is shared: what it holds is input, not trusted).
func (h *Holds) decode(s string) (SharedHold, bool) {
	var sh SharedHold
	if err := json.Unmarshal([]byte(s), &sh); err != nil || sh.Backend == "" || sh.UntilMS <= 0 {
		h.log.Warn("quota holds: a malformed hold in the store, ignored", "size", len(s))
		return SharedHold{}, false
	}
	return sh, true
}
