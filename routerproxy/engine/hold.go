package engine

// Upstream quota holds: an external backend whose provider refused a
// request for its quota is skipped until the provider's announced reset (a
// rate limit) or for the configured longer time (a spent quota). A hold is
// not a quarantine: the backend is not judged unhealthy, no half-open
// trial follows, and active probes go on as before; it only leaves the
// candidates until the hold ends. When a request's route has no eligible
// backend and a hold is the reason, the request is answered 429 with the
// earliest end as Retry-After (HeldError), nothing sent.
// docs/upstream-quota.md.

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// HoldReason is why a backend is held.
type HoldReason uint32

const (
	// NotHeld: the backend is not held.
	NotHeld HoldReason = iota
	// HoldRateLimited: the provider's rate limit, until its reset.
	HoldRateLimited
	// HoldQuotaExhausted: the provider's quota is spent.
	HoldQuotaExhausted
)

// String is the reason as metrics and the audit name it.
func (r HoldReason) String() string {
	switch r {
	case HoldRateLimited:
		return "rate_limited"
	case HoldQuotaExhausted:
		return "quota_exhausted"
	}
	return ""
}

// hold is a backend's quota hold. until and reason are written together
// under a CAS on until, so a reader may see a new until with the old
// reason for an instant; both are advisory (status, metrics), eligibility
// reads until alone.
type hold struct {
	until  atomic.Int64 // unix nanos; 0 = never held
	reason atomic.Uint32
}

// Hold skips the backend for its provider's quota: reset is the reset the
// provider announced (0: none). A rate limit holds until the reset, or
// for the rate-limit hold when none was announced, never longer than the
// quota-exhausted hold; a spent quota holds for the quota-exhausted hold,
// or until a later announced reset. A hold is only ever extended: answers
// that arrive out of order cannot shorten it. It returns the hold's end.
func (e *Engine) Hold(b *BackendState, reason HoldReason, reset time.Duration) time.Time {
	long := e.cfg.Timeouts.QuotaExhaustedHold.Duration
	var d time.Duration
	switch reason {
	case HoldRateLimited:
		d = reset
		if d <= 0 {
			d = e.cfg.Timeouts.RateLimitHold.Duration
		}
		d = min(d, long)
	case HoldQuotaExhausted:
		d = max(long, reset)
	default:
		return time.Time{}
	}
	until := e.now().Add(d).UnixNano()
	for {
		cur := b.hold.until.Load()
		if cur >= until {
			if reason == HoldQuotaExhausted {
				// A spent quota inside a longer rate-limit hold: the
				// hold stands, and says what the provider said last.
				b.hold.reason.Store(uint32(reason))
			}
			return time.Unix(0, cur).UTC()
		}
		if b.hold.until.CompareAndSwap(cur, until) {
			b.hold.reason.Store(uint32(reason))
			return time.Unix(0, until).UTC()
		}
	}
}

// HoldUntil holds the backend until an end another replica learned from
// its provider (shared through the budget store, routerproxy/budget/holds.go).
// Like Hold it only ever extends, so a replica's own later hold and the
// shared one agree whichever arrives first; an end already past does
// nothing. It reports whether the hold was set or extended.
func (e *Engine) HoldUntil(b *BackendState, reason HoldReason, until time.Time) bool {
	if reason != HoldRateLimited && reason != HoldQuotaExhausted {
		return false
	}
	u := until.UnixNano()
	if u <= e.now().UnixNano() {
		return false
	}
	for {
		cur := b.hold.until.Load()
		if cur >= u {
			return false
		}
		if b.hold.until.CompareAndSwap(cur, u) {
			b.hold.reason.Store(uint32(reason))
			return true
		}
	}
}

// ParseHoldReason is the reason String names (NotHeld for any other).
func ParseHoldReason(s string) HoldReason {
	switch s {
	case "rate_limited":
		return HoldRateLimited
	case "quota_exhausted":
		return HoldQuotaExhausted
	}
	return NotHeld
}

// Held reports why and until when the backend is held now (NotHeld and
// the zero time when it is not).
func (e *Engine) Held(b *BackendState) (HoldReason, time.Time) { return b.held(e.now()) }

func (b *BackendState) held(now time.Time) (HoldReason, time.Time) {
	u := b.hold.until.Load()
	if now.UnixNano() >= u {
		return NotHeld, time.Time{}
	}
	return HoldReason(b.hold.reason.Load()), time.Unix(0, u).UTC()
}

// heldNow reports whether a hold skips the backend at now.
func (b *BackendState) heldNow(now time.Time) bool { return now.UnixNano() < b.hold.until.Load() }

// HeldError is the routing error of a request whose route has no
// eligible backend because of quota holds: the earliest hold ends at
// Until, when a retry may be served. It wraps what the route would have
// answered without the holds (ErrNoRoute or ErrFailClosed).
type HeldError struct {
	Until time.Time
	// Backends are the held candidates, with their reasons
	// ("name (rate_limited)"), for the audit.
	Backends []string
	Err      error
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("every eligible backend is held for its provider's quota until at least %s: %s", e.Until.UTC().Format(time.RFC3339), strings.Join(e.Backends, ", "))
}

func (e *HeldError) Unwrap() error { return e.Err }

// heldCandidates records the held backends among bs into h (nil: none
// held yet): the earliest end and their names.
func heldCandidates(h *HeldError, bs []*BackendState, now time.Time) *HeldError {
	for _, b := range bs {
		reason, until := b.held(now)
		if until.IsZero() {
			continue
		}
		if h == nil {
			h = &HeldError{Until: until}
		}
		if until.Before(h.Until) {
			h.Until = until
		}
		name := b.Name() + " (" + reason.String() + ")"
		if !slices.Contains(h.Backends, name) {
			h.Backends = append(h.Backends, name)
		}
	}
	return h
}

// held is the route's routing error when holds are why it has no backend:
// err wrapped in h, or err alone when nothing was held.
func held(h *HeldError, err error) error {
	if h == nil {
		return err
	}
	h.Err = err
	return h
}

// Candidates are the route's backends, in order, the caller's allowlist
// applied.
func (rt *Route) Candidates() []*BackendState { return rt.candidates }

// RetryAfter is how long until the earliest hold of the route's candidates
// ends (0 when none is held): the Retry-After of a request whose every
// attempt was refused by a provider's quota.
func (rt *Route) RetryAfter() time.Duration {
	now := rt.e.now()
	h := heldCandidates(nil, rt.candidates, now)
	if h == nil {
		return 0
	}
	return h.Until.Sub(now)
}

// holdStatus puts the backend's hold on its status entry.
func (e *Engine) holdStatus(b *BackendState, s *proxyapi.BackendStatus) {
	reason, until := e.Held(b)
	switch reason {
	case HoldRateLimited:
		s.RateLimitedUntil = until.UTC()
	case HoldQuotaExhausted:
		s.QuotaExhaustedUntil = until.UTC()
	default:
		return
	}
	if s.Message == "" {
		s.Message = "held: " + reason.String() + " by its provider until " + until.UTC().Format(time.RFC3339)
	}
}
