package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

func cfg() *proxyapi.Config {
	return &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Backends: []proxyapi.Backend{{Name: "a", ModelID: "m", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://a.ns:8080"}}}
}

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestOffWithoutEndpoint: no OTLP endpoint (or the SDK disabled, or both
// signals' exporters none) is telemetry off: a nil *Telemetry.
func TestOffWithoutEndpoint(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"no endpoint":  {},
		"sdk disabled": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		"both none":    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
	} {
		tel, err := New(context.Background(), cfg(), Options{Getenv: env(vars)})
		require.NoError(t, err, name)
		assert.Nil(t, tel, name)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	tel, err := New(context.Background(), cfg(), Options{})
	require.NoError(t, err)
	require.NotNil(t, tel)
	assert.True(t, tel.Tracing())
	assert.Nil(t, tel.mp, "OTEL_METRICS_EXPORTER=none leaves the metrics off")
	require.NoError(t, tel.Shutdown(context.Background()))
}

func TestSamplingFlag(t *testing.T) {
	for _, bad := range []string{"2", "-0.1", "all"} {
		_, err := parseSampling(bad)
		assert.ErrorContains(t, err, "--trace-sampling", bad)
	}
	s, err := parseSampling("0.01")
	require.NoError(t, err)
	assert.Contains(t, s.Description(), "ParentBased")
}

// TestOffCostsNothing: with telemetry off every hook the request path calls
// allocates nothing (the proxy's hot path stays as it was).
func TestOffCostsNothing(t *testing.T) {
	var tel *Telemetry
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	ent := &proxyapi.AuditEntry{Path: r.URL.Path, Outcome: proxyapi.OutcomeOK, Status: 200}
	h := http.Header{}
	allocs := testing.AllocsPerRun(100, func() {
		r2 := tel.StartRequest(r)
		ctx, span := tel.StartAttempt(r2.Context(), r2.URL.Path, 0, 1, false)
		tel.Inject(ctx, 0, h)
		UpstreamStatus(span, 200)
		AttemptResult(span, ResultOK)
		EndSpan(span)
		tel.EndRequest(ctx, ent)
	})
	assert.Zero(t, allocs)
	assert.Empty(t, h, "no trace context is made up with tracing off")
}

func TestBackendAttributes(t *testing.T) {
	// No URL in the config: the provider's published one.
	b := newBackend(&proxyapi.Backend{Name: "opus", Kind: proxyapi.KindExternal, Provider: "anthropic", Model: "claude-opus", Tier: "cloud"})
	assert.Equal(t, "anthropic", b.Provider)
	assert.Equal(t, "claude-opus", b.Model)
	assert.True(t, b.External)
	got := map[string]string{}
	for _, kv := range b.attrs {
		got[string(kv.Key)] = kv.Value.String()
	}
	assert.Equal(t, map[string]string{"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-opus", "llmkube.backend": "opus", "llmkube.tier": "cloud",
		"server.address": "api.anthropic.com", "server.port": "443"}, got)
	assert.Equal(t, "aws.bedrock", newBackend(&proxyapi.Backend{Name: "b", Kind: proxyapi.KindExternal, Provider: "bedrock"}).Provider)
	assert.Equal(t, ProviderLocal, newBackend(&proxyapi.Backend{Name: "l", ModelID: "llama", Kind: proxyapi.KindLocal}).Provider)
}

// TestMetricsRecorded: the GenAI instruments' values for a streamed answer
// and a refusal, and a request model the router does not publish never
// becomes a metric label.
func TestMetricsRecorded(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tel, err := New(context.Background(), cfg(), Options{MetricReader: reader})
	require.NoError(t, err)
	require.False(t, tel.Tracing(), "metrics only")
	ctx := context.Background()
	tel.EndRequest(ctx, &proxyapi.AuditEntry{Path: "/v1/chat/completions", Model: "m", Backend: "a", Stream: true, Status: 200, Outcome: proxyapi.OutcomeOKStream,
		LatencyMs: 1000, FirstTokenMs: 200, PromptTokens: 12, CompletionTokens: 5})
	tel.EndRequest(ctx, &proxyapi.AuditEntry{Path: "/v1/chat/completions", Model: "made-up-1234", Status: 404, Outcome: proxyapi.OutcomeNoRoute, LatencyMs: 3})

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	hist := map[string]metricdata.Histogram[float64]{}
	var tokens metricdata.Histogram[int64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				hist[m.Name] = d
			case metricdata.Histogram[int64]:
				tokens = d
			}
		}
	}
	one := func(name string) metricdata.HistogramDataPoint[float64] {
		require.Len(t, hist[name].DataPoints, 1, name)
		return hist[name].DataPoints[0]
	}
	assert.InDelta(t, 0.2, one("gen_ai.server.time_to_first_token").Sum, 1e-9)
	assert.InDelta(t, 0.2, one("gen_ai.server.time_per_output_token").Sum, 1e-9, "(1 s - 0.2 s) / (5 - 1) tokens")
	require.Len(t, hist["gen_ai.server.request.duration"].DataPoints, 2)
	for _, dp := range hist["gen_ai.server.request.duration"].DataPoints {
		model, ok := dp.Attributes.Value("gen_ai.request.model")
		if errType, failed := dp.Attributes.Value("error.type"); failed {
			assert.Equal(t, "no_route", errType.AsString())
			assert.False(t, ok, "a request model the router does not publish is not a label: %v", model)
			assert.Equal(t, ProviderLocal, attrValue(dp.Attributes, "gen_ai.provider.name"))
			continue
		}
		assert.Equal(t, "m", model.AsString())
		assert.InDelta(t, 1.0, dp.Sum, 1e-9)
	}
	sums := map[string]int64{}
	for _, dp := range tokens.DataPoints {
		sums[attrValue(dp.Attributes, "gen_ai.token.type")] += dp.Sum
	}
	assert.Equal(t, map[string]int64{"input": 12, "output": 5}, sums)
	require.NoError(t, tel.Shutdown(ctx))
}

func attrValue(s attribute.Set, k string) string {
	v, _ := s.Value(attribute.Key(k))
	return v.AsString()
}
