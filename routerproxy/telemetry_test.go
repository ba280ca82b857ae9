package routerproxy

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// traced starts a harness whose server traces every request into memory;
// spans returns what was ended once every request finished.
func traced(t *testing.T, cfg *proxyapi.Config, mod ...func(*Options)) (h *harness, spans func() tracetest.SpanStubs) {
	t.Helper()
	exp := keptSpans{tracetest.NewInMemoryExporter()}
	tel, err := telemetry.New(context.Background(), cfg, telemetry.Options{SpanExporter: exp, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	h = start(t, cfg, append(mod, func(o *Options) { o.Telemetry = tel })...)
	return h, func() tracetest.SpanStubs {
		require.NoError(t, h.srv.Wait(t.Context()))
		require.NoError(t, tel.Shutdown(context.Background()))
		return exp.GetSpans()
	}
}

// keptSpans keeps its spans past Shutdown (the in-memory exporter drops
// them there, and Shutdown is what flushes the batch).
type keptSpans struct{ *tracetest.InMemoryExporter }

func (keptSpans) Shutdown(context.Context) error { return nil }

func spanAttrs(s tracetest.SpanStub) map[string]attribute.Value {
	out := map[string]attribute.Value{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

// TestTraceBudgetVerdicts: the request span says what the budgets decided,
// and a request the budgets refused made no attempt.
func TestTraceBudgetVerdicts(t *testing.T) {
	a := newStub(t, "a", nil) // usage 10 prompt + 5 completion
	cfg := config(backend("a", a.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "tokens", Scope: "router", MaxTokens: 15, Window: dur(time.Hour)}}
	h, spans := traced(t, cfg)
	code, _, _ := h.post(t, chat("m"))
	require.Equal(t, 200, code)
	code, _, _ = h.post(t, chat("m"))
	require.Equal(t, http.StatusTooManyRequests, code)
	got := spans()
	var servers []tracetest.SpanStub
	for _, s := range got {
		if s.SpanKind == trace.SpanKindServer {
			servers = append(servers, s)
		}
	}
	require.Len(t, servers, 2)
	ok, refused := spanAttrs(servers[0]), spanAttrs(servers[1])
	assert.Equal(t, telemetry.BudgetAdmitted, ok["llmkube.budget.verdict"].AsString())
	assert.Equal(t, telemetry.BudgetExceeded, refused["llmkube.budget.verdict"].AsString())
	assert.Equal(t, "tokens", refused["llmkube.budget"].AsString())
	assert.Equal(t, proxyapi.OutcomeBudgetExceeded, refused["error.type"].AsString())
	assert.Equal(t, int64(0), refused["llmkube.attempts"].AsInt64())
	assert.Len(t, got, 3, "one attempt span, for the admitted request only")
}

// slowPools holds every member for a while before it is resident.
type slowPools struct{ fakePools }

func (f *slowPools) Acquire(ctx context.Context, b *proxyapi.Backend, m proxyapi.PoolActivation) (func(), error) {
	time.Sleep(30 * time.Millisecond)
	return f.fakePools.Acquire(ctx, b, m)
}

// TestTracePoolHold: an attempt on a ModelPool member names the pool and how
// long it was held; the member that failed once and was re-read is still
// one attempt span, with the status of the send that answered.
func TestTracePoolHold(t *testing.T) {
	n := 0
	up := newStub(t, "llama", func(w http.ResponseWriter, r *http.Request) {
		if n++; n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		okHandler("llama")(w, r)
	})
	h, spans := traced(t, pooledConfig(up.URL), func(o *Options) { o.Pools = &slowPools{} })
	code, _, _ := h.post(t, chat("llama"))
	require.Equal(t, 200, code)
	var attempts []tracetest.SpanStub
	for _, s := range spans() {
		if s.SpanKind == trace.SpanKindClient {
			attempts = append(attempts, s)
		}
	}
	require.Len(t, attempts, 1)
	a := spanAttrs(attempts[0])
	assert.Equal(t, "gpu", a["llmkube.pool"].AsString())
	assert.GreaterOrEqual(t, a["llmkube.pool.hold_ms"].AsFloat64(), 30.0)
	assert.Equal(t, int64(200), a["http.response.status_code"].AsInt64())
	assert.Equal(t, telemetry.ResultOK, a["llmkube.attempt.result"].AsString())
}

// TestTraceFollowsCallerSampling: sampling is parent-based. A caller's
// traceparent that is not sampled makes no span, yet the backend still
// continues the caller's trace (same trace id, not sampled); with tracing
// off the backend gets the caller's header untouched.
func TestTraceFollowsCallerSampling(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const caller = "00-" + traceID + "-00f067aa0ba902b7-00"
	a := newStub(t, "a", nil)
	h, spans := traced(t, config(backend("a", a.URL)))
	code, _, _ := h.post(t, chat("m"), "Traceparent", caller)
	require.Equal(t, 200, code)
	assert.Empty(t, spans(), "an unsampled caller's request exports nothing")
	got := a.Last().Header.Get("Traceparent")
	require.Len(t, got, len(caller), got)
	assert.Equal(t, "00-"+traceID+"-", got[:36], "the backend continues the caller's trace")
	assert.NotEqual(t, caller, got, "under the proxy's attempt span")
	assert.Equal(t, "-00", got[len(got)-3:], "still not sampled")

	off := start(t, config(backend("a", a.URL)))
	code, _, _ = off.post(t, chat("m"), "Traceparent", caller)
	require.Equal(t, 200, code)
	assert.Equal(t, caller, a.Last().Header.Get("Traceparent"), "tracing off: passed through as before")
}
