package routerproxy

// Upstream quota holds shared across replicas: with a shared budget store
// (budget.Holds), a hold this replica learns from its provider is
// published, and the holds the other replicas publish are applied to this
// replica's engine as they arrive, so the request path reads only memory.
// docs/upstream-quota.md.

import (
	"context"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

// HoldSharer shares upstream quota holds with the other replicas
// (budget.Holds, on the budget store).
type HoldSharer interface {
	// Publish shares a hold this replica learned.
	Publish(ctx context.Context, h budget.SharedHold) error
	// Run calls apply with every hold shared (its own too), until ctx ends.
	Run(ctx context.Context, retry time.Duration, apply func(budget.SharedHold))
}

// shareHoldsRetry is how often a lost subscription is tried again.
const shareHoldsRetry = time.Second

// shareHold publishes a hold this replica just set, off the request path:
// the store being down leaves it local (holds are an optimisation).
func (s *Server) shareHold(b *engine.BackendState, reason engine.HoldReason, until time.Time) {
	if s.holds == nil {
		return
	}
	h := budget.SharedHold{Backend: b.Name(), Reason: reason.String(), UntilMS: until.UnixMilli()}
	go func() {
		if err := s.holds.Publish(context.Background(), h); err != nil {
			s.log.Debug("quota hold not shared; it stays on this replica", "backend", h.Backend, "error", err.Error())
		}
	}()
}

// applySharedHold holds a backend another replica's provider refused: an
// external backend of this router only, never shortening a hold.
func (s *Server) applySharedHold(h budget.SharedHold) {
	b := s.eng.Backend(h.Backend)
	if b == nil || b.Config.Kind != proxyapi.KindExternal {
		return
	}
	reason := engine.ParseHoldReason(h.Reason)
	if reason == engine.NotHeld {
		return
	}
	if s.eng.HoldUntil(b, reason, h.Until()) {
		s.log.Debug("quota hold shared by another replica", "backend", h.Backend, "reason", h.Reason, "until", h.Until())
	}
}

// startSharingHolds subscribes to the holds the other replicas share, for
// the server's life (opts.Context).
func (s *Server) startSharingHolds(opts Options) {
	if opts.Holds == nil {
		return
	}
	s.holds = opts.Holds
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	go s.holds.Run(ctx, shareHoldsRetry, s.applySharedHold)
}
