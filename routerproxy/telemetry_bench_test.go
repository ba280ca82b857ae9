package routerproxy

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// discardSpans is an exporter that drops what the batch processor hands it:
// the benchmark measures the proxy's side (spans made, attributes set,
// metrics recorded, the batch queue), not a collector's network.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkHopTracing is BenchmarkHop's proxied request with telemetry off
// (no OTLP endpoint: the default), and on with the GenAI metrics and 0%,
// 1% and 100% of traces sampled (--trace-sampling; new traces, no client
// traceparent). make bench-proxy runs it; docs/observability.md has a run.
func BenchmarkHopTracing(b *testing.B) {
	for _, c := range []struct{ name, sampling string }{{"off", ""}, {"sampled-0", "0"}, {"sampled-1pct", "0.01"}, {"sampled-100pct", "1"}} {
		b.Run(c.name, func(b *testing.B) {
			var withTel func(*proxyapi.Config) *telemetry.Telemetry
			if c.name != "off" {
				withTel = func(cfg *proxyapi.Config) *telemetry.Telemetry {
					tel, err := telemetry.New(context.Background(), cfg, telemetry.Options{Sampling: c.sampling, SpanExporter: discardSpans{}, MetricReader: sdkmetric.NewManualReader()})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
					return tel
				}
			}
			_, px := hopServers(b, withTel)
			hopLoop(b, px, nil)
		})
	}
}
