package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/llmkube/llmkube-compile/proxy/activation"
	"github.com/llmkube/llmkube-compile/proxy/auth"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/runtime"
)

var (
	errHeaderTimeout = errors.New("upstream response header timeout")
	errStreamIdle    = errors.New("upstream stream idle timeout")
)

// rateLimited ends lastErr when an external provider answered 429.
const rateLimited = ": status 429 (rate limited)"

// hop-by-hop and proxy-owned request headers never forwarded upstream.
var dropRequest = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true, "Accept-Encoding": true,
}

// externalAllow is every client header an external (cloud) backend
// receives; the proxy adds the provider's own credential. Everything else
// stays inside the cluster: credentials (Authorization, Cookie, API keys,
// X-Amz-Security-Token), internal routing and identity (team,
// classification, task complexity, caller), X-Forwarded-For and other
// tenants' billing headers (OpenAI-Organization, Ocp-Apim-Subscription-Key).
var externalAllow = map[string]bool{
	"Content-Type": true, "Accept": true, "Accept-Language": true, "User-Agent": true,
	"Openai-Beta": true, "X-Request-Id": true, "Idempotency-Key": true,
}

// connectionTokens are the headers a Connection header names: hop-by-hop
// by RFC 9110 §7.6.1, never forwarded in either direction.
//
// Only the headers h holds are returned (they are what the caller filters
// out of h), so the usual "keep-alive" and "close" cost no map.
func connectionTokens(h http.Header) map[string]bool {
	var out map[string]bool
	for _, v := range h["Connection"] {
		for tok := range strings.SplitSeq(v, ",") {
			tok = strings.TrimSpace(tok)
			if tok == "" || strings.EqualFold(tok, "keep-alive") && h["Keep-Alive"] == nil || strings.EqualFold(tok, "close") && h["Close"] == nil {
				continue
			}
			key := http.CanonicalHeaderKey(tok)
			if _, ok := h[key]; !ok {
				continue
			}
			if out == nil {
				out = map[string]bool{}
			}
			out[key] = true
		}
	}
	return out
}

var dropResponse = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// maxCapture bounds how much of a non-streamed response is kept to read usage.
const maxCapture = 4 << 20

