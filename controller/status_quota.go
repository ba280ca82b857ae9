package controller

import (
	"strings"
	"time"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// heldNote is what BackendsReady adds for the backends the plane skips for
// their provider's quota (docs/upstream-quota.md): "; held by their
// provider's quota: a rate limited until <RFC 3339>, b quota exhausted
// until <RFC 3339>", in the router's backend order; "" when none is held.
// A held backend is not unhealthy: it serves again at the time given.
func heldNote(r *ir.Router, health map[string]targets.BackendHealth) string {
	var held []string
	for i := range r.Backends {
		h, ok := health[r.Backends[i].Name]
		switch {
		case !ok:
		case !h.QuotaExhaustedUntil.IsZero():
			held = append(held, r.Backends[i].Name+" quota exhausted until "+h.QuotaExhaustedUntil.UTC().Format(time.RFC3339))
		case !h.RateLimitedUntil.IsZero():
			held = append(held, r.Backends[i].Name+" rate limited until "+h.RateLimitedUntil.UTC().Format(time.RFC3339))
		}
	}
	if len(held) == 0 {
		return ""
	}
	return "; held by their provider's quota: " + strings.Join(held, ", ")
}
