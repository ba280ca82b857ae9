package routerproxy

// Intake: the handler of an inference request, from the listener to the
// dispatch: auth, the bounded body and the fields routing needs, routing,
// budget admission.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

func (s *Server) inference(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	s.m.inflight.Inc()
	defer s.m.inflight.Dec()

	start := s.now()
	// With tracing the request carries its server span from here on.
	if s.tel != nil {
		r = s.tel.StartRequest(r)
	}
	ent := &proxyapi.AuditEntry{Time: start.UTC(), Router: s.cfg.Router.Name, Namespace: s.cfg.Router.Namespace, Path: r.URL.Path}
	if call, ok := r.Context().Value(mcpCallKey{}).(*mcpCall); ok {
		ent.Via, ent.Tool = proxyapi.ViaMCP, call.tool
	}
	if s.caller != "" {
		if v := r.Header.Get(s.caller); v != "" {
			ent.Caller = engine.SanitizeCaller(v)
		}
	}
	if s.cfg.Policy.Audit.LogClientAddress {
		ent.Client = s.clientAddr(r)
	}
	// Client-chosen values are cut before they reach an audit line or a
	// metric label.
	req := &engine.Request{Header: r.Header}
	ent.TaskComplexity = engine.SanitizeCaller(s.eng.TaskComplexity(r.Header))
	defer func() {
		ent.LatencyMs = float64(s.now().Sub(start).Microseconds()) / 1000
		if ent.CostUSD == "" {
			ent.CostUSD = "0"
		}
		s.m.observeServed(servedKey{rule: ent.Rule, backend: ent.Backend, outcome: ent.Outcome, status: ent.Status}, ent.LatencyMs/1000)
		if s.tel != nil {
			s.tel.EndRequest(r.Context(), ent)
		}
		if s.audit != nil {
			s.audit.Write(ent)
		}
	}()

	adm, release := s.admit(w, r, req, ent)
	defer release() // the body lives until the response ends
	if adm == nil {
		return // refused; the deferred audit records it
	}
	s.dispatch(w, r, adm, ent)
}

// admitted is a request intake let through: routed, admitted by the
// budgets, its body read and its fields found.
type admitted struct {
	route *engine.Route
	body  reqBody
	// model is the model the client asked for, the one it sees echoed.
	model  string
	charge budget.Settler    // settles the budgets' reservation with the usage
	limits budget.RateCharge // settles the rate limits' (nil: none counts it)
	// req and cls routed the request: routing it again tells whether a
	// retry would be served now (failover.exhausted).
	req *engine.Request
	cls engine.Classification
}

// admit is intake: policy.auth, the bounded body and the fields routing
// needs, routing and budget admission, each a stage that either hands the
// request on or refuses it. It returns the admitted request, or nil when the
// request was refused (answered, and ent says how). release gives back the
// body's memory; the caller defers it.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, req *engine.Request, ent *proxyapi.AuditEntry) (adm *admitted, release func()) {
	// policy.auth first: an unauthenticated request is refused before its
	// body is read, and nothing it sent reaches routing or a budget.
	id, ok := s.authenticate(w, r, ent)
	if !ok {
		return s.refusedUnread(r, ent, func() {})
	}
	team := id.Team
	body, release, ok := s.intakeBody(w, r, ent)
	if !ok {
		return s.refusedUnread(r, ent, release)
	}
	in, ok := s.inspect(w, body, ent)
	if !ok {
		return s.refusedUnread(r, ent, release)
	}
	cls := s.classify(r.Header, body, ent)
	if !s.auth.Allowed(team, in.model) {
		msg := "team " + strconv.Quote(team) + " may not use model " + strconv.Quote(in.model)
		refuseAs(w, ent, refForbidden, clip(msg, maxAuditField), msg)
		return nil, release
	}
	if s.cfg.Policy.Audit.IncludeRequestBody {
		ent.RequestBody = json.RawMessage(body)
	}
	req.Model = in.model
	if s.auth.Enforced() {
		// The allowlist holds on the backend that serves, too: routing
		// offers only backends whose model the team may use.
		req.MayUse = func(names ...string) bool { return s.auth.Allowed(team, names...) }
	}
	route, ok := s.route(w, req, cls, ent)
	if !ok {
		return nil, release
	}
	limits, ok := s.admitRateLimits(w, r, id, len(body), ent)
	if !ok {
		return nil, release
	}
	charge, ok := s.admitBudgets(w, r, route, len(body), ent)
	if !ok {
		releaseRateLimits(limits)
		return nil, release
	}
	// Streams ask the upstream for usage so budgets and audit see real
	// numbers. (A Responses stream always ends with its usage; a Messages
	// stream reports usage itself and its translation asks.)
	if in.stream && protocolOf(r.URL.Path) == protoOpenAI && !includeUsage(body, in.fields) {
		body = withIncludeUsage(body, in.fields)
		// The splice moved the members after it: find the model again, once.
		in.fields, _ = scanBody(body)
	}
	return &admitted{route: route, body: reqBody{raw: body, model: in.fields.model}, model: in.model, charge: charge, limits: limits, req: req, cls: cls}, release
}

