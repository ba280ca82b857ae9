// Package engine is the router-proxy's routing engine, built from the
// compiled config (proxyapi): rule matching and strategies, backend health and
// quarantine, and the per-request accounting around an attempt (usage, money
// and prices, the audit entry's caller and client). It imports no Kubernetes
// package and no HTTP; package routerproxy serves it, routerproxy/engine/balance places
// requests on pods.
package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/textproto"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Strategy names (proxyapi's, the contract's vocabulary).
const (
	StrategyPrimaryFallback = proxyapi.StrategyPrimaryFallback
	StrategyWeighted        = proxyapi.StrategyWeighted
	StrategyShadow          = proxyapi.StrategyShadow
)

// DefaultRuleName labels requests served by the default route (or by
// BackendNameMatch) in metrics and audit entries.
const DefaultRuleName = "(default)"

// Routing errors. The HTTP layer maps ErrNoRoute and ErrFailClosed to 503,
// ErrNotAllowed to 403.
var (
	// ErrNoRoute: no rule matched (or every matching non-failClosed rule had
	// no eligible backend) and the default route resolved to nothing eligible.
	ErrNoRoute = errors.New("no route: no rule matched and no default route backend is eligible")
	// ErrFailClosed: the matched rule is failClosed and none of its backends is eligible.
	ErrFailClosed = errors.New("fail-closed: no backend of the matched rule is eligible")
	// ErrSensitiveUnrouted: in the detector and hybrid modes, a request
	// classified sensitive matched no rule for its classification; it is
	// never served by another rule or the default route (an ErrFailClosed).
	ErrSensitiveUnrouted = fmt.Errorf("%w: the request is classified sensitive and no rule matching its classification can serve it", ErrFailClosed)
	// ErrNotAllowed: the caller's allowlist names the model of no backend
	// the matched rule (or the default route) would serve the request by.
	// The request is refused (403), never served by another rule or the
	// default route: what the caller may use is decided by its allowlist,
	// never by a label or content that chose the rule.
	ErrNotAllowed = errors.New("not allowed: the caller's allowlist names the model of no backend the request's route serves by")

	// errAllowedDown is the ErrNoRoute of notAllowed.
	errAllowedDown = fmt.Errorf("%w: the rules that matched have no eligible backend the caller may use, and the route after them serves none it may use", ErrNoRoute)
)

// Request is what the engine needs to route one request. Header is an
// http.Header-shaped map whose keys are in canonical MIME form.
type Request struct {
	Model  string
	Header map[string][]string
	// MayUse, when set, says whether the caller may be served by a model
	// going by any of names (its allowlist, policy.auth.allowlists): a
	// backend serves the request only when MayUse accepts its
	// proxyapi.Backend.AllowNames. nil: every backend may serve it.
	MayUse func(names ...string) bool
}

// mayUse reports whether the caller may be served by b.
func (r *Request) mayUse(b *BackendState) bool {
	return r.MayUse == nil || r.MayUse(b.Config.AllowNames()...)
}

// usable is the backends the caller may be served by, in order (the same
// slice when MayUse restricts nothing).
func (r *Request) usable(bs []*BackendState) []*BackendState {
	if r.MayUse == nil {
		return bs
	}
	out := make([]*BackendState, 0, len(bs))
	for _, b := range bs {
		if r.mayUse(b) {
			out = append(out, b)
		}
	}
	return out
}

// Options tune the engine; the zero value gives the documented defaults.
type Options struct {
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// SLOWindow is the rolling window of first-token samples (default 60s).
	SLOWindow time.Duration
	// SLOMinSamples is how many samples the window needs before the P95 may
	// promote the fallback (default 5).
	SLOMinSamples int
	// Getenv reads credential variables; nil means os.Getenv via the caller.
	Getenv func(string) string
}

// Engine routes requests and keeps backend health. It is safe for
// concurrent use.
type Engine struct {
	cfg           *proxyapi.Config
	now           func() time.Time
	backends      []*BackendState
	byName        map[string]*BackendState
	byModel       map[string]*BackendState
	rules         []*RuleState
	def           *BackendState
	classKey      string          // canonical header key of the classification header
	readsHeader   bool            // the mode takes classifications from the header (header-only, hybrid)
	readsContent  bool            // the mode runs the content classifier (detector, hybrid)
	sensitive     map[string]bool // lowercased sensitive classifications
	taskKey       string
	nameMatch     bool
	quarantine    time.Duration
	headerTimeout time.Duration
	sloWindow     time.Duration
	sloMin        int
}

