package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/net/http/httpguts"
)

// Differential fuzz targets: routerproxy/h1 reads the same bytes as net/http's
// own readers do (http.ReadRequest, http.ReadResponse and their chunked
// bodies): both accept them alike, or both refuse, or h1 refuses for one
// of the documented reasons it is stricter (stricterRequest,
// stricterResponse). h1 must never accept what net/http refuses, nor read
// other framing from the same bytes: that is how requests are smuggled.
// go test runs the seeds; make fuzz runs each target for a while.

// hostileSeeds are the cases of issue 29 and of the hostile-input tests.
var hostileSeeds = []string{
	"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n" + strings.Repeat("a:\n", 300) + "\r\n{}",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: abc\r\n\r\n0\r\n\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length:\r\n\r\n0\r\n\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nPOST /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
	"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
	"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\nx",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
	"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"GET /x\r\n",
	"GET /x HTTP/0.9\r\n\r\n",
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	"GET /x HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n",
	"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET /x HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n",
	"GET /x HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n",
	"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
	"GET http://other.example/p?q=1 HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /a%2Fb/c!d HTTP/1.1\r\nHost: h\r\nConnection: close, x-llmkube-team\r\nX-Llmkube-Team: t\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: h\r\nconnection: Keep-Alive\r\n\r\n",
	"\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"POST /x HTTP/1.1\nHost: a\nContent-Length: 1\n\nz",
}

// requestView is what a request head says to its handler.
type requestView struct {
	Method, Path, RawPath, RawQuery, Host, Proto, RequestURI string
	Header                                                   http.Header
	ContentLength                                            int64
	TransferEncoding                                         []string
	Body                                                     string
	BodyErr                                                  bool
	trailerErr                                               bool
}

func viewRequest(r *http.Request) requestView {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	return requestView{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Host, r.Proto, r.RequestURI,
		r.Header, r.ContentLength, r.TransferEncoding, string(b), err != nil, isTrailerErr(err)}
}

// isTrailerErr reports an error of h1's trailer checks, which are
// stricter than net/http's (a trailer is never needed by this API): a
// name net/http lets through, a line without CRLF, a folded line.
func isTrailerErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "chunked trailer")
}

// h1Request reads data as the server reads a request; rest is the
// connection's reader (what follows the request once its body is read).
func h1Request(data []byte) (*http.Request, *bufio.Reader, *headError) {
	c := &serverConn{s: &Server{}, br: bufio.NewReaderSize(bytes.NewReader(data), bufSize), bw: bufio.NewWriter(io.Discard)}
	rq, err := c.readRequest()
	if err != nil {
		return nil, nil, err
	}
	return rq.r, c.br, nil
}

// rest is what a reader holds after a message: where the next one starts.
func rest(br *bufio.Reader) string {
	b, _ := io.ReadAll(br)
	return string(b)
}

// headLines are the lines of data's head (up to the first empty line),
// without their line ends, after the empty lines h1 skips.
func headLines(data []byte) []string {
	s := string(data)
	for range maxEmptyLines {
		switch {
		case strings.HasPrefix(s, "\r\n"):
			s = s[2:]
		case strings.HasPrefix(s, "\n"):
			s = s[1:]
		}
	}
	var lines []string
	for s != "" {
		var line string
		line, s = cutLine(s)
		if line == "" {
			break
		}
		lines = append(lines, line)
	}
	return lines
}

// stricterRequest reports whether h1 refusing a request net/http read as
// want is one of its documented refusals (docs/router-proxy.md, "Server
// core" and "Limits and hostile input").
func stricterRequest(data []byte, want *http.Request) bool {
	lines := headLines(data)
	if len(lines) > MaxHeaderFields+1 || bytes.Index(data, []byte("\n\r\n")) > DefaultMaxHeaderBytes || bytes.Index(data, []byte("\n\n")) > DefaultMaxHeaderBytes {
		return true // over the head limits: 431
	}
	if want.Method == http.MethodConnect || want.Proto != "HTTP/1.1" && want.Proto != "HTTP/1.0" {
		return true // CONNECT is not served; only HTTP/1.0 and 1.1 are
	}
	hosts, host, te, expect := 0, "", false, false
	for _, l := range lines[1:] {
		if l[0] == ' ' || l[0] == '\t' {
			return true // obsolete line folding
		}
		k, v, ok := strings.Cut(l, ":")
		v = strings.Trim(v, " \t")
		if !ok || !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			return true // a name with a space before its colon, a control byte
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host":
			hosts, host = hosts+1, v
		case "Transfer-Encoding":
			te = true
		case "Expect":
			expect = expect || !strings.EqualFold(v, "100-continue")
		}
	}
	http10 := want.ProtoMinor == 0
	switch {
	case hosts > 1, hosts == 0 && !http10, !httpguts.ValidHostHeader(host):
		return true // Host missing, repeated or malformed: 400, as net/http's server
	case te && http10:
		return true // net/http ignores Transfer-Encoding on HTTP/1.0
	case expect && !http10:
		return true // 417, as net/http's server
	}
	return false
}

