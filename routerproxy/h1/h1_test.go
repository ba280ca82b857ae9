package h1_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/h1"
)

// fallback records what h1 hands over.
type fallback struct{ n atomic.Int64 }

func (f *fallback) RoundTrip(r *http.Request) (*http.Response, error) {
	f.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func post(t *testing.T, tr http.RoundTripper, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Test", "1")
	return tr.RoundTrip(req)
}

// TestKeepAliveAndFraming: Content-Length and chunked responses, read to
// the end, reuse one connection; the request arrives as sent.
func TestKeepAliveAndFraming(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		assert.Equal(t, "1", r.Header.Get("X-Test"))
		assert.Equal(t, int64(len(b)), r.ContentLength)
		assert.Equal(t, "Go-http-client/1.1", r.UserAgent())
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
		fmt.Fprintf(w, "got %s %s", r.URL.RequestURI(), b)
	})
	tr := h1.New(&fallback{}, nil)
	for i, q := range []string{"/v1/x", "/v1/x?chunked=1", "/v1/y?a=b"} {
		resp, err := post(t, tr, context.Background(), srv.URL+q, fmt.Sprint("body", i))
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, fmt.Sprintf("got %s body%d", q, i), string(b))
	}
	assert.EqualValues(t, 1, conns.Load(), "one keep-alive connection")
}

// TestServerClosedIdleConnection: a connection the server closed while idle
// is not reused.
func TestServerClosedIdleConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	tr := h1.New(&fallback{}, nil)
	for range 2 {
		resp, err := post(t, tr, context.Background(), srv.URL, "x")
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.CloseClientConnections()       // the server's idle timeout
		time.Sleep(200 * time.Millisecond) // the FIN crosses loopback (a softirq a busy machine can defer)
	}
}

// TestCancelWhileWaitingForHeaders: the request's context ends the wait for
// response headers at once, with the context's cause.
func TestCancelWhileWaitingForHeaders(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	tr := h1.New(&fallback{}, nil)
	cause := errors.New("header timeout")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
	// The server never answers: only the cancellation ends the wait.
	_, err := post(t, tr, ctx, srv.URL, "x")
	require.ErrorIs(t, err, cause)
}

// TestCancelMidBody: cancelling while the body streams ends the read and
// the connection is not reused.
func TestCancelMidBody(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			_, _ = io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	tr := h1.New(&fallback{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, tr, ctx, srv.URL+"/slow", "x")
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "data: 1\n\n", string(buf[:n]))
	cancel()
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err)
	resp.Body.Close()
	resp, err = post(t, tr, context.Background(), srv.URL+"/next", "x")
	require.NoError(t, err)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.EqualValues(t, 2, conns.Load(), "the cancelled connection was not reused")
}

// TestInformationalAndUpgrade: 103 is skipped like net/http does; 101 is
// returned (the caller refuses it) and its connection never reused.
func TestInformationalAndUpgrade(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/upgrade" {
					_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
					return
				}
				// This server answers one request per connection, and says
				// so: otherwise the client may reuse the connection before
				// its close arrives (the race every HTTP/1.1 client has).
				_, _ = io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
			}()
		}
	}()
	tr := h1.New(&fallback{}, nil)
	resp, err := post(t, tr, context.Background(), "http://"+ln.Addr().String()+"/hints", "x")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok", string(b))
	resp, err = post(t, tr, context.Background(), "http://"+ln.Addr().String()+"/upgrade", "x")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 101, resp.StatusCode)
}

// TestRefusesHeaderInjection: a value with CR LF never reaches the wire.
func TestRefusesHeaderInjection(t *testing.T) {
	tr := h1.New(&fallback{}, nil)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer a\r\nX-Evil: 1")
	_, err := tr.RoundTrip(req)
	require.Error(t, err)
}

// TestFallback: https and proxied requests go to the fallback.
func TestFallback(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	fb := &fallback{}
	tr := h1.New(srv.Client().Transport, nil)
	resp, err := post(t, tr, context.Background(), srv.URL, "x")
	require.NoError(t, err)
	resp.Body.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	proxied := h1.New(fb, func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") })
	proxied.Fallback = fb
	req, _ := http.NewRequest(http.MethodPost, plain.URL, strings.NewReader("x"))
	_, _ = proxied.RoundTrip(req)
	assert.EqualValues(t, 1, fb.n.Load(), "a proxied request goes to the fallback")
}

// TestIdleConnectionsAreClosed: a connection idle longer than IdleTimeout
// is closed by the sweep, even with no further traffic (a pod that went
// away does not keep its descriptor).
func TestIdleConnectionsAreClosed(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	tr := h1.New(&fallback{}, nil)
	tr.IdleTimeout = 100 * time.Millisecond
	resp, err := post(t, tr, context.Background(), srv.URL, "x")
	require.NoError(t, err)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(30 * time.Second): // a bound, not a measure: the close is due after 100ms
		t.Fatal("the idle connection was never closed")
	}
}

// countingServer serves h and counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}
