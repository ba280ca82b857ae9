package main

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
	"github.com/llmkube/llmkube-compile/test/otlptest"
	"github.com/llmkube/llmkube-compile/test/poll"
)

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = v.BoolValue
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_ArrayValue:
			var l []any
			for _, e := range v.ArrayValue.Values {
				l = append(l, attrs([]*commonpb.KeyValue{{Key: "v", Value: e}})["v"])
			}
			out[kv.Key] = l
		}
	}
	return out
}

// newGenAIUpstream answers like an OpenAI-compatible server (a stream when
// asked) and records each request's trace headers; fail makes it answer 500.
const (
	secretPrompt     = "PROMPT-SECRET-7f3a"
	secretCompletion = "COMPLETION-SECRET-91bc"
)

func newGenAIUpstream(t *testing.T, fail bool) *stub {
	return newStub(t, everyRequest, func(w http.ResponseWriter, _ *http.Request, body string) {
		if fail {
			w.WriteHeader(500)
			return
		}
		if strings.Contains(body, `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"%s-%d\"}}]}\n\n", secretCompletion, i)
				fl.Flush()
				time.Sleep(5 * time.Millisecond)
			}
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":3,\"total_tokens\":14}}\n\ndata: [DONE]\n\n")
			return
		}
		providertest.JSON(w, `{"choices":[{"message":{"content":%q}}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`, secretCompletion)
	})
}

// TestOpenTelemetryOverOTLP drives the real binary with an OTLP endpoint:
// the client's trace is continued by a server span, each attempt of a
// failover and the shadow copy are client spans under it, an in-cluster
// backend is handed the attempt's trace context and an external provider
// none, the GenAI metrics arrive with the conventions' units and buckets,
// and neither a prompt nor a completion reaches the collector.
func TestOpenTelemetryOverOTLP(t *testing.T) {
	rc := otlptest.New(t)
	bad, good, shadow, ext := newGenAIUpstream(t, true), newGenAIUpstream(t, false), newGenAIUpstream(t, false), newGenAIUpstream(t, false)
	cfg := oneBackend(good.URL, proxyapi.KindLocal)
	cfg.Backends = []proxyapi.Backend{
		{Name: "bad", ModelID: "llama-bad", Kind: proxyapi.KindLocal, Tier: "local", URL: bad.URL, Weight: 1},
		{Name: "good", ModelID: "llama-good", Kind: proxyapi.KindLocal, Tier: "local", URL: good.URL, Weight: 1},
		{Name: "mirror", ModelID: "llama-next", Kind: proxyapi.KindLocal, Tier: "local", URL: shadow.URL, Weight: 1},
		{Name: "cloud", ModelID: "cloud", Kind: proxyapi.KindExternal, Provider: "openai", Model: "gpt-x", Tier: "cloud", URL: ext.URL, Weight: 1},
	}
	cfg.Rules = []proxyapi.Rule{
		{Name: "failover", Strategy: proxyapi.StrategyShadow, Backends: []string{"bad", "good", "mirror"}, Match: proxyapi.Match{Models: []string{"chat"}}},
		{Name: "external", Strategy: proxyapi.StrategyPrimaryFallback, Backends: []string{"cloud"}, Match: proxyapi.Match{Models: []string{"cloud"}}},
	}
	cfg.Default = proxyapi.DefaultRoute{Strategy: "Static", Backend: "good"}
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1 << 40, Window: proxyapi.Duration{Duration: time.Hour}}}
	p := startProxyEnv(t, cfg, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_METRIC_EXPORT_INTERVAL=60000"})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	clientTP := "00-" + traceID + "-" + parentID + "-01"
	code, body := p.post(t, `{"model":"chat","messages":[{"role":"user","content":"`+secretPrompt+`"}]}`, "Traceparent", clientTP, "Tracestate", "vendor=opaque")
	require.Equal(t, 200, code, body)
	code, body = p.post(t, `{"model":"chat","stream":true,"messages":[{"role":"user","content":"`+secretPrompt+`"}]}`)
	require.Equal(t, 200, code, body)
	code, body = p.post(t, `{"model":"cloud","messages":[{"role":"user","content":"`+secretPrompt+`"}]}`, "Traceparent", clientTP, "Tracestate", "vendor=opaque", "Baggage", "user=alice")
	require.Equal(t, 200, code, body)
	require.Eventually(t, func() bool { return len(shadow.headers()) == 2 }, 5*time.Second, 10*time.Millisecond, "both shadow copies were sent")

	// SIGTERM flushes the exporters.
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, poll.Recv(t, p.done, 20*time.Second, "router-proxy did not stop"))
	// Spans.
	id := func(b []byte) string { return hex.EncodeToString(b) }
	var servers []*tracepb.Span
	children := map[string][]*tracepb.Span{}
	for _, s := range rc.Spans() {
		if s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			servers = append(servers, s)
		} else {
			children[id(s.ParentSpanId)] = append(children[id(s.ParentSpanId)], s)
		}
	}
	require.Len(t, servers, 3, "one server span per request")
	first := servers[slices.IndexFunc(servers, func(s *tracepb.Span) bool {
		a := attrs(s.Attributes)
		return a["llmkube.rule"] == "failover" && a["llmkube.stream"] == false
	})]
	assert.Equal(t, traceID, id(first.TraceId), "the client's trace is continued")
	assert.Equal(t, parentID, id(first.ParentSpanId), "the server span is the client's span's child")
	assert.Equal(t, "chat chat", first.Name)
	fa := attrs(first.Attributes)
	for k, want := range map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "chat", "gen_ai.response.model": "llama-good", "gen_ai.provider.name": "llmkube",
		"gen_ai.usage.input_tokens": int64(11), "gen_ai.usage.output_tokens": int64(7), "llmkube.router": "r", "llmkube.backend": "good", "llmkube.tier": "local",
		"llmkube.outcome": "ok", "llmkube.attempts": int64(2), "llmkube.budget.verdict": "admitted", "http.response.status_code": int64(200),
	} {
		assert.Equal(t, want, fa[k], "server span %s", k)
	}

	att := children[id(first.SpanId)]
	require.Len(t, att, 3, "two attempts and a shadow copy under the server span: %v", att)
	slices.SortFunc(att, func(a, b *tracepb.Span) int { return int(a.StartTimeUnixNano - b.StartTimeUnixNano) })
	a1, a2, sh := attrs(att[0].Attributes), attrs(att[1].Attributes), attrs(att[2].Attributes)
	assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, att[0].Kind)
	assert.Equal(t, "chat llama-bad", att[0].Name)
	assert.Equal(t, map[string]any{"llmkube.attempt": int64(1), "llmkube.backend": "bad", "llmkube.attempt.result": "5xx", "http.response.status_code": int64(500), "error.type": "5xx"},
		pick(a1, "llmkube.attempt", "llmkube.backend", "llmkube.attempt.result", "http.response.status_code", "error.type"))
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, att[0].Status.GetCode(), "the failed attempt is an error")
	assert.Equal(t, "chat llama-good", att[1].Name)
	assert.Equal(t, map[string]any{"llmkube.attempt": int64(2), "llmkube.backend": "good", "llmkube.attempt.result": "ok", "http.response.status_code": int64(200)},
		pick(a2, "llmkube.attempt", "llmkube.backend", "llmkube.attempt.result", "http.response.status_code", "error.type"))
	assert.Equal(t, "127.0.0.1", a2["server.address"])
	assert.Equal(t, true, sh["llmkube.shadow"], "the shadow copy is its own span")
	assert.Equal(t, "mirror", sh["llmkube.backend"])

	// In-cluster backends continue the attempt's span; the client's
	// tracestate rides along as the W3C spec says.
	wantTP := func(s *tracepb.Span) string { return "00-" + traceID + "-" + id(s.SpanId) + "-01" }
	assert.Equal(t, wantTP(att[0]), bad.headers()[0].Get("Traceparent"))
	assert.Equal(t, wantTP(att[1]), good.headers()[0].Get("Traceparent"))
	assert.Equal(t, "vendor=opaque", good.headers()[0].Get("Tracestate"))
	// Shadow copies leave in the background, so the second request's copy
	// can arrive before the first's.
	var shadowTPs []string
	for _, h := range shadow.headers() {
		shadowTPs = append(shadowTPs, h.Get("Traceparent"))
	}
	assert.Contains(t, shadowTPs, wantTP(att[2]), "the first request's shadow copy continues its span")

	// An external provider gets no trace context at all.
	cloud := servers[slices.IndexFunc(servers, func(s *tracepb.Span) bool { return attrs(s.Attributes)["llmkube.rule"] == "external" })]
	assert.Equal(t, traceID, id(cloud.TraceId))
	ca := children[id(cloud.SpanId)]
	require.Len(t, ca, 1)
	assert.Equal(t, "openai", attrs(ca[0].Attributes)["gen_ai.provider.name"])
	assert.Equal(t, "chat gpt-x", ca[0].Name)
	for _, h := range []string{"Traceparent", "Tracestate", "Baggage"} {
		assert.Empty(t, ext.headers()[0].Get(h), "an external provider received %s", h)
	}

	// The streamed request without a traceparent starts its own trace.
	streamed := servers[slices.IndexFunc(servers, func(s *tracepb.Span) bool { return attrs(s.Attributes)["llmkube.stream"] == true })]
	assert.NotEqual(t, traceID, id(streamed.TraceId))
	assert.Empty(t, streamed.ParentSpanId)

	// No body leaks, in spans or metrics.
	for _, b := range rc.Raw() {
		assert.NotContains(t, string(b), secretPrompt)
		assert.NotContains(t, string(b), secretCompletion)
	}

	// Metrics: the conventions' names, units and bucket boundaries.
	byName := map[string]*metricspb.Metric{}
	for _, m := range rc.Metrics() {
		byName[m.Name] = m // the last export is cumulative
	}
	for name, want := range map[string]struct {
		unit    string
		buckets []float64
	}{
		"gen_ai.client.token.usage":           {"{token}", telemetry.TokenUsageBuckets},
		"gen_ai.server.request.duration":      {"s", telemetry.RequestDurationBkts},
		"gen_ai.server.time_to_first_token":   {"s", telemetry.TimeToFirstTokenBkts},
		"gen_ai.server.time_per_output_token": {"s", telemetry.TimePerOutputBkts},
	} {
		m := byName[name]
		if !assert.NotNil(t, m, "metric %s was not exported", name) {
			continue
		}
		assert.Equal(t, want.unit, m.Unit, name)
		h := m.GetHistogram()
		require.NotNil(t, h, "%s is a histogram", name)
		require.NotEmpty(t, h.DataPoints, name)
		assert.Equal(t, want.buckets, h.DataPoints[0].ExplicitBounds, "%s buckets", name)
	}
	var input, output uint64
	for _, dp := range byName["gen_ai.client.token.usage"].GetHistogram().GetDataPoints() {
		a := attrs(dp.Attributes)
		if a["gen_ai.response.model"] != "llama-good" {
			continue
		}
		assert.Equal(t, "llmkube", a["gen_ai.provider.name"])
		switch a["gen_ai.token.type"] {
		case "input":
			input += dp.Count
		case "output":
			output += dp.Count
		}
	}
	assert.Equal(t, uint64(2), input, "input token usage of the two requests good answered")
	assert.Equal(t, uint64(2), output)
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestTraceSamplingFlag: a sampling ratio outside 0..1 is refused at start,
// with or without an OTLP endpoint.
func TestTraceSamplingFlag(t *testing.T) {
	path := writeConfig(t, oneBackend("http://127.0.0.1:1", proxyapi.KindLocal))
	for _, env := range [][]string{nil, {"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}} {
		out := refusedAtStart(t, env, "--config", path, "--listen", "127.0.0.1:0", "--admin-listen", "", "--trace-sampling", "1.5")
		assert.Contains(t, out, "--trace-sampling \"1.5\": must be a ratio from 0 to 1")
	}
}

// TestClassificationOnSpans: a request the content classifier classifies
// carries its classification, the source and the detectors on its server
// span, and the matched number never reaches the collector.
func TestClassificationOnSpans(t *testing.T) {
	rc := otlptest.New(t)
	up := newGenAIUpstream(t, false)
	cfg := oneBackend(up.URL, proxyapi.KindLocal)
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	cfg.Rules = []proxyapi.Rule{{Name: "sensitive", Strategy: proxyapi.StrategyPrimaryFallback, FailClosed: true, Backends: []string{cfg.Backends[0].Name}, Match: proxyapi.Match{DataClassification: []string{"pii", "phi"}}}}
	p := startProxyEnv(t, cfg, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_METRIC_EXPORT_INTERVAL=60000"})
	const ssn = "536-22-8410"
	code, body := p.post(t, `{"model":"chat","messages":[{"role":"user","content":"my SSN is `+ssn+`"}]}`)
	require.Equal(t, 200, code, body)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	<-p.done
	spans := rc.Spans()
	i := slices.IndexFunc(spans, func(s *tracepb.Span) bool { return s.Kind == tracepb.Span_SPAN_KIND_SERVER })
	require.GreaterOrEqual(t, i, 0, "a server span")
	a := attrs(spans[i].Attributes)
	assert.Equal(t, "pii", a["llmkube.classification"])
	assert.Equal(t, "detector", a["llmkube.classification.source"])
	assert.Equal(t, []any{"us-ssn"}, a["llmkube.classifier.detectors"])
	assert.Equal(t, "sensitive", a["llmkube.rule"])
	for _, b := range rc.Raw() {
		assert.NotContains(t, string(b), ssn)
	}
}
