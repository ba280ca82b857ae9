package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/engine"
	"github.com/llmkube/llmkube-compile/engine/balance"
	"github.com/llmkube/llmkube-compile/proxy/activation"
	"github.com/llmkube/llmkube-compile/proxy/telemetry"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// dispatch runs the failover loop and streams the chosen response back.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, adm *admitted, ent *proxyapi.AuditEntry) {
	route, body, charge := adm.route, adm.body, adm.charge
	ctx := r.Context()
	var lastErr string
	var cur *attempt
	// The last attempt's pool hold is released however the handler ends,
	// a relay that aborts it included.
	defer func() {
		if cur != nil {
			cur.release()
			telemetry.EndSpan(cur.span)
		}
	}()
	for {
		att := route.Next()
		if att == nil {
			break
		}
		ent.Attempts++
		if cur != nil {
			telemetry.EndSpan(cur.span) // the failed attempt before this one
		}
		a := &attempt{s: s, att: att, b: s.backends[att.Backend.Index]}
		cur = a
		actx := ctx
		if s.tel != nil {
			actx, a.span = s.tel.StartAttempt(ctx, r.URL.Path, att.Backend.Index, ent.Attempts, false)
		}
		if a.b.base == nil {
			a.finish(neutral(""))
			lastErr = att.Backend.Name() + ": no upstream URL"
			continue
		}
		skip, answered, err := a.call(actx, w, r, route, body, ent)
		switch {
		case answered:
			return
		case skip != "":
			lastErr = skip
			telemetry.AttemptResult(a.span, telemetry.ResultSkipped)
			a.release()
			continue
		case err != nil && ctx.Err() != nil:
			a.finish(neutral("cancelled"))
			ent.Status, ent.Outcome, ent.Backend, ent.Error = 499, proxyapi.OutcomeClientCancelled, att.Backend.Name(), "client went away"
			return
		case errors.Is(err, errHeaderTimeout):
			// A slow answer is not a broken backend: no quarantine.
			a.finish(neutral("header_timeout"))
			lastErr = att.Backend.Name() + ": no response headers within the timeout"
			a.release()
			continue
		case err != nil:
			a.finish(failure("network_error"))
			lastErr = att.Backend.Name() + ": " + err.Error()
			a.release()
			continue
		}
		switch code := a.up.resp.StatusCode; {
		case code == http.StatusTooManyRequests && a.b.st.Config.Kind == proxyapi.KindExternal:
			// A provider's rate limit fails over, without quarantine.
			a.discard(true)
			a.finish(neutral("rate_limited"))
			lastErr = att.Backend.Name() + rateLimited
			a.release()
			continue
		case code >= 500 || code < 200:
			// A 5xx fails over; so does an upgrade (101) or any 1xx the
			// transport hands back: a POST client cannot be switched to
			// another protocol, and relaying it would hang the client.
			reason := "5xx"
			if code < 200 {
				reason = "bad_status"
			}
			a.discard(code >= 500)
			a.finish(failure(reason))
			lastErr = att.Backend.Name() + ": status " + strconv.Itoa(code)
			a.release()
			continue
		}
		a.finish(success)
		for _, t := range route.ShadowTargets(att.Backend) {
			s.mirror(r, route, s.backends[t.Index], body)
		}
		if broken := s.relay(ctx, w, att, a.b, a.up, route, body.raw, charge, ent); broken != "" {
			a.broke(broken)
			a.release()
			// The client must see a broken response, not a clean end: the
			// server core closes the connection mid-body. The deferred
			// audit runs first.
			panic(http.ErrAbortHandler)
		}
		a.release()
		return
	}
	// Nothing answered.
	if route.FailClosed {
		s.m.failClosed.WithLabelValues(route.RuleName, ent.Classification).Inc()
		refuseAs(w, ent, refFailClosed, "every backend of failClosed rule "+route.RuleName+" failed: "+lastErr, "no backend of the failClosed rule could serve the request")
		return
	}
	if strings.HasSuffix(lastErr, rateLimited) {
		refuseAs(w, ent, refUpstreamRateLimited, lastErr, "every backend of the route failed; the last one is rate limited by its provider")
		return
	}
	refuseAs(w, ent, refAllFailed, lastErr, "every backend of the route failed")
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

// verdict is what an attempt's outcome says about its backend.
type verdict struct {
	health engine.Result
	// result labels llmkube_router_upstream_attempts_total; empty: not
	// counted (a success is counted by the backend's own counter).
	result string
	// failed also counts in llmkube_router_quarantines_total.
	failed bool
}

var success = verdict{health: engine.Success}

func neutral(result string) verdict { return verdict{health: engine.Neutral, result: result} }
func failure(result string) verdict {
	return verdict{health: engine.Failure, result: result, failed: true}
}

// finish records the attempt's verdict, once. A failure of an endpoint
// backend is its pod's (endpoint.go), not the backend's.
func (a *attempt) finish(v verdict) {
	if a.finished {
		return
	}
	a.finished = true
	s, name := a.s, a.att.Backend.Name()
	health := v.health
	if health == engine.Failure && s.isEndpoint(a.att.Backend) {
		health = engine.Neutral
	}
	s.eng.Report(a.att, health)
	if a.span != nil {
		a.traceVerdict(v)
	}
	switch {
	case v.health == engine.Success:
		a.b.met.attemptOK.Inc()
	case v.result != "":
		s.m.attempts.WithLabelValues(name, v.result).Inc()
	}
	if v.failed {
		s.m.quarantines.WithLabelValues(name, v.result).Inc()
	}
}

