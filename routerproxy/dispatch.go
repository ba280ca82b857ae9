package routerproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// Dispatch: the failover over the route's backends. Each iteration is one
// attempt (failover.try): the pool hold, the pod, the upstream call, and
// its verdict (verdict.go), whose step hands the request on: to the next
// backend, to relay (relay.go), or to its end.

// dispatch runs the failover and relays the first response a backend
// serves; when none does, the refusal says why.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, adm *admitted, ent *proxyapi.AuditEntry) {
	f := &failover{s: s, w: w, r: r, adm: adm, ent: ent}
	// The last attempt's pool hold is released and its span ended however
	// the handler ends, a relay that aborts it included.
	defer f.endAttempt()
	s.auditHolds(adm.route, ent)
	for att := adm.route.Next(); att != nil; att = adm.route.Next() {
		if f.try(att) {
			return
		}
	}
	f.exhausted()
}

// failover is one request's dispatch: what every attempt hands back to.
type failover struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	adm *admitted
	ent *proxyapi.AuditEntry
	cur *attempt // the attempt in flight, or the last one
	// last is the verdict of the last backend passed over: why it did not
	// serve.
	last verdict
}

// endAttempt ends the current attempt's pool hold and span.
func (f *failover) endAttempt() {
	if f.cur != nil {
		f.cur.release()
		telemetry.EndSpan(f.cur.span)
	}
}

// try is one iteration of the failover: one attempt of att's backend, and
// what its verdict's step does. done: the request was answered (relayed or
// refused) or the client has gone.
func (f *failover) try(att *engine.Attempt) (done bool) {
	s, ent := f.s, f.ent
	ent.Attempts++
	f.endAttempt() // the failed attempt before this one
	a := &attempt{s: s, att: att, b: s.backends[att.Backend.Index]}
	f.cur = a
	ctx := f.r.Context()
	if s.tel != nil {
		ctx, a.span = s.tel.StartAttempt(ctx, f.r.URL.Path, att.Backend.Index, ent.Attempts, false)
	}
	v := a.call(ctx, f.r, f.adm)
	switch v.step {
	case stepNext:
		auditHeldAttempt(ent, v)
		a.discard(v.drain)
		a.finish(v)
		a.release()
		f.last = v
		return false
	case stepEnd:
		ent.Backend = att.Backend.Name()
		if v.retryAfter > 0 {
			retryAfter(f.w, v.retryAfter)
		}
		refuseAs(f.w, ent, v.refusal, v.why, v.told)
		a.finish(v)
		return true
	}
	a.finish(v)
	f.serve(a)
	return true
}

// serve hands the attempt's response to the client: the rule's shadow
// copies, then relay. An upstream that breaks the relayed response is
// blamed, and the client's response aborted.
func (f *failover) serve(a *attempt) {
	s, route := f.s, f.adm.route
	for _, t := range route.ShadowTargets(a.att.Backend) {
		s.mirror(f.r, route, s.backends[t.Index], f.adm.body)
	}
	if call, ok := f.r.Context().Value(mcpCallKey{}).(*mcpCall); ok {
		call.served = a.att.Backend.Config.ModelID
	}
	end, broken := a.relay(f.r.Context(), f.w, f.adm, f.ent)
	end.record(f.ent)
	if broken != "" {
		a.broke(broken)
		a.release()
		// The client must see a broken response, not a clean end: the
		// server core closes the connection mid-body. The deferred audit
		// runs first.
		panic(http.ErrAbortHandler)
	}
	a.release()
}

// exhausted refuses a request no backend served: fail-closed, the last
// backend rate limited by its provider, or every backend failed.
func (f *failover) exhausted() {
	route, lastErr := f.adm.route, f.last.why
	switch {
	case f.last.result == resultRateLimited || f.last.result == resultQuotaExhausted || route.RetryAfter() > 0:
		// Backends are held for their provider's quota (quota.go): a
		// retry after the earliest reset is served, whatever the rule's
		// failClosed says, and whatever failed besides.
		if f.retryServedNow() {
			retryAfter(f.w, 0)
		} else {
			retryAfterHeld(f.w, route)
		}
		refuseAs(f.w, f.ent, refUpstreamRateLimited, lastErr, "every backend of the route failed; the last one is rate limited or out of quota at its provider")
	case route.FailClosed:
		f.s.m.failClosed.WithLabelValues(route.RuleName, f.ent.Classification).Inc()
		refuseAs(f.w, f.ent, refFailClosed, "every backend of failClosed rule "+route.RuleName+" failed: "+lastErr, "no backend of the failClosed rule could serve the request")
	default:
		refuseAs(f.w, f.ent, refAllFailed, lastErr, "every backend of the route failed")
	}
}

// retryServedNow says whether the request, routed again now, would take
// another route that has a backend to try: a rule that is not failClosed
// and whose every candidate is now held falls through to the next rules
// and the default route. The provider's reset is then no reason to wait,
// and Retry-After says so (1 s) instead of sending the client away until
// the reset while the fallthrough would serve it at once.
func (f *failover) retryServedNow() bool {
	route := f.adm.route
	if route.FailClosed || f.adm.req == nil {
		return false
	}
	again, err := f.s.eng.Route(f.adm.req, f.adm.cls)
	return err == nil && again.RuleName != route.RuleName
}

// attempt is one try of one backend in a request's failover. It owns the
// pool hold, the upstream call and the verdict: finish records the verdict
// once (the engine's health report, the attempts and quarantines metrics);
// discard and release give back the upstream response and the hold.
type attempt struct {
	s        *Server
	att      *engine.Attempt
	b        *backendRT
	hold     func()        // ends the pool hold; nil when none is held
	pick     *balance.Pick // the pod of an endpoint backend until it has its verdict
	up       *upstream
	finished bool
	span     trace.Span // the attempt's client span; nil without tracing
}

