package routerproxy

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/llmkube/llmkube-compile/internal/metricnames"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

type metrics struct {
	served        sync.Map // servedKey → *servedSeries
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	firstToken    *prometheus.HistogramVec
	attempts      *prometheus.CounterVec
	failClosed    *prometheus.CounterVec
	health        *prometheus.GaugeVec
	quarantined   *prometheus.GaugeVec
	quarantines   *prometheus.CounterVec
	holds         *prometheus.CounterVec // quota.go
	held          *prometheus.GaugeVec
	probeFailures *prometheus.CounterVec
	tokens        *prometheus.CounterVec
	cost          *prometheus.CounterVec
	estimated     *prometheus.CounterVec
	budgetUtil    *prometheus.GaugeVec
	budgetReject  *prometheus.CounterVec
	storeHealthy  prometheus.Gauge
	shadowSent    *prometheus.CounterVec
	shadowDropped *prometheus.CounterVec
	sloPromoted   *prometheus.CounterVec
	inflight      prometheus.Gauge
	// detections counts the content classifier's detections, one counter
	// per detector (made at start, so each reads 0 before it fires).
	detections map[classifier.Detector]prometheus.Counter
}

func newMetrics(router string) *metrics {
	c := prometheus.Labels{"router": router}
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_requests_total", Help: "Requests by rule, serving backend, outcome and status code.", ConstLabels: c}, []string{"rule", "backend", "outcome", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "llmkube_router_request_duration_seconds", Help: "Whole request duration, including streamed bodies.", ConstLabels: c, Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}, []string{"rule", "backend"})
	m.firstToken = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "llmkube_router_first_token_seconds", Help: "Time from dispatch to the first response body byte.", ConstLabels: c, Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}, []string{"backend"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_upstream_attempts_total", Help: "Dispatch attempts by backend and result (ok, 5xx, network_error, header_timeout, cancelled).", ConstLabels: c}, []string{"backend", "result"})
	m.failClosed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_fail_closed_total", Help: "Requests refused by a failClosed rule.", ConstLabels: c}, []string{"rule", "classification"})
	m.health = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_backend_health", Help: fmt.Sprintf("1 when the backend is healthy (can serve, and fewer than %d probes in a row failed).", engine.ProbesFailedToUnhealthy), ConstLabels: c}, []string{"backend", "tier"})
	m.quarantined = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_backend_quarantined", Help: "1 while passive health checks skip the backend.", ConstLabels: c}, []string{"backend"})
	m.holds = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_upstream_holds_total", Help: "Backends held after their provider refused a request for its quota, by backend and reason (rate_limited, quota_exhausted).", ConstLabels: c}, []string{"backend", "reason"})
	m.held = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_backend_held_seconds", Help: "Seconds until the backend's quota hold ends, by reason (rate_limited, quota_exhausted); 0 when not held.", ConstLabels: c}, []string{"backend", "reason"})
	m.quarantines = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_quarantines_total", Help: "Passive quarantines by backend and reason.", ConstLabels: c}, []string{"backend", "reason"})
	m.probeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_probe_failures_total", Help: fmt.Sprintf("Failed active health probes by backend; a backend turns unhealthy after %d in a row.", engine.ProbesFailedToUnhealthy), ConstLabels: c}, []string{"backend"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_tokens_total", Help: "Tokens served, by backend and kind (prompt, completion).", ConstLabels: c}, []string{"backend", "kind"})
	m.cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_cost_usd_total", Help: "Estimated cost from costPerMillionTokens.", ConstLabels: c}, []string{"backend"})
	m.estimated = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_usage_estimated_total", Help: "Responses without usage whose tokens were estimated.", ConstLabels: c}, []string{"backend"})
	m.budgetUtil = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_budget_utilization", Help: "Fraction of the budget consumed in its window (highest team for team budgets).", ConstLabels: c}, []string{"budget"})
	m.budgetReject = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_budget_rejections_total", Help: "Requests refused with 429 by an exhausted budget.", ConstLabels: c}, []string{"budget"})
	m.shadowSent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_shadow_requests_total", Help: "Shadow copies by target backend and result.", ConstLabels: c}, []string{"backend", "result"})
	m.shadowDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_shadow_dropped_total", Help: "Shadow copies dropped because 4 were already running for the backend.", ConstLabels: c}, []string{"backend"})
	m.sloPromoted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_slo_promotions_total", Help: "Requests whose rule promoted its fallback because the primary's P95 first-token latency exceeded latencySLOMs.", ConstLabels: c}, []string{"rule"})
	m.storeHealthy = prometheus.NewGauge(prometheus.GaugeOpts{Name: "llmkube_router_budget_store_healthy", Help: "1 while the shared budget store answers (always 1 for in-memory budgets).", ConstLabels: c})
	m.storeHealthy.Set(1)
	detections := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_classifier_detections_total", Help: "Requests in which a content classifier detector fired (detector and hybrid modes), by detector.", ConstLabels: c}, []string{"detector"})
	m.detections = map[classifier.Detector]prometheus.Counter{}
	for _, d := range classifier.All() {
		m.detections[d] = detections.WithLabelValues(d.Name())
	}
	m.reg.MustRegister(detections)
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "llmkube_router_inflight_requests", Help: "Requests being served.", ConstLabels: c})
	m.reg.MustRegister(m.requests, m.duration, m.firstToken, m.attempts, m.failClosed, m.health, m.quarantined, m.quarantines, m.holds, m.held, m.probeFailures,
		m.tokens, m.cost, m.estimated, m.budgetUtil, m.budgetReject, m.shadowSent, m.shadowDropped, m.sloPromoted, m.inflight, m.storeHealthy,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// backendMetrics are the backend's series every served request touches,
// resolved once: a label lookup per request and series cost more than the
// increment.
type backendMetrics struct {
	firstToken                prometheus.Observer
	prompt, completion, costs prometheus.Counter
	attemptOK                 prometheus.Counter
}

func (m *metrics) forBackend(name string) backendMetrics {
	return backendMetrics{
		firstToken: m.firstToken.WithLabelValues(name),
		prompt:     m.tokens.WithLabelValues(name, "prompt"),
		completion: m.tokens.WithLabelValues(name, "completion"),
		costs:      m.cost.WithLabelValues(name),
		attemptOK:  m.attempts.WithLabelValues(name, "ok"),
	}
}

// servedKey is one answered request's labels.
type servedKey struct {
	rule, backend, outcome string
	status                 int
}

// servedSeries are the series every answered request moves, resolved once
// per label set instead of looked up by label (and the status formatted) on
// every request.
type servedSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer // nil without a backend
}

// observeServed counts an answered request and, when a backend answered,
// its duration.
func (m *metrics) observeServed(k servedKey, seconds float64) {
	v, ok := m.served.Load(k)
	if !ok {
		ss := &servedSeries{requests: m.requests.WithLabelValues(k.rule, k.backend, k.outcome, strconv.Itoa(k.status))}
		if k.backend != "" {
			ss.duration = m.duration.WithLabelValues(k.rule, k.backend)
		}
		v, _ = m.served.LoadOrStore(k, ss)
	}
	ss := v.(*servedSeries)
	ss.requests.Inc()
	if ss.duration != nil {
		ss.duration.Observe(seconds)
	}
}

// MetricNames lists the metric families the router-proxy's /metrics can
// serve, the ModelPool ones included: the chart's alerts and dashboard are
// checked against it (test/e2e).
func MetricNames() []string {
	m := newMetrics("")
	for _, c := range activation.NewMetrics("").Collectors() {
		m.reg.MustRegister(c)
	}
	return metricnames.Of(m.reg)
}
