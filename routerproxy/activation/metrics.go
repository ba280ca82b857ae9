package activation

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PromMetrics is Metrics as Prometheus collectors.
type PromMetrics struct {
	swaps    *prometheus.CounterVec
	swapTime *prometheus.HistogramVec
	hold     *prometheus.HistogramVec
	gaveUp   *prometheus.CounterVec
	skips    *prometheus.CounterVec
	resident *prometheus.GaugeVec
}

// NewMetrics builds the pool metrics of a router's proxy.
func NewMetrics(router string) *PromMetrics {
	c := prometheus.Labels{"router": router}
	buckets := []float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	return &PromMetrics{
		swaps:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_pool_swaps_total", Help: "ModelPool swaps this replica completed, by pool, from and to member.", ConstLabels: c}, []string{"pool", "from", "to"}),
		swapTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "llmkube_router_pool_swap_duration_seconds", Help: "How long a swap took, from start to the target serving.", ConstLabels: c, Buckets: buckets}, []string{"pool"}),
		hold:     prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "llmkube_router_pool_hold_duration_seconds", Help: "How long requests were held for a member that was not resident, by outcome (served, budget_exceeded, client_cancelled, swap_failed, skipped).", ConstLabels: c, Buckets: buckets}, []string{"pool", "member", "outcome"}),
		gaveUp:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_pool_holds_abandoned_total", Help: "Held requests that gave up: past the swap budget or the client left.", ConstLabels: c}, []string{"pool", "member", "reason"}),
		skips:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "llmkube_router_pool_ifidle_skips_total", Help: "Requests that skipped a pooled backend because the pool was busy (IfIdle).", ConstLabels: c}, []string{"pool", "member"}),
		resident: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmkube_router_pool_resident", Help: "1 for the member this replica believes resident.", ConstLabels: c}, []string{"pool", "member"}),
	}
}

// Collectors lists the collectors to register.
func (m *PromMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.swaps, m.swapTime, m.hold, m.gaveUp, m.skips, m.resident}
}

// Swap implements Metrics.
func (m *PromMetrics) Swap(pool, from, to string, d time.Duration) {
	m.swaps.WithLabelValues(pool, from, to).Inc()
	m.swapTime.WithLabelValues(pool).Observe(d.Seconds())
}

// Hold implements Metrics.
func (m *PromMetrics) Hold(pool, member, outcome string, d time.Duration) {
	m.hold.WithLabelValues(pool, member, outcome).Observe(d.Seconds())
	if outcome == HoldBudgetExceeded || outcome == HoldCancelled {
		m.gaveUp.WithLabelValues(pool, member, outcome).Inc()
	}
}

// Skip implements Metrics.
func (m *PromMetrics) Skip(pool, member string) { m.skips.WithLabelValues(pool, member).Inc() }

// Resident implements Metrics.
func (m *PromMetrics) Resident(pool string, members []string, resident string) {
	for _, x := range members {
		v := 0.0
		if x == resident {
			v = 1
		}
		m.resident.WithLabelValues(pool, x).Set(v)
	}
}
