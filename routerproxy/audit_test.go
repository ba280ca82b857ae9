package routerproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// recordingWriter records each Write call; block, when set, holds every
// write until it is closed.
type recordingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	block  chan struct{}
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.block != nil {
		<-w.block
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func (w *recordingWriter) snapshot() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String(), w.writes
}

// Entries from many goroutines arrive whole, one JSON object per line, in
// a few writes (a batch per write, not an entry per write).
func TestWriterSinkBatchesConcurrentEntries(t *testing.T) {
	w := &recordingWriter{}
	s := NewWriterSink(w, nil)
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				s.Write(&proxyapi.AuditEntry{Router: "r", Rule: fmt.Sprintf("g%d-%d", g, i), Error: `quote " and <tag>`})
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(context.Background()))
	out, writes := w.snapshot()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, writers*each)
	seen := map[string]bool{}
	for _, l := range lines {
		var e proxyapi.AuditEntry
		require.NoError(t, json.Unmarshal([]byte(l), &e), l)
		assert.Equal(t, `quote " and <tag>`, e.Error)
		seen[e.Rule] = true
	}
	assert.Len(t, seen, writers*each, "every entry once")
	assert.Less(t, writes, writers*each/10, "entries are written in batches")
}

// An entry is written within the batch delay, without waiting for Close or
// for a full batch.
func TestWriterSinkWritesAfterTheDelay(t *testing.T) {
	w := &recordingWriter{}
	s := NewWriterSink(w, nil)
	defer s.Close(context.Background())
	s.Write(&proxyapi.AuditEntry{Router: "r", Rule: "lonely"})
	require.Eventually(t, func() bool {
		out, _ := w.snapshot()
		return strings.Contains(out, `"lonely"`)
	}, time.Minute, 10*time.Millisecond)
}

// Entries are never dropped: while the destination is stuck, Write waits
// once maxPendingAudit bytes are pending, and everything is written when it
// moves again.
func TestWriterSinkBackPressure(t *testing.T) {
	w := &recordingWriter{block: make(chan struct{})}
	s := NewWriterSink(w, nil)
	big := json.RawMessage(`"` + strings.Repeat("x", 256<<10) + `"`)
	written := make(chan int, 1)
	go func() {
		n := 0
		for range 2 * maxPendingAudit / len(big) {
			s.Write(&proxyapi.AuditEntry{Router: "r", RequestBody: big})
			n++
		}
		written <- n
	}()
	select {
	case n := <-written:
		t.Fatalf("%d entries queued past the bound while the destination was stuck", n)
	case <-time.After(300 * time.Millisecond):
	}
	close(w.block)
	n := <-written
	require.NoError(t, s.Close(context.Background()))
	out, _ := w.snapshot()
	assert.Equal(t, n, strings.Count(out, "\n"))
}