func (s *Server) inference(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.m.inflight.Inc()
	defer s.m.inflight.Dec()

	start := s.now()
	ent := &proxyapi.AuditEntry{Time: start.UTC(), Router: s.cfg.Router.Name, Namespace: s.cfg.Router.Namespace, Path: r.URL.Path}
	if s.caller != "" {
		if v := r.Header.Get(s.caller); v != "" {
			ent.Caller = runtime.SanitizeCaller(v)
		}
	}
	if s.cfg.Policy.Audit.LogClientAddress {
		ent.Client = s.clientAddr(r)
	}
	// Client-chosen values are cut before they reach an audit line or a
	// metric label.
	req := &runtime.Request{Header: r.Header}
	ent.Classification = runtime.SanitizeCaller(strings.Join(s.eng.RequestClasses(req), ","))
	ent.TaskComplexity = runtime.SanitizeCaller(s.eng.TaskComplexity(r.Header))
	defer func() {
		ent.LatencyMs = float64(s.now().Sub(start).Microseconds()) / 1000
		if ent.CostUSD == "" {
			ent.CostUSD = "0"
		}
		s.m.observeServed(servedKey{rule: ent.Rule, backend: ent.Backend, outcome: ent.Outcome, status: ent.Status}, ent.LatencyMs/1000)
		if s.audit != nil {
			s.audit.Write(ent)
		}
	}()

	// policy.auth first: an unauthenticated request is refused before its
	// body is read, and nothing it sent reaches routing or a budget.
	var team string
	if s.auth != nil {
		var aerr *auth.Error
		if team, aerr = s.auth.Authenticate(r); aerr != nil {
			ent.Status, ent.Outcome, ent.Error = aerr.Status, proxyapi.OutcomeUnauthorized, aerr.Msg
			refuse(w, aerr) // the deferred audit records it
			return
		}
		ent.Team = runtime.SanitizeCaller(team)
	}

	// Body: bounded, then the few fields routing needs.
	body, release, err := s.readBody(w, r)
	defer release()
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			ent.Status, ent.Outcome, ent.Error = http.StatusRequestEntityTooLarge, proxyapi.OutcomeTooLarge, "request body over "+strconv.FormatInt(s.maxBody, 10)+" bytes"
			writeError(w, ent.Status, "invalid_request_error", "request_too_large", ent.Error)
		case errors.Is(err, errBodyBusy):
			ent.Status, ent.Outcome, ent.Error = http.StatusServiceUnavailable, proxyapi.OutcomeBodyBusy, err.Error()
			w.Header().Set("Retry-After", "1")
			writeError(w, ent.Status, "server_error", "body_memory_busy", ent.Error)
		case errors.As(err, &ne) && ne.Timeout():
			ent.Status, ent.Outcome, ent.Error = http.StatusRequestTimeout, proxyapi.OutcomeBadRequest, "request body not received within "+s.bodyTimeout.String()
			w.Header().Set("Connection", "close")
			writeError(w, ent.Status, "invalid_request_error", "body_timeout", ent.Error)
		case r.Context().Err() != nil:
			ent.Status, ent.Outcome, ent.Error = 499, proxyapi.OutcomeClientCancelled, "reading request body: "+err.Error()
		default:
			// A truncated or malformed (chunked) body: the client is still
			// there to be told, and the audit says what it was told.
			ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "reading request body: "+err.Error()
			w.Header().Set("Connection", "close")
			writeError(w, ent.Status, "invalid_request_error", "invalid_body", ent.Error)
		}
		return
	}
	if !json.Valid(body) {
		ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "request body is not valid JSON"
		writeError(w, ent.Status, "invalid_request_error", "invalid_json", ent.Error)
		return
	}
	fields, err := scanBody(body)
	if err != nil {
		ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "request body: "+err.Error()
		writeError(w, ent.Status, "invalid_request_error", "invalid_json", ent.Error)
		return
	}
	model, isString := stringValue(body, fields.model)
	stream, isBool := boolValue(body, fields.stream)
	switch {
	case fields.model.ok() && !isString:
		ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "model must be a string"
		writeError(w, ent.Status, "invalid_request_error", "invalid_json", ent.Error)
		return
	case !isBool:
		ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "stream must be a boolean"
		writeError(w, ent.Status, "invalid_request_error", "invalid_json", ent.Error)
		return
	case model == "":
		ent.Status, ent.Outcome, ent.Error = http.StatusBadRequest, proxyapi.OutcomeBadRequest, "the request has no model"
		writeError(w, ent.Status, "invalid_request_error", "model_required", "you must provide a model parameter")
		return
	}
	ent.Model = clip(model, maxAuditField)
	ent.Stream = stream
	if !s.auth.Allowed(team, model) {
		aerr := &auth.Error{Status: http.StatusForbidden, Code: "model_not_allowed", Msg: "team " + strconv.Quote(team) + " may not use model " + strconv.Quote(model)}
		ent.Status, ent.Outcome, ent.Error = aerr.Status, proxyapi.OutcomeForbidden, clip(aerr.Msg, maxAuditField)
		refuse(w, aerr) // the deferred audit records it
		return
	}
	if s.cfg.Policy.Audit.IncludeRequestBody {
		ent.RequestBody = json.RawMessage(body)
	}

	req.Model = model
	route, err := s.eng.Route(req)
	ent.Rule = route.RuleName
	if err != nil {
		ent.Status = http.StatusServiceUnavailable
		if errors.Is(err, runtime.ErrFailClosed) {
			ent.Outcome, ent.Error = proxyapi.OutcomeFailClosed, "rule "+route.RuleName+" is failClosed and none of its backends is eligible"
			s.m.failClosed.WithLabelValues(route.RuleName, ent.Classification).Inc()
			writeError(w, ent.Status, "server_error", "fail_closed", ent.Error)
			return
		}
		ent.Outcome, ent.Error = proxyapi.OutcomeNoRoute, err.Error()
		writeError(w, ent.Status, "server_error", "no_route", "no eligible backend: no rule matched with an eligible backend and the default route has none")
		return
	}
	if route.Promoted {
		ent.Promoted = true
		s.m.sloPromoted.WithLabelValues(route.RuleName).Inc()
	}

	// The reservation is the prompt's estimate; settlement replaces it with
	// the usage the response reports.
	charge, ex, err := s.budgets.Admit(r.Context(), route.RuleName, r.Header, runtime.EstimateUsage(int64(len(body)), 0).Tokens())
	if err != nil {
		ent.Status, ent.Outcome, ent.Error = http.StatusServiceUnavailable, proxyapi.OutcomeBudgetStoreDown, err.Error()
		w.Header().Set("Retry-After", "1")
		writeError(w, ent.Status, "server_error", "budget_store_unavailable", "budgets cannot be checked: "+err.Error())
		return
	}
	if ex != nil {
		ent.Status, ent.Outcome, ent.Budget = http.StatusTooManyRequests, proxyapi.OutcomeBudgetExceeded, ex.Budget
		ent.Error = "budget " + ex.Budget + " is exhausted"
		s.m.budgetReject.WithLabelValues(ex.Budget).Inc()
		secs := retryAfter(w, ex.RetryAfter)
		writeError(w, ent.Status, "rate_limit_error", "budget_exceeded", "budget "+ex.Budget+" is exhausted for its window; retry after "+secs+"s")
		return
	}

	// Streams ask the upstream for usage so budgets and audit see real numbers.
	if stream && !includeUsage(body, fields) {
		body = withIncludeUsage(body, fields)
		// The splice moved the members after it: find the model again, once.
		fields, _ = scanBody(body)
	}

	s.dispatch(w, r, route, reqBody{raw: body, model: fields.model}, charge, ent)
}

