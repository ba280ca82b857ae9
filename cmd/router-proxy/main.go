// Command router-proxy serves a ModelRouter compiled for the Proxy data
// plane: an OpenAI-compatible API on --listen and /metrics, /ready and
// /status on --admin-listen.
//
//	router-proxy --config FILE --listen ADDR --admin-listen ADDR [--shutdown-timeout D]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	// CA roots for https providers when the image has no system trust store.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/routerproxy/endpoints"
	"github.com/llmkube/llmkube-compile/routerproxy/h1"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// DefaultMaxConnections bounds the serving port's connections, as nginx's
// default worker_connections (512) does. A connection sending a head at the
// limits (64 KiB, MaxHeaderFields lines) holds about 110 KiB of heap until
// its request ends (the head, its parsed header, buffers, goroutine), so
// 512 of them hold about 55 MiB: with the request bodies' budget (at most
// 3 x 48 MiB) that stays under the pod's default 256Mi.
// TestHostileConnectionsStayUnderMemoryLimit holds it.
const DefaultMaxConnections = 512

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h / --help printed the flags.
	case err != nil:
		fmt.Fprintln(os.Stderr, "router-proxy:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	f, rest, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.showVersion {
		fmt.Fprintln(stdout, version.String(images.RouterProxy))
		return nil
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected arguments %v", rest)
	}
	if err := f.kube.validate(); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// Logs go to stderr: stdout carries the audit log when its sink is stdout.
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	tuneGC()

	// Exiting on another generation's file leaves the pod unready: the
	// rollout replaces it, or the kubelet's restart finds the matching file.
	cfg, cfgSHA, err := proxyapi.LoadGeneration(f.configPath, os.Getenv(wellknown.ConfigHashEnv))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	sink, err := routerproxy.NewAuditSink(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	tel, err := telemetry.New(ctx, cfg, telemetry.Options{Sampling: f.traceSampling})
	if err != nil {
		return err
	}
	opts := routerproxy.Options{Logger: log, Audit: sink, BodyReadTimeout: f.bodyTimeout, ClientWriteTimeout: f.writeTimeout, BodyMemoryBytes: f.bodyMemory, Context: ctx, Telemetry: tel}
	if f.budgetStore != "" {
		store, err := budget.NewStore(cfg, budget.StoreOptions{URL: f.budgetStore, Password: os.Getenv(wellknown.BudgetStorePasswordEnv),
			Failure: f.storeFailure, Timeout: f.storeTimeout, Logger: log})
		if err != nil {
			return err
		}
		defer store.Close()
		go store.Reconcile(ctx, time.Second)
		opts.Budgets = store
		opts.RateLimits = store
		// The replicas share their providers' quota holds on the same store.
		opts.Holds = store.Holds(externalBackends(cfg))
	}
	// Swaps outlive SIGTERM's drain: a load other callers wait for is not
	// cut short by the signal, only by the process ending.
	poolCtx, stopPools := context.WithCancel(context.Background())
	defer stopPools()
	if err := startPools(poolCtx, cfg, f.kube, f.pool, &opts, log); err != nil {
		return err
	}
	srv, err := routerproxy.New(cfg, opts)
	if err != nil {
		return err
	}
	warnStaticProblems(srv, log)

	sv, err := startServers(f, srv, log)
	if err != nil {
		return err
	}
	probeCtx, stopProbes := context.WithCancel(context.Background())
	defer stopProbes()
	srv.RunProbes(probeCtx)
	startEndpoints(probeCtx, srv, f.kube, f.scrape, log)
	srv.SetReady(true)
	log.Info("router-proxy serving", "router", cfg.Router.Name, "namespace", cfg.Router.Namespace, "listen", sv.addr, "admin", sv.adminAddr,
		"backends", len(cfg.Backends), "rules", len(cfg.Rules), "budgets", len(cfg.Policy.Budgets), "rateLimits", len(cfg.Policy.RateLimits), "auditSink", cfg.Policy.Audit.Sink, "tracing", tel.Tracing(), "configSHA256", cfgSHA)

	select {
	case <-ctx.Done():
	case err := <-sv.errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}

	sv.drain(f, srv, log)
	stopProbes()
	if sv.admin != nil {
		_ = sv.admin.Close()
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer fcancel()
	if err := sink.Close(fctx); err != nil {
		log.Warn("audit flush", "error", err)
	}
	if err := tel.Shutdown(fctx); err != nil {
		log.Warn("telemetry flush", "error", err)
	}
	log.Info("stopped")
	return nil
}

// flags are the command line's settings.
type flags struct {
	configPath, listen, admin string
	shutdown, drainDelay      time.Duration
	logLevel                  string
	kube                      kubeFlags
	pool                      poolFlags
	scrape                    time.Duration
	showVersion, debugPprof   bool
	bodyTimeout, writeTimeout time.Duration
	bodyMemory                int64
	maxConns                  int
	budgetStore, storeFailure string
	storeTimeout              time.Duration
	traceSampling             string
}

// parseFlags reads the command line; rest is what follows the flags.
func parseFlags(args []string, stderr io.Writer) (f *flags, rest []string, err error) {
	f = &flags{}
	fs := flag.NewFlagSet("router-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.configPath, "config", "/etc/llmkube/router/config.json", "router-proxy config (JSON, apiVersion "+proxyapi.APIVersion+")")
	fs.StringVar(&f.listen, "listen", ":8080", "serving address (OpenAI API and /health)")
	fs.StringVar(&f.admin, "admin-listen", fmt.Sprintf(":%d", wellknown.AdminPort), "admin address (/metrics, /ready, "+wellknown.StatusPath+"); empty disables it")
	fs.DurationVar(&f.shutdown, "shutdown-timeout", 30*time.Second, "how long everything after SIGTERM may take: the drain delay, then in-flight requests and streams finishing")
	fs.DurationVar(&f.drainDelay, "drain-delay", DefaultDrainDelay, "after SIGTERM, how long the proxy keeps accepting and serving (readiness failing, each connection closed after its next response) while the Service's endpoints and kube-proxy move clients to other replicas; part of --shutdown-timeout")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.kube.path, "kubeconfig", "", "kubeconfig for endpoint resolution and ModelPool activation (default: in-cluster config; only read when a backend uses resolution: endpoint or is a ModelPool member)")
	fs.Float64Var(&f.kube.qps, "kube-api-qps", DefaultKubeAPIQPS, "requests per second the proxy's Kubernetes API client may send on average (ModelPool swaps and resyncs read members and the Lease)")
	fs.IntVar(&f.kube.burst, "kube-api-burst", DefaultKubeAPIBurst, "requests the proxy's Kubernetes API client may send at once above --kube-api-qps")
	fs.DurationVar(&f.scrape, "engine-metrics-interval", endpoints.DefaultScrapeInterval, "how often vLLM pods' /metrics are read for LoadAware balancing")
	fs.BoolVar(&f.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&f.debugPprof, "debug-pprof", false, "serve Go's profiler at /debug/pprof/ on the admin address (off by default: profiles reveal internals)")
	fs.DurationVar(&f.bodyTimeout, "body-read-timeout", routerproxy.DefaultBodyReadTimeout, "how long reading one request body may take")
	fs.DurationVar(&f.writeTimeout, "client-write-timeout", routerproxy.DefaultClientWriteTimeout, "how long one write to a client may block, for every answer (a client that stops reading loses its response and its connection; no backend is blamed)")
	fs.Int64Var(&f.bodyMemory, "max-body-memory", routerproxy.DefaultBodyMemoryBytes, "bytes of request bodies held at once across all requests")
	fs.IntVar(&f.maxConns, "max-connections", DefaultMaxConnections, "client connections served at once; one more is answered 503 with Retry-After: 1 and closed (0: no bound but descriptors)")
	fs.StringVar(&f.budgetStore, "budget-store", "", "redis://HOST:PORT/DB: keep budget counters in Redis, shared by every replica and kept across restarts, and share upstream quota holds there (password from $"+wellknown.BudgetStorePasswordEnv+"); empty keeps both in memory, per replica")
	fs.StringVar(&f.storeFailure, "budget-store-failure", wellknown.BudgetStoreFailClosed, "while the budget store is down: closed refuses requests with 503, open serves them and counts them per replica until it is back")
	fs.DurationVar(&f.pool.poll, "pool-poll-interval", activation.DefaultPollInterval, "how often a ModelPool swap re-reads the members and the Lease")
	fs.DurationVar(&f.pool.resync, "pool-resync-interval", activation.DefaultResyncInterval, "how long the belief about a ModelPool's resident member may go unchecked")
	fs.DurationVar(&f.pool.lease, "pool-lease-duration", activation.DefaultLeaseDuration, "how long a ModelPool swap Lease lives without renewal: a crashed holder's swap is taken over after it")
	fs.StringVar(&f.traceSampling, "trace-sampling", "", "share of new traces sampled, 0 to 1, always following the caller's traceparent decision; empty: OTEL_TRACES_SAMPLER (default parentbased_always_on). Tracing is on only with an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)")
	fs.DurationVar(&f.storeTimeout, "budget-store-timeout", budget.DefaultTimeout, "how long one admission may wait for the budget store")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return f, fs.Args(), nil
}

// warnStaticProblems logs each backend that cannot serve whatever happens
// (a missing credential, say).
func warnStaticProblems(srv *routerproxy.Server, log *slog.Logger) {
	for _, b := range srv.Engine().Backends() {
		if p := b.StaticProblem(); p != "" {
			log.Warn("backend cannot serve", "backend", b.Name(), "reason", p)
		}
	}
}

// tuneGC: a proxy's heap is small and short-lived: trade a little memory
// for less GC CPU unless the operator set GOGC / GOMEMLIMIT. Measured with
// make bench-proxy: 200 costs no CPU against 400 and keeps the peak RSS
// under load at about 37 MB (400: 46 MB; 100: 35 MB and 10% more CPU per
// request).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(160 << 20)
	}
}

