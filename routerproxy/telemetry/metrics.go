package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// The GenAI conventions' advisory bucket boundaries for each instrument
// (semconv gen-ai-metrics: "explicit bucket boundaries"). Names, units and
// descriptions come from genaiconv.
var (
	TokenUsageBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	RequestDurationBkts  = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	TimeToFirstTokenBkts = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	TimePerOutputBkts    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

type instruments struct {
	tokens   genaiconv.ClientTokenUsage
	duration genaiconv.ServerRequestDuration
	ttft     genaiconv.ServerTimeToFirstToken
	tpot     genaiconv.ServerTimePerOutputToken
}

func newInstruments(m metric.Meter) (instruments, error) {
	var in instruments
	var err error
	if in.tokens, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(TokenUsageBuckets...)); err != nil {
		return in, err
	}
	if in.duration, err = genaiconv.NewServerRequestDuration(m, metric.WithExplicitBucketBoundaries(RequestDurationBkts...)); err != nil {
		return in, err
	}
	if in.ttft, err = genaiconv.NewServerTimeToFirstToken(m, metric.WithExplicitBucketBoundaries(TimeToFirstTokenBkts...)); err != nil {
		return in, err
	}
	in.tpot, err = genaiconv.NewServerTimePerOutputToken(m, metric.WithExplicitBucketBoundaries(TimePerOutputBkts...))
	return in, err
}

// seriesKey is one label set of the GenAI instruments.
type seriesKey struct {
	op, provider, requestModel, responseModel, errorType string
}

// seriesOpts are a label set's measurement options, built once: building
// the attribute set (sorting, hashing) per request cost more than the
// recording (BenchmarkHopTracing).
type seriesOpts struct {
	server, input, output metric.MeasurementOption
}

func (t *Telemetry) series(k seriesKey) *seriesOpts {
	t.seriesMu.RLock()
	o := t.seriesCache[k]
	t.seriesMu.RUnlock()
	if o != nil {
		return o
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameKey.String(k.op),
		semconv.GenAIProviderNameKey.String(k.provider),
		t.router,
	}
	if k.requestModel != "" {
		attrs = append(attrs, semconv.GenAIRequestModelKey.String(k.requestModel))
	}
	if k.responseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModelKey.String(k.responseModel))
	}
	if k.errorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errorType))
	}
	o = &seriesOpts{
		server: metric.WithAttributeSet(attribute.NewSet(attrs...)),
		input:  metric.WithAttributeSet(attribute.NewSet(append(attrs[:len(attrs):len(attrs)], semconv.GenAITokenTypeInput)...)),
		output: metric.WithAttributeSet(attribute.NewSet(append(attrs[:len(attrs):len(attrs)], semconv.GenAITokenTypeOutput)...)),
	}
	t.seriesMu.Lock()
	if t.seriesCache == nil {
		t.seriesCache = map[seriesKey]*seriesOpts{}
	}
	t.seriesCache[k] = o
	t.seriesMu.Unlock()
	return o
}

// recordRequest records one request on the GenAI instruments. The proxy is
// the GenAI server its callers see (gen_ai.server.*) and a GenAI client of
// the backend that answered (gen_ai.client.token.usage). Requests refused
// before a backend answered count in the duration with error.type only.
//
// The label sets are bounded: operations, backends, published model ids
// and outcomes; a request model the router does not publish is left out.
func (t *Telemetry) recordRequest(ctx context.Context, op string, b *Backend, ent *proxyapi.AuditEntry) {
	if t.mp == nil {
		return
	}
	// A request refused before any backend answered was answered by the
	// proxy itself.
	k := seriesKey{op: op, provider: ProviderLocal}
	if b != nil {
		k.provider, k.responseModel = b.Provider, b.Model
	}
	if t.models[ent.Model] {
		k.requestModel = ent.Model
	}
	if !served(ent) {
		k.errorType = ent.Outcome
	}
	o := t.series(k)
	t.inst.duration.Inst().Record(ctx, ent.LatencyMs/1000, o.server)
	if b == nil || ent.Status >= 400 {
		return
	}
	t.inst.tokens.Inst().Record(ctx, ent.PromptTokens, o.input)
	t.inst.tokens.Inst().Record(ctx, ent.CompletionTokens, o.output)
	// First token and time per output token are stream measures: a whole
	// JSON answer's first byte is its last.
	if !ent.Stream || ent.Outcome != proxyapi.OutcomeOKStream || ent.FirstTokenMs <= 0 {
		return
	}
	t.inst.ttft.Inst().Record(ctx, ent.FirstTokenMs/1000, o.server)
	if ent.CompletionTokens > 1 && ent.LatencyMs > ent.FirstTokenMs {
		t.inst.tpot.Inst().Record(ctx, (ent.LatencyMs-ent.FirstTokenMs)/1000/float64(ent.CompletionTokens-1), o.server)
	}
}
