package telemetry

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// StartRequest starts the request's server span, a child of the client's
// traceparent when it sent one (its sampled flag decides, with the default
// parent-based sampler), and returns the request carrying it. Without
// tracing r is returned as it is.
func (t *Telemetry) StartRequest(r *http.Request) *http.Request {
	if !t.Tracing() {
		return r
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	op := Operation(r.URL.Path)
	ctx, _ = t.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.GenAIOperationNameKey.String(op),
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.URLPathKey.String(r.URL.Path),
		t.router,
	))
	return r.WithContext(ctx)
}

// EndRequest ends the server span StartRequest put in ctx with what the
// audit entry says of the request, and records the request's metrics. The
// entry's request body, error text and caller are never copied.
func (t *Telemetry) EndRequest(ctx context.Context, ent *proxyapi.AuditEntry) {
	if t == nil {
		return
	}
	op := Operation(ent.Path)
	b := t.byName[ent.Backend] // nil when no backend answered
	t.recordRequest(ctx, op, b, ent)
	if !t.Tracing() {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	if ent.Model != "" {
		span.SetName(op + " " + ent.Model)
	}
	attrs := []attribute.KeyValue{
		semconv.HTTPResponseStatusCodeKey.Int(ent.Status),
		attribute.String(AttrOutcome, ent.Outcome),
		attribute.Int(AttrAttempts, ent.Attempts),
		attribute.Bool(AttrStream, ent.Stream),
	}
	if ent.Model != "" {
		attrs = append(attrs, semconv.GenAIRequestModelKey.String(ent.Model))
	}
	if ent.Rule != "" {
		attrs = append(attrs, attribute.String(AttrRule, ent.Rule))
	}
	if ent.Team != "" {
		attrs = append(attrs, attribute.String(AttrTeam, ent.Team))
	}
	if ent.Classification != "" {
		attrs = append(attrs, attribute.String(AttrClassification, ent.Classification), attribute.String(AttrClassificationSource, ent.ClassificationSource))
	}
	if len(ent.Detectors) > 0 {
		attrs = append(attrs, attribute.StringSlice(AttrDetectors, ent.Detectors))
	}
	if v := budgetVerdict(ent); v != "" {
		attrs = append(attrs, attribute.String(AttrBudgetVerdict, v))
		if ent.Budget != "" {
			attrs = append(attrs, attribute.String(AttrBudget, ent.Budget))
		}
	}
	if ent.Promoted {
		attrs = append(attrs, attribute.Bool(AttrSLOPromoted, true))
	}
	if b != nil {
		attrs = append(attrs,
			semconv.GenAIProviderNameKey.String(b.Provider),
			semconv.GenAIResponseModelKey.String(b.Model),
			attribute.String(AttrBackend, b.Name),
			attribute.String(AttrTier, b.Tier),
			semconv.GenAIUsageInputTokensKey.Int64(ent.PromptTokens),
			semconv.GenAIUsageOutputTokensKey.Int64(ent.CompletionTokens),
		)
		if ent.TokensEstimated {
			attrs = append(attrs, attribute.Bool(AttrTokensEst, true))
		}
	}
	if !served(ent) {
		attrs = append(attrs, semconv.ErrorTypeKey.String(ent.Outcome))
		if ent.Status >= 500 || ent.Status == 0 {
			span.SetStatus(codes.Error, ent.Outcome)
		}
	}
	span.SetAttributes(attrs...)
	span.End()
}

// served: the request was answered by a backend through to its end.
func served(ent *proxyapi.AuditEntry) bool {
	return ent.Outcome == proxyapi.OutcomeOK || ent.Outcome == proxyapi.OutcomeOKStream
}

// budgetVerdict is what the budgets said: nothing when the request never
// reached them (refused before routing).
func budgetVerdict(ent *proxyapi.AuditEntry) string {
	switch {
	case ent.Outcome == proxyapi.OutcomeBudgetStoreDown:
		return BudgetStoreUnavailable
	case ent.Budget != "":
		return BudgetExceeded
	case ent.Attempts > 0:
		return BudgetAdmitted
	}
	return ""
}

// StartAttempt starts the client span of the n-th attempt (1-based) of a
// request to backend i, or of a shadow copy. Without tracing it returns
// ctx and a nil span.
func (t *Telemetry) StartAttempt(ctx context.Context, path string, i, n int, shadow bool) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, nil
	}
	b := &t.backends[i]
	op := Operation(path)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(b.attrs...),
		trace.WithAttributes(semconv.GenAIOperationNameKey.String(op))}
	if shadow {
		opts = append(opts, trace.WithAttributes(attribute.Bool(AttrShadow, true)))
	} else {
		opts = append(opts, trace.WithAttributes(attribute.Int(AttrAttempt, n)))
	}
	return t.tracer.Start(ctx, op+" "+b.Model, opts...)
}

// Attempt results that say nothing against the backend: the span is not
// an error.
const (
	ResultOK      = "ok"
	ResultSkipped = "skipped"
	resultCancel  = "cancelled"
)

// AttemptResult records an attempt's verdict on its span: result is the
// llmkube_router_upstream_attempts_total label (ResultOK for a success,
// ResultSkipped for a backend passed over). Any other result but a client
// that went away makes the span an error of that type.
func AttemptResult(span trace.Span, result string) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(AttrAttemptResult, result))
	if result != ResultOK && result != ResultSkipped && result != resultCancel {
		span.SetAttributes(semconv.ErrorTypeKey.String(result))
		span.SetStatus(codes.Error, result)
	}
}

// UpstreamStatus records the upstream's HTTP status on an attempt's span.
func UpstreamStatus(span trace.Span, status int) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
}

// PoolHeld records on an attempt's span how long it waited for its
// ModelPool member to be resident.
func PoolHeld(span trace.Span, d time.Duration) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.Float64(AttrPoolHoldMs, float64(d.Microseconds())/1000))
}

// EndSpan ends an attempt's span; nil is a no-op.
func EndSpan(span trace.Span) {
	if span != nil {
		span.End()
	}
}

// Inject writes the attempt's trace context (traceparent, tracestate) into
// an upstream request to an in-cluster backend, replacing the client's.
// External providers get none: the trace id is the caller's correlation
// key across every service it touched, and tracestate carries other
// vendors' data; neither is the provider's (docs/observability.md).
func (t *Telemetry) Inject(ctx context.Context, b int, h http.Header) {
	if !t.Tracing() || t.backends[b].External {
		return
	}
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}
