package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// AuditSink receives one entry per request. Write must not block for long
// and must be safe for concurrent use; Close flushes.
type AuditSink interface {
	Write(e *proxyapi.AuditEntry)
	Close(ctx context.Context) error
}

// WriterSink writes one JSON object per line to w from a background
// goroutine, so audit I/O never delays a response. Entries are never
// dropped: when the queue is full, Write waits.
type WriterSink struct {
	ch     chan []byte
	done   chan struct{}
	closer io.Closer
	// mu guards closed: a handler still unwinding after the drain deadline
	// may write after Close, which must drop the entry, not panic.
	mu     sync.RWMutex
	closed bool
}

// NewWriterSink starts a sink writing to w; closer (may be nil) is closed by Close.
func NewWriterSink(w io.Writer, closer io.Closer) *WriterSink {
	s := &WriterSink{ch: make(chan []byte, 4096), done: make(chan struct{}), closer: closer}
	go s.loop(w)
	return s
}

func (s *WriterSink) loop(w io.Writer) {
	defer close(s.done)
	// Entries are batched: flushed when 64 KiB are buffered or 100 ms after
	// the first unflushed entry, so a busy proxy makes few write calls.
	bw := bufio.NewWriterSize(w, 64<<10)
	t := time.NewTimer(time.Hour)
	t.Stop()
	pending := false
	for {
		select {
		case b, ok := <-s.ch:
			if !ok {
				_ = bw.Flush()
				return
			}
			_, _ = bw.Write(b)
			if !pending {
				pending = true
				t.Reset(100 * time.Millisecond)
			}
		case <-t.C:
			_ = bw.Flush()
			pending = false
		}
	}
}

// Write queues the entry; after Close it is dropped.
func (s *WriterSink) Write(e *proxyapi.AuditEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return
	}
	s.ch <- append(b, '\n')
}

// Close drains the queue and closes the destination.
func (s *WriterSink) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// OTLPSink exports entries as OpenTelemetry log records over OTLP/HTTP. The
// exporter is configured by the standard OTEL_EXPORTER_OTLP_* environment
// variables (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT,
// _HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE ...).
type OTLPSink struct {
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
}

// NewOTLPSink builds the OTLP sink.
func NewOTLPSink(ctx context.Context, router proxyapi.RouterInfo) (*OTLPSink, error) {
	exp, err := otlploghttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("otlp audit exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "router-proxy"), attribute.String("service.namespace", router.Namespace), attribute.String("llmkube.router", router.Name))
	p := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	return &OTLPSink{provider: p, logger: p.Logger("llmkube.dev/router-proxy/audit")}, nil
}

// Write emits the entry: the body is the JSON object, and the main fields
// are also attributes so a collector can filter without parsing.
func (s *OTLPSink) Write(e *proxyapi.AuditEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	var r otellog.Record
	r.SetTimestamp(e.Time)
	r.SetEventName("llmkube.router.audit")
	r.SetSeverity(otellog.SeverityInfo)
	r.SetBody(attribute.StringValue(string(b)))
	r.AddAttributes(
		attribute.String("router", e.Router),
		attribute.String("rule", e.Rule),
		attribute.String("backend", e.Backend),
		attribute.String("outcome", e.Outcome),
		attribute.Int("status", e.Status),
	)
	s.logger.Emit(context.Background(), r)
}

// Close flushes and shuts the exporter down.
func (s *OTLPSink) Close(ctx context.Context) error { return s.provider.Shutdown(ctx) }

// NewAuditSink builds the sink the config asks for. stdout is the process's
// standard output (logs go to standard error).
func NewAuditSink(ctx context.Context, cfg *proxyapi.Config, stdout io.Writer) (AuditSink, error) {
	switch cfg.Policy.Audit.Sink {
	case "", "stdout":
		return NewWriterSink(stdout, nil), nil
	case "file":
		p := cfg.Policy.Audit.FilePath // defaulted by proxyapi.Config.SetDefaults
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
		return NewWriterSink(f, f), nil
	case "otlp":
		return NewOTLPSink(ctx, cfg.Router)
	default:
		return nil, fmt.Errorf("audit sink %q is not supported", cfg.Policy.Audit.Sink)
	}
}
