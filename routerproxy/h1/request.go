package h1

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// headError is a request head the server refuses: status 0 means the
// connection failed or the client left (nothing is answered).
type headError struct {
	status int
	msg    string
}

func refused(status int, msg string) *headError { return &headError{status: status, msg: msg} }

var errConnGone = &headError{}

// request is a parsed request head and what the server must remember of it.
type request struct {
	r      *http.Request // without its context
	body   *serverBody
	close  bool // the connection ends after the response
	http10 bool
	head   bool // a HEAD request: no body in the response
}

// readRequest reads and parses one request head.
func (c *serverConn) readRequest() (*request, *headError) {
	limit := c.s.MaxHeaderBytes
	if limit <= 0 {
		limit = DefaultMaxHeaderBytes
	}
	head, lines, err := readHead(c.br, c.head[:0], limit, true, checkRequestLine)
	s, next := headString(head)
	c.head = next
	switch {
	case err == errBadVersion:
		line, _ := cutLine(s)
		if maj, _, ok := http.ParseHTTPVersion(line[strings.LastIndexByte(line, ' ')+1:]); ok && maj >= 2 {
			return nil, refused(http.StatusHTTPVersionNotSupported, "unsupported protocol version")
		}
		return nil, refused(http.StatusBadRequest, "malformed HTTP version")
	case err == errHeadTooLarge:
		return nil, refused(http.StatusRequestHeaderFieldsTooLarge, "request head too large")
	case err == errTooManyFields:
		return nil, refused(http.StatusRequestHeaderFieldsTooLarge, "too many header fields")
	case err == errMalformedHead:
		return nil, refused(http.StatusBadRequest, "malformed HTTP request")
	case err != nil:
		return nil, errConnGone // the connection failed, timed out or ended
	}
	return c.parseHead(s, lines)
}

var errBadVersion = errors.New("h1: not an HTTP/1.x request line")

// checkRequestLine refuses a request line that cannot start an HTTP/1.x
// head as soon as it is read, as net/http does: an HTTP/0.9 line ("GET /")
// has no header section, and waiting for one held the connection for the
// header timeout. parseHead reads the line the same way.
func checkRequestLine(line []byte) error {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	_, rest, ok1 := bytes.Cut(line, []byte(" "))
	_, proto, ok2 := bytes.Cut(rest, []byte(" "))
	switch {
	case !ok1 || !ok2:
		return errMalformedHead
	case string(proto) != "HTTP/1.1" && string(proto) != "HTTP/1.0":
		return errBadVersion
	}
	return nil
}

// parseHead parses a head of n lines (request line included) held in one
// string: keys and values are slices of it, one allocation for the head.
func (c *serverConn) parseHead(s string, n int) (*request, *headError) {
	line, s := cutLine(s)
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !validMethod(method) || target == "" {
		return nil, refused(http.StatusBadRequest, "malformed HTTP request")
	}
	// The request, its body and its http.Request template live in the
	// connection and are reset per request: the handler gets a copy of
	// the template (WithContext), and the body is the handler's only until
	// ServeHTTP returns, as in net/http.
	rq := &c.req
	*rq = request{}
	major, minor, herr := requestVersion(proto)
	if herr != nil {
		return nil, herr
	}
	rq.http10 = minor == 0
	u, err := parseTarget(method, target)
	if err != nil {
		return nil, refused(http.StatusBadRequest, "malformed request target")
	}

	f, ferr := parseFields(s, n, true)
	if ferr != nil {
		return nil, refused(http.StatusBadRequest, ferr.Error())
	}
	expect := f.expect != "" && !rq.http10
	if herr := checkRequestFields(&f, expect, rq.http10); herr != nil {
		return nil, herr
	}
	host := f.host
	if u.Host != "" {
		host = u.Host
	}
	rq.close = f.close || rq.http10 && !f.keepAlive

	body := &c.body
	*body = serverBody{c: c, framedBody: framedBody{br: c.br, onEOF: c.armLeave}}
	length, herr := frameRequest(body, &f, rq)
	if herr != nil {
		return nil, herr
	}
	body.expect = expect && !body.empty()

	r := &c.tmpl
	*r = http.Request{
		Method: method, URL: u, Proto: proto, ProtoMajor: major, ProtoMinor: minor,
		Header: f.h, ContentLength: length, Close: rq.close, Host: host,
		RemoteAddr: c.remote, RequestURI: target, Body: http.NoBody,
	}
	if !body.empty() {
		r.Body = body
		r.TransferEncoding = transferChunked(body.chunked)
	} else {
		body.eof = true
	}
	rq.r, rq.body, rq.head = r, body, method == http.MethodHead
	return rq, nil
}