// BackendState is a backend's config plus its live health.
type BackendState struct {
	Config *proxyapi.Backend
	// Index is the backend's position in the config.
	Index int

	// staticErr is set when the backend can never serve (unsupported
	// provider, missing credential). It is fixed at start.
	staticErr string

	probeOK      atomic.Bool
	probeFails   atomic.Int32 // active probes failed in a row
	probeMsg     atomic.Pointer[string]
	lastProbe    atomic.Int64 // unix nanos
	quarantUntil atomic.Int64 // unix nanos; 0 = never quarantined
	halfOpen     atomic.Bool  // set on quarantine, cleared by a success
	trial        atomic.Bool  // a half-open trial request is in flight

	slo *latencyTracker // non-nil only for primaries of latencySLO rules

	hold hold // the provider's quota hold (hold.go)
}

// RuleState is a compiled rule.
type RuleState struct {
	Config   *proxyapi.Rule
	Index    int
	backends []*BackendState
	globs    []string
	headers  []headerMatch
	classes  map[string]bool
	task     string
	capable  bool // at least one backend advertises every required capability
}

type headerMatch struct {
	key   string // canonical
	value string
}

// New compiles a validated config. getenv reads credential variables
// (os.Getenv in production); a backend whose credential variable is empty is
// never eligible and says why in its status.
func New(cfg *proxyapi.Config, opts Options) (*Engine, error) {
	// The contract's own defaults, applied once (Parse has already applied
	// them to a loaded file; a config built in code gets them here).
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:           cfg,
		now:           opts.Now,
		byName:        map[string]*BackendState{},
		byModel:       map[string]*BackendState{},
		classKey:      textproto.CanonicalMIMEHeaderKey(cfg.Policy.Classification.HeaderKey),
		readsHeader:   cfg.Policy.Classification.Mode != proxyapi.ClassificationDetector,
		readsContent:  cfg.Policy.Classification.Mode == proxyapi.ClassificationDetector || cfg.Policy.Classification.Mode == proxyapi.ClassificationHybrid,
		sensitive:     map[string]bool{},
		taskKey:       textproto.CanonicalMIMEHeaderKey(wellknown.TaskComplexityHeader),
		nameMatch:     cfg.Default.Strategy == proxyapi.DefaultBackendNameMatch,
		quarantine:    cfg.Timeouts.Quarantine.Duration,
		headerTimeout: cfg.Timeouts.ResponseHeader.Duration,
		sloWindow:     opts.SLOWindow,
		sloMin:        opts.SLOMinSamples,
	}
	for _, c := range cfg.Policy.Classification.Sensitive {
		e.sensitive[strings.ToLower(c)] = true
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.sloWindow <= 0 {
		e.sloWindow = time.Minute
	}
	if e.sloMin <= 0 {
		e.sloMin = 5
	}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		s := &BackendState{Config: b, Index: i}
		s.probeOK.Store(true)
		if msg := staticProblem(b, opts.Getenv); msg != "" {
			s.staticErr = msg
		}
		e.backends = append(e.backends, s)
		e.byName[b.Name] = s
		id := b.ModelID
		if id == "" {
			id = b.Name
		}
		if _, dup := e.byModel[id]; !dup {
			e.byModel[id] = s
		}
	}
	if cfg.Default.Backend != "" {
		e.def = e.byName[cfg.Default.Backend]
	}
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		rs := &RuleState{Config: r, Index: i, globs: r.Match.Models, task: strings.ToLower(r.Match.TaskComplexity)}
		for _, h := range r.Match.Headers {
			rs.headers = append(rs.headers, headerMatch{key: textproto.CanonicalMIMEHeaderKey(h.Name), value: h.Value})
		}
		if len(r.Match.DataClassification) > 0 {
			rs.classes = map[string]bool{}
			for _, c := range r.Match.DataClassification {
				rs.classes[strings.ToLower(c)] = true
			}
		}
		for _, n := range r.Backends {
			b := e.byName[n]
			// The compiler lists capable candidates only; check again so a
			// hand-written config can never route around a capability.
			if !b.HasCapabilities(r.Match.RequiredCapabilities) {
				continue
			}
			rs.backends = append(rs.backends, b)
		}
		rs.capable = len(rs.backends) > 0
		if r.Match.LatencySLO.Duration > 0 && r.Strategy == StrategyPrimaryFallback && len(rs.backends) > 1 && rs.backends[0].slo == nil {
			rs.backends[0].slo = newLatencyTracker()
		}
		e.rules = append(e.rules, rs)
	}
	return e, nil
}

