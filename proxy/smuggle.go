package proxy

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync/atomic"
)

// net/http reads a request carrying both Content-Length and
// Transfer-Encoding as chunked, as RFC 9112 §6.1 says, but deletes
// Content-Length before the handler sees it and keeps the connection open,
// while the same section asks a server to close it after responding: a
// front proxy that framed the message by Content-Length would smuggle the
// rest as the next request. Listener watches each connection's request
// heads and marks a connection that ever sent both; the handler then
// answers with Connection: close.

type connKey struct{}

// Listener wraps ln so the server can see framing conflicts; use it with
// ConnContext.
func Listener(ln net.Listener) net.Listener { return &watchListener{ln} }

// ConnContext is the http.Server ConnContext for connections from Listener.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if w, ok := c.(*watchConn); ok {
		return context.WithValue(ctx, connKey{}, w)
	}
	return ctx
}

type watchListener struct{ net.Listener }

func (l *watchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchConn{Conn: c}, nil
}

type watchConn struct {
	net.Conn
	line       []byte // the current line, up to maxHeadLine bytes
	cl, te     bool   // seen in the current head
	conflicted atomic.Bool
}

const maxHeadLine = 64

func (c *watchConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan(p[:n])
	return n, err
}

// scan splits the stream into lines and treats a blank line as the end of
// a head. It does not know where bodies end, so a body line that looks like
// both headers can only close a connection early: the safe direction.
func (c *watchConn) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := maxHeadLine - len(c.line); room > 0 {
			c.line = append(c.line, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			return
		}
		line := bytes.TrimRight(c.line, "\r")
		switch {
		case len(line) == 0:
			c.cl, c.te = false, false
		case hasPrefixFold(line, contentLength):
			c.cl = true
		case hasPrefixFold(line, transferEncoding):
			c.te = true
		}
		if c.cl && c.te {
			c.conflicted.Store(true)
		}
		c.line = c.line[:0]
		b = b[i+1:]
	}
}

var contentLength, transferEncoding = []byte("content-length:"), []byte("transfer-encoding:")

func hasPrefixFold(b, p []byte) bool {
	return len(b) >= len(p) && bytes.EqualFold(b[:len(p)], p)
}

// closeIfConflicted asks net/http to close the connection after this
// response when it ever carried both framing headers.
func closeIfConflicted(w http.ResponseWriter, r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*watchConn); ok && c.conflicted.Load() {
		w.Header().Set("Connection", "close")
	}
}
