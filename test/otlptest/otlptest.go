// Package otlptest is an OTLP/HTTP collector for tests: it keeps every span
// and metric a process exports (decoded from the protobuf the OpenTelemetry
// SDK sends, gzip or not) and the raw payloads, so a test can look for
// leaks in what left the process.
package otlptest

import (
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is the collector; URL is what OTEL_EXPORTER_OTLP_ENDPOINT names.
type Receiver struct {
	URL     string
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricspb.Metric
	raw     [][]byte
}

// New starts a receiver on loopback, closed when the test ends.
func New(t testing.TB) *Receiver { return NewAt(t, "127.0.0.1:0") }

// NewAt starts a receiver on addr (a pod-reachable address in the real
// cluster tests), closed when the test ends.
func NewAt(t testing.TB, addr string) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("otlptest: listen %s: %v", addr, err)
	}
	rc := &Receiver{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	rc.URL = srv.URL
	t.Cleanup(srv.Close)
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.raw = append(rc.raw, b)
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		resp = &coltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req colmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				rc.metrics = append(rc.metrics, sm.Metrics...)
			}
		}
		resp = &colmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans is every span received so far.
func (rc *Receiver) Spans() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

// Metrics is every metric received so far.
func (rc *Receiver) Metrics() []*metricspb.Metric {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*metricspb.Metric(nil), rc.metrics...)
}

// Raw is every payload received so far, decompressed.
func (rc *Receiver) Raw() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.raw...)
}