// traceVerdict puts the verdict on the attempt's span.
func (a *attempt) traceVerdict(v verdict) {
	result := v.result
	switch {
	case v.health == engine.Success:
		result = telemetry.ResultOK
	case result == "":
		result = "no_url"
	}
	telemetry.AttemptResult(a.span, result)
}

// broke records that the upstream broke a relayed response (a silent or
// cut stream): the backend is quarantined, unless its pods carry the
// health (the pod's verdict is podBody's).
func (a *attempt) broke(reason string) {
	a.s.quarantine(a.att.Backend)
	a.s.m.quarantines.WithLabelValues(a.att.Backend.Name(), reason).Inc()
	telemetry.AttemptResult(a.span, reason)
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
// sends the request. When a pooled member's dispatch fails, another
// replica may have swapped it out since this replica last looked: the pool
// is re-read, the member made resident again (per poolActivation) and the
// request sent once more; only the second failure counts against the
// backend, and only while the member is still resident. skip is why the
// backend is passed over; answered means the
// request was answered (its verdict is recorded).
func (a *attempt) call(ctx context.Context, w http.ResponseWriter, r *http.Request, route *engine.Route, body reqBody, ent *proxyapi.AuditEntry) (skip string, answered bool, err error) {
	s, b, bc := a.s, a.b, a.att.Backend.Config
	for try := 0; ; try++ {
		var result string
		held := time.Time{}
		if a.span != nil && bc.Pool != nil {
			held = s.now()
		}
		a.hold, skip, result, answered = s.activate(w, ctx, route, a.att, ent)
		if !held.IsZero() {
			telemetry.PoolHeld(a.span, s.now().Sub(held))
		}
		if result != "" {
			a.finish(neutral(result)) // never a health verdict on the member
		}
		if answered || skip != "" {
			return skip, answered, nil
		}
		host, err := a.place(r, body.raw)
		if err != nil {
			return "", false, err
		}
		a.up, err = s.send(ctx, b, r, body, s.eng.HeaderTimeout(route.Rule, a.att.Backend), false, host)
		a.podAnswered(ctx, err)
		if a.span != nil && err == nil {
			telemetry.UpstreamStatus(a.span, a.up.resp.StatusCode)
		}
		if s.pools == nil || bc.Pool == nil || ctx.Err() != nil || errors.Is(err, errHeaderTimeout) || (err == nil && a.up.resp.StatusCode < 500) {
			return "", false, err
		}
		if try > 0 {
			// Failed again: a health failure only if the member is still
			// resident. Swapped out once more (replicas alternating
			// models on a busy node), it is not broken, and quarantining
			// it would leave its requests unroutable, with nothing to
			// activate it again, for the whole quarantine.
			s.pools.Refresh(bc)
			if resident, known := s.pools.Resident(bc); known && !resident {
				a.finish(neutral("pool_swapped"))
			}
			return "", false, err
		}
		a.discard(true)
		a.release()
		s.pools.Refresh(bc)
		s.m.attempts.WithLabelValues(a.att.Backend.Name(), "pool_recheck").Inc()
	}
}

// activate makes a pooled backend's member resident before it is sent to
// (poolActivation). hold ends the hold on the member (nil: none). When the
// member is not held, result is the attempts metric's label, and either
// answered is set (a Wait hold past swapBudget: 503 with Retry-After,
// never 429; or the client left) or skip says why the backend is passed
// over (IfIdle while the pool is busy, or a member that cannot load) and
// the failover goes on.
func (s *Server) activate(w http.ResponseWriter, ctx context.Context, route *engine.Route, att *engine.Attempt, ent *proxyapi.AuditEntry) (hold func(), skip, result string, answered bool) {
	bc := att.Backend.Config
	if s.pools == nil || bc.Pool == nil {
		return nil, "", "", false
	}
	mode := activation.ModeWait
	if route.Rule != nil && route.Rule.Config.PoolActivation != "" {
		mode = route.Rule.Config.PoolActivation
	}
	release, err := s.pools.Acquire(ctx, bc, mode)
	if err == nil {
		return release, "", "", false
	}
	var expired *activation.HoldExpired
	var failed *activation.SwapFailed
	switch {
	case errors.Is(err, activation.ErrBusy):
		return nil, att.Backend.Name() + ": not resident in ModelPool " + bc.Pool.Name + " and the pool is busy (IfIdle)", "pool_busy", false
	case errors.As(err, &failed):
		return nil, err.Error(), "pool_swap_failed", false
	case errors.As(err, &expired):
		ent.Backend = att.Backend.Name()
		retryAfter(w, expired.RetryAfter)
		refuseAs(w, ent, refPoolHoldExpired, clip(err.Error(), maxAuditField), "model "+bc.ModelID+" is being loaded and was not ready within the pool's swap budget of "+expired.Budget.String()+"; retry")
		return nil, "", "pool_hold_expired", true
	default: // the client went away while held
		ent.Status, ent.Outcome, ent.Backend, ent.Error = 499, proxyapi.OutcomeClientCancelled, att.Backend.Name(), "client went away while held for ModelPool "+bc.Pool.Name
		return nil, "", "cancelled", true
	}
}
