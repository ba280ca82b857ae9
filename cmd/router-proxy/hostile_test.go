package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/runtime"
)

func hc() runtime.HealthCheck {
	return runtime.HealthCheck{Path: "/health", Interval: runtime.Duration{Duration: 200 * time.Millisecond}, Timeout: runtime.Duration{Duration: time.Second}}
}

// TestFailClosedCountsEveryClassificationValue: a sensitive value anywhere
// in the classification header (a second instance, or a list value) makes
// the request sensitive, so it never reaches the cloud rule after the
// fail-closed one while the local backend is down.
func TestFailClosedCountsEveryClassificationValue(t *testing.T) {
	var cloudHits atomic.Int64
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		cloudHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"gpt-5","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer cloud.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // the local backend is down: connection refused

	cfg := &runtime.Config{
		APIVersion: runtime.APIVersion,
		Router:     runtime.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   runtime.Timeouts{ResponseHeader: runtime.Duration{Duration: time.Minute}, StreamIdle: runtime.Duration{Duration: time.Minute}, Quarantine: runtime.Duration{Duration: time.Minute}},
		Backends: []runtime.Backend{
			{Name: "local", ModelID: "llama", Kind: runtime.KindLocal, Tier: "local", URL: downURL, Weight: 1, HealthCheck: hc()},
			{Name: "cloud", ModelID: "gpt-5", Kind: runtime.KindLocal, Tier: "cloud", URL: cloud.URL, Weight: 1, HealthCheck: hc()},
		},
		Rules: []runtime.Rule{
			{Name: "pii-local", Match: runtime.Match{DataClassification: []string{"pii", "phi"}}, Backends: []string{"local"}, Strategy: "primary-fallback", PoolActivation: "Wait", FailClosed: true},
			{Name: "gpt", Match: runtime.Match{Models: []string{"gpt-5"}}, Backends: []string{"cloud"}, Strategy: "primary-fallback", PoolActivation: "Wait"},
		},
		Default: runtime.DefaultRoute{Strategy: "Static", Backend: "cloud"},
		Policy: runtime.Policy{
			Classification: runtime.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification", Sensitive: []string{"pii", "phi"}},
			Audit:          runtime.Audit{Sink: "stdout"},
		},
	}
	p := startProxy(t, cfg)
	send := func(values ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+p.listen+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-5"}`))
		for _, v := range values {
			req.Header.Add("X-Llmkube-Classification", v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, values := range [][]string{
		{"pii"},
		{"public", "pii"},
		{"pii, phi"},
		{"public,PHI"},
		{"public", " Pii "},
	} {
		code, body := send(values...)
		assert.Equal(t, http.StatusServiceUnavailable, code, "%q: %s", values, body)
	}
	assert.Zero(t, cloudHits.Load(), "a sensitive request reached the cloud backend")
	// Non-sensitive values still route by model.
	code, body := send("public", "internal")
	assert.Equal(t, 200, code, body)
	assert.EqualValues(t, 1, cloudHits.Load())
}