var errBodyBusy = errors.New("the proxy holds its request-body memory budget; retry")

// bodyReservation is a request's share of a body budget.
type bodyReservation struct {
	sem *semaphore.Weighted
	n   int64
}

func (r *bodyReservation) release() {
	if r.n > 0 {
		r.sem.Release(r.n)
		r.n = 0
	}
}

// reserve takes n bytes of the budget that fits n, all at once, waiting for
// them at most until deadline (the body's own).
func (s *Server) reserve(ctx context.Context, deadline time.Time, r *bodyReservation, n int64) error {
	r.release()
	sem := s.smallMem
	if n > SmallBodyBytes {
		sem = s.bodyMem
	}
	// The memory is usually free: a context and its timer only to wait.
	if !sem.TryAcquire(n) {
		wait, cancel := context.WithDeadline(ctx, deadline)
		err := sem.Acquire(wait, n)
		cancel()
		if err != nil {
			return errBodyBusy
		}
	}
	r.sem, r.n = sem, n
	return nil
}

// readBody reads the body under the limit, the body read timeout and the
// body budgets. Memory is allocated as bytes arrive, never from a declared
// Content-Length. release gives the budget back (the caller defers it: the
// body lives until the response ends).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	limit := s.maxBody
	res := &bodyReservation{}
	if r.ContentLength > limit {
		return nil, res.release, &http.MaxBytesError{Limit: limit}
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(s.bodyTimeout)
	_ = rc.SetReadDeadline(deadline)
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	ctx := r.Context()

	want := int64(SmallBodyBytes)
	if r.ContentLength >= 0 {
		want = r.ContentLength + 1 // +1 sees the EOF
	}
	if err := s.reserve(ctx, deadline, res, want); err != nil {
		return nil, res.release, err
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	buf := make([]byte, 0, min(want, 64<<10))
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= res.n {
				// A chunked body outgrew its first reservation: take the limit.
				if err := s.reserve(ctx, deadline, res, limit+1); err != nil {
					return nil, res.release, err
				}
			}
			buf = slices.Grow(buf, int(min(int64(cap(buf)), res.n-int64(cap(buf)))))
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, res.release, nil
		}
		if err != nil {
			return nil, res.release, err
		}
	}
}

// upstream is one attempt's live response.
type upstream struct {
	resp    *http.Response
	cancel  context.CancelCauseFunc
	ctx     context.Context
	started time.Time
	// guard is the attempt's one timer: the header timeout while send
	// waits, then the idle guard while the body is read (one timer per
	// attempt, not two).
	guard  *time.Timer
	idling atomic.Bool
}

func (u *upstream) expire() {
	if u.idling.Load() {
		u.cancel(errStreamIdle)
	} else {
		u.cancel(errHeaderTimeout)
	}
}

// idleGuard re-arms the attempt's timer to cancel it after idle of
// upstream silence; nil when idle is 0 (no guard). The caller stops it.
func (u *upstream) idleGuard(idle time.Duration) *time.Timer {
	if idle <= 0 {
		return nil
	}
	u.idling.Store(true)
	u.guard.Reset(idle)
	return u.guard
}

