package routerproxy

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriterSinkWriteAfterClose: a handler that unwinds after the drain
// deadline may audit after the sink closed; the entry is dropped, never a panic.
func TestWriterSinkWriteAfterClose(t *testing.T) {
	var buf bytes.Buffer
	s := NewWriterSink(&buf, nil)
	s.Write(&proxyapi.AuditEntry{Router: "r", Rule: "before"})
	require.NoError(t, s.Close(context.Background()))
	assert.NotPanics(t, func() { s.Write(&proxyapi.AuditEntry{Router: "r", Rule: "after"}) })
	require.NoError(t, s.Close(context.Background()), "Close is idempotent")
	assert.Contains(t, buf.String(), `"before"`)
	assert.False(t, strings.Contains(buf.String(), `"after"`))
}
