package routerproxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestActiveProbes(t *testing.T) {
	var healthy atomic.Bool
	var probes atomic.Int64
	up := newStub(t, "up", nil)
	probed := newStub(t, "probed", nil)
	// A separate server answers the probe path so the result can be flipped.
	probeSrv := http.NewServeMux()
	probeSrv.HandleFunc("/healthz-custom", func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if healthy.Load() {
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(503)
	})
	probeSrv.HandleFunc("/", okHandler("probed"))
	ps := newStub(t, "probed", probeSrv.ServeHTTP)
	_ = probed
	bp := backend("probed", ps.URL)
	bp.HealthCheck = proxyapi.HealthCheck{Path: "/healthz-custom", Interval: dur(20 * time.Millisecond), Timeout: dur(time.Second)}
	cfg := config(backend("up", up.URL), bp)
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "probed", "up")}
	h := start(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.srv.RunProbes(ctx)
	eng := h.srv.Engine()
	b := eng.Backend("probed")

	require.Eventually(t, func() bool { return probes.Load() > 0 && !b.Healthy() }, 5*time.Second, 5*time.Millisecond)
	st := eng.Status(b)
	assert.False(t, st.Healthy)
	assert.Contains(t, st.Message, "status 503")
	assert.False(t, st.LastProbeTime.IsZero())
	_, body, _ := h.post(t, chat("m"))
	assert.Equal(t, "up", servedBy(t, body), "an unhealthy backend is skipped")

	healthy.Store(true)
	require.Eventually(t, b.Healthy, 5*time.Second, 5*time.Millisecond)
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "probed", servedBy(t, body))
}

func TestQuarantineThenHalfOpen(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	flaky := newStub(t, "flaky", failWhile(&fail, okHandler("flaky")))
	other := newStub(t, "other", nil)
	cfg := config(backend("flaky", flaky.URL), backend("other", other.URL))
	cfg.Timeouts.Quarantine = dur(15 * time.Second)
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "flaky", "other")}
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	h := start(t, cfg, func(o *Options) { o.Engine.Now = clk.Now })
	eng := h.srv.Engine()
	b := eng.Backend("flaky")

	_, body, _ := h.post(t, chat("m"))
	assert.Equal(t, "other", servedBy(t, body))
	assert.Equal(t, int64(1), flaky.hits.Load())
	assert.True(t, eng.Quarantined(b))

	// Inside the window the backend is skipped.
	clk.Step(14 * time.Second)
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "other", servedBy(t, body))
	assert.Equal(t, int64(1), flaky.hits.Load())

	// After it, one half-open trial; it fails and re-quarantines.
	clk.Step(2 * time.Second)
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "other", servedBy(t, body))
	assert.Equal(t, int64(2), flaky.hits.Load())
	assert.True(t, eng.Quarantined(b))

	// Next window: the trial succeeds and closes the breaker.
	fail.Store(false)
	clk.Step(16 * time.Second)
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "flaky", servedBy(t, body))
	assert.False(t, eng.Quarantined(b))
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "flaky", servedBy(t, body))
}

// While a half-open trial is in flight, other requests skip the backend.
func TestHalfOpenSingleTrial(t *testing.T) {
	release := make(chan struct{})
	var failing atomic.Bool
	failing.Store(true)
	slow := newStub(t, "slow", failWhile(&failing, func(w http.ResponseWriter, r *http.Request) {
		<-release
		okHandler("slow")(w, r)
	}))
	other := newStub(t, "other", nil)
	cfg := config(backend("slow", slow.URL), backend("other", other.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "slow", "other")}
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	h := start(t, cfg, func(o *Options) { o.Engine.Now = clk.Now })
	h.post(t, chat("m")) // quarantines slow
	failing.Store(false)
	clk.Step(2 * time.Hour)

	done := make(chan string)
	go func() {
		_, body, _ := h.post(t, chat("m"))
		done <- body
	}()
	require.Eventually(t, func() bool { return slow.hits.Load() == 2 }, 5*time.Second, time.Millisecond)
	for range 3 {
		_, body, _ := h.post(t, chat("m"))
		assert.Equal(t, "other", servedBy(t, body))
	}
	close(release)
	assert.Equal(t, "slow", servedBy(t, <-done))
	assert.Equal(t, int64(2), slow.hits.Load())
}

func TestLatencySLOPromotesFallback(t *testing.T) {
	var slowMode atomic.Bool
	slowMode.Store(true)
	primary := newStub(t, "primary", func(w http.ResponseWriter, r *http.Request) {
		if slowMode.Load() {
			time.Sleep(30 * time.Millisecond)
		}
		okHandler("primary")(w, r)
	})
	secondary := newStub(t, "secondary", nil)
	cfg := config(backend("primary", primary.URL), backend("secondary", secondary.URL))
	r := rule("slo", "primary-fallback", "primary", "secondary")
	r.Match.LatencySLO = dur(time.Millisecond)
	cfg.Rules = []proxyapi.Rule{r}
	h := start(t, cfg, func(o *Options) { o.Engine.SLOMinSamples = 5; o.Engine.SLOWindow = time.Hour })
	for range 5 {
		_, body, _ := h.post(t, chat("m"))
		assert.Equal(t, "primary", servedBy(t, body))
	}
	h.settle(t)
	p95, ok := h.srv.Engine().P95(h.srv.Engine().Backend("primary"))
	require.True(t, ok)
	assert.Greater(t, p95, time.Millisecond)
	_, body, _ := h.post(t, chat("m"))
	assert.Equal(t, "secondary", servedBy(t, body), "P95 over the SLO promotes the fallback")
	assert.True(t, h.last(t).Promoted)

	// The primary stays a last resort.
	probeDown(h.srv.Engine(), "secondary")
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "primary", servedBy(t, body))
}

