// Package budget is the router-proxy's policy.budgets and policy.rateLimits,
// in one place: the Keeper a request is admitted and charged through, its
// in-memory, per-replica counters (Memory, MemoryKeeper) and the Redis store
// every replica shares (Store, store.go); the rate limits' Limiter, in
// memory (RateMemory, ratelimit.go) and on the same Store (ratestore.go).
// Money and prices are the engine's (package engine).
package budget

import (
	"context"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Keeper admits requests against policy.budgets and reports their use.
type Keeper interface {
	// Admit reserves estTokens for a request routed by rule with headers h.
	// A nil error with a nil Exhausted admits it; the Settler, possibly nil,
	// settles it with the usage the response reports.
	Admit(ctx context.Context, rule string, h map[string][]string, estTokens int64) (Settler, *Exhausted, error)
	Status() []proxyapi.BudgetStatus
}

// MemoryKeeper keeps the counters in memory, per replica.
type MemoryKeeper struct{ M *Memory }

func (m MemoryKeeper) Admit(_ context.Context, rule string, h map[string][]string, _ int64) (Settler, *Exhausted, error) {
	ch, ex := m.M.Admit(rule, h)
	if ch == nil {
		return nil, ex, nil // a nil *Charge must not become a non-nil Settler
	}
	return ch, ex, nil
}

func (m MemoryKeeper) Status() []proxyapi.BudgetStatus { return m.M.Status() }
