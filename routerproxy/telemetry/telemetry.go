// Package telemetry is the router-proxy's OpenTelemetry side: a server span
// per request and a client span per upstream attempt (failover and shadow
// copies alike), W3C trace context continued from the client and handed to
// in-cluster backends, and the GenAI semantic conventions' metrics, all
// exported over OTLP/HTTP.
//
// It is off unless an OTLP endpoint is configured (the SDK's standard
// OTEL_EXPORTER_OTLP_* variables, which the operator's --otlp-endpoint
// renders into every router-proxy, whatever its audit sink). Off, the proxy
// holds a nil *Telemetry and its hooks are one nil check each: no
// allocation, no clock read (BenchmarkHopTracing measures it).
//
// Attribute names follow the GenAI conventions of semconv v1.41.0 (the
// latest experimental ones: gen_ai.provider.name, not the older
// gen_ai.system); the routing decision is under llmkube.*. No prompt or
// completion text is ever put on a span or a metric: the audit log's
// includeRequestBody is the one place a body is written.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "llmkube.dev/router-proxy"

// Options configure New. Zero values read the SDK's environment.
type Options struct {
	// Sampling is the --trace-sampling flag: "" leaves the sampler to
	// OTEL_TRACES_SAMPLER (default parentbased_always_on); a ratio in [0, 1]
	// samples that share of new traces and follows the caller's decision
	// when its traceparent carries one.
	Sampling string
	// SpanExporter and MetricReader replace the OTLP/HTTP exporters
	// (benchmarks, unit tests).
	SpanExporter sdktrace.SpanExporter
	MetricReader sdkmetric.Reader
	// Getenv reads the OTEL_* variables (default os.Getenv).
	Getenv func(string) string
}

// Telemetry holds the providers and instruments. A nil *Telemetry is off:
// every method is a no-op on it.
type Telemetry struct {
	tp       *sdktrace.TracerProvider // nil: traces off
	mp       *sdkmetric.MeterProvider // nil: metrics off
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	inst     instruments
	router   attribute.KeyValue
	backends []Backend
	byName   map[string]*Backend
	// models are the ids the router publishes: the only request models a
	// metric is labelled with (a client's made-up names would each be a
	// new series).
	models map[string]bool

	seriesMu    sync.RWMutex
	seriesCache map[seriesKey]*seriesOpts
}

// Enabled reports whether the environment configures an OTLP endpoint for
// traces or metrics (and the SDK is not disabled), so New would export.
func Enabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return tracesOn(getenv) || metricsOn(getenv)
}

func tracesOn(getenv func(string) string) bool {
	return getenv("OTEL_TRACES_EXPORTER") != "none" && (getenv(wellknown.OTLPEndpointEnv) != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "")
}

func metricsOn(getenv func(string) string) bool {
	return getenv("OTEL_METRICS_EXPORTER") != "none" && (getenv(wellknown.OTLPEndpointEnv) != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "")
}

// New builds the exporters the environment (or opts) asks for; it returns
// nil, nil when none is configured: telemetry off.
func New(ctx context.Context, cfg *proxyapi.Config, opts Options) (*Telemetry, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	// A bad flag is refused whether or not an endpoint is configured.
	sampler, err := parseSampling(opts.Sampling)
	if err != nil {
		return nil, err
	}
	traces := opts.SpanExporter != nil || (Enabled(opts.Getenv) && tracesOn(opts.Getenv))
	metrics := opts.MetricReader != nil || (Enabled(opts.Getenv) && metricsOn(opts.Getenv))
	if !traces && !metrics {
		return nil, nil
	}
	res := Resource(cfg.Router)
	t := &Telemetry{prop: propagation.TraceContext{}, router: attribute.String(AttrRouter, cfg.Router.Name)}
	if traces {
		exp := opts.SpanExporter
		if exp == nil {
			if exp, err = otlptracehttp.New(ctx); err != nil {
				return nil, fmt.Errorf("otlp trace exporter: %w", err)
			}
		}
		to := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithBatcher(exp)}
		if sampler != nil {
			to = append(to, sdktrace.WithSampler(sampler))
		}
		t.tp = sdktrace.NewTracerProvider(to...)
		t.tracer = t.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version.Release))
	}
	if metrics {
		reader := opts.MetricReader
		if reader == nil {
			exp, err := otlpmetrichttp.New(ctx)
			if err != nil {
				return nil, fmt.Errorf("otlp metric exporter: %w", err)
			}
			reader = sdkmetric.NewPeriodicReader(exp) // OTEL_METRIC_EXPORT_INTERVAL, default 60s
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
		if t.inst, err = newInstruments(t.mp.Meter(ScopeName)); err != nil {
			return nil, err
		}
	}
	t.backends = make([]Backend, len(cfg.Backends))
	t.byName = make(map[string]*Backend, len(cfg.Backends))
	t.models = map[string]bool{}
	for i := range cfg.Backends {
		t.backends[i] = newBackend(&cfg.Backends[i])
		t.byName[cfg.Backends[i].Name] = &t.backends[i]
		id := cfg.Backends[i].ModelID
		if id == "" {
			id = cfg.Backends[i].Name // as /v1/models publishes it
		}
		t.models[id] = true
	}
	return t, nil
}

// parseSampling reads --trace-sampling.
func parseSampling(s string) (sdktrace.Sampler, error) {
	if s == "" {
		return nil, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || r < 0 || r > 1 {
		return nil, fmt.Errorf("--trace-sampling %q: must be a ratio from 0 to 1", s)
	}
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
}

// Resource is the router-proxy's OpenTelemetry resource, shared by the
// traces, the metrics and the OTLP audit sink.
func Resource(router proxyapi.RouterInfo) *resource.Resource {
	return resource.NewSchemaless(
		attribute.String("service.name", "router-proxy"),
		attribute.String("service.namespace", router.Namespace),
		attribute.String("service.version", version.Release),
		attribute.String(AttrRouter, router.Name))
}

// Shutdown flushes what is buffered and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Tracing reports whether spans are made (trace context is injected).
func (t *Telemetry) Tracing() bool { return t != nil && t.tp != nil }