// send dispatches one attempt and waits for response headers at most hto.
func (s *Server) send(parent context.Context, b *backendRT, r *http.Request, rb reqBody, hto time.Duration, shadow bool) (*upstream, error) {
	body := rb.raw
	if b.model != "" {
		body = rb.withModel(b.model)
	}
	ctx, cancel := context.WithCancelCause(parent)
	req, err := b.newRequest(ctx, r.URL, body)
	if err != nil {
		cancel(err)
		return nil, err
	}
	external := b.st.Config.Kind == proxyapi.KindExternal
	hop := connectionTokens(r.Header)
	if s.auth != nil {
		// The verified team is the proxy's header, not the client's: a
		// Connection header naming it must not strip it.
		delete(hop, s.auth.Header)
	}
	for k, v := range r.Header {
		if dropRequest[k] || hop[k] || (external && !externalAllow[k]) {
			continue
		}
		req.Header[k] = v
	}
	if b.bearer != "" {
		req.Header.Set("Authorization", b.bearer)
	}
	if shadow {
		req.Header.Set(ShadowHeader, "true")
	}
	req.ContentLength = int64(len(body))
	up := &upstream{cancel: cancel, ctx: ctx, started: s.now()}
	up.guard = time.AfterFunc(hto, up.expire)
	resp, err := b.roundTripper(s.rt).RoundTrip(req)
	if !up.guard.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		cancel(errHeaderTimeout)
		return nil, errHeaderTimeout
	}
	if err != nil {
		if c := context.Cause(ctx); c != nil && c != context.Canceled {
			err = c
		}
		cancel(err)
		return nil, err
	}
	up.resp = resp
	return up, nil
}

// newRequest is the upstream POST for a client request's path and query
// with body, as http.NewRequestWithContext builds it. The upstream URL of a
// query-less path is parsed once per backend and copied per request
// (make bench-proxy measured the parse at about 1 µs per request); the
// paths are the few the handler serves, so the cache stays small.
func (b *backendRT) newRequest(ctx context.Context, in *url.URL, body []byte) (*http.Request, error) {
	if in.RawQuery != "" || in.RawPath != "" {
		return http.NewRequestWithContext(ctx, http.MethodPost, joinURL(b.base, in.Path, in.RawQuery), bytes.NewReader(body))
	}
	var u *url.URL
	if v, ok := b.urls.Load(in.Path); ok {
		u = v.(*url.URL)
	} else {
		parsed, err := url.Parse(joinURL(b.base, in.Path, ""))
		if err != nil {
			return nil, err
		}
		b.urls.Store(in.Path, parsed)
		u = parsed
	}
	uc := *u
	req := (&http.Request{
		Method: http.MethodPost, URL: &uc, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header), Host: strings.TrimSuffix(uc.Host, ":"), ContentLength: int64(len(body)),
	}).WithContext(ctx)
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		return req, nil
	}
	req.Body = newBodyReader(body)
	req.GetBody = func() (io.ReadCloser, error) { return newBodyReader(body), nil }
	return req, nil
}

// bodyReader is a request body over bytes: one allocation where
// io.NopCloser(bytes.NewReader(b)) makes two.
type bodyReader struct{ bytes.Reader }

func newBodyReader(b []byte) *bodyReader {
	r := &bodyReader{}
	r.Reset(b)
	return r
}

func (*bodyReader) Close() error { return nil }

func joinURL(base interface {
	String() string
}, path, query string) string {
	b := strings.TrimSuffix(base.String(), "/")
	if strings.HasSuffix(b, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = path[3:]
	}
	if query != "" {
		return b + path + "?" + query
	}
	return b + path
}

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
		ent.Status, ent.Outcome, ent.Error = http.StatusServiceUnavailable, proxyapi.OutcomeFailClosed, "every backend of failClosed rule "+route.RuleName+" failed: "+lastErr
		s.m.failClosed.WithLabelValues(route.RuleName, ent.Classification).Inc()
		writeError(w, ent.Status, "server_error", "fail_closed", "no backend of the failClosed rule could serve the request")
		return
	}
	if strings.HasSuffix(lastErr, rateLimited) {
		ent.Status, ent.Outcome, ent.Error = http.StatusTooManyRequests, proxyapi.OutcomeAllFailed, lastErr
		writeError(w, ent.Status, "rate_limit_error", "upstream_rate_limited", "every backend of the route failed; the last one is rate limited by its provider")
		return
	}
	ent.Status, ent.Outcome, ent.Error = http.StatusBadGateway, proxyapi.OutcomeAllFailed, lastErr
	writeError(w, ent.Status, "server_error", "upstream_unavailable", "every backend of the route failed")
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
		ent.Status, ent.Outcome, ent.Backend, ent.Error = http.StatusServiceUnavailable, proxyapi.OutcomePoolHoldExpired, att.Backend.Name(), clip(err.Error(), maxAuditField)
		retryAfter(w, expired.RetryAfter)
		writeError(w, ent.Status, "server_error", "model_pool_swap_timeout", "model "+bc.ModelID+" is being loaded and was not ready within the pool's swap budget of "+expired.Budget.String()+"; retry")
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

