package routerproxy

// Upstream quota awareness: an external backend's answer that says its
// provider's quota refused the request (providers.ReadLimit: a 429, or a
// 4xx whose error names a spent quota or a throttle) holds the backend in
// the engine (routerproxy/engine/hold.go) until the provider's reset, or for the
// quota-exhausted hold, and the request fails over. A route with nothing
// but held backends is answered 429 with the earliest end as Retry-After,
// nothing sent. docs/upstream-quota.md.

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers"
)

// resultQuotaExhausted labels an attempt whose provider said its quota is
// spent (resultRateLimited, a transient rate limit).
const resultQuotaExhausted = "quota_exhausted"

// maxLimitBody is how much of an error answer's body is read for its
// quota signal (an error body is small; the rest is relayed untouched).
const maxLimitBody = 64 << 10

// quotaVerdict is the verdict of an external backend's 4xx answer that
// carries a quota signal, after holding the backend; ok false when the
// answer carries none (it is relayed, its body as it came).
func (a *attempt) quotaVerdict(name string) (verdict, bool) {
	resp := a.up.resp
	// A read error leaves what was read: the rest of the body, relayed,
	// meets the same error.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxLimitBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
	lim := providers.ReadLimit(resp.StatusCode, resp.Header, body, a.s.now())
	reason, result := engine.HoldRateLimited, resultRateLimited
	switch lim.Kind {
	case providers.NotLimited:
		return verdict{}, false
	case providers.QuotaExhausted:
		reason, result = engine.HoldQuotaExhausted, resultQuotaExhausted
	}
	until := a.s.eng.Hold(a.att.Backend, reason, lim.Reset)
	a.s.shareHold(a.att.Backend, reason, until)
	a.s.m.holds.WithLabelValues(name, result).Inc()
	why := name + ": status " + strconv.Itoa(resp.StatusCode) + " (" + result + " by its provider; held until " + until.Format(time.RFC3339)
	if lim.Signal != "" {
		why += ", from " + lim.Signal
	}
	why += ")"
	// A provider's quota fails over, without quarantine.
	return verdict{step: stepNext, health: engine.Neutral, result: result, podByBody: true, drain: true, why: why}, true
}

// auditHolds records on the audit entry the route's candidates a quota
// hold skips now, with why and until when.
func (s *Server) auditHolds(route *engine.Route, ent *proxyapi.AuditEntry) {
	for _, b := range route.Candidates() {
		if reason, until := s.eng.Held(b); reason != engine.NotHeld {
			ent.Held = append(ent.Held, b.Name()+": "+reason.String()+" until "+until.Format(time.RFC3339))
		}
	}
}

// auditHeldAttempt records on the audit entry an attempt its provider
// refused for its quota (the backend is held from now on).
func auditHeldAttempt(ent *proxyapi.AuditEntry, v verdict) {
	if v.result == resultRateLimited || v.result == resultQuotaExhausted {
		ent.Held = append(ent.Held, clip(v.why, maxAuditField))
	}
}

// refuseHeld answers a request whose route has nothing but held backends:
// 429, Retry-After the earliest end of a hold, nothing sent. ok false when
// err is no HeldError.
func (s *Server) refuseHeld(w http.ResponseWriter, err error, ent *proxyapi.AuditEntry) bool {
	var h *engine.HeldError
	if !errors.As(err, &h) {
		return false
	}
	ent.Held = append(ent.Held, h.Backends...)
	secs := retryAfter(w, h.Until.Sub(s.now()))
	refuseAs(w, ent, refUpstreamHeld, clip(h.Error(), maxAuditField),
		"every backend that can serve this request is rate limited or out of quota at its provider; retry after "+secs+"s")
	return true
}

// retryAfterHeld sets Retry-After to the earliest end of a hold among the
// route's candidates, when one is held.
func retryAfterHeld(w http.ResponseWriter, route *engine.Route) {
	if d := route.RetryAfter(); d > 0 {
		retryAfter(w, d)
	}
}

// refreshHeld sets an external backend's held-seconds gauges, for each
// reason (0 when not held for it).
func (s *Server) refreshHeld(b *engine.BackendState) {
	if b.Config.Kind != proxyapi.KindExternal {
		return
	}
	reason, until := s.eng.Held(b)
	for _, r := range []engine.HoldReason{engine.HoldRateLimited, engine.HoldQuotaExhausted} {
		secs := 0.0
		if r == reason {
			secs = max(until.Sub(s.now()).Seconds(), 0)
		}
		s.m.held.WithLabelValues(b.Name(), r.String()).Set(secs)
	}
}