// requestVersion parses the protocol of a request line: HTTP/1.1 or
// HTTP/1.0; a later version is answered 505, anything else 400.
func requestVersion(proto string) (major, minor int, herr *headError) {
	switch proto {
	case "HTTP/1.1":
		return 1, 1, nil
	case "HTTP/1.0":
		return 1, 0, nil
	}
	if maj, _, ok := http.ParseHTTPVersion(proto); ok && maj >= 2 {
		return 0, 0, refused(http.StatusHTTPVersionNotSupported, "unsupported protocol version")
	}
	return 0, 0, refused(http.StatusBadRequest, "malformed HTTP version")
}

// checkRequestFields refuses an Expect other than 100-continue (when it
// counts: expect) and a missing, repeated or malformed Host.
func checkRequestFields(f *fields, expect, http10 bool) *headError {
	switch {
	case expect && !strings.EqualFold(f.expect, "100-continue"):
		return refused(http.StatusExpectationFailed, "unsupported Expect")
	case f.hosts > 1:
		return refused(http.StatusBadRequest, "too many Host headers")
	case f.hosts == 0 && !http10:
		return refused(http.StatusBadRequest, "missing required Host header")
	case !httpguts.ValidHostHeader(f.host):
		return refused(http.StatusBadRequest, "malformed Host header")
	}
	return nil
}

// frameRequest frames the request body from its head: chunked (an HTTP/1.1
// request only), Content-Length, or none. It returns the ContentLength
// (-1 for chunked) and marks rq to close when both framings were sent.
func frameRequest(body *serverBody, f *fields, rq *request) (int64, *headError) {
	switch {
	case f.tes > 0:
		if rq.http10 || f.tes > 1 {
			return 0, refused(http.StatusBadRequest, "unsupported Transfer-Encoding")
		}
		if !strings.EqualFold(f.te, "chunked") {
			return 0, refused(http.StatusNotImplemented, "unsupported transfer encoding")
		}
		if f.clSeen {
			// RFC 9112 §6.1: chunked wins, and the connection must not
			// carry another request (a front proxy may have framed this
			// one by its Content-Length). An invalid or empty one is
			// refused, as net/http and nginx refuse it.
			if _, ok := parseLength(f.cl); !ok {
				return 0, refused(http.StatusBadRequest, "bad Content-Length")
			}
			rq.close = true
			delete(f.h, "Content-Length")
		}
		delete(f.h, "Transfer-Encoding")
		body.setChunked()
		return -1, nil
	case f.clSeen:
		n, ok := parseLength(f.cl)
		if !ok {
			return 0, refused(http.StatusBadRequest, "bad Content-Length")
		}
		body.n = n
		return n, nil
	}
	return 0, nil
}

var chunkedTE = []string{"chunked"}

func transferChunked(chunked bool) []string {
	if chunked {
		return chunkedTE
	}
	return nil
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return m != ""
}

// parseTarget parses a request target. An origin-form path of plain
// characters (the API's paths) is built directly; anything else goes
// through url.ParseRequestURI, as in net/http.
func parseTarget(method, target string) (*url.URL, error) {
	if method == http.MethodConnect {
		return nil, errors.New("CONNECT is not served")
	}
	if target[0] == '/' && plainPath(target) {
		return &url.URL{Path: target}, nil
	}
	return url.ParseRequestURI(target)
}

// plainPath reports whether p has only characters that url.URL keeps as
// they are in Path (no escapes, no query): then Path is p and RawPath empty.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~/$&+,;=:@", c) >= 0:
		default:
			return false
		}
	}
	return !strings.Contains(p, "//")
}

// serverBody is a request body read from the connection.
type serverBody struct {
	framedBody
	c      *serverConn
	expect bool // 100 Continue not sent yet
	closed bool
}

func (b *serverBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.expect && !b.eof && b.err == nil {
		b.expect = false
		c := b.c
		_, _ = c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if err := c.bw.Flush(); err != nil {
			b.err = err
			return 0, err
		}
	}
	return b.read(p)
}

// Close makes later reads fail; the server reads what is left.
func (b *serverBody) Close() error {
	b.closed = true
	return nil
}

// drainable reports whether drain may keep the connection: a client still
// waiting for 100 Continue may or may not send the body, and more than
// maxDiscard is not worth reading.
func (b *serverBody) drainable() bool {
	return b.eof || b.err == nil && !b.expect && (b.chunked || b.n <= maxDiscard)
}

// drain reads what the handler left of the body, up to maxDiscard, and
// reports whether the connection can carry another request.
func (b *serverBody) drain() bool {
	if b.eof {
		return true
	}
	if !b.drainable() {
		return false
	}
	_ = b.c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = b.c.nc.SetReadDeadline(time.Time{}) }()
	b.closed = false
	b.onEOF = nil
	n, _ := io.CopyN(io.Discard, b, maxDiscard+1)
	return b.eof && n <= maxDiscard
}