// servers are the serving port's server and the admin one (nil when
// --admin-listen is empty); errc has the error each ends with.
type servers struct {
	serving *h1.Server
	admin   *http.Server
	errc    chan error
	addr    string // the serving address
	// adminAddr is the admin address bound ("" when disabled): with port
	// 0 the log line is the only place a caller learns it.
	adminAddr string
}

func startServers(f *flags, srv *routerproxy.Server, log *slog.Logger) (*servers, error) {
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, err
	}
	sv := &servers{
		serving: &h1.Server{Handler: srv.Handler(), ReadHeaderTimeout: h1.DefaultReadHeaderTimeout, IdleTimeout: h1.DefaultIdleTimeout, WriteTimeout: f.writeTimeout, MaxConns: f.maxConns, Log: log},
		errc:    make(chan error, 2),
		addr:    ln.Addr().String(),
	}
	go func() { sv.errc <- sv.serving.Serve(ln) }()
	if f.admin == "" {
		return sv, nil
	}
	aln, err := net.Listen("tcp", f.admin)
	if err != nil {
		return nil, err
	}
	sv.adminAddr = aln.Addr().String()
	var h http.Handler = srv.AdminHandler()
	if f.debugPprof {
		h = withPprof(h)
	}
	sv.admin = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { sv.errc <- sv.admin.Serve(aln) }()
	return sv, nil
}

