package routerproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBudgetsTokensAndUSD(t *testing.T) {
	a := newStub(t, "a", nil) // usage 10 prompt + 5 completion
	ba := backend("a", a.URL)
	ba.Cost = &proxyapi.Cost{PromptUSD: "3", CompletionUSD: "15"}
	cfg := config(ba)
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "a")}
	cfg.Policy.Budgets = []proxyapi.Budget{
		{Name: "tokens", Scope: "router", MaxTokens: 30, Window: dur(time.Hour)},
		{Name: "usd", Scope: "rule", RuleName: "r", MaxUSD: "1", Window: dur(time.Hour)},
	}
	h := start(t, cfg)
	for range 2 {
		code, _, _ := h.post(t, chat("m"))
		require.Equal(t, 200, code)
	}
	e := h.last(t)
	assert.Equal(t, int64(15), e.TotalTokens)
	assert.Equal(t, "0.000105", e.CostUSD, "10*3/1e6 + 5*15/1e6")
	// 30 tokens used: the token budget is exhausted.
	code, body, hdr := h.post(t, chat("m"))
	assert.Equal(t, http.StatusTooManyRequests, code)
	typ, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "rate_limit_error", typ)
	assert.Equal(t, "budget_exceeded", c)
	ra, err := strconv.Atoi(hdr.Get("Retry-After"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ra, 1)
	assert.LessOrEqual(t, ra, 3600)
	assert.Equal(t, int64(2), a.hits.Load())
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeBudgetExceeded, ent.Outcome)
	assert.Equal(t, "tokens", ent.Budget)

	st := h.srv.Status().Budgets
	assert.Equal(t, proxyapi.BudgetStatus{Name: "tokens", TokensUsed: 30, USDUsed: "0.00021", Utilization: "1.000000"}, st[0])
	assert.Equal(t, "0.00021", st[1].USDUsed)
	assert.Equal(t, "0.000210", st[1].Utilization)
}

func TestBudgetTeamScope(t *testing.T) {
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "team", Scope: "team", HeaderKey: "x-llmkube-team", MaxTokens: 15, Window: dur(time.Hour)}}
	h := start(t, cfg)
	code, _, _ := h.post(t, chat("m"), "X-LLMKube-Team", "red")
	require.Equal(t, 200, code)
	code, _, _ = h.post(t, chat("m"), "x-llmkube-team", "red")
	assert.Equal(t, http.StatusTooManyRequests, code, "red spent its 15 tokens")
	code, _, _ = h.post(t, chat("m"), "x-llmkube-team", "blue")
	assert.Equal(t, 200, code, "blue has its own counter")
	h.settle(t)
	st := h.srv.Status().Budgets[0]
	assert.Equal(t, int64(30), st.TokensUsed, "team use is summed")
	assert.Equal(t, "1.000000", st.Utilization, "utilization is the highest team's")
}

func TestStreamUsageRequestedAndRead(t *testing.T) {
	s := newStub(t, "s", sseHandler("s", 2, 0))
	cfg := config(backend("s", s.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1000, Window: dur(time.Hour)}}
	h := start(t, cfg)
	code, body, _ := h.post(t, `{"model":"m","stream":true,"messages":[]}`)
	require.Equal(t, 200, code)
	assert.Contains(t, body, `"usage"`)
	assert.Contains(t, string(s.Last().Body), `"stream_options":{"include_usage":true}`)
	e := h.last(t)
	assert.Equal(t, int64(10), e.TotalTokens)
	assert.False(t, e.TokensEstimated)
	assert.Equal(t, int64(10), h.srv.Status().Budgets[0].TokensUsed)

	// Existing stream_options are kept and include_usage is forced on.
	h.post(t, `{"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1}}`)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(s.Last().Body, &sent))
	assert.Equal(t, map[string]any{"include_usage": true, "x": 1.0}, sent["stream_options"])

	// A present but null stream_options is replaced, not duplicated (the
	// later null would win in most JSON parsers and usage would never come).
	h.post(t, `{"model":"m","stream":true,"stream_options":null}`)
	sentBody := string(s.Last().Body)
	assert.Equal(t, 1, strings.Count(sentBody, `"stream_options"`), sentBody)
	sent = nil
	require.NoError(t, json.Unmarshal([]byte(sentBody), &sent))
	assert.Equal(t, map[string]any{"include_usage": true}, sent["stream_options"])
}