// TestEmptyHealthPathIsNotProbed: a backend without a health route (Bedrock,
// Vertex) gets no active probe, only passive quarantine. A sibling backend
// with a path is probed meanwhile, which shows the probers ran.
func TestEmptyHealthPathIsNotProbed(t *testing.T) {
	var probed, unprobed atomic.Int64
	counting := func(n *atomic.Int64, name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				n.Add(1)
			}
			okHandler(name)(w, r)
		}
	}
	withPath := newStub(t, "with-path", counting(&probed, "with-path"))
	// A plain server, so a probe of any path (even /health) is counted.
	noPath := httptest.NewServer(counting(&unprobed, "no-path"))
	t.Cleanup(noPath.Close)
	a := backend("with-path", withPath.URL)
	a.HealthCheck = proxyapi.HealthCheck{Path: "/probe", Interval: dur(5 * time.Millisecond), Timeout: dur(time.Second)}
	b := backend("no-path", noPath.URL)
	b.HealthCheck = proxyapi.HealthCheck{Interval: dur(5 * time.Millisecond), Timeout: dur(time.Second)}
	cfg := config(a, b)
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "no-path")}
	h := start(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.srv.RunProbes(ctx)
	require.Eventually(t, func() bool { return probed.Load() >= 3 }, 5*time.Second, 5*time.Millisecond)
	assert.Zero(t, unprobed.Load(), "a backend without a health path is never probed")
	_, body, _ := h.post(t, chat("m"))
	assert.Equal(t, "no-path", servedBy(t, body))
}

// probedFailClosed serves a fail-closed rule whose only backend, name, has
// health answer its probes on /ready (probed hourly, so every probe after
// the first is a failed one's retry; a probe may take an hour, so health
// may hold one). startProbes starts the prober; it
// stops when the test ends.
func probedFailClosed(t *testing.T, name string, health http.HandlerFunc) (h *harness, b *engine.BackendState, startProbes func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", health)
	mux.HandleFunc("/", okHandler(name))
	up := newStub(t, name, mux.ServeHTTP)
	be := backend(name, up.URL)
	be.HealthCheck = proxyapi.HealthCheck{Path: "/ready", Interval: dur(time.Hour), Timeout: dur(time.Hour)}
	cfg := config(be)
	r := rule("pii", "primary-fallback", name)
	r.FailClosed = true
	cfg.Rules = []proxyapi.Rule{r}
	h = start(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return h, h.srv.Engine().Backend(name), func() { h.srv.RunProbes(ctx) }
}

// One lost probe refuses nothing: the backend stays eligible (its status
// says the probe failed), and the probe is retried after FailedProbeRetry,
// not after the whole interval (an hour), which passes and clears the
// message. The retry is held until the test has looked.
func TestOneLostProbeKeepsTheBackendEligible(t *testing.T) {
	var probes atomic.Int64
	looked := make(chan struct{})
	h, b, startProbes := probedFailClosed(t, "flaky", func(w http.ResponseWriter, r *http.Request) {
		if probes.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		<-looked
	})
	eng := h.srv.Engine()
	startProbes()
	require.Eventually(t, func() bool { return eng.Status(b).Message != "" }, time.Minute, time.Millisecond, "the first probe fails")
	assert.True(t, b.Healthy(), "one failed probe is not enough to judge it unhealthy")
	assert.Contains(t, eng.Status(b).Message, "1 of 2 in a row")
	code, body, _ := h.post(t, chat("m"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "flaky", servedBy(t, body), "the fail-closed rule still serves")
	close(looked)

	require.Eventually(t, func() bool { return eng.Status(b).Message == "" }, time.Minute, 10*time.Millisecond, "probed again after FailedProbeRetry, not the hour's interval")
	require.EqualValues(t, 2, probes.Load())
	assert.True(t, b.Healthy())
}

// Probes that keep failing make the backend unhealthy at the second in a
// row, FailedProbeRetry after the first (the interval is an hour): a
// fail-closed rule whose only backend it is refuses. A passing probe makes
// it eligible again.
func TestProbesFailingInARowMakeTheBackendUnhealthy(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	var b *engine.BackendState
	var mu sync.Mutex
	var healthyAtProbe []bool // b's judged health as each probe arrives
	h, b, startProbes := probedFailClosed(t, "local", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		healthyAtProbe = append(healthyAtProbe, b.Healthy())
		mu.Unlock()
		if down.Load() {
			w.WriteHeader(503)
		}
	})
	eng := h.srv.Engine()
	startProbes()
	require.Eventually(t, func() bool { return !b.Healthy() }, time.Minute, 10*time.Millisecond, "the second failed probe comes after FailedProbeRetry, not the hour's interval")
	mu.Lock()
	assert.Equal(t, []bool{true, true}, healthyAtProbe[:engine.ProbesFailedToUnhealthy], "healthy until the second failure was judged")
	mu.Unlock()
	assert.Equal(t, "probe /ready: status 503", eng.Status(b).Message)
	code, body, _ := h.post(t, chat("m"))
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "fail_closed")
	assert.GreaterOrEqual(t, testutil.ToFloat64(h.srv.m.probeFailures.WithLabelValues("local")), float64(engine.ProbesFailedToUnhealthy), "every failed probe is counted")

	down.Store(false)
	require.Eventually(t, b.Healthy, time.Minute, 10*time.Millisecond, "the next probe (2 s after the second failure) passes")
	code, body, _ = h.post(t, chat("m"))
	require.Equal(t, http.StatusOK, code, body)
}

// failWhile answers 500 while fail is set, and as next afterwards: a
// backend that fails until the test lets it recover.
func failWhile(fail *atomic.Bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(500)
			return
		}
		next(w, r)
	}
}
