package routerproxy

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
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// BenchmarkHop measures the proxy's own cost of one non-streamed request with
// the client, the proxy and the upstream in one process: "direct" is client to
// upstream, "proxied" goes through a Server with 20 rules (the 20th matches),
// a router budget and a file audit log. The difference is what the proxy adds
// without the cross-process wake-ups that `make bench-proxy` also measures.
func BenchmarkHop(b *testing.B) {
	up, px := hopServers(b, nil)
	for _, target := range []struct{ name, url string }{{"direct", up}, {"proxied", px}} {
		b.Run(target.name, func(b *testing.B) { hopLoop(b, target.url, nil) })
	}
}

const hopBody = `{"model":"bench-8b","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}`

// hopServers starts BenchmarkHop's upstream and a proxy in front of it and
// returns their URLs. withTel, when set, makes the proxy's telemetry (nil:
// off).
func hopServers(b *testing.B, withTel func(*proxyapi.Config) *telemetry.Telemetry) (upstream, proxied string) {
	const answer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`
	up := stubUpstream(b, answer)
	cfg := hopConfig(b, up)
	var tel *telemetry.Telemetry
	if withTel != nil {
		tel = withTel(cfg)
	}
	return up, hopProxy(b, cfg, Options{Telemetry: tel})
}

// hopProxy serves cfg, auditing to the file at its audit path, with the
// other options opts, and returns its URL.
func hopProxy(b *testing.B, cfg *proxyapi.Config, opts Options) string {
	f, err := os.Create(cfg.Policy.Audit.FilePath)
	if err != nil {
		b.Fatal(err)
	}
	opts.Audit = NewWriterSink(f, f)
	s, err := New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(s.Handler())
	b.Cleanup(px.Close)
	return px.URL
}

func hopConfig(b *testing.B, upstream string) *proxyapi.Config {
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
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: fmt.Sprintf("b%d", i), ModelID: fmt.Sprintf("b%d", i), Kind: proxyapi.KindLocal, Tier: "local", URL: upstream, Weight: 1, HealthCheck: hc,
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
	return cfg
}

// stubUpstream starts an upstream that answers every request with the JSON
// answer and returns its URL.
func stubUpstream(b *testing.B, answer string) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	b.Cleanup(up.Close)
	return up.URL
}

// hopLoop sends BenchmarkHop's request to url b.N times; hdr are extra
// request headers (name, value pairs).
func hopLoop(b *testing.B, url string, hdr []string) {
	postLoop(b, url+"/v1/chat/completions", hopBody, hdr)
}

// postLoop posts body to endpoint b.N times as tenant gold, with the extra
// headers hdr (name, value pairs), and fails on any answer but 200.
func postLoop(b *testing.B, endpoint, body string, hdr []string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Tenant", "gold")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
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
}