// TestUpstreamErrorsAreNotCharged: a 4xx answer without usage generated
// nothing, so it is neither estimated nor charged.
func TestUpstreamErrorsAreNotCharged(t *testing.T) {
	s := newStub(t, "s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"max_tokens is too large","type":"invalid_request_error"}}`)
	})
	cfg := config(backend("s", s.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1000, Window: dur(time.Hour)}}
	h := start(t, cfg)
	code, _, _ := h.post(t, chat("m"))
	require.Equal(t, http.StatusBadRequest, code, "the upstream's 4xx reaches the client")
	e := h.last(t)
	assert.Zero(t, e.TotalTokens)
	assert.False(t, e.TokensEstimated)
	assert.Zero(t, h.srv.Status().Budgets[0].TokensUsed)
}

func TestMissingUsageIsEstimated(t *testing.T) {
	s := newStub(t, "s", func(w http.ResponseWriter, r *http.Request) {
		providertest.JSON(w, `{"model":"s","choices":[{"message":{"content":"no usage here"}}]}`)
	})
	st := newStub(t, "st", sseHandler("st", 2, 0)) // never sends usage unless asked... force no usage:
	stNo := newStub(t, "st-no", func(w http.ResponseWriter, r *http.Request) {
		providertest.SSE(w, `{"choices":[{"delta":{"content":"abc"}}]}`, "[DONE]")
	})
	_ = st
	cfg := config(backend("s", s.URL), backend("st-no", stNo.URL))
	r := rule("stream", "primary-fallback", "st-no")
	r.Match.Models = []string{"streamy"}
	cfg.Rules = []proxyapi.Rule{r}
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1 << 40, Window: dur(time.Hour)}}
	h := start(t, cfg)
	h.post(t, chat("m"))
	e := h.last(t)
	assert.True(t, e.TokensEstimated)
	assert.Greater(t, e.TotalTokens, int64(0), "never charge zero")
	used := h.srv.Status().Budgets[0].TokensUsed
	assert.Equal(t, e.TotalTokens, used)

	h.post(t, `{"model":"streamy","stream":true}`)
	e = h.last(t)
	assert.True(t, e.TokensEstimated)
	assert.Greater(t, e.TotalTokens, int64(0))
	assert.Equal(t, used+e.TotalTokens, h.srv.Status().Budgets[0].TokensUsed)
}

func TestBudgetConcurrency(t *testing.T) {
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1 << 40, Window: dur(time.Hour)}}
	h := start(t, cfg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				code, _, _ := h.post(t, chat("m"))
				assert.Equal(t, 200, code)
			}
		})
	}
	wg.Wait()
	h.settle(t)
	assert.Equal(t, int64(200*15), h.srv.Status().Budgets[0].TokensUsed)
}

