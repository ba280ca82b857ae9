package h1_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/h1"
	"github.com/llmkube/llmkube-compile/test/poll"
)

// serve starts an h1.Server with h on loopback.
func serve(t *testing.T, h http.HandlerFunc, tune ...func(*h1.Server)) (*h1.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &h1.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	for _, f := range tune {
		f(s)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Close()
		assert.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return s, ln.Addr().String()
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c, bufio.NewReader(c)
}

// roundTrip writes raw and reads one response.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, raw string) (*http.Response, string) {
	t.Helper()
	_, err := io.WriteString(c, raw)
	require.NoError(t, err)
	return readResp(t, br)
}

func readResp(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// expectBodies reads one response per body, in order, and checks each.
func expectBodies(t *testing.T, br *bufio.Reader, bodies ...string) {
	t.Helper()
	for _, want := range bodies {
		_, got := readResp(t, br)
		assert.Equal(t, want, got)
	}
}

// closed reports whether the server closed the connection (EOF or reset).
func closed(t *testing.T, br *bufio.Reader) bool {
	t.Helper()
	_, err := br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
}

func TestKeepAliveFramingAndFlush(t *testing.T) {
	big := strings.Repeat("x", 5000)
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			_, _ = io.WriteString(w, big) // past the held-back size: chunked
		case "/flush":
			_, _ = io.WriteString(w, "a")
			http.NewResponseController(w).Flush()
			_, _ = io.WriteString(w, "b")
		default:
			echo(w, r)
		}
	})
	c, br := dial(t, addr)
	resp, body := roundTrip(t, c, br, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "POST /echo hello", body)
	assert.Equal(t, int64(len(body)), resp.ContentLength, "a short answer gets a Content-Length")
	assert.NotEmpty(t, resp.Header.Get("Date"))
	assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))

	resp, body = roundTrip(t, c, br, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, big, body)
	assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), "sniffed, as net/http does")

	resp, body = roundTrip(t, c, br, "GET /flush HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, "ab", body)
	assert.Equal(t, []string{"chunked"}, resp.TransferEncoding, "a flushed answer has no known length")

	// A chunked request with a trailer, then a pipelined one.
	_, err := io.WriteString(c, "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nX-T: 1\r\n\r\n"+
		"POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz")
	require.NoError(t, err)
	_, body = readResp(t, br)
	assert.Equal(t, "POST /c abcde", body)
	resp, body = readResp(t, br)
	assert.Equal(t, "POST /d z", body)
	assert.False(t, resp.Close)
}

// The head parse agrees with net/http's: the same Header map, Host,
// lengths and URL for the same bytes.
func TestHeadParsedAsNetHTTPDoes(t *testing.T) {
	heads := []string{
		"POST /v1/chat/completions HTTP/1.1\r\nHost: api.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nx-lower: a\r\nX-Multi: 1\r\nx-multi: 2\r\nX-Space:   padded  \t\r\nAuthorization: Bearer t\r\n\r\n{}",
		"GET /v1/models?limit=2&x=%20y HTTP/1.1\r\nHost: h:8080\r\nAccept: */*\r\nX-Empty:\r\n\r\n",
		"GET /a%2Fb/c!d HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GET http://other.example/p?q=1 HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /x HTTP/1.0\r\nConnection: keep-alive\r\nUSER-AGENT: u\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\nconnection: Keep-Alive, close\r\n\r\n",
		manyHeaders(),
		"GET /t HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("a:\n", h1.MaxHeaderFields-1) + "\r\n", // as many fields as allowed
		"POST /d HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",        // equal lengths are one
	}
	type seen struct {
		Method, Path, RawPath, RawQuery, Host, Proto, RequestURI string
		Header                                                   http.Header
		ContentLength                                            int64
		TransferEncoding                                         []string
		Close                                                    bool
	}
	view := func(r *http.Request) seen {
		return seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Host, r.Proto, r.RequestURI, r.Header, r.ContentLength, r.TransferEncoding, r.Close}
	}
	got := make(chan seen, 1)
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got <- view(r)
		_, _ = io.Copy(io.Discard, r.Body)
	})
	for _, head := range heads {
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head)))
		require.NoError(t, err, head)
		c, br := dial(t, addr)
		_, _ = roundTrip(t, c, br, head)
		if d := cmp.Diff(view(want), <-got); d != "" {
			t.Errorf("%q: -net/http +h1:\n%s", head, d)
		}
	}
}

// manyHeaders is a head with more keys than the parser tracks without its
// map, repeated before and after that point.
func manyHeaders() string {
	var b strings.Builder
	b.WriteString("GET /m HTTP/1.1\r\nHost: h\r\n")
	for i := range 24 {
		fmt.Fprintf(&b, "X-K%d: %d\r\nx-k%d: again\r\n", i%20, i, (i*7)%20)
	}
	b.WriteString("\r\n")
	return b.String()
}

