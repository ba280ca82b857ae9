// Package routerproxy is the router-proxy's OpenAI-compatible HTTP data plane: it
// wraps the routing engine of package engine in a server, dispatches to
// upstreams, enforces budgets, writes audit entries and serves the admin
// endpoints.
package routerproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/llmkube/llmkube-compile/routerproxy/h1"
	"github.com/llmkube/llmkube-compile/routerproxy/providers"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// DefaultMaxBodyBytes is the request body limit; a larger body gets 413.
const DefaultMaxBodyBytes = 32 << 20

// Request bodies held at once are bounded by two budgets, so a client that
// declares large bodies and trickles them can never starve small requests:
//   - SmallBodyBytes: bodies up to 1 MiB share SmallBodyMemoryBytes;
//   - larger bodies share DefaultBodyMemoryBytes (one body at the limit).
//
// Each body's whole size is reserved at once (a chunked body first takes
// 1 MiB, then the limit), so no request holds part of a budget while waiting
// for more. With the splice rewrite a request holds at most about three
// times its body (read, rewritten, translated): at most 3 x 48 MiB of the
// pod's default 256Mi limit (docs/router-proxy.md, "Limits and hostile input").
const (
	DefaultBodyMemoryBytes = DefaultMaxBodyBytes
	SmallBodyBytes         = 1 << 20
	SmallBodyMemoryBytes   = 16<<20 + 1
)

// DefaultBodyReadTimeout bounds reading one request body; a client that
// declares a large body and trickles it is cut.
const DefaultBodyReadTimeout = 30 * time.Second

// DefaultClientWriteTimeout bounds one write to the client: a client that
// stops reading for longer loses its response, and nobody is quarantined.
const DefaultClientWriteTimeout = 60 * time.Second

// MaxShadowPerBackend is how many shadow copies may run at once per backend.
const MaxShadowPerBackend = 4

// DefaultShadowIdle ends a shadow copy whose upstream goes silent this long
// when the stream-idle guard is disabled ("0s").
const DefaultShadowIdle = 5 * time.Minute

// ShadowHeader marks mirrored copies.
const ShadowHeader = "X-Llmkube-Shadow"

// Options configure a Server. Zero values take the documented defaults.
type Options struct {
	Logger *slog.Logger
	// Audit receives one entry per request; nil discards them (tests).
	Audit AuditSink
	// Getenv reads credential variables (default os.Getenv).
	Getenv func(string) string
	// Transport dispatches upstream requests (default: a tuned http.Transport).
	Transport http.RoundTripper
	// MaxBodyBytes is the request body limit (default 32 MiB).
	MaxBodyBytes int64
	// BodyMemoryBytes bounds the large bodies held at once (default
	// DefaultBodyMemoryBytes, 32 MiB; bodies up to SmallBodyBytes share
	// SmallBodyMemoryBytes besides).
	BodyMemoryBytes int64
	// BodyReadTimeout bounds reading one body (default 30s).
	BodyReadTimeout time.Duration
	// ClientWriteTimeout bounds one write to a client (default 60s).
	ClientWriteTimeout time.Duration
	// Engine options (clock, SLO window).
	Engine engine.Options
	// Context bounds the server's background work (the JWKS refresh);
	// default context.Background().
	Context context.Context
	// JWKSClient fetches policy.auth.jwt.jwksURI (default: an http.Client
	// with the auth.JWKSTimeout).
	JWKSClient *http.Client
	// Budgets keeps the budget counters; nil keeps them in memory, per
	// replica (budget.Store shares them through Redis).
	Budgets budget.Keeper
	// RateLimits keeps the rate-limit counters; nil keeps them in memory,
	// per replica (budget.Store shares them through Redis).
	RateLimits budget.Limiter
	// Holds shares upstream quota holds with the other replicas (holds.go);
	// nil keeps them per replica.
	Holds HoldSharer
	// Pools makes ModelPool members resident before dispatch; nil dispatches
	// to pooled backends as they are (tests without a cluster).
	Pools PoolGate
	// Collectors are registered beside the server's metrics (the pools').
	Collectors []prometheus.Collector
	// Telemetry exports spans and GenAI metrics; nil (the default) is off
	// and costs a nil check per hook.
	Telemetry *telemetry.Telemetry
}

// PoolGate is ModelPool activation (activation.Activator).
type PoolGate interface {
	// Acquire holds b's member resident for one attempt; release ends the
	// hold and may be called more than once.
	Acquire(ctx context.Context, b *proxyapi.Backend, mode proxyapi.PoolActivation) (release func(), err error)
	// Refresh re-reads b's pool before the call returns (a dispatch to its
	// member failed).
	Refresh(b *proxyapi.Backend)
	// Resident reports whether b's member is resident, once known.
	Resident(b *proxyapi.Backend) (resident, known bool)
	Status() []proxyapi.PoolStatus
}