// staticProblem reports why a backend can never serve with this build.
func staticProblem(b *proxyapi.Backend, getenv func(string) string) string {
	if b.Kind == proxyapi.KindExternal {
		if _, known := wellknown.Providers[b.Provider]; !known && b.Provider != "" {
			return fmt.Sprintf("provider %q is not supported by this router-proxy", b.Provider)
		}
	}
	if getenv != nil {
		region := ""
		for _, c := range b.Credentials {
			if c.Purpose == wellknown.PurposeAWSRegion {
				region = getenv(c.Env)
			}
			if getenv(c.Env) == "" && !wellknown.OptionalCredential(c.Purpose) {
				return fmt.Sprintf("credential %s is not set (environment variable %s)", c.Purpose, c.Env)
			}
		}
		if b.Kind == proxyapi.KindExternal && b.Provider == wellknown.ProviderBedrock && b.URL == "" && region == "" {
			return "bedrock backend has no url and credential awsRegion is not set"
		}
	}
	return ""
}

// Config returns the engine's config.
func (e *Engine) Config() *proxyapi.Config { return e.cfg }

// Backends returns every backend in config order.
func (e *Engine) Backends() []*BackendState { return e.backends }

// Backend returns a backend by name.
func (e *Engine) Backend(name string) *BackendState { return e.byName[name] }

// Rules returns the compiled rules in order.
func (e *Engine) Rules() []*RuleState { return e.rules }

// HasCapabilities reports whether the backend advertises every capability.
func (b *BackendState) HasCapabilities(req []string) bool {
	return wellknown.HasCapabilities(b.Config.Capabilities, req)
}

// StaticProblem says why the backend can never serve with this process
// (unsupported provider, missing credential), or "".
func (b *BackendState) StaticProblem() string { return b.staticErr }

// Name is the backend's name.
func (b *BackendState) Name() string { return b.Config.Name }