func TestAuditFields(t *testing.T) {
	ext := newStub(t, "ext", nil)
	be := backend("ext", ext.URL)
	be.Kind, be.Tier, be.Provider, be.Model = proxyapi.KindExternal, "cloud", "openai", "gpt-5"
	be.Credentials = []proxyapi.Credential{{Purpose: "apiKey", Env: "LLMKUBE_EXT_OPENAI_API_KEY"}}
	be.Cost = &proxyapi.Cost{PromptUSD: "1", CompletionUSD: "2"}
	cfg := config(be)
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "ext")}
	cfg.Policy.Audit = proxyapi.Audit{Sink: "stdout", IncludeRequestBody: true, CallerHeader: "x-llmkube-client", LogClientAddress: true, TrustedProxyCIDRs: []string{"127.0.0.1"}}
	const secret = "sk-very-secret-key"
	h := start(t, cfg, func(o *Options) {
		o.Getenv = func(k string) string {
			if k == "LLMKUBE_EXT_OPENAI_API_KEY" {
				return secret
			}
			return ""
		}
	})
	caller := "team-\tblue\xff" + strings.Repeat("x", 200)
	code, _, _ := h.post(t, chat("m"),
		"X-LLMKube-Client", caller,
		"X-LLMKube-Classification", "Internal",
		"Authorization", "Bearer client-token",
		"X-Forwarded-For", "203.0.113.9, 10.9.9.9",
		"X-Forwarded-For", "127.0.0.1")
	require.Equal(t, 200, code)

	// Upstream: provider key, substituted model, no client credential.
	got := ext.Last()
	assert.Equal(t, "Bearer "+secret, got.Header.Get("Authorization"))
	assert.Contains(t, string(got.Body), `"model":"gpt-5"`)

	e := h.last(t)
	assert.Equal(t, "r", e.Router)
	assert.Equal(t, "r", e.Rule)
	assert.Equal(t, "ext", e.Backend)
	assert.Equal(t, "cloud", e.Tier)
	assert.Equal(t, "m", e.Model)
	assert.Equal(t, "internal", e.Classification)
	assert.Equal(t, 200, e.Status)
	assert.Equal(t, proxyapi.OutcomeOK, e.Outcome)
	assert.Equal(t, int64(15), e.TotalTokens)
	assert.Equal(t, "0.00002", e.CostUSD)
	assert.Len(t, e.Caller, 128)
	assert.Equal(t, "team-?blue?xxx", e.Caller[:14])
	assert.Equal(t, "10.9.9.9", e.Client, "X-Forwarded-For read right to left past trusted proxies")
	assert.JSONEq(t, chat("m"), string(e.RequestBody))

	line, err := json.Marshal(e)
	require.NoError(t, err)
	assert.NotContains(t, string(line), secret)
	assert.NotContains(t, string(line), "client-token")

	// Without includeRequestBody, and with an untrusted peer, no body and the peer address.
	cfg2 := config(backend("a", newStub(t, "a", nil).URL))
	cfg2.Policy.Audit = proxyapi.Audit{Sink: "stdout", LogClientAddress: true}
	h2 := start(t, cfg2)
	h2.post(t, chat("m"), "X-Forwarded-For", "203.0.113.9")
	e2 := h2.last(t)
	assert.Nil(t, e2.RequestBody)
	assert.Equal(t, "127.0.0.1", e2.Client)
}

func TestAuditFileSink(t *testing.T) {
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	p := filepath.Join(t.TempDir(), "sub", "audit.jsonl")
	cfg.Policy.Audit = proxyapi.Audit{Sink: "file", FilePath: p}
	sink, err := NewAuditSink(context.Background(), cfg, io.Discard)
	require.NoError(t, err)
	h := start(t, cfg, func(o *Options) { o.Audit = sink })
	for range 3 {
		h.post(t, chat("m"))
	}
	require.NoError(t, h.srv.Wait(t.Context()))
	require.NoError(t, sink.Close(context.Background()))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 3)
	var e proxyapi.AuditEntry
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &e))
	assert.Equal(t, "a", e.Backend)
}

func TestAuditStdoutSink(t *testing.T) {
	var buf syncbuf.Buffer
	s := NewWriterSink(&buf, nil)
	s.Write(&proxyapi.AuditEntry{Router: "r", Outcome: "ok"})
	require.NoError(t, s.Close(context.Background()))
	assert.Contains(t, buf.String(), `"outcome":"ok"`)
	assert.True(t, strings.HasSuffix(buf.String(), "}\n"))
}

func TestAuditOTLPSink(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(200)
	}))
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Audit = proxyapi.Audit{Sink: "otlp"}
	sink, err := NewAuditSink(context.Background(), cfg, io.Discard)
	require.NoError(t, err)
	h := start(t, cfg, func(o *Options) { o.Audit = sink })
	h.post(t, chat("m"))
	require.NoError(t, h.srv.Wait(t.Context()))
	require.NoError(t, sink.Close(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got, "the collector received the export")
	all := bytes.Join(got, nil)
	assert.Contains(t, string(all), `"outcome":"ok"`, "the record body is the JSON entry")
	assert.Contains(t, string(all), "router-proxy")
}