// HealthReporter is implemented by a shared budget store.
type HealthReporter interface {
	Healthy() (bool, string)
	// Failure is what happens while it is down: closed or open.
	Failure() string
}

// Server serves one router config.
type Server struct {
	cfg     *proxyapi.Config
	eng     *engine.Engine
	budgets budget.Keeper
	limits  budget.Limiter // policy.rateLimits (ratelimit.go)
	rl      rateMetrics
	holds   HoldSharer // holds.go
	pools   PoolGate
	log     *slog.Logger
	audit   AuditSink
	rt      http.RoundTripper
	maxBody int64
	m       *metrics
	tel     *telemetry.Telemetry // nil: no spans, no GenAI metrics

	bodyMem      *semaphore.Weighted // bodies over SmallBodyBytes
	smallMem     *semaphore.Weighted // bodies up to SmallBodyBytes
	bodyTimeout  time.Duration
	writeTimeout time.Duration

	backends []*backendRT // by backend index
	trusted  []netip.Prefix
	caller   string // canonical caller header key, or ""
	models   []byte // the /v1/models answer without an allowlist
	// auth enforces policy.auth (nil: every caller is let in); teamModels
	// is each allowlisted team's /v1/models answer.
	auth       *auth.Authorizer
	teamModels map[string][]byte
	// mcp serves /mcp when the config sets mcp; nil otherwise.
	mcp *mcpServer

	// shadowIdle guards shadow copies when the stream-idle guard is off.
	shadowIdle time.Duration

	ready    atomic.Bool
	cut      atomic.Bool // the drain deadline passed: connections are being closed
	shadowWG sync.WaitGroup
	inflight sync.WaitGroup
	now      func() time.Time
}

// backendRT is the HTTP side of a backend.
type backendRT struct {
	st      *engine.BackendState
	base    *url.URL
	bearer  string        // "Bearer <key>" for openai/litellm; never logged
	model   string        // the model name sent upstream (model.go); "" sends the client's
	learn   *modelLearner // learns model from the backend's /v1/models; nil when model is known
	price   engine.Price
	shadow  chan struct{}
	isCloud bool
	tr      providers.Provider // anthropic, bedrock, vertex_ai: translation; nil passes through
	msgs    http.RoundTripper  // how a Messages request reaches it (messagesRoundTripper)
	bal     *balance.Balancer  // endpoint resolution: the pods; nil dispatches to base
	met     backendMetrics
	urls    sync.Map // client path → the upstream URL (newRequest)
}

// roundTripper sends the backend's upstream requests: its provider's
// translation, or rt unchanged.
func (b *backendRT) roundTripper(rt http.RoundTripper) http.RoundTripper {
	if b.tr != nil {
		return b.tr
	}
	return rt
}