// relay copies the committed upstream response to the client. No failover
// happens from here on: bytes may have reached the client.
func (s *Server) relay(clientCtx context.Context, w http.ResponseWriter, att *runtime.Attempt, b *backendRT, up *upstream, route *runtime.Route, reqBody []byte, charge runtime.Settler, ent *proxyapi.AuditEntry) {
	defer up.cancel(nil)
	resp := up.resp
	defer resp.Body.Close()
	name := att.Backend.Name()
	ent.Backend, ent.Tier, ent.Status = name, att.Backend.Config.Tier, resp.StatusCode

	h := w.Header()
	respHop := connectionTokens(resp.Header)
	for k, v := range resp.Header {
		if !dropResponse[k] && !respHop[k] {
			h[k] = v
		}
	}
	// The body is relayed byte for byte, so the upstream's Content-Length
	// (when it sent one) stays true for streams too; without one net/http
	// chunks the response.
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if stream {
		ent.Outcome = proxyapi.OutcomeOKStream
	} else {
		ent.Outcome = proxyapi.OutcomeOK
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if stream && !bodyArrived(resp.Body) {
		// The client sees the stream open before the first token. When body
		// bytes came with the headers they go out in the same write.
		_ = rc.Flush()
	}

	idle := s.eng.StreamIdle()
	idleTimer := up.idleGuard(idle)
	if idleTimer != nil {
		defer idleTimer.Stop()
	}

	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var scan runtime.StreamScanner
	var capture []byte
	var respBytes int64
	var first time.Time
	var readErr, writeErr error
	// Each write to the client has its own deadline, cleared before the
	// connection is reused.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			// The idle guard measures the upstream's silence only: it is
			// stopped while the client takes the bytes (its back-pressure
			// is bounded by the write deadline instead) and re-armed after.
			if idleTimer != nil && !idleTimer.Stop() && context.Cause(up.ctx) == errStreamIdle {
				readErr = context.Cause(up.ctx)
				break
			}
			if first.IsZero() {
				first = s.now()
			}
			respBytes += int64(n)
			switch {
			case stream:
				_, _ = scan.Write(buf[:n])
			case respBytes <= maxCapture:
				capture = append(capture, buf[:n]...)
			default:
				// Too large to keep: keep only the tail, where usage is.
				capture = append(capture, buf[:n]...)
				if len(capture) > 2*runtime.UsageTail {
					capture = append(capture[:0], capture[len(capture)-runtime.UsageTail:]...)
				}
			}
			_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
			if _, writeErr = w.Write(buf[:n]); writeErr == nil && stream {
				writeErr = rc.Flush()
			}
			if writeErr != nil {
				break
			}
			if idleTimer != nil {
				idleTimer.Reset(idle)
			}
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	// Hand the client its last bytes before the bookkeeping below.
	if writeErr == nil {
		_ = rc.Flush()
	}
	if !first.IsZero() {
		ft := first.Sub(up.started)
		ent.FirstTokenMs = float64(ft.Microseconds()) / 1000
		b.met.firstToken.Observe(ft.Seconds())
		s.eng.RecordFirstToken(att.Backend, ft)
	}

	// Usage and cost: from the response, else estimated (never zero).
	var u runtime.Usage
	var ok bool
	if stream {
		u, ok = scan.Usage()
	} else if respBytes <= maxCapture {
		u, ok = runtime.ParseUsage(capture)
	} else {
		u, ok = runtime.ParseUsageTail(capture)
	}
	switch {
	case ok:
	case resp.StatusCode >= http.StatusBadRequest:
		// An upstream that refused the request generated nothing: an error
		// answer without usage is not charged (and not estimated).
	default:
		if !stream && bytes.Contains(capture, []byte(`"usage"`)) {
			// It sent usage the proxy would not trust (negative, absurd or
			// overflowing counts): say which upstream, then estimate.
			s.log.Warn("upstream reported implausible usage; charging the estimate", "backend", name, "rule", route.RuleName)
		}
		u = runtime.EstimateUsage(int64(len(reqBody)), respBytes)
		s.m.estimated.WithLabelValues(name).Inc()
	}
	cost := b.price.Cost(u)
	ent.PromptTokens, ent.CompletionTokens, ent.TotalTokens, ent.TokensEstimated = u.PromptTokens, u.CompletionTokens, u.Tokens(), u.Estimated
	ent.CostUSD = cost.String()
	if charge != nil {
		charge.Add(u.Tokens(), cost)
	}
	b.met.prompt.Add(float64(u.PromptTokens))
	b.met.completion.Add(float64(u.CompletionTokens))
	if cost > 0 {
		b.met.costs.Add(float64(cost) / 1e12)
	}

	switch {
	case readErr != nil && context.Cause(up.ctx) == errStreamIdle:
		ent.Outcome, ent.Error = proxyapi.OutcomeStreamIdle, "no byte from the upstream for "+idle.String()
		s.quarantine(att.Backend)
		s.m.quarantines.WithLabelValues(name, "stream_idle").Inc()
		s.abort()
	case (writeErr != nil || readErr != nil) && s.cut.Load():
		ent.Outcome, ent.Error = proxyapi.OutcomeShutdownDeadline, "cut at the drain deadline (--shutdown-timeout)"
	case writeErr != nil && errors.Is(writeErr, os.ErrDeadlineExceeded):
		ent.Outcome, ent.Error = proxyapi.OutcomeClientCancelled, "client stopped reading for "+s.writeTimeout.String()+" during the response"
	case writeErr != nil || (readErr != nil && clientCtx.Err() != nil):
		ent.Outcome, ent.Error = proxyapi.OutcomeClientCancelled, "client went away during the response"
	case readErr != nil:
		ent.Outcome, ent.Error = proxyapi.OutcomeUpstreamAborted, "upstream body: "+readErr.Error()
		s.quarantine(att.Backend)
		s.m.quarantines.WithLabelValues(name, "network_error").Inc()
		s.abort()
	}
}

// bodyArrived reports whether bytes of the response body are already read
// from the upstream connection (proxy/h1 bodies say so), so the first Read
// will not wait for the upstream.
func bodyArrived(body io.Reader) bool {
	b, ok := body.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
}

// abort ends the client response abnormally so the client sees a broken
// stream rather than a clean end. The deferred audit runs first.
func (s *Server) abort() { panic(http.ErrAbortHandler) }

// mirror sends a shadow copy in the background: at most MaxShadowPerBackend
// run at once per backend, the rest are dropped and counted. Shadow results
// never quarantine and are never charged.
func (s *Server) mirror(r *http.Request, route *runtime.Route, b *backendRT, body reqBody) {
	name := b.st.Name()
	select {
	case b.shadow <- struct{}{}:
	default:
		s.m.shadowDropped.WithLabelValues(name).Inc()
		return
	}
	if b.base == nil {
		<-b.shadow
		return
	}
	hto := s.eng.HeaderTimeout(route.Rule, b.st)
	idle := s.eng.StreamIdle()
	if idle <= 0 {
		// Nobody waits on a copy, so it always has an idle guard: a target
		// that stalls must not hold one of its backend's few slots forever.
		idle = s.shadowIdle
	}
	// Detach from the client request: the copy must not be cancelled by the
	// client finishing first, and must not hold the request's header map.
	sr := r.Clone(context.WithoutCancel(r.Context()))
	sr.Header = r.Header.Clone()
	s.shadowWG.Add(1)
	go func() {
		defer s.shadowWG.Done()
		defer func() { <-b.shadow }()
		ctx := context.WithoutCancel(r.Context())
		up, err := s.send(ctx, b, sr, body, hto, true)
		if err != nil {
			s.m.shadowSent.WithLabelValues(name, "error").Inc()
			return
		}
		defer up.cancel(nil)
		defer up.resp.Body.Close()
		t := up.idleGuard(idle)
		if t != nil {
			defer t.Stop()
		}
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		for {
			n, err := up.resp.Body.Read(*bp)
			if n > 0 && t != nil {
				t.Reset(idle)
			}
			if err != nil {
				break
			}
		}
		res := "ok"
		if up.resp.StatusCode >= 500 {
			res = "5xx"
		}
		s.m.shadowSent.WithLabelValues(name, res).Inc()
	}()
}