func FuzzRequestHead(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotRest, herr := h1Request(data)
		wantRest := bufio.NewReader(bytes.NewReader(skipEmptyLines(data)))
		want, werr := http.ReadRequest(wantRest)
		switch {
		case herr != nil && werr != nil:
			return
		case herr == nil && werr != nil:
			t.Fatalf("h1 read a request net/http refuses (%v): %q", werr, data)
		case herr != nil:
			if herr.status == 0 {
				// The head did not end: net/http read a head h1 is still
				// waiting for (h1 needs the whole head), which is not a
				// different reading of the bytes.
				return
			}
			if !stricterRequest(data, want) {
				t.Fatalf("h1 refused (%d %s) a request net/http reads: %q", herr.status, herr.msg, data)
			}
			return
		}
		gv, wv := viewRequest(got), viewRequest(want)
		if gv.BodyErr && !wv.BodyErr && gv.trailerErr {
			return
		}
		if d := cmp.Diff(wv, gv, cmpopts.IgnoreUnexported(requestView{})); d != "" {
			t.Fatalf("%q: -net/http +h1:\n%s", data, d)
		}
		if !gv.BodyErr && len(gv.Body) < 1<<20 {
			if g, w := rest(gotRest), rest(wantRest); g != w {
				t.Fatalf("%q: the next message starts elsewhere: net/http %q, h1 %q", data, w, g)
			}
		}
	})
}

// skipEmptyLines drops the empty lines h1 skips before a request line
// (RFC 9112 §2.2), which net/http's ReadRequest does not skip.
func skipEmptyLines(data []byte) []byte {
	for range maxEmptyLines {
		switch {
		case bytes.HasPrefix(data, []byte("\r\n")):
			data = data[2:]
		case bytes.HasPrefix(data, []byte("\n")):
			data = data[1:]
		}
	}
	return data
}

// respView is what a response says to the proxy (trailerErr: the body
// ended in a trailer error, which the fuzz target excuses; not compared).
type respView struct {
	Status           string
	StatusCode       int
	Proto            string
	Header           http.Header
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Body             string
	BodyErr          bool
	trailerErr       bool
}

func viewResponse(r *http.Response) respView {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	return respView{r.Status, r.StatusCode, r.Proto, r.Header, r.ContentLength, r.TransferEncoding, r.Close, string(b), err != nil, isTrailerErr(err)}
}

// stricterResponse reports whether h1 refusing a response net/http read
// is one of its documented refusals.
func stricterResponse(data []byte, want *http.Response) bool {
	lines := headLines(data)
	if len(lines) > MaxHeaderFields+1 || len(data) > maxResponseHead {
		return true
	}
	if want.Proto != "HTTP/1.1" && want.Proto != "HTTP/1.0" {
		return true
	}
	if c := want.Status; len(c) < 3 || c[0] < '1' || c[0] > '9' || c[1] < '0' || c[1] > '9' || c[2] < '0' || c[2] > '9' {
		return true // a status code that is not three digits from 100
	}
	for _, l := range lines[1:] {
		if l[0] == ' ' || l[0] == '\t' {
			return true // obsolete line folding (RFC 9112 §5.2)
		}
		k, v, ok := strings.Cut(l, ":")
		v = strings.Trim(v, " \t")
		if !ok || !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
			return true
		}
		if want.ProtoMinor == 0 && http.CanonicalHeaderKey(k) == "Transfer-Encoding" {
			return true // net/http ignores Transfer-Encoding on HTTP/1.0
		}
	}
	return false
}

var fuzzMethods = []string{"POST", "GET", "HEAD"}