// New builds a server from a validated config.
func New(cfg *proxyapi.Config, opts Options) (*Server, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Engine.Getenv == nil {
		opts.Engine.Getenv = opts.Getenv
	}
	eng, err := engine.New(cfg, opts.Engine)
	if err != nil {
		return nil, err
	}
	now := opts.Engine.Now
	if now == nil {
		now = time.Now
	}
	bud, err := budget.NewMemory(cfg.Policy.Budgets, now)
	if err != nil {
		return nil, err
	}
	var keeper budget.Keeper = budget.MemoryKeeper{M: bud}
	if opts.Budgets != nil {
		keeper = opts.Budgets
	}
	s := &Server{cfg: cfg, eng: eng, budgets: keeper, pools: opts.Pools, log: opts.Logger, audit: opts.Audit, rt: opts.Transport, maxBody: opts.MaxBodyBytes, m: newMetrics(cfg.Router.Name), tel: opts.Telemetry, now: now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, c := range opts.Collectors {
		if err := s.m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	s.setLimits(opts)
	s.initRateLimits(opts, now)
	if s.rt == nil {
		s.rt = NewUpstreamTransport()
	}
	if cfg.Policy.Audit.CallerHeader != "" {
		s.caller = textproto.CanonicalMIMEHeaderKey(cfg.Policy.Audit.CallerHeader)
	}
	if s.trusted, err = engine.ParseTrusted(cfg.Policy.Audit.TrustedProxyCIDRs); err != nil {
		return nil, fmt.Errorf("policy.audit.trustedProxyCIDRs: %w", err)
	}
	for _, st := range eng.Backends() {
		brt, err := s.newBackend(st, opts.Getenv)
		if err != nil {
			return nil, err
		}
		s.backends = append(s.backends, brt)
		s.m.health.WithLabelValues(st.Config.Name, st.Config.Tier).Set(boolf(st.Healthy()))
		s.m.quarantined.WithLabelValues(st.Config.Name).Set(0)
	}
	s.initEndpoints()
	if err := s.initAuth(cfg, opts); err != nil {
		return nil, err
	}
	if cfg.MCP != nil {
		if s.mcp, err = s.newMCPServer(cfg); err != nil {
			return nil, err
		}
	}
	s.startSharingHolds(opts) // last: nothing after it fails
	return s, nil
}

// setLimits applies the body and write bounds of opts, or their defaults.
func (s *Server) setLimits(opts Options) {
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	mem := opts.BodyMemoryBytes
	if mem <= 0 {
		mem = DefaultBodyMemoryBytes
	}
	// One body at the limit must always fit.
	s.bodyMem = semaphore.NewWeighted(max(mem, s.maxBody) + 1)
	s.smallMem = semaphore.NewWeighted(SmallBodyMemoryBytes)
	s.bodyTimeout, s.writeTimeout = opts.BodyReadTimeout, opts.ClientWriteTimeout
	if s.bodyTimeout <= 0 {
		s.bodyTimeout = DefaultBodyReadTimeout
	}
	if s.writeTimeout <= 0 {
		s.writeTimeout = DefaultClientWriteTimeout
	}
	s.shadowIdle = DefaultShadowIdle
}

// newBackend is the HTTP side of one backend: its base URL, its provider's
// translator, the credential and model of a pass-through external backend,
// and its price.
func (s *Server) newBackend(st *engine.BackendState, getenv func(string) string) (*backendRT, error) {
	b := st.Config
	brt := &backendRT{st: st, shadow: make(chan struct{}, MaxShadowPerBackend), isCloud: b.Tier == proxyapi.TierCloud, met: s.m.forBackend(b.Name)}
	if b.URL != "" {
		u, err := url.Parse(b.URL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("backend %s: url %q is not an absolute URL", b.Name, b.URL)
		}
		brt.base = u
	}
	if tr, perr := providers.New(b, getenv, s.rt); tr != nil {
		brt.tr = tr
		if perr != nil {
			s.log.Warn("backend cannot serve", "backend", b.Name, "error", perr.Error())
		}
		if brt.base == nil && tr.BaseURL() != "" {
			brt.base, _ = url.Parse(tr.BaseURL())
		}
	}
	brt.msgs = brt.messagesRoundTripper(s.rt)
	if brt.tr == nil {
		brt.model = b.Model
	}
	if b.Kind == proxyapi.KindLocal && b.LearnModel {
		brt.learn = &modelLearner{}
	}
	if b.Kind == proxyapi.KindExternal && brt.tr == nil {
		for _, c := range b.Credentials {
			if v := getenv(c.Env); v != "" {
				brt.bearer = "Bearer " + v
				break
			}
		}
	}
	var err error
	if brt.price, err = engine.ParsePrice(b.Cost); err != nil {
		return nil, fmt.Errorf("backend %s: %w", b.Name, err)
	}
	return brt, nil
}

// initAuth builds policy.auth's authorizer and the /v1/models answers: one
// per allowlisted team when allowlists are enforced.
func (s *Server) initAuth(cfg *proxyapi.Config, opts Options) error {
	created := time.Now().Unix()
	s.models = modelsJSON(cfg, created, nil)
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	client := opts.JWKSClient
	if client == nil {
		client = &http.Client{Timeout: auth.JWKSTimeout}
	}
	var err error
	if s.auth, err = auth.New(ctx, cfg.Policy.Auth, client, s.log); err != nil {
		return err
	}
	if s.auth != nil {
		// The HTTP API's audiences: policy.auth.jwt.audiences and the MCP
		// resource URL (/mcp narrows its own to the latter, routerproxy/mcp.go).
		s.auth = s.auth.ForAudiences(cfg.HTTPAudiences()...)
	}
	if s.auth.Enforced() {
		s.teamModels = map[string][]byte{}
		for _, e := range cfg.Policy.Auth.Allowlists {
			s.teamModels[e.Team] = modelsJSON(cfg, created, func(id string) bool { return s.auth.Allowed(e.Team, id) })
		}
		s.models = modelsJSON(cfg, created, func(string) bool { return false }) // an unlisted team
	}
	return nil
}

// modelsFor is the /v1/models answer for a verified team.
func (s *Server) modelsFor(team string) []byte {
	if b, ok := s.teamModels[team]; ok {
		return b
	}
	return s.models
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// NewUpstreamTransport is the default upstream transport: plain-http
// backends (in-cluster) through routerproxy/h1, which sends and reads in the
// request's goroutine; https (providers), proxied requests and anything else
// through NewTransport.
func NewUpstreamTransport() http.RoundTripper {
	return h1.New(NewTransport(), http.ProxyFromEnvironment)
}

// NewTransport is net/http's upstream transport: pooled keep-alive connections, no
// transparent compression (bodies pass through untouched and usage can be
// read), and no transport-level timeouts (the server applies the resolved
// header and stream-idle timeouts per attempt).
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: h1.DialTimeout, KeepAlive: h1.KeepAlive}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   h1.MaxIdleConnsPerHost,
		IdleConnTimeout:       h1.IdleConnTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// Engine exposes the routing engine (tests, status).
func (s *Server) Engine() *engine.Engine { return s.eng }

// SetReady flips the admin /ready answer.
func (s *Server) SetReady(v bool) { s.ready.Store(v) }

// CutAtDeadline marks that the drain deadline passed and the remaining
// connections are about to be closed: responses cut from here on are
// audited shutdown_deadline, not as a client that went away.
func (s *Server) CutAtDeadline() { s.cut.Store(true) }

// Wait blocks until in-flight requests and shadow copies finish or ctx ends.
func (s *Server) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); s.shadowWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type modelEntry struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	Created       int64    `json:"created"`
	OwnedBy       string   `json:"owned_by"`
	ContextLength int64    `json:"context_length,omitempty"`
	Architecture  modelArc `json:"architecture"`
}