// discard gives back an upstream response that is not relayed, its body
// read (up to 64 KiB, so the connection can be reused) when drain is set.
func (a *attempt) discard(drain bool) {
	if a.up == nil {
		return
	}
	if drain {
		_, _ = io.Copy(io.Discard, io.LimitReader(a.up.resp.Body, 64<<10))
	}
	a.up.resp.Body.Close()
	a.up.cancel(nil)
	a.up = nil
}

// release ends the attempt's pool hold.
func (a *attempt) release() {
	if a.hold != nil {
		a.hold()
		a.hold = nil
	}
}

// call holds the pooled member resident (when the backend is one) and
// sends the request: the attempt's verdict. When a pooled member's dispatch
// fails, another replica may have swapped it out since this replica last
// looked: the pool is re-read, the member made resident again (per
// poolActivation) and the request sent once more; only the second failure
// counts against the backend, and only while the member is still resident.
func (a *attempt) call(ctx context.Context, r *http.Request, adm *admitted) verdict {
	s, bc := a.s, a.att.Backend.Config
	if a.b.base == nil {
		return verdict{step: stepNext, health: engine.Neutral, why: a.att.Backend.Name() + ": no upstream URL"}
	}
	v := a.once(ctx, r, adm)
	if !a.recheck(ctx, v) {
		return v
	}
	a.discard(true)
	a.release()
	s.pools.Refresh(bc)
	s.m.attempts.WithLabelValues(a.att.Backend.Name(), "pool_recheck").Inc()
	v = a.once(ctx, r, adm)
	if !a.recheck(ctx, v) {
		return v
	}
	// Failed again: a health failure only if the member is still resident.
	s.pools.Refresh(bc)
	if resident, known := s.pools.Resident(bc); known && !resident {
		return v.swapped()
	}
	return v
}

// recheck reports whether v is a pooled member's failure the pool may
// explain (the client still there).
func (a *attempt) recheck(ctx context.Context, v verdict) bool {
	return v.retryable && a.s.pools != nil && a.att.Backend.Config.Pool != nil && ctx.Err() == nil
}

// once is one send of the attempt: the pool hold, the pod, the upstream
// call, and their verdict; the pod has its own at once.
func (a *attempt) once(ctx context.Context, r *http.Request, adm *admitted) verdict {
	s := a.s
	if v, held := a.activate(ctx, adm.route); !held {
		return v
	}
	host, err := a.place(r, adm.body.raw)
	if err != nil {
		v := a.classify(ctx, err)
		v.retryable = false
		return v
	}
	a.up, err = s.send(ctx, a.b, r, adm.body, s.eng.HeaderTimeout(adm.route.Rule, a.att.Backend), false, host)
	v := a.classify(ctx, err)
	a.podVerdict(v)
	if a.span != nil && err == nil {
		telemetry.UpstreamStatus(a.span, a.up.resp.StatusCode)
	}
	return v
}

// activate makes a pooled backend's member resident before it is sent to
// (poolActivation); a.hold ends the hold. When the member is not held, v
// says why: the failover goes on (IfIdle while the pool is busy, or a
// member that cannot load), or the request ends (a Wait hold past
// swapBudget: 503 with Retry-After, never 429; or the client left). No
// verdict on the pool member's health either way.
func (a *attempt) activate(ctx context.Context, route *engine.Route) (v verdict, held bool) {
	s, bc := a.s, a.att.Backend.Config
	var start time.Time
	if a.span != nil && bc.Pool != nil {
		start = s.now()
	}
	if s.pools == nil || bc.Pool == nil {
		if !start.IsZero() {
			telemetry.PoolHeld(a.span, s.now().Sub(start))
		}
		return verdict{}, true
	}
	mode := activation.ModeWait
	if route.Rule != nil && route.Rule.Config.PoolActivation != "" {
		mode = route.Rule.Config.PoolActivation
	}
	release, err := s.pools.Acquire(ctx, bc, mode)
	if !start.IsZero() {
		telemetry.PoolHeld(a.span, s.now().Sub(start))
	}
	if err == nil {
		a.hold = release
		return verdict{}, true
	}
	return a.notHeld(err), false
}

// notHeld is the verdict of a pool hold that failed with err.
func (a *attempt) notHeld(err error) verdict {
	name, bc := a.att.Backend.Name(), a.att.Backend.Config
	var expired *activation.HoldExpired
	var failed *activation.SwapFailed
	switch {
	case errors.Is(err, activation.ErrBusy):
		return verdict{step: stepNext, health: engine.Neutral, result: "pool_busy", skipped: true, why: name + ": not resident in ModelPool " + bc.Pool.Name + " and the pool is busy (IfIdle)"}
	case errors.As(err, &failed):
		return verdict{step: stepNext, health: engine.Neutral, result: "pool_swap_failed", skipped: true, why: err.Error()}
	case errors.As(err, &expired):
		return verdict{step: stepEnd, health: engine.Neutral, result: "pool_hold_expired", refusal: refPoolHoldExpired, retryAfter: expired.RetryAfter,
			why: clip(err.Error(), maxAuditField), told: "model " + bc.ModelID + " is being loaded and was not ready within the pool's swap budget of " + expired.Budget.String() + "; retry"}
	default: // the client went away while held
		return verdict{step: stepEnd, health: engine.Neutral, result: resultCancelled, refusal: refClientCancelled, why: "client went away while held for ModelPool " + bc.Pool.Name}
	}
}