// Heads net/http refuses are refused, with the same status, and the
// connection is closed.
func TestMalformedHeadsAreRefused(t *testing.T) {
	var calls atomic.Int32
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }, func(s *h1.Server) { s.MaxHeaderBytes = 4096 })
	for _, tc := range []struct {
		head   string
		status int
	}{
		{"POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 400},           // no Host
		{"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},           // two Hosts
		{"GET /x HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n", 400}, // obsolete folding
		{"GET /x HTTP/1.1\r\nHost: a\r\nBad Key: 1\r\n\r\n", 400},        // space in a name
		{"GET /x HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n", 400},           // space before the colon
		{"GET /x HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n", 400},       // control byte in a value
		{"GET /x HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", 400},           // no colon
		{"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
		{"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
		{"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400},
		{"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400},
		{"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
		{"GET /x HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400},
		{"GET /x HTTP/3\r\nHost: a\r\n\r\n", 400},
		{"GET /x FTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"G(T /x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"GET x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", 400},
		{"GET /x HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"POST /x HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx", 417},
		{"GET /x HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", 5000) + "\r\n\r\n", 431},
		{"\r\n\r\n\r\n\r\n\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"GET /x HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("a:\n", h1.MaxHeaderFields) + "\r\n", 431},              // one field too many
		{"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: abc\r\n\r\n0\r\n\r\n", 400}, // chunked with an invalid length
		{"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length:\r\n\r\n0\r\n\r\n", 400},     // chunked with an empty length
	} {
		c, br := dial(t, addr)
		resp, _ := roundTrip(t, c, br, tc.head)
		assert.Equal(t, tc.status, resp.StatusCode, "%q", tc.head)
		assert.True(t, resp.Close, "%q", tc.head)
		assert.True(t, closed(t, br), "%q: connection left open", tc.head)
	}
	assert.Zero(t, calls.Load(), "no refused head reached the handler")
}

// RFC 9112 §6.1: both framings read as chunked, answered, connection
// closed; the bytes after the chunked body never run as a request.
func TestConflictingFramingClosesTheConnection(t *testing.T) {
	var calls atomic.Int32
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1); echo(w, r) })
	c, br := dial(t, addr)
	resp, body := roundTrip(t, c, br, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"+
		"POST /smuggled HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	assert.Equal(t, "POST /a abc", body)
	assert.True(t, resp.Close)
	assert.True(t, closed(t, br))
	assert.EqualValues(t, 1, calls.Load())
}

func TestExpectContinue(t *testing.T) {
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ignore" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		echo(w, r)
	})
	c, br := dial(t, addr)
	_, err := io.WriteString(c, "POST /read HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
	require.NoError(t, err)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 100 Continue\r\n", line, "100 is sent when the handler reads the body")
	_, _ = br.ReadString('\n')
	_, _ = io.WriteString(c, "hi")
	_, body := readResp(t, br)
	assert.Equal(t, "POST /read hi", body)

	// A handler that answers without reading: no 100, and the connection
	// ends (the client may or may not send the body).
	resp, _ := roundTrip(t, c, br, "POST /ignore HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.True(t, closed(t, br))
}

// A body the handler left unread is read (up to 256 KiB) to keep the
// connection; a larger one closes it.
func TestUnreadBody(t *testing.T) {
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.URL.Path) })
	c, br := dial(t, addr)
	_, body := roundTrip(t, c, br, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	assert.Equal(t, "/a", body)
	_, body = roundTrip(t, c, br, "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n")
	assert.Equal(t, "/b", body, "the unread bodies were skipped, not parsed as requests")
	resp, _ := roundTrip(t, c, br, fmt.Sprintf("POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 1<<20))
	assert.True(t, resp.Close)
	assert.True(t, closed(t, br))
}

func TestHTTP10AndHead(t *testing.T) {
	_, addr := serve(t, echo)
	c, br := dial(t, addr)
	resp, body := roundTrip(t, c, br, "GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	assert.Equal(t, "GET /k ", body)
	assert.Equal(t, "keep-alive", resp.Header.Get("Connection"))
	_, err := io.WriteString(c, "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.EqualValues(t, len("HEAD /h "), resp.ContentLength, "the length the body would have had")
	resp, _ = roundTrip(t, c, br, "GET /c HTTP/1.0\r\n\r\n")
	assert.True(t, resp.Close, "HTTP/1.0 without keep-alive closes")
	assert.True(t, closed(t, br))
}

// What a handler writes is framed safely: a declared length is enforced,
// a short one closes the connection, header values cannot split the head.
func TestResponseFramingIsSafe(t *testing.T) {
	werr := make(chan error, 1)
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/over":
			w.Header().Set("Content-Length", "2")
			_, err := io.WriteString(w, "abc")
			werr <- err
			_, _ = io.WriteString(w, "ab")
		case "/short":
			w.Header().Set("Content-Length", "5")
			_, _ = io.WriteString(w, "ab")
		case "/close":
			w.Header().Set("Connection", "Close")
			_, _ = io.WriteString(w, "bye")
		case "/inject":
			w.Header()["X-Inject"] = []string{"a\r\nSet-Cookie: evil=1"}
			w.Header()["Bad Name"] = []string{"v"}
			w.WriteHeader(204)
		}
	})
	c, br := dial(t, addr)
	resp, body := roundTrip(t, c, br, "GET /over HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.ErrorIs(t, <-werr, http.ErrContentLength)
	assert.Equal(t, "ab", body)
	assert.False(t, resp.Close)
	resp, _ = roundTrip(t, c, br, "GET /inject HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, 204, resp.StatusCode)
	assert.Equal(t, "a  Set-Cookie: evil=1", resp.Header.Get("X-Inject"))
	assert.Empty(t, resp.Header.Get("Set-Cookie"))
	assert.Empty(t, resp.Header.Get("Bad Name"))
	c2, br2 := dial(t, addr)
	resp, _ = roundTrip(t, c2, br2, "GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.True(t, resp.Close, "a handler's Connection: close is honoured")
	assert.True(t, closed(t, br2))
	_, err := io.WriteString(c, "GET /short HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the connection closes after a short body")
}

// A client that closes its connection while the handler waits cancels the
// request's context; a pipelined request is not mistaken for a leave.
func TestClientLeaveCancelsTheRequest(t *testing.T) {
	cause := make(chan error, 1)
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/wait":
			<-r.Context().Done()
			cause <- context.Cause(r.Context())
		case "/slow":
			time.Sleep(100 * time.Millisecond) // past the leave check
			_, _ = io.WriteString(w, "slow")
		default:
			_, _ = io.WriteString(w, r.URL.Path)
		}
	}, func(s *h1.Server) { s.LeaveCheckDelay = 5 * time.Millisecond })

	c, br := dial(t, addr)
	_, err := io.WriteString(c, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"+"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	expectBodies(t, br, "slow", "/next")

	// The next byte arrives while the watch runs.
	_, err = io.WriteString(c, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
	require.NoError(t, err)
	time.Sleep(30 * time.Millisecond)
	_, err = io.WriteString(c, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	expectBodies(t, br, "slow", "/after")

	_, err = io.WriteString(c, "POST /wait HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	c.Close()
	assert.ErrorIs(t, poll.Recv(t, cause, 5*time.Second, "the request was not cancelled when its client left"), h1.ErrClientGone)
}

// TestTimeouts: each wait has its own timeout. Each check sets the other
// timeout to an hour, so which one closed the connection shows in whether it
// closed within dial's 10-s deadline at all, not in how long it took (a busy
// machine delays a timer; it never fires one an hour early).
func TestTimeouts(t *testing.T) {
	_, addr := serve(t, echo, func(s *h1.Server) { s.ReadHeaderTimeout, s.IdleTimeout = 200*time.Millisecond, time.Hour })
	c, br := dial(t, addr)
	_, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHo")
	require.NoError(t, err)
	assert.True(t, closed(t, br), "a head trickled past ReadHeaderTimeout closes the connection")

	_, br = dial(t, addr)
	assert.True(t, closed(t, br), "a new connection that sends nothing closes after ReadHeaderTimeout")

	// A new connection's wait for its first byte is its head's: this one
	// gets 2 s to send it (not 200 ms a busy machine can spend between
	// dial and write), then waits past them idle.
	_, addr = serve(t, echo, func(s *h1.Server) { s.ReadHeaderTimeout, s.IdleTimeout = 2*time.Second, time.Hour })
	c, br = dial(t, addr)
	_, _ = roundTrip(t, c, br, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, c.SetReadDeadline(time.Now().Add(3*time.Second)))
	assert.False(t, closed(t, br), "an idle keep-alive connection is not closed by ReadHeaderTimeout")

	_, addr = serve(t, echo, func(s *h1.Server) { s.ReadHeaderTimeout, s.IdleTimeout = time.Hour, 200*time.Millisecond })
	c, br = dial(t, addr)
	_, _ = roundTrip(t, c, br, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.True(t, closed(t, br), "an idle keep-alive connection closes after IdleTimeout")
}

func TestShutdownDrains(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	s, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			close(started)
			<-release
		}
		_, _ = io.WriteString(w, "done")
	})
	idle, idleBR := dial(t, addr)
	_, _ = roundTrip(t, idle, idleBR, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
	busy, busyBR := dial(t, addr)
	_, err := io.WriteString(busy, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded, "a request in flight holds the drain")
	assert.True(t, closed(t, idleBR), "idle connections close at once")
	_, err = net.Dial("tcp", addr)
	assert.Error(t, err, "no new connections")

	close(release)
	resp, body := readResp(t, busyBR)
	assert.Equal(t, "done", body)
	assert.True(t, resp.Close, "the drained connection says it closes")
	assert.NoError(t, s.Shutdown(context.Background()))
}

func TestHandlerPanic(t *testing.T) {
	_, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		_, _ = io.WriteString(w, "ok")
	})
	c, br := dial(t, addr)
	_, err := io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.True(t, closed(t, br), "a panicking handler's connection is closed")
	c, br = dial(t, addr)
	_, body := roundTrip(t, c, br, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, "ok", body, "the server survives")
}

// A client that pipelines requests and never reads their answers is closed
// once a write to it has been blocked for WriteTimeout, whatever the
// handler did about deadlines, so a graceful shutdown does not wait on it.
func TestNeverReadingClientIsClosed(t *testing.T) {
	var served atomic.Int64
	answer := strings.Repeat("x", 16<<10)
	s, addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, answer)
	}, func(s *h1.Server) { s.WriteTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		batch := strings.Repeat("GET /x HTTP/1.1\r\nHost: x\r\n\r\n", 100)
		for {
			if _, err := io.WriteString(c, batch); err != nil {
				return // the server closed the connection
			}
		}
	}()
	// The server blocks once the socket buffers are full of answers.
	require.Eventually(t, func() bool {
		n := served.Load()
		time.Sleep(100 * time.Millisecond)
		return n > 0 && served.Load() == n
	}, 10*time.Second, 10*time.Millisecond)
	// Without the write timeout the drain would wait on the client for
	// ever: the context's 30 s only turn that into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.NoError(t, s.Shutdown(ctx), "the drain waited on a client that never reads")
	poll.Recv(t, writerDone, 30*time.Second, "the never-reading client's connection is still open")
}

// A request line that cannot start an HTTP/1.x head (HTTP/0.9 has no
// header section) is refused as soon as it is read, not held for the
// header timeout.
func TestHTTP09IsRefusedAtOnce(t *testing.T) {
	// Held for the header timeout (an hour), the read below would hit
	// dial's 10-s deadline instead of an answer.
	_, addr := serve(t, echo, func(s *h1.Server) { s.ReadHeaderTimeout = time.Hour })
	for _, tc := range []struct {
		line   string
		status int
	}{
		{"GET /x\r\n", 400},
		{"GET\r\n", 400},
		{"GET /x HTTP/0.9\r\n", 400},
		{"PRI * HTTP/2.0\r\n", 505},
	} {
		c, br := dial(t, addr)
		_, err := io.WriteString(c, tc.line)
		require.NoError(t, err)
		resp, _ := readResp(t, br)
		assert.Equal(t, tc.status, resp.StatusCode, "%q", tc.line)
	}
}

// At MaxConns a new connection takes the slot of the longest-idle one,
// which is closed: idle keep-alive sockets never starve a new client. Only
// when every slot carries a request is a connection answered 503 with
// Retry-After and closed without its request being read; once a busy
// connection closes, a new one is served again.
func TestConnectionLimit(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 2)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
		echo(w, r)
	})
	srv, addr := serve(t, handler, func(s *h1.Server) { s.MaxConns = 2 })
	idle := func(want int) {
		t.Helper()
		poll.Until(t, time.Minute, time.Millisecond, "connections idle as the server sees them", func() error {
			if n := h1.IdleConns(srv); n != want {
				return fmt.Errorf("%d idle, want %d", n, want)
			}
			return nil
		})
	}
	a, abr := dial(t, addr)
	_, body := roundTrip(t, a, abr, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, "GET /a ", body)
	idle(1) // a's answer was read before the server counts a idle
	b, bbr := dial(t, addr)
	_, _ = roundTrip(t, b, bbr, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
	idle(2)

	// Both idle: a new client is served in the slot of a, the longer idle.
	n, nbr := dial(t, addr)
	resp, body := roundTrip(t, n, nbr, "GET /n HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "GET /n ", body)
	assert.True(t, closed(t, abr), "the longest-idle connection was closed")
	_, body = roundTrip(t, b, bbr, "GET /b2 HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, "GET /b2 ", body, "the other keeps serving")

	// Every slot busy: 503.
	_, err := io.WriteString(b, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	_, err = io.WriteString(n, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	<-entered
	<-entered // both requests are being served
	c, cbr := dial(t, addr)
	resp, _ = roundTrip(t, c, cbr, "GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.True(t, closed(t, cbr))

	once.Do(func() { close(release) })
	for _, br := range []*bufio.Reader{bbr, nbr} {
		r, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b.Close()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /d HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == 200
	}, time.Minute, 20*time.Millisecond, "a freed slot serves again")
}
