package h1

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A connection the janitor sees before its goroutine has started is new,
// not idle since the process started: it stays open. The janitor did close
// such connections once the process was older than ReadHeaderTimeout (a
// client then saw EOF on a fresh connection). The timeout is long enough
// that no busy machine spends it between two statements; the process is
// made older than it, and the silence past it is written into the
// connection's clock instead of waited for.
func TestJanitorSparesNewConnections(t *testing.T) {
	s := &Server{ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Hour}
	s.conns = map[*serverConn]struct{}{}
	for monoNow() < 2*s.ReadHeaderTimeout {
		time.Sleep(100 * time.Millisecond)
	}
	a, b := net.Pipe()
	defer b.Close()
	c, _ := s.newConn(context.Background(), a)
	require.NotNil(t, c)
	s.sweep(nil)
	assert.Equal(t, stateIdle, c.state.Load(), "a connection just accepted is not closed")

	c.since.Add(-int64(2 * s.ReadHeaderTimeout)) // accepted two timeouts ago
	s.sweep(nil)
	assert.Equal(t, stateClosed, c.state.Load(), "a new connection silent past ReadHeaderTimeout is closed")
}