// drain fails readiness at once, but keeps accepting and serving for the
// drain delay, closing each connection after its next response: the
// endpoint leaves the Service and kube-proxy's rules while this replica
// still answers, so a rollout or scale-down fails no request (the real
// cluster tests found connections refused and reset without it). Then it
// stops accepting and lets in-flight requests and streams (and shadow
// copies) finish, all within the shutdown timeout.
func (sv *servers) drain(f *flags, srv *routerproxy.Server, log *slog.Logger) {
	log.Info("shutting down", "drainDelay", f.drainDelay.String(), "timeout", f.shutdown.String())
	srv.SetReady(false)
	dctx, cancel := context.WithTimeout(context.Background(), f.shutdown)
	defer cancel()
	sv.serving.Drain()
	waitDrainDelay(dctx, f.drainDelay, sv.errc)
	if err := sv.serving.Shutdown(dctx); err != nil {
		log.Warn("drain deadline reached; closing remaining connections", "error", err)
		srv.CutAtDeadline()
		_ = sv.serving.Close()
		// Closed connections make the remaining handlers fail fast; give
		// them a moment to unwind and write their audit entries.
		gctx, gcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Wait(gctx)
		gcancel()
	}
	_ = srv.Wait(dctx)
}

// withPprof adds net/http/pprof's handlers to the admin handler.
func withPprof(admin http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", admin)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// DefaultDrainDelay is how long a terminating router-proxy keeps serving:
// long enough for the EndpointSlice update to reach kube-proxy on every node
// (about a second in a quiet cluster), short against the kubelet's default
// 30 s grace period.
const DefaultDrainDelay = 5 * time.Second

// waitDrainDelay waits out the drain delay, unless the shutdown deadline
// comes first or the server stops on its own.
func waitDrainDelay(ctx context.Context, d time.Duration, errc <-chan error) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-errc:
	}
}

// externalBackends names the router's external backends: the ones a
// provider's quota holds.
func externalBackends(cfg *proxyapi.Config) []string {
	var out []string
	for _, b := range cfg.Backends {
		if b.Kind == proxyapi.KindExternal {
			out = append(out, b.Name)
		}
	}
	return out
}