// TestAuditSinkIsTheConfigsNotTheEnvironments: the operator renders its
// collector into every router-proxy (for traces and GenAI metrics); a router
// whose audit sink is stdout still writes its audit records to stdout, and
// none reaches the collector.
func TestAuditSinkIsTheConfigsNotTheEnvironments(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer col.Close()
	t.Setenv(wellknown.OTLPEndpointEnv, col.URL)
	t.Setenv(wellknown.OTLPHeadersEnv, "x-tenant=edge")
	a := newStub(t, "a", nil)
	for _, sink := range []proxyapi.AuditSink{"", proxyapi.SinkStdout} {
		cfg := config(backend("a", a.URL))
		cfg.Policy.Audit = proxyapi.Audit{Sink: sink}
		var buf syncbuf.Buffer
		s, err := NewAuditSink(context.Background(), cfg, &buf)
		require.NoError(t, err)
		_, ok := s.(*WriterSink)
		require.True(t, ok, "sink %q with an OTLP endpoint in the environment is %T, want stdout's *WriterSink", sink, s)
		h := start(t, cfg, func(o *Options) { o.Audit = s })
		h.post(t, chat("m"))
		require.NoError(t, h.srv.Wait(t.Context()))
		require.NoError(t, s.Close(context.Background()))
		assert.Contains(t, buf.String(), `"outcome":"ok"`, "sink %q: the record is on stdout", sink)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, paths, "/v1/logs", "no audit record is exported")
}

func TestBadInput(t *testing.T) {
	a := newStub(t, "a", nil)
	h := start(t, config(backend("a", a.URL)), func(o *Options) { o.MaxBodyBytes = 1024 })
	cases := []struct {
		name, path, body string
		code             int
		errCode          string
	}{
		{"too large", "/v1/chat/completions", `{"model":"m","x":"` + strings.Repeat("a", 2000) + `"}`, 413, "request_too_large"},
		{"malformed", "/v1/chat/completions", `{"model":`, 400, "invalid_json"},
		{"not an object", "/v1/chat/completions", `[1,2]`, 400, "invalid_json"},
		{"model not a string", "/v1/chat/completions", `{"model":7}`, 400, "invalid_json"},
		{"missing model", "/v1/chat/completions", `{"messages":[]}`, 400, "model_required"},
		{"null", "/v1/embeddings", `null`, 400, "model_required"},
		{"empty", "/v1/completions", ``, 400, "invalid_json"},
		{"unknown route", "/v1/nope", `{}`, 404, "unknown_url"},
		{"root", "/", ``, 404, "unknown_url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, hdr := h.do(t, tc.path, tc.body)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, "application/json", hdr.Get("Content-Type"))
			typ, c, _ := providertest.OpenAIError(t, body)
			assert.Equal(t, "invalid_request_error", typ)
			assert.Equal(t, tc.errCode, c)
		})
	}
	// Chunked body over the limit (no Content-Length).
	req, _ := http.NewRequest(http.MethodPost, h.front.URL+"/v1/chat/completions", io.MultiReader(strings.NewReader(`{"model":"m","x":"`), strings.NewReader(strings.Repeat("b", 4096)+`"}`)))
	req.ContentLength = -1
	resp, err := h.front.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 413, resp.StatusCode)
	// GET on an inference route.
	resp, err = h.front.Client().Get(h.front.URL + "/v1/chat/completions")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 405, resp.StatusCode)
	assert.Equal(t, int64(0), a.hits.Load())
}

// Arbitrary bodies never panic the server.
func FuzzInferenceBody(f *testing.F) {
	for _, s := range []string{`{"model":"m"}`, `{"model":"m","stream":true}`, `{"model":"m","stream":true,"stream_options":null}`, `{`, `{"model":null}`, `{"stream":"yes","model":"m"}`, "\x00\xff"} {
		f.Add(s)
	}
	up := httptest.NewServer(okHandler("a"))
	f.Cleanup(up.Close)
	s, err := New(config(backend("a", up.URL)), Options{MaxBodyBytes: 4096})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		s.Handler().ServeHTTP(rec, req)
		if rec.Code == 0 {
			t.Fatal("no status")
		}
	})
}
