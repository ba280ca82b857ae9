package routerproxy

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/internal/tick"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler serves the admin port: /metrics, /ready and the status JSON
// at wellknown.StatusPath.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{})
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refreshGauges()
		metrics.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET "+wellknown.StatusPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Status())
	})
	return mux
}

// Status is the live state the controller reads.
func (s *Server) Status() proxyapi.Status {
	st := proxyapi.Status{Router: s.cfg.Router}
	for _, b := range s.eng.Backends() {
		st.Backends = append(st.Backends, s.eng.Status(b))
	}
	st.Budgets = s.budgets.Status()
	st.RateLimits = s.limits.RateStatus()
	if s.pools != nil {
		st.Pools = s.pools.Status()
	}
	if k := s.auth.APIKeys(); k != nil {
		st.APIKeys = k.Status()
	}
	if hr, ok := s.budgets.(HealthReporter); ok {
		healthy, msg := hr.Healthy()
		st.BudgetStore = &proxyapi.BudgetStoreStatus{Healthy: healthy, Failure: hr.Failure(), Message: msg}
		if healthy {
			st.BudgetStore.Message = ""
		}
	}
	return st
}

func (s *Server) refreshGauges() {
	for _, b := range s.eng.Backends() {
		s.m.health.WithLabelValues(b.Name(), b.Config.Tier).Set(boolf(b.Healthy()))
		s.m.quarantined.WithLabelValues(b.Name()).Set(boolf(s.eng.Quarantined(b)))
		s.refreshHeld(b)
	}
	if hr, ok := s.budgets.(HealthReporter); ok {
		healthy, _ := hr.Healthy()
		s.m.storeHealthy.Set(boolf(healthy))
	}
	for _, b := range s.budgets.Status() {
		f, _ := strconv.ParseFloat(b.Utilization, 64)
		s.m.budgetUtil.WithLabelValues(b.Name).Set(f)
	}
	s.refreshRateGauges()
}

// RunProbes probes every backend's health path on its interval until ctx
// ends. A probe passes when the backend answers below 500 within the probe
// timeout (a 401/404 from a provider still proves it reachable); backends
// that can never serve (missing credential, unsupported provider) are not
// probed.
func (s *Server) RunProbes(ctx context.Context) {
	for _, b := range s.backends {
		// An empty path means the backend has no health route to probe
		// (Bedrock, Vertex): passive quarantine alone judges it.
		if b.base == nil || b.st.StaticProblem() != "" || b.st.Config.HealthCheck.Path == "" {
			continue
		}
		go s.probeLoop(ctx, b)
	}
}

// FailedProbeRetry is how soon a backend whose probe failed is probed
// again; each further failure doubles it, up to the probe interval. The
// second failure in a row makes the backend unhealthy
// (engine.ProbesFailedToUnhealthy), so a backend that went down is judged
// within about a second of its first failed probe, not a whole interval
// later, and one that stays down is probed no more often than every
// interval.
const FailedProbeRetry = time.Second

func (s *Server) probeLoop(ctx context.Context, b *backendRT) {
	every := b.st.Config.HealthCheck.Interval.Duration // defaulted by proxyapi
	retry := FailedProbeRetry
	for {
		wait := every
		if !s.probe(ctx, b) {
			wait = min(retry, every)
			retry *= 2
		} else {
			retry = FailedProbeRetry
		}
		if !tick.Sleep(ctx, wait) {
			return
		}
	}
}

// probe probes b once and records the result; it reports false only for a
// failed probe (not for a skipped one).
func (s *Server) probe(ctx context.Context, b *backendRT) bool {
	if s.onDemand(b) {
		return true
	}
	failure, judged := s.probeHTTP(ctx, b)
	switch {
	case !judged:
		return true // the proxy is stopping
	case failure == "":
		s.reportProbe(b, true, "")
		return true
	}
	if s.pools != nil && b.st.Config.Pool != nil {
		// The member may have been swapped out (by another replica) since
		// the pool was last read: read it again before judging the member,
		// which would otherwise lose its requests (or send them down the
		// default route) until the next probe.
		s.pools.Refresh(b.st.Config)
		if s.onDemand(b) {
			return true
		}
	}
	s.reportProbe(b, false, failure)
	return false
}

// reportProbe hands one probe's judgement to the engine: a failure is
// counted, and a change of the backend's health is logged, once per change
// (a ModelPool member found not resident turns healthy here too).
func (s *Server) reportProbe(b *backendRT, ok bool, msg string) {
	if !ok {
		s.m.probeFailures.WithLabelValues(b.st.Name()).Inc()
	}
	switch s.eng.ReportProbe(b.st, ok, msg) {
	case engine.ProbeTurnedUnhealthy:
		s.log.Warn("backend unhealthy: its probes failed", "backend", b.st.Name(), "inARow", engine.ProbesFailedToUnhealthy, "error", msg)
	case engine.ProbeTurnedHealthy:
		s.log.Info("backend healthy again", "backend", b.st.Name(), "why", cmp.Or(msg, "its probe passed"))
	}
}

// probeHTTP sends b's health check request: failure says why it failed (""
// when it passed); judged is false when ctx ended first.
func (s *Server) probeHTTP(ctx context.Context, b *backendRT) (failure string, judged bool) {
	hc := b.st.Config.HealthCheck
	path := hc.Path
	pctx, cancel := context.WithTimeout(ctx, hc.Timeout.Duration) // defaulted by proxyapi
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, joinURL(b.base, path, ""), nil)
	if err != nil {
		return "probe: " + err.Error(), true
	}
	if b.bearer != "" {
		req.Header.Set("Authorization", b.bearer)
	}
	resp, err := s.rt.RoundTrip(req)
	if ctx.Err() != nil {
		if err == nil {
			resp.Body.Close()
		}
		return "", false
	}
	if err != nil {
		return "probe " + path + ": " + err.Error(), true
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return "probe " + path + ": status " + strconv.Itoa(resp.StatusCode), true
	}
	return "", true
}

// onDemand reports whether b is a ModelPool member with no pod to probe, and
// records that: a member that is not resident is made resident on demand, so
// it stays eligible; while its pool is being read it is judged next time.
func (s *Server) onDemand(b *backendRT) bool {
	if s.pools == nil || b.st.Config.Pool == nil {
		return false
	}
	resident, known := s.pools.Resident(b.st.Config)
	if !known {
		return true
	}
	if !resident {
		s.reportProbe(b, true, "not resident in ModelPool "+b.st.Config.Pool.Name+"; activated on demand")
		return true
	}
	return false
}
