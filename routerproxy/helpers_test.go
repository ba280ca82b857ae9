package routerproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/require"
)

// stub is a loopback upstream that records what it received.
type stub struct {
	*httptest.Server
	providertest.Recorder
	name string
	hits atomic.Int64
}

// newStub starts an upstream; h may be nil for a plain OpenAI answer with usage.
func newStub(t *testing.T, name string, h http.HandlerFunc) *stub {
	t.Helper()
	s := &stub{name: name}
	if h == nil {
		h = okHandler(name)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.WriteHeader(200)
			return
		}
		s.Record(r)
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func okHandler(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		providertest.JSON(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"from %s"}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, name, name)
	}
}

func statusHandler(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
}

// sseHandler streams n chunks every gap and a final usage chunk when asked.
func sseHandler(name string, n int, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		f := w.(http.Flusher)
		f.Flush()
		for i := range n {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s-%d \"}}]}\n\n", name, i)
			f.Flush()
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
		}
		if strings.Contains(mustBody(r), `"include_usage":true`) {
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// heldStream opens an SSE stream, flushes its head and sends nothing more
// until release is closed (then rest) or the request ends.
func heldStream(release <-chan struct{}, rest string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-release:
			fmt.Fprint(w, rest)
		case <-r.Context().Done():
		}
	}
}

// sizedStream answers events as one SSE body with a Content-Length.
func sizedStream(events string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(events)))
		fmt.Fprint(w, events)
	}
}

func mustBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	return string(b)
}

func backend(name, url string) proxyapi.Backend {
	return proxyapi.Backend{Name: name, ModelID: name, Kind: proxyapi.KindLocal, Tier: "local", URL: url, Weight: 1,
		HealthCheck: proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: time.Hour}, Timeout: proxyapi.Duration{Duration: time.Second}},
		ModelInfo:   proxyapi.ModelInfo{InputModalities: []string{"text"}, OutputModalities: []string{"text"}}}
}

func config(backends ...proxyapi.Backend) *proxyapi.Config {
	return &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: dur(30 * time.Second), StreamIdle: dur(30 * time.Second), Quarantine: dur(time.Hour)},
		Backends:   backends,
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: backends[0].Name},
		Policy: proxyapi.Policy{
			Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification", Sensitive: []string{"pii", "phi"}},
			Audit:          proxyapi.Audit{Sink: "stdout"},
		},
	}
}

// withJWKS lets the proxy fetch the local issuer's JWKS.
func withJWKS(o *Options) { o.JWKSClient = &http.Client{Timeout: 5 * time.Second} }

func rule(name string, strategy proxyapi.Strategy, backends ...string) proxyapi.Rule {
	return proxyapi.Rule{Name: name, Backends: backends, Strategy: strategy, PoolActivation: "Wait"}
}

func dur(d time.Duration) proxyapi.Duration { return proxyapi.Duration{Duration: d} }

// probeDown fails the named backend's probes until it is judged unhealthy.
func probeDown(eng *engine.Engine, name string) {
	for range engine.ProbesFailedToUnhealthy {
		eng.ReportProbe(eng.Backend(name), false, "down")
	}
}

// memSink keeps audit entries.
type memSink struct {
	mu sync.Mutex
	e  []proxyapi.AuditEntry
}

func (m *memSink) Write(e *proxyapi.AuditEntry) { m.mu.Lock(); m.e = append(m.e, *e); m.mu.Unlock() }
func (m *memSink) Close(context.Context) error  { return nil }
func (m *memSink) all() []proxyapi.AuditEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]proxyapi.AuditEntry(nil), m.e...)
}

// last returns the latest audit entry once every sent request is audited.
func (h *harness) last(t *testing.T) proxyapi.AuditEntry {
	t.Helper()
	h.settle(t)
	a := h.audit.all()
	require.NotEmpty(t, a)
	return a[len(a)-1]
}

type harness struct {
	srv   *Server
	front *httptest.Server
	audit *memSink
	sent  atomic.Int64
}

// settle waits until every request sent so far has finished its
// bookkeeping (the response is flushed to the client before charging,
// metrics and audit).
func (h *harness) settle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return int64(len(h.audit.all())) >= h.sent.Load() }, 5*time.Second, time.Millisecond)
}

func start(t *testing.T, cfg *proxyapi.Config, mod ...func(*Options)) *harness {
	t.Helper()
	h := &harness{audit: &memSink{}}
	opts := Options{Audit: h.audit, Getenv: func(string) string { return "" }}
	for _, f := range mod {
		f(&opts)
	}
	s, err := New(cfg, opts)
	require.NoError(t, err)
	s.SetReady(true)
	h.srv = s
	h.front = httptest.NewServer(s.Handler())
	t.Cleanup(h.front.Close)
	return h
}

// post sends a chat completion and returns status, body and headers.
func (h *harness) post(t *testing.T, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	return h.do(t, "/v1/chat/completions", body, hdr...)
}

// ok sends a request that must be answered 200 and returns the answer.
func (h *harness) ok(t *testing.T, path, body string, hdr ...string) string {
	t.Helper()
	code, b, _ := h.do(t, path, body, hdr...)
	require.Equal(t, 200, code, b)
	return b
}

// okChat is ok for a chat completion.
func (h *harness) okChat(t *testing.T, body string, hdr ...string) string {
	t.Helper()
	return h.ok(t, "/v1/chat/completions", body, hdr...)
}

func (h *harness) do(t *testing.T, path, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.front.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	h.sent.Add(1)
	resp, err := h.front.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func chat(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hello"}]}`
}

func servedBy(t *testing.T, body string) string {
	t.Helper()
	var v struct {
		Model string `json:"model"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v.Model
}