type modelArc struct {
	InputModalities  []string `json:"input_modalities"`
	OutputModalities []string `json:"output_modalities"`
}

// modelsJSON renders /v1/models: one entry per published id (displayName ||
// name), with modelInfo and the reference's modality defaults.
// allowed, when set, keeps only the ids it returns true for.
func modelsJSON(cfg *proxyapi.Config, created int64, allowed func(id string) bool) []byte {
	data := []modelEntry{}
	for _, pm := range publishedModels(cfg) {
		id, b := pm.id, pm.backend
		if allowed != nil && !allowed(id) {
			continue
		}
		in := inputModalities(b)
		out := b.ModelInfo.OutputModalities
		if len(out) == 0 {
			out = []string{"text"}
		}
		owner := b.Provider
		if owner == "" {
			owner = "llmkube"
		}
		data = append(data, modelEntry{ID: id, Object: "model", Created: created, OwnedBy: owner, ContextLength: b.ModelInfo.ContextLength, Architecture: modelArc{in, out}})
	}
	b, _ := json.Marshal(struct {
		Object string       `json:"object"`
		Data   []modelEntry `json:"data"`
	}{"list", data})
	return append(b, '\n')
}

// publishedModel is one model id the router publishes, with the first
// backend that carries it.
type publishedModel struct {
	id      string
	backend proxyapi.Backend
}

// publishedModels are the ids /v1/models and the MCP tools publish: each
// backend's displayName (modelId) or name, each once, in config order.
func publishedModels(cfg *proxyapi.Config) []publishedModel {
	var out []publishedModel
	seen := map[string]bool{}
	for _, b := range cfg.Backends {
		id := b.ModelID
		if id == "" {
			id = b.Name
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, publishedModel{id, b})
		}
	}
	return out
}

// inputModalities are the model's input modalities as /v1/models publishes
// them: modelInfo's, or the reference's default (text, and image for a
// backend with the vision capability).
func inputModalities(b proxyapi.Backend) []string {
	if in := b.ModelInfo.InputModalities; len(in) > 0 {
		return in
	}
	for _, c := range b.Capabilities {
		if c == "vision" {
			return []string{"text", "image"}
		}
	}
	return []string{"text"}
}

// Handler is the serving port's handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions", "/v1/completions", "/v1/embeddings", providers.ResponsesPath:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+"; use POST")
			return
		}
		s.inference(w, r)
	case "/v1/models":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", r.Method+" is not allowed on /v1/models; use GET")
			return
		}
		models := s.models
		if s.auth != nil {
			id, err := s.auth.Authenticate(r)
			if err != nil {
				answer(w, authRefusal(err), err.Msg)
				return
			}
			models = s.modelsFor(id.Team)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(models)
	case "/health", "/healthz":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	default:
		if s.serveMCP(w, r) || s.serveMessages(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "unknown route "+strings.ToValidUTF8(r.URL.Path, "?"))
	}
}

// clientAddr resolves the audit client address.
func (s *Server) clientAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	return engine.ClientAddress(ap.Addr(), r.Header["X-Forwarded-For"], s.trusted)
}
