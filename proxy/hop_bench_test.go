package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// BenchmarkHop measures the proxy's own cost of one non-streamed request with
// the client, the proxy and the upstream in one process: "direct" is client to
// upstream, "proxied" goes through a Server with 20 rules (the 20th matches),
// a router budget and a file audit log. The difference is what the proxy adds
// without the cross-process wake-ups that `make bench-proxy` also measures.
func BenchmarkHop(b *testing.B) {
	const answer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`
	const body = `{"model":"bench-8b","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer up.Close()

	hc := proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: time.Hour}, Timeout: proxyapi.Duration{Duration: time.Second}}
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "bench", Namespace: "bench"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Second}},
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: "b0"},
		Policy: proxyapi.Policy{
			Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification", Sensitive: []string{"pii"}},
			Budgets:        []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1 << 50, Window: proxyapi.Duration{Duration: time.Hour}}},
			Audit:          proxyapi.Audit{Sink: "file", FilePath: filepath.Join(b.TempDir(), "audit.log")},
		},
	}
	for i := range 2 {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: fmt.Sprintf("b%d", i), ModelID: fmt.Sprintf("b%d", i), Kind: proxyapi.KindLocal, Tier: "local", URL: up.URL, Weight: 1, HealthCheck: hc,
			Cost:      &proxyapi.Cost{PromptUSD: "0.1", CompletionUSD: "0.3"},
			ModelInfo: proxyapi.ModelInfo{InputModalities: []string{"text"}, OutputModalities: []string{"text"}}})
	}
	for i := range 20 {
		model := fmt.Sprintf("family-%d-*", i)
		if i == 19 {
			model = "bench-*"
		}
		cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: fmt.Sprintf("r%d", i), Backends: []string{"b0", "b1"}, Strategy: "primary-fallback", PoolActivation: "Wait",
			Match: proxyapi.Match{Models: []string{model}, Headers: []proxyapi.HeaderMatch{{Name: "x-tenant", Value: "gold"}}}})
	}
	f, err := os.Create(cfg.Policy.Audit.FilePath)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(cfg, Options{Audit: NewWriterSink(f, f)})
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(s.Handler())
	defer px.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"proxied", px.URL}} {
		b.Run(target.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, target.url+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Tenant", "gold")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