// TaskComplexity returns the lowercased task-complexity hint, or "".
func (e *Engine) TaskComplexity(h map[string][]string) string {
	return strings.ToLower(strings.TrimSpace(first(h[e.taskKey])))
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Matches reports whether every declared condition of the rule holds for
// the request and its classification.
func (e *Engine) Matches(r *RuleState, req *Request, cls Classification) bool {
	if !r.capable {
		return false
	}
	if r.classes == nil && cls.rulesForClassOnly {
		return false
	}
	if len(r.globs) > 0 {
		ok := false
		for _, g := range r.globs {
			if wellknown.Glob(g, req.Model) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, h := range r.headers {
		if !slices.Contains(req.Header[h.key], h.value) {
			return false
		}
	}
	if r.classes != nil && !slices.ContainsFunc(cls.Classes, func(c string) bool { return r.classes[c] }) {
		return false
	}
	if r.task != "" && e.TaskComplexity(req.Header) != r.task {
		return false
	}
	return true
}

// Route is the outcome of routing one request: a rule (or the default
// route) and a plan that yields backends to try.
type Route struct {
	// Rule is nil for the default route and BackendNameMatch.
	Rule *RuleState
	// RuleName is the rule's name or DefaultRuleName.
	RuleName string
	// Strategy is the rule's strategy (primary-fallback for the default route).
	Strategy   proxyapi.Strategy
	FailClosed bool
	// Promoted is true when latencySLO promoted the fallback over the primary.
	Promoted bool
	// Skipped lists non-failClosed rules that matched but had no eligible backend.
	Skipped []string

	candidates []*BackendState
	tried      []*BackendState
	triedBuf   [4]*BackendState // tried's first backing, in the same allocation
	e          *Engine
}

// Route picks the rule for a request of that classification. Rules are
// evaluated in order and the first match wins. A matching failClosed rule with no eligible backend ends
// routing with ErrFailClosed; a matching non-failClosed rule with no eligible
// backend falls through to the following rules and then the default route.
func (e *Engine) Route(req *Request, cls Classification) (*Route, error) {
	now := e.now()
	var skipped []string
	var hd *HeldError // the quota holds met on the way (hold.go)
	for _, r := range e.rules {
		if !e.Matches(r, req, cls) {
			continue
		}
		rt := &Route{Rule: r, RuleName: r.Config.Name, Strategy: r.Config.Strategy, FailClosed: r.Config.FailClosed, candidates: r.backends, e: e, Skipped: skipped}
		rt.tried = rt.triedBuf[:0]
		if r.Config.Strategy == StrategyPrimaryFallback && len(r.backends) > 1 && r.backends[0].slo != nil && r.Config.Match.LatencySLO.Duration > 0 {
			if p95, ok := r.backends[0].slo.p95(now, e.sloWindow, e.sloMin); ok && p95 > r.Config.Match.LatencySLO.Duration {
				c := make([]*BackendState, 0, len(r.backends))
				c = append(c, r.backends[1:]...)
				rt.candidates = append(c, r.backends[0])
				rt.Promoted = true
			}
		}
		// The caller's allowlist filters the rule's candidates before any
		// strategy, failover or shadow sees them. A rule that offers the
		// caller none ends routing: the rule was chosen by the request's
		// model, labels and content, and none of them may take it to
		// another rule or the default route.
		if rt.candidates = req.usable(rt.candidates); len(rt.candidates) == 0 {
			return rt, notAllowed(skipped)
		}
		if rt.anyEligible(now) {
			return rt, nil
		}
		hd = heldCandidates(hd, rt.candidates, now)
		if r.Config.FailClosed {
			return rt, held(hd, ErrFailClosed)
		}
		skipped = append(skipped, r.Config.Name)
	}
	rt := &Route{RuleName: DefaultRuleName, Strategy: StrategyPrimaryFallback, e: e, Skipped: skipped}
	rt.tried = rt.triedBuf[:0]
	if cls.rulesForClassOnly {
		rt.FailClosed = true
		return rt, ErrSensitiveUnrouted
	}
	if e.nameMatch && req.Model != "" {
		if b := e.byModel[req.Model]; b != nil && !req.mayUse(b) {
			return rt, notAllowed(skipped)
		} else if b != nil && b.eligible(now) {
			rt.candidates = []*BackendState{b}
			return rt, nil
		} else if b != nil {
			hd = heldCandidates(hd, []*BackendState{b}, now)
		}
	}
	if e.def != nil && !req.mayUse(e.def) {
		return rt, notAllowed(skipped)
	}
	if e.def != nil && e.def.eligible(now) {
		rt.candidates = []*BackendState{e.def}
		return rt, nil
	}
	if e.def != nil {
		hd = heldCandidates(hd, []*BackendState{e.def}, now)
	}
	return rt, held(hd, ErrNoRoute)
}

// notAllowed is the error of a route the caller's allowlist leaves no
// backend, reached after the skipped rules. When an earlier rule matched
// and offered the caller backends it may use, all of them down, the request
// was refused for an outage, not for what the team asked: ErrNoRoute (503,
// which a client retries), not ErrNotAllowed (403, which it does not, and
// which would send an operator after a permission that is there). Billing,
// allowed gpt-4.1, whose cloud rule falls through to a clinical default
// route while the cloud is down, is told the service is unavailable.
func notAllowed(skipped []string) error {
	if len(skipped) > 0 {
		return errAllowedDown
	}
	return ErrNotAllowed
}

func (rt *Route) anyEligible(now time.Time) bool {
	for _, b := range rt.candidates {
		if rt.Strategy == StrategyWeighted && b.Config.Weight <= 0 {
			continue
		}
		if b.eligible(now) {
			return true
		}
	}
	return false
}

// Attempt is one dispatch to one backend. Every attempt must be finished
// with Engine.Report.
type Attempt struct {
	Backend *BackendState
	trial   bool
}

// Next returns the next backend to try, or nil when none is left. It never
// returns a backend twice. primary-fallback and shadow walk the candidates
// in order; weighted picks in proportion to weight among the eligible
// backends not tried yet (weight 0 never serves).
func (rt *Route) Next() *Attempt {
	now := rt.e.now()
	if rt.Strategy == StrategyWeighted {
		for {
			var total int64
			for _, b := range rt.candidates {
				if b.Config.Weight > 0 && !slices.Contains(rt.tried, b) && b.eligible(now) {
					total += int64(b.Config.Weight)
				}
			}
			if total == 0 {
				return nil
			}
			n := rand.Int64N(total)
			var pick *BackendState
			for _, b := range rt.candidates {
				if b.Config.Weight > 0 && !slices.Contains(rt.tried, b) && b.eligible(now) {
					if n < int64(b.Config.Weight) {
						pick = b
						break
					}
					n -= int64(b.Config.Weight)
				}
			}
			if pick == nil { // state changed between the two passes; retry
				continue
			}
			if a := rt.claim(pick, now); a != nil {
				return a
			}
		}
	}
	for _, b := range rt.candidates {
		if slices.Contains(rt.tried, b) || !b.eligible(now) {
			continue
		}
		if a := rt.claim(b, now); a != nil {
			return a
		}
	}
	return nil
}

// claim marks b tried and, when b is half-open, takes its single trial slot.
func (rt *Route) claim(b *BackendState, now time.Time) *Attempt {
	rt.tried = append(rt.tried, b)
	if b.halfOpen.Load() {
		if !b.trial.CompareAndSwap(false, true) {
			return nil
		}
		// Re-check: a success may have closed the breaker meanwhile.
		if !b.halfOpen.Load() {
			b.trial.Store(false)
			return &Attempt{Backend: b}
		}
		return &Attempt{Backend: b, trial: true}
	}
	_ = now
	return &Attempt{Backend: b}
}

// ShadowTargets returns the backends that receive mirrored copies: the
// candidates after the one that served, that are eligible now.
func (rt *Route) ShadowTargets(served *BackendState) []*BackendState {
	if rt.Strategy != StrategyShadow {
		return nil
	}
	now := rt.e.now()
	i := slices.Index(rt.candidates, served)
	if i < 0 {
		return nil
	}
	var out []*BackendState
	for _, b := range rt.candidates[i+1:] {
		if b.eligible(now) && !b.halfOpen.Load() {
			out = append(out, b)
		}
	}
	return out
}

// HeaderTimeout resolves the response-header timeout of a dispatch:
// rule.timeout || backend.timeout || the proxy default, capped at the default.
func (e *Engine) HeaderTimeout(rule *RuleState, b *BackendState) time.Duration {
	var fromRule, fromBackend time.Duration
	if rule != nil {
		fromRule = rule.Config.Timeout.Duration
	}
	if b != nil {
		fromBackend = b.Config.Timeout.Duration
	}
	return wellknown.HeaderTimeout(fromRule, fromBackend, e.headerTimeout)
}

// StreamIdle is the stream idle timeout; 0 disables it.
func (e *Engine) StreamIdle() time.Duration { return e.cfg.Timeouts.StreamIdle.Duration }

// Result classifies an attempt for passive health.
type Result int

const (
	// Neutral: no verdict (client cancelled, header timeout, 4xx on a trial is success).
	Neutral Result = iota
	// Success: the backend answered below 500.
	Success
	// Failure: a 5xx, a network error or a silent stream; quarantines.
	Failure
)

// Report records an attempt's result. A Failure quarantines the backend for
// the quarantine duration; after it one request is let through as a
// half-open trial, and its success closes the breaker.
func (e *Engine) Report(a *Attempt, r Result) {
	if a == nil {
		return
	}
	b := a.Backend
	switch r {
	case Success:
		b.halfOpen.Store(false)
	case Failure:
		e.Quarantine(b)
	}
	if a.trial {
		b.trial.Store(false)
	}
}

// Quarantine skips the backend for the quarantine duration.
func (e *Engine) Quarantine(b *BackendState) {
	b.quarantUntil.Store(e.now().Add(e.quarantine).UnixNano())
	b.halfOpen.Store(true)
}

// ProbesFailedToUnhealthy is how many active probes in a row must fail
// before a backend is judged unhealthy (ineligible); one passing probe makes
// it healthy again. One lost probe (a busy node, a slow first DNS lookup)
// then refuses no traffic, while a backend that is really down is ineligible
// after the second probe, about a second after the first (the prober retries
// a failed probe sooner). Passive health still quarantines a backend at its
// first failed request. Kubernetes' failureThreshold, Envoy's
// unhealthy_threshold and HAProxy's fall make the same trade.
const ProbesFailedToUnhealthy = 2

// ProbeChange is what one probe result changed in a backend's judged health.
type ProbeChange int

const (
	// ProbeHealthUnchanged: the judgement stands.
	ProbeHealthUnchanged ProbeChange = iota
	// ProbeTurnedUnhealthy: this failure was the ProbesFailedToUnhealthy-th
	// in a row; the backend is ineligible until a probe passes.
	ProbeTurnedUnhealthy
	// ProbeTurnedHealthy: a passing probe ended a run of failures that had
	// made the backend unhealthy.
	ProbeTurnedHealthy
)

// ReportProbe records an active probe's result and reports whether it
// changed the backend's judged health. A backend turns unhealthy (ineligible)
// after ProbesFailedToUnhealthy failed probes in a row and healthy again at
// the first passing one; a failure short of that keeps it eligible and says
// so in its status message. A passing probe after the quarantine window
// closes a half-open breaker.
func (e *Engine) ReportProbe(b *BackendState, ok bool, msg string) ProbeChange {
	now := e.now()
	b.lastProbe.Store(now.UnixNano())
	change := ProbeHealthUnchanged
	if ok {
		b.probeFails.Store(0)
		if !b.probeOK.Swap(true) {
			change = ProbeTurnedHealthy
		}
	} else if n := b.probeFails.Add(1); n >= ProbesFailedToUnhealthy {
		if b.probeOK.Swap(false) {
			change = ProbeTurnedUnhealthy
		}
	} else {
		msg = fmt.Sprintf("last probe failed (%d of %d in a row before the backend is judged unhealthy): %s", n, ProbesFailedToUnhealthy, msg)
	}
	if msg == "" {
		b.probeMsg.Store(nil)
	} else {
		b.probeMsg.Store(&msg)
	}
	if ok && b.halfOpen.Load() && now.UnixNano() >= b.quarantUntil.Load() {
		b.halfOpen.Store(false)
	}
	return change
}

// RecordFirstToken feeds the latencySLO tracker of a backend.
func (e *Engine) RecordFirstToken(b *BackendState, d time.Duration) {
	if b.slo != nil {
		b.slo.add(e.now(), d)
	}
}

// Eligible reports whether the backend may receive a request now.
func (e *Engine) Eligible(b *BackendState) bool { return b.eligible(e.now()) }

func (b *BackendState) eligible(now time.Time) bool {
	if b.staticErr != "" || !b.probeOK.Load() {
		return false
	}
	if now.UnixNano() < b.quarantUntil.Load() || b.heldNow(now) {
		return false
	}
	if b.halfOpen.Load() && b.trial.Load() {
		return false
	}
	return true
}

// Healthy is false when the backend cannot serve or ProbesFailedToUnhealthy
// probes in a row have failed.
func (b *BackendState) Healthy() bool { return b.staticErr == "" && b.probeOK.Load() }

// Quarantined reports whether passive health checks skip the backend now.
func (e *Engine) Quarantined(b *BackendState) bool {
	return e.now().UnixNano() < b.quarantUntil.Load() || (b.halfOpen.Load() && b.trial.Load())
}

// Status returns the backend's status entry.
func (e *Engine) Status(b *BackendState) proxyapi.BackendStatus {
	s := proxyapi.BackendStatus{Name: b.Config.Name, Healthy: b.Healthy(), Quarantined: e.Quarantined(b)}
	if t := b.lastProbe.Load(); t != 0 {
		s.LastProbeTime = time.Unix(0, t).UTC()
	}
	switch {
	case b.staticErr != "":
		s.Message = b.staticErr
	case b.probeMsg.Load() != nil:
		s.Message = *b.probeMsg.Load()
	case s.Quarantined:
		s.Message = "quarantined after a failed request"
	}
	e.holdStatus(b, &s)
	return s
}

// latencyTracker keeps recent first-token latencies for the rolling P95.
type latencyTracker struct {
	mu      sync.Mutex
	at      [256]int64
	val     [256]time.Duration
	n, next int
}

func newLatencyTracker() *latencyTracker { return &latencyTracker{} }

func (t *latencyTracker) add(now time.Time, d time.Duration) {
	t.mu.Lock()
	t.at[t.next], t.val[t.next] = now.UnixNano(), d
	t.next = (t.next + 1) % len(t.at)
	if t.n < len(t.at) {
		t.n++
	}
	t.mu.Unlock()
}

// p95 is the 95th percentile of the samples inside the window; ok is false
// with fewer than min samples.
func (t *latencyTracker) p95(now time.Time, window time.Duration, minSamples int) (time.Duration, bool) {
	cut := now.Add(-window).UnixNano()
	var buf [256]time.Duration
	s := buf[:0]
	t.mu.Lock()
	for i := 0; i < t.n; i++ {
		if t.at[i] > cut {
			s = append(s, t.val[i])
		}
	}
	t.mu.Unlock()
	if len(s) < minSamples {
		return 0, false
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := (len(s)*95+99)/100 - 1
	return s[idx], true
}

// P95 exposes the rolling first-token P95 of a backend (ok false when not
// tracked or too few samples).
func (e *Engine) P95(b *BackendState) (time.Duration, bool) {
	if b.slo == nil {
		return 0, false
	}
	return b.slo.p95(e.now(), e.sloWindow, e.sloMin)
}