func FuzzResponseHead(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length:\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n3\r\nabc\r\n0\r\nTrailer-A: 1\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\n" + strings.Repeat("a:\n", 300) + "Content-Length: 0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
		"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nk",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n",
		"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n",
		"HTTP/1.1 099 odd\r\n\r\n",
		"HTTP/1.1  200  spaced reason\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\nContent-Length: 1\n\nz",
	} {
		for m := range fuzzMethods {
			f.Add(uint8(m), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, m uint8, data []byte) {
		req := &http.Request{Method: fuzzMethods[int(m)%len(fuzzMethods)]}
		c := connOver(string(data))
		got, gerr := readResponse(c, req)
		wantRest := bufio.NewReader(bytes.NewReader(data))
		want, werr := http.ReadResponse(wantRest, req)
		switch {
		case gerr != nil && werr != nil:
			return
		case gerr == nil && werr != nil:
			t.Fatalf("h1 read a response net/http refuses (%v): %q", werr, data)
		case gerr != nil:
			if errors.Is(gerr, io.EOF) || errors.Is(gerr, io.ErrUnexpectedEOF) {
				return // the head did not end; h1 needs it whole
			}
			if !stricterResponse(data, want) {
				t.Fatalf("h1 refused (%v) a response net/http reads: %q", gerr, data)
			}
			return
		}
		gv, wv := viewResponse(got), viewResponse(want)
		if want.StatusCode == http.StatusSwitchingProtocols {
			wv.Close = true // h1 never reuses a switched connection
		}
		if gv.BodyErr && !wv.BodyErr && gv.trailerErr {
			return
		}
		if d := cmp.Diff(wv, gv, cmpopts.IgnoreUnexported(respView{})); d != "" {
			t.Fatalf("%q: -net/http +h1:\n%s", data, d)
		}
		if !gv.BodyErr && !got.Close && len(gv.Body) < 1<<20 {
			if g, w := rest(c.br), rest(wantRest); g != w {
				t.Fatalf("%q: the next response starts elsewhere: net/http %q, h1 %q", data, w, g)
			}
		}
	})
}

// FuzzChunkedBody reads data as a chunked body of a request and of a
// response, with h1 and with net/http: the same bytes, the same error or
// none, and the next message at the same place.
func FuzzChunkedBody(f *testing.F) {
	for _, s := range []string{
		"0\r\n\r\n",
		"3\r\nabc\r\n0\r\n\r\n",
		"5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\nGET / HTTP/1.1\r\n",
		"zz\r\n",
		"3\r\nabcd\r\n0\r\n\r\n",
		"0\r\n\n",
		"0\nX: 1\n\n",
		"ffffffffffffffff1\r\n",
		"1\r\na\r\n-1\r\n",
		"3 \r\nabc\r\n0\r\n\r\n",
		"0\r\n\r\n\r\nPOST /smuggled HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqHead := "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		got, gotRest, herr := h1Request(append([]byte(reqHead), data...))
		if herr != nil {
			t.Fatalf("the head was refused: %v", herr.msg)
		}
		wantRest := bufio.NewReader(io.MultiReader(strings.NewReader(reqHead), bytes.NewReader(data)))
		want, err := http.ReadRequest(wantRest)
		if err != nil {
			t.Fatal(err)
		}
		compareBodies(t, data, got.Body, want.Body, gotRest, wantRest)

		respHead := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		req := &http.Request{Method: "POST"}
		c := connOver(respHead + string(data))
		gr, err := readResponse(c, req)
		if err != nil {
			t.Fatal(err)
		}
		wantRest = bufio.NewReader(io.MultiReader(strings.NewReader(respHead), bytes.NewReader(data)))
		wr, err := http.ReadResponse(wantRest, req)
		if err != nil {
			t.Fatal(err)
		}
		compareBodies(t, data, gr.Body, wr.Body, c.br, wantRest)
	})
}

func compareBodies(t *testing.T, data []byte, got, want io.Reader, gotRest, wantRest *bufio.Reader) {
	t.Helper()
	gb, gerr := io.ReadAll(io.LimitReader(got, 1<<20))
	wb, werr := io.ReadAll(io.LimitReader(want, 1<<20))
	switch {
	case werr == nil && isTrailerErr(gerr):
		return // h1's trailer checks are stricter
	case (gerr != nil) != (werr != nil):
		t.Fatalf("%q: h1 error %v, net/http error %v", data, gerr, werr)
	case string(gb) != string(wb):
		t.Fatalf("%q: h1 read %q, net/http %q", data, gb, wb)
	case gerr == nil:
		if g, w := rest(gotRest), rest(wantRest); g != w {
			t.Fatalf("%q: the next message starts elsewhere: net/http %q, h1 %q", data, w, g)
		}
	}
}