// authenticate enforces policy.auth's token: the verified identity (zero
// without policy.auth), or false when the request was refused.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, ent *proxyapi.AuditEntry) (id auth.Identity, ok bool) {
	if s.auth == nil {
		return id, true
	}
	id, aerr := s.auth.Authenticate(r)
	if aerr != nil {
		refuseAs(w, ent, authRefusal(aerr), aerr.Msg, "")
		return auth.Identity{}, false
	}
	ent.Team = engine.SanitizeCaller(id.Team)
	ent.Key = id.Key
	return id, true
}

// intakeBody reads the bounded body (readBody), or refuses the request with
// why it could not be read.
func (s *Server) intakeBody(w http.ResponseWriter, r *http.Request, ent *proxyapi.AuditEntry) (body []byte, release func(), ok bool) {
	body, release, err := s.readBody(w, r)
	if err == nil {
		return body, release, true
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		refuseAs(w, ent, refTooLarge, "request body over "+strconv.FormatInt(s.maxBody, 10)+" bytes", "")
	case errors.Is(err, errBodyBusy):
		refuseAs(w, ent, refBodyBusy, err.Error(), "")
	case errors.As(err, &ne) && ne.Timeout():
		refuseAs(w, ent, refBodyTimeout, "request body not received within "+s.bodyTimeout.String(), "")
	case r.Context().Err() != nil:
		refuseAs(w, ent, refClientCancelled, "reading request body: "+err.Error(), "")
	default:
		// A truncated or malformed (chunked) body: the client is still
		// there to be told, and the audit says what it was told.
		refuseAs(w, ent, refInvalidBody, "reading request body: "+err.Error(), "")
	}
	return nil, release, false
}

// inbound is what intake reads from the body: the members routing needs
// and the model and stream values.
type inbound struct {
	fields bodyFields
	model  string
	stream bool
}

// inspect checks the body is JSON with a string model and a boolean stream,
// and records them, or refuses the request.
func (s *Server) inspect(w http.ResponseWriter, body []byte, ent *proxyapi.AuditEntry) (in inbound, ok bool) {
	if !json.Valid(body) {
		refuseAs(w, ent, refInvalidJSON, "request body is not valid JSON", "")
		return in, false
	}
	fields, err := scanBody(body)
	if err != nil {
		refuseAs(w, ent, refInvalidJSON, "request body: "+err.Error(), "")
		return in, false
	}
	model, isString := stringValue(body, fields.model)
	stream, isBool := boolValue(body, fields.stream)
	switch {
	case fields.model.ok() && !isString:
		refuseAs(w, ent, refInvalidJSON, "model must be a string", "")
		return in, false
	case !isBool:
		refuseAs(w, ent, refInvalidJSON, "stream must be a boolean", "")
		return in, false
	case model == "":
		refuseAs(w, ent, refModelRequired, "the request has no model", "you must provide a model parameter")
		return in, false
	}
	ent.Model = clip(model, maxAuditField)
	ent.Stream = stream
	return inbound{fields: fields, model: model, stream: stream}, true
}

