package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The binary's active probes, as a platform sees them through a fail-closed
// rule whose only backend is the local model: one lost probe refuses
// nothing (the status says so), two in a row make the backend unhealthy
// (the rule refuses, and the log says why, once), and a passing probe
// brings it back (logged once too).
func TestProbeJudgementAsAProcess(t *testing.T) {
	var lose atomic.Int64 // probes still to fail; negative: fail every probe
	lose.Store(1)
	looked := make(chan struct{}) // the probe after the lost one waits for it
	var probes atomic.Int64
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			if probes.Add(1) == 2 {
				<-looked
			}
			switch n := lose.Load(); {
			case n > 0:
				lose.Add(-1)
				w.WriteHeader(http.StatusServiceUnavailable)
			case n < 0:
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"model":"local","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	t.Cleanup(model.Close)
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{{Name: "local", ModelID: "local", Kind: proxyapi.KindLocal, Tier: "local", URL: model.URL, Weight: 1,
			HealthCheck: proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: 2 * time.Second}, Timeout: proxyapi.Duration{Duration: time.Hour}}}},
		Rules: []proxyapi.Rule{{Name: "pii", Backends: []string{"local"}, Strategy: "primary-fallback", FailClosed: true,
			Match: proxyapi.Match{DataClassification: []string{"pii"}}}},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "local"},
	}
	p := startProxy(t, cfg)
	local := func() proxyapi.BackendStatus {
		st := p.status(t)
		require.Len(t, st.Backends, 1)
		return st.Backends[0]
	}
	pii := []string{"x-llmkube-classification", "pii"}

	// One lost probe: still healthy, still served.
	require.Eventually(t, func() bool { return local().Message != "" }, time.Minute, 20*time.Millisecond, "the first probe fails")
	st := local()
	assert.True(t, st.Healthy, "one failed probe does not judge the backend")
	assert.Contains(t, st.Message, "1 of 2 in a row")
	code, body := p.post(t, `{"model":"local"}`, pii...)
	require.Equal(t, http.StatusOK, code, body)
	close(looked)
	require.Eventually(t, func() bool { return local().Message == "" }, time.Minute, 20*time.Millisecond, "the next probe passes")
	assert.True(t, local().Healthy)
	assert.NotContains(t, p.stderr.String(), "backend unhealthy")

	// Down for good: the second failure in a row judges it, and the
	// fail-closed rule refuses instead of sending the request anywhere else.
	lose.Store(-1)
	require.Eventually(t, func() bool { return !local().Healthy }, time.Minute, 20*time.Millisecond)
	assert.Equal(t, "probe /health: status 503", local().Message)
	code, body = p.post(t, `{"model":"local"}`, pii...)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "fail_closed")
	require.Eventually(t, func() bool {
		return strings.Contains(p.stderr.String(), `"msg":"backend unhealthy: its probes failed","backend":"local","inARow":2,"error":"probe /health: status 503"`)
	}, time.Minute, 20*time.Millisecond, "the log says why, once the line has crossed the pipe")

	lose.Store(0)
	require.Eventually(t, func() bool { return local().Healthy }, time.Minute, 20*time.Millisecond)
	code, body = p.post(t, `{"model":"local"}`, pii...)
	assert.Equal(t, http.StatusOK, code, body)
	require.Eventually(t, func() bool {
		return strings.Contains(p.stderr.String(), `"msg":"backend healthy again","backend":"local","why":"its probe passed"`)
	}, time.Minute, 20*time.Millisecond)
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "backend unhealthy"), "a transition is logged once, not every failed probe")
	m := regexp.MustCompile(`llmkube_router_probe_failures_total\{backend="local",router="r"\} (\d+)`).FindStringSubmatch(p.metrics(t))
	require.NotNil(t, m, "the failed probes' counter is exported")
	failed, _ := strconv.Atoi(m[1])
	assert.GreaterOrEqual(t, failed, 3, "every failed probe is counted: the lost one and at least two in a row")
}
