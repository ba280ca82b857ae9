package routerproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// AuditSink receives one entry per request. Write must not block for long
// and must be safe for concurrent use; Close flushes.
type AuditSink interface {
	Write(e *proxyapi.AuditEntry)
	Close(ctx context.Context) error
}

// WriterSink writes one JSON object per line to w from a background
// goroutine, so audit I/O never delays a response. Entries are never
// dropped: when maxPendingAudit bytes wait unwritten, Write waits.
//
// Entries are appended to one pending batch and the writer is woken once
// per batch, not once per entry: a goroutine wake-up per request cost more
// than encoding the entry (make bench-proxy).
type WriterSink struct {
	mu        sync.Mutex
	taken     *sync.Cond // the writer took the batch
	pending   []byte     // encoded entries not yet written
	closed    bool
	wake      chan struct{} // cap 1: a batch started, filled up, or Close
	done      chan struct{}
	closer    io.Closer
	closeOnce sync.Once
	cerr      error
}

// Batching: the writer writes 100 ms after a batch's first entry or as soon
// as auditBatchBytes are pending; Write waits past maxPendingAudit.
const (
	auditBatchDelay = 100 * time.Millisecond
	auditBatchBytes = 64 << 10
	maxPendingAudit = 4 << 20
)

// NewWriterSink starts a sink writing to w; closer (may be nil) is closed by Close.
func NewWriterSink(w io.Writer, closer io.Closer) *WriterSink {
	s := &WriterSink{wake: make(chan struct{}, 1), done: make(chan struct{}), closer: closer}
	s.taken = sync.NewCond(&s.mu)
	go s.loop(w)
	return s
}

func (s *WriterSink) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *WriterSink) loop(w io.Writer) {
	defer close(s.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	var out []byte
	for {
		<-s.wake
		s.mu.Lock()
		if !s.closed && len(s.pending) < auditBatchBytes {
			// Let the batch fill: written when the delay passes, when it
			// is full (Write signals) or at Close.
			s.mu.Unlock()
			t.Reset(auditBatchDelay)
			select {
			case <-t.C:
			case <-s.wake:
				t.Stop()
			}
			s.mu.Lock()
		}
		out, s.pending = s.pending, out[:0]
		closed := s.closed
		s.taken.Broadcast()
		s.mu.Unlock()
		if len(out) > 0 {
			_, _ = w.Write(out)
		}
		if closed {
			// Write drops entries once closed: nothing follows this batch.
			return
		}
	}
}

// Write queues the entry; after Close it is dropped.
func (s *WriterSink) Write(e *proxyapi.AuditEntry) {
	bp := auditBufs.Get().(*[]byte)
	defer auditBufs.Put(bp)
	line, err := e.AppendJSON((*bp)[:0]) // one line, ending in \n
	if err != nil {
		return
	}
	*bp = line
	s.mu.Lock()
	for len(s.pending) >= maxPendingAudit && !s.closed {
		s.taken.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		return
	}
	first := len(s.pending) == 0
	s.pending = append(s.pending, line...)
	full := len(s.pending) >= auditBatchBytes
	s.mu.Unlock()
	if first || full {
		s.signal()
	}
}

var auditBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Close drains the queue and closes the destination.
func (s *WriterSink) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.taken.Broadcast()
	s.mu.Unlock()
	s.signal()
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.cerr = s.closer.Close()
		}
	})
	return s.cerr
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
	p := sdklog.NewLoggerProvider(sdklog.WithResource(telemetry.Resource(router)), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
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
	case "", proxyapi.SinkStdout:
		return NewWriterSink(stdout, nil), nil
	case proxyapi.SinkFile:
		p := cfg.Policy.Audit.FilePath // defaulted by proxyapi.Config.SetDefaults
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
		return NewWriterSink(f, f), nil
	case proxyapi.SinkOTLP:
		return NewOTLPSink(ctx, cfg.Router)
	default:
		return nil, fmt.Errorf("audit sink %q is not supported", cfg.Policy.Audit.Sink)
	}
}
