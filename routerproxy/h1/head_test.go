package h1

import (
	"bufio"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connOver returns a client connection whose reader holds raw.
func connOver(raw string) *conn {
	return &conn{br: bufio.NewReaderSize(strings.NewReader(raw), bufSize)}
}

// The client reads a response as net/http's ReadResponse does: the same
// status, header, framing and body for the same bytes.
func TestResponseReadAsNetHTTPDoes(t *testing.T) {
	for _, tc := range []struct{ method, raw string }{
		{"POST", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nX-Pad:  v \r\n\r\n{}"},
		{"POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n3\r\nabc\r\n1;x=y\r\nd\r\n0\r\nTrailer-A: 1\r\n\r\n"},
		{"POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
		{"POST", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"},
		{"POST", "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"},
		{"POST", "HTTP/1.0 200 OK\r\n\r\nuntil the end"},
		{"POST", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n"},
		{"POST", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nk"},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\n"},
		{"POST", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"},
		{"GET", "HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n"},
		{"POST", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"},
		{"POST", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"},
		{"POST", "HTTP/1.1  200  spaced reason\r\nContent-Length: 0\r\n\r\n"},
		{"POST", "HTTP/1.1 200 OK\nContent-Length: 1\n\nz"},
		{"POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
		{"POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"}, // one Content-Length, as net/http keeps one
	} {
		req := &http.Request{Method: tc.method}
		want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(tc.raw)), req)
		require.NoError(t, err, tc.raw)
		got, err := readResponse(connOver(tc.raw), req)
		require.NoError(t, err, tc.raw)
		if d := cmp.Diff(viewResponse(want), viewResponse(got), cmpopts.IgnoreUnexported(respView{})); d != "" {
			t.Errorf("%q: -net/http +h1:\n%s", tc.raw, d)
		}
	}
}

// Heads net/http refuses are refused; and unlike net/http, an obsolete
// folded header line is refused (RFC 9112 §5.2 lets a proxy refuse it
// rather than pass it on).
func TestMalformedResponsesAreRefused(t *testing.T) {
	for _, raw := range []string{
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1\r\n\r\n",
		"ICY 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length:\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-A: 1",
		"",
	} {
		_, err := readResponse(connOver(raw), &http.Request{Method: "POST"})
		assert.Error(t, err, "%q", raw)
	}
	_, err := readResponse(connOver("HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("b", maxResponseHead)+"\r\n\r\n"), &http.Request{Method: "POST"})
	assert.ErrorIs(t, err, errHeadTooLarge)
}

func BenchmarkParseFields(b *testing.B) {
	head := "Server: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 23:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 250\r\nLast-Modified: Tue, 01 Dec 2026 22:00:00 GMT\r\nConnection: keep-alive\r\nETag: \"6929a0e0-fa\"\r\nAccept-Ranges: bytes\r\n\r\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseFields(head, 9, false); err != nil {
			b.Fatal(err)
		}
	}
}

// A connection does not keep a large head's buffer for the next head.
func TestLargeHeadBufferIsNotKept(t *testing.T) {
	c := connOver("HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", maxResponseHead/2) + "\r\nContent-Length: 0\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	_, err := readResponse(c, &http.Request{Method: "POST"})
	require.NoError(t, err)
	assert.LessOrEqual(t, cap(c.head), maxKeptHead)
	_, err = readResponse(c, &http.Request{Method: "POST"})
	require.NoError(t, err)
	assert.Positive(t, cap(c.head), "a small head's buffer is kept")
}

// A head's parse costs memory in proportion to its bytes, not to a line
// count it claims: the size hints are capped (CVE-2023-24534).
func TestParseSizeHintsAreCapped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := parseFields("Host: a\r\n\r\n", 1_000_000, false)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "a two-line head allocated for a million lines")
}

// An upstream's head of more than MaxHeaderFields lines fails the attempt.
func TestResponseHeadFieldsAreBounded(t *testing.T) {
	_, err := readResponse(connOver("HTTP/1.1 200 OK\r\n"+strings.Repeat("a:\n", MaxHeaderFields)+"Content-Length: 0\r\n\r\n"), &http.Request{Method: "POST"})
	assert.ErrorIs(t, err, errTooManyFields)
	resp, err := readResponse(connOver("HTTP/1.1 200 OK\r\n"+strings.Repeat("a:\n", MaxHeaderFields-1)+"Content-Length: 0\r\n\r\n"), &http.Request{Method: "POST"})
	require.NoError(t, err)
	assert.Len(t, resp.Header["A"], MaxHeaderFields-1)
}
