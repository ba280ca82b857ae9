package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmkube/llmkube-compile/proxy/activation"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/runtime"
)

// dispatch runs the failover loop and streams the chosen response back.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, route *runtime.Route, body reqBody, charge runtime.Settler, ent *proxyapi.AuditEntry) {
	ctx := r.Context()
	var lastErr string
	for {
		att := route.Next()
		if att == nil {
			break
		}
		b := s.backends[att.Backend.Index]
		ent.Attempts++
		if b.base == nil {
			s.eng.Report(att, runtime.Neutral)
			lastErr = att.Backend.Name() + ": no upstream URL"
			continue
		}
		// A pooled member is made resident first. When its dispatch fails,
		// another replica may have swapped it out since this replica last
		// looked: the pool is re-read, the member made resident again (per
		// poolActivation) and the request sent once more; only the second
		// failure counts against the backend.
		var up *upstream
		var err error
		var done func()
		for try := 0; ; try++ {
			up, err = nil, nil
			var ok bool
			var skip string
			done, ok, skip = s.activate(w, ctx, route, att, ent)
			defer done() // idempotent; also runs when relay aborts the handler
			if !ok {
				return
			}
			if skip != "" {
				lastErr = skip
				break
			}
			up, err = s.send(s.withEndpoint(ctx, b, r, body.raw), b, r, body, s.eng.HeaderTimeout(route.Rule, att.Backend), false)
			if try > 0 || s.pools == nil || att.Backend.Config.Pool == nil || ctx.Err() != nil || errors.Is(err, errHeaderTimeout) || (err == nil && up.resp.StatusCode < 500) {
				break
			}
			if err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(up.resp.Body, 64<<10))
				up.resp.Body.Close()
				up.cancel(nil)
			}
			done()
			s.pools.Refresh(att.Backend.Config)
			s.m.attempts.WithLabelValues(att.Backend.Name(), "pool_recheck").Inc()
		}
		if up == nil && err == nil { // skipped
			continue
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				s.eng.Report(att, runtime.Neutral)
				s.m.attempts.WithLabelValues(att.Backend.Name(), "cancelled").Inc()
				ent.Status, ent.Outcome, ent.Backend, ent.Error = 499, proxyapi.OutcomeClientCancelled, att.Backend.Name(), "client went away"
				return
			case errors.Is(err, errHeaderTimeout):
				// A slow answer is not a broken backend: no quarantine.
				s.eng.Report(att, runtime.Neutral)
				s.m.attempts.WithLabelValues(att.Backend.Name(), "header_timeout").Inc()
				lastErr = att.Backend.Name() + ": no response headers within the timeout"
			default:
				s.fail(att, "network_error")
				lastErr = att.Backend.Name() + ": " + err.Error()
			}
			done()
			continue
		}
		if up.resp.StatusCode == http.StatusTooManyRequests && b.st.Config.Kind == proxyapi.KindExternal {
			// A provider's rate limit fails over, without quarantine.
			_, _ = io.Copy(io.Discard, io.LimitReader(up.resp.Body, 64<<10))
			up.resp.Body.Close()
			up.cancel(nil)
			s.eng.Report(att, runtime.Neutral)
			s.m.attempts.WithLabelValues(att.Backend.Name(), "rate_limited").Inc()
			lastErr = att.Backend.Name() + rateLimited
			done()
			continue
		}
		if up.resp.StatusCode >= 500 || up.resp.StatusCode < 200 {
			// A 5xx fails over; so does an upgrade (101) or any 1xx the
			// transport hands back: a POST client cannot be switched to
			// another protocol, and relaying it would hang the client.
			reason := "5xx"
			if up.resp.StatusCode < 200 {
				reason = "bad_status"
			} else {
				_, _ = io.Copy(io.Discard, io.LimitReader(up.resp.Body, 64<<10))
			}
			up.resp.Body.Close()
			up.cancel(nil)
			s.fail(att, reason)
			lastErr = att.Backend.Name() + ": status " + strconv.Itoa(up.resp.StatusCode)
			done()
			continue
		}
		s.eng.Report(att, runtime.Success)
		b.met.attemptOK.Inc()
		for _, t := range route.ShadowTargets(att.Backend) {
			s.mirror(r, route, s.backends[t.Index], body)
		}
		s.relay(ctx, w, att, b, up, route, body.raw, charge, ent)
		done()
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

// activate makes a pooled backend's member resident before it is sent to
// (poolActivation). done ends the attempt's hold on the member. ok is false
// when the request was answered (a Wait hold past swapBudget: 503 with
// Retry-After, never 429; or the client left); skip, when set, is why the
// backend is passed over (IfIdle while the pool is busy, or a member that
// cannot load) and the failover goes on.
func (s *Server) activate(w http.ResponseWriter, ctx context.Context, route *runtime.Route, att *runtime.Attempt, ent *proxyapi.AuditEntry) (done func(), ok bool, skip string) {
	bc := att.Backend.Config
	nothing := func() {}
	if s.pools == nil || bc.Pool == nil {
		return nothing, true, ""
	}
	mode := activation.ModeWait
	if route.Rule != nil && route.Rule.Config.PoolActivation != "" {
		mode = route.Rule.Config.PoolActivation
	}
	release, err := s.pools.Acquire(ctx, bc, mode)
	if err == nil {
		return release, true, ""
	}
	s.eng.Report(att, runtime.Neutral) // never a health verdict on the member
	var expired *activation.HoldExpired
	var failed *activation.SwapFailed
	switch {
	case errors.Is(err, activation.ErrBusy):
		s.m.attempts.WithLabelValues(att.Backend.Name(), "pool_busy").Inc()
		return nothing, true, att.Backend.Name() + ": not resident in ModelPool " + bc.Pool.Name + " and the pool is busy (IfIdle)"
	case errors.As(err, &failed):
		s.m.attempts.WithLabelValues(att.Backend.Name(), "pool_swap_failed").Inc()
		return nothing, true, err.Error()
	case errors.As(err, &expired):
		s.m.attempts.WithLabelValues(att.Backend.Name(), "pool_hold_expired").Inc()
		ent.Backend = att.Backend.Name()
		retryAfter(w, expired.RetryAfter)
		refuseAs(w, ent, refPoolHoldExpired, clip(err.Error(), maxAuditField), "model "+bc.ModelID+" is being loaded and was not ready within the pool's swap budget of "+expired.Budget.String()+"; retry")
		return nothing, false, ""
	default: // the client went away while held
		s.m.attempts.WithLabelValues(att.Backend.Name(), "cancelled").Inc()
		ent.Status, ent.Outcome, ent.Backend, ent.Error = 499, proxyapi.OutcomeClientCancelled, att.Backend.Name(), "client went away while held for ModelPool "+bc.Pool.Name
		return nothing, false, ""
	}
}

func (s *Server) fail(att *runtime.Attempt, reason string) {
	if s.isEndpoint(att.Backend) { // the pod carries the failure (endpoint.go)
		s.eng.Report(att, runtime.Neutral)
	} else {
		s.eng.Report(att, runtime.Failure)
	}
	s.m.attempts.WithLabelValues(att.Backend.Name(), reason).Inc()
	s.m.quarantines.WithLabelValues(att.Backend.Name(), reason).Inc()
}