// route asks the engine for the route of the request of that
// classification, or refuses the request (fail-closed, or no eligible
// backend).
func (s *Server) route(w http.ResponseWriter, req *engine.Request, cls engine.Classification, ent *proxyapi.AuditEntry) (*engine.Route, bool) {
	route, err := s.eng.Route(req, cls)
	ent.Rule = route.RuleName
	switch {
	case s.refuseHeld(w, err, ent):
		return nil, false
	case errors.Is(err, engine.ErrNotAllowed):
		msg := "team " + strconv.Quote(ent.Team) + " may not use the model of any backend that serves this request"
		if route.Rule != nil {
			msg += " (rule " + route.RuleName + ")"
		} else {
			msg += " (the default route)"
		}
		refuseAs(w, ent, refForbidden, clip(msg, maxAuditField), msg)
		return nil, false
	case errors.Is(err, engine.ErrFailClosed):
		s.m.failClosed.WithLabelValues(route.RuleName, ent.Classification).Inc()
		msg := "rule " + route.RuleName + " is failClosed and none of its backends is eligible"
		if errors.Is(err, engine.ErrSensitiveUnrouted) {
			msg = "the request is classified " + ent.Classification + " and no rule for that classification matches it"
		}
		refuseAs(w, ent, refFailClosed, msg, "")
		return nil, false
	case err != nil:
		refuseAs(w, ent, refNoRoute, err.Error(), "no eligible backend: no rule matched with an eligible backend and the default route has none")
		return nil, false
	}
	if route.Promoted {
		ent.Promoted = true
		s.m.sloPromoted.WithLabelValues(route.RuleName).Inc()
	}
	return route, true
}

// admitBudgets reserves the prompt's estimate against the budgets (the
// settlement replaces it with the usage the response reports), or refuses
// the request.
func (s *Server) admitBudgets(w http.ResponseWriter, r *http.Request, route *engine.Route, bodyLen int, ent *proxyapi.AuditEntry) (budget.Settler, bool) {
	charge, ex, err := s.budgets.Admit(r.Context(), route.RuleName, r.Header, engine.EstimateUsage(int64(bodyLen), 0).Tokens())
	if err != nil {
		refuseAs(w, ent, refBudgetStoreDown, err.Error(), "budgets cannot be checked: "+err.Error())
		return nil, false
	}
	if ex != nil {
		ent.Budget = ex.Budget
		s.m.budgetReject.WithLabelValues(ex.Budget).Inc()
		secs := retryAfter(w, ex.RetryAfter)
		refuseAs(w, ent, refBudgetExceeded, "budget "+ex.Budget+" is exhausted", "budget "+ex.Budget+" is exhausted for its window; retry after "+secs+"s")
		return nil, false
	}
	return charge, true
}

// classify computes the request's classification, once, from its header
// and (detector and hybrid modes) its body, and records it: the
// classifications, where they came from and which detectors fired (never
// what they matched), and a count per detector.
func (s *Server) classify(h http.Header, body []byte, ent *proxyapi.AuditEntry) engine.Classification {
	cls := s.eng.Classify(h, body)
	ent.Classification = engine.SanitizeCaller(cls.String())
	ent.ClassificationSource = cls.Source
	for _, d := range cls.Detected.Detectors() {
		ent.Detectors = append(ent.Detectors, d.Name())
		s.m.detections[d].Inc()
	}
	return cls
}

// refusedUnread ends intake for a request refused before its body was read
// and inspected (authentication, the body, the model): it is classified by
// its header alone (the content classifier has nothing to read), so its
// audit line still says how the client labelled it.
func (s *Server) refusedUnread(r *http.Request, ent *proxyapi.AuditEntry, release func()) (*admitted, func()) {
	s.classify(r.Header, nil, ent)
	return nil, release
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
