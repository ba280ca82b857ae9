package routerproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

// shortStream is a two-event SSE body.
const shortStream = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"

// A stream whose upstream opened it and has not sent a token yet is open at
// the client too: the response head is not held back until the first token.
func TestStreamHeadBeforeFirstToken(t *testing.T) {
	release := make(chan struct{})
	s := newStub(t, "s", heldStream(release, shortStream))
	h := start(t, config(backend("s", s.URL)))
	req, err := http.NewRequest(http.MethodPost, h.front.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	require.NoError(t, err)
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := h.front.Client().Do(req)
		if err == nil {
			done <- resp
		}
	}()
	var resp *http.Response
	select {
	case resp = <-done:
	case <-time.After(60 * time.Second): // the upstream holds its first token until release: any wait shows the head came first
		close(release)
		t.Fatal("the response head waited for the first token")
	}
	close(release)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(b), "[DONE]")
}

// The relay passes a stream's bytes unchanged, so its framing follows the
// upstream: a stream sent with a Content-Length keeps it, a chunked one is
// chunked.
func TestStreamFramingFollowsUpstream(t *testing.T) {
	sized := newStub(t, "sized", sizedStream(shortStream))
	chunked := newStub(t, "chunked", sseHandler("c", 2, 0))
	for _, tc := range []struct {
		name   string
		url    string
		length int64
	}{{"sized", sized.URL, int64(len(shortStream))}, {"chunked", chunked.URL, -1}} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, config(backend("s", tc.url)))
			req, err := http.NewRequest(http.MethodPost, h.front.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
			require.NoError(t, err)
			resp, err := h.front.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.length, resp.ContentLength)
			if tc.length < 0 {
				assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
			} else {
				assert.Equal(t, shortStream, string(b))
			}
			assert.Contains(t, string(b), "[DONE]")
		})
	}
}

// When a stream's first bytes arrive with its head, head and bytes reach the
// client in one write (the proxy does not send the head alone first).
func TestStreamHeadAndFirstBytesInOneWrite(t *testing.T) {
	s := newStub(t, "s", sizedStream(shortStream))
	h := start(t, config(backend("s", s.URL)))
	front := httptest.NewUnstartedServer(h.srv.Handler())
	writes := &writeCounter{}
	front.Listener = &countingListener{Listener: front.Listener, c: writes}
	front.Start()
	t.Cleanup(front.Close)

	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	body := `{"model":"m","stream":true}`
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, shortStream, string(b))
	assert.Equal(t, 1, writes.n(), "head and body in one write")
}

type writeCounter struct {
	mu     sync.Mutex
	writes int
}

func (w *writeCounter) add() {
	w.mu.Lock()
	w.writes++
	w.mu.Unlock()
}

func (w *writeCounter) n() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

type countingListener struct {
	net.Listener
	c *writeCounter
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, c: l.c}, nil
}

type countingConn struct {
	net.Conn
	c *writeCounter
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.c.add()
	return c.Conn.Write(p)
}

// A body that does not fit the request-body memory budget waits for it no
// longer than the body read timeout, then gets 503 body_memory_busy; one
// that fits goes through without waiting.
func TestBodyMemoryBusyWaitsAtMostTheBodyTimeout(t *testing.T) {
	release := make(chan struct{})
	s := newStub(t, "s", func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 1<<20 {
			<-release
		}
		providertest.JSON(w, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	h := start(t, config(backend("s", s.URL)), func(o *Options) {
		// A 3 MiB limit and budget: one body at the limit takes all of it.
		o.MaxBodyBytes, o.BodyMemoryBytes = 3<<20, 3<<20
		// Long enough for the held body's own read on a busy machine.
		o.BodyReadTimeout = 5 * time.Second
	})
	// Hold the budget: a body at the limit lives until its response ends,
	// which the upstream holds back.
	prefix, suffix := `{"model":"m","messages":[{"role":"user","content":"`, `"}]}`
	atLimit := prefix + strings.Repeat("a", int(h.srv.maxBody)-len(prefix)-len(suffix)) + suffix
	held := make(chan int, 1)
	go func() {
		code, _, _ := h.post(t, atLimit)
		held <- code
	}()
	require.Eventually(t, func() bool {
		if h.srv.bodyMem.TryAcquire(1) {
			h.srv.bodyMem.Release(1)
			return false
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "the body at the limit holds the budget")

	// The memory is held until release is closed, after this request: its
	// 503 shows that it stopped waiting at the body timeout (without one it
	// would wait for ever), and its time that it waited.
	big := prefix + strings.Repeat("a", 2<<20) + suffix
	started := time.Now()
	code, body, hdr := h.post(t, big)
	waited := time.Since(started)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "body_memory_busy")
	assert.Equal(t, "1", hdr.Get("Retry-After"))
	assert.GreaterOrEqual(t, waited, 4500*time.Millisecond, "it waited for memory")

	code, body, _ = h.post(t, chat("m"))
	assert.Equal(t, 200, code, "a small body uses its own budget: %s", body)
	close(release)
	assert.Equal(t, 200, <-held)
	code, body, _ = h.post(t, big)
	assert.Equal(t, 200, code, "the budget is free again: %s", body)
}
