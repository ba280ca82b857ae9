package h1

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
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

// maxEmptyLines is how many empty lines before a request line are skipped
// (RFC 9112 §2.2: some clients send a CRLF after a POST body).
const maxEmptyLines = 4

// readRequest reads and parses one request head.
func (c *serverConn) readRequest() (*request, *headError) {
	limit := c.s.MaxHeaderBytes
	if limit <= 0 {
		limit = DefaultMaxHeaderBytes
	}
	c.head = c.head[:0]
	lines, empties := 0, 0
	lineStart := 0
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(c.head)+len(frag) > limit {
			return nil, refused(http.StatusRequestHeaderFieldsTooLarge, "request head too large")
		}
		c.head = append(c.head, frag...)
		if err == bufio.ErrBufferFull {
			continue // a line longer than the buffer
		}
		if err != nil {
			if len(c.head) == 0 && err == io.EOF {
				return nil, errConnGone
			}
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, errConnGone
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, errConnGone
			}
			return nil, errConnGone
		}
		line := c.head[lineStart:]
		if len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
			if lines == 0 {
				empties++
				if empties > maxEmptyLines {
					return nil, refused(http.StatusBadRequest, "malformed HTTP request")
				}
				c.head = c.head[:0]
				lineStart = 0
				continue
			}
			break
		}
		lines++
		lineStart = len(c.head)
	}
	return c.parseHead(string(c.head), lines)
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
	rq := &request{}
	var major, minor int
	switch proto {
	case "HTTP/1.1":
		major, minor = 1, 1
	case "HTTP/1.0":
		major, minor = 1, 0
		rq.http10 = true
	default:
		if maj, _, ok := http.ParseHTTPVersion(proto); ok && maj >= 2 {
			return nil, refused(http.StatusHTTPVersionNotSupported, "unsupported protocol version")
		}
		return nil, refused(http.StatusBadRequest, "malformed HTTP version")
	}
	u, err := parseTarget(method, target)
	if err != nil {
		return nil, refused(http.StatusBadRequest, "malformed request target")
	}

	h := make(http.Header, n)
	vals := make([]string, n) // backing for one-value keys
	var host, te, cl string
	hosts, tes := 0, 0
	clSeen, expect, keepAlive := false, false, false
	for i := 0; len(s) > 0; i++ {
		line, s = cutLine(s)
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, refused(http.StatusBadRequest, "obsolete line folding in header")
		}
		colon := strings.IndexByte(line, ':')
		if colon <= 0 {
			return nil, refused(http.StatusBadRequest, "malformed header line")
		}
		key := line[:colon]
		if !httpguts.ValidHeaderFieldName(key) {
			return nil, refused(http.StatusBadRequest, "invalid header field name")
		}
		v := strings.Trim(line[colon+1:], " \t")
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, refused(http.StatusBadRequest, "invalid header field value")
		}
		key = canonicalKey(key)
		switch key {
		case "Host":
			host = v
			hosts++
			continue // net/http keeps Host in Request.Host only
		case "Content-Length":
			if clSeen && v != cl {
				return nil, refused(http.StatusBadRequest, "conflicting Content-Length")
			}
			cl, clSeen = v, true
		case "Transfer-Encoding":
			te = v
			tes++
		case "Connection":
			for tok := range strings.SplitSeq(v, ",") {
				switch tok = strings.TrimSpace(tok); {
				case strings.EqualFold(tok, "close"):
					rq.close = true
				case strings.EqualFold(tok, "keep-alive"):
					keepAlive = true
				}
			}
		case "Expect":
			if !rq.http10 {
				if !strings.EqualFold(v, "100-continue") {
					return nil, refused(http.StatusExpectationFailed, "unsupported Expect")
				}
				expect = true
			}
		}
		if old, ok := h[key]; ok {
			h[key] = append(old, v)
		} else {
			vals[i] = v
			h[key] = vals[i : i+1 : i+1]
		}
	}
	if hosts > 1 {
		return nil, refused(http.StatusBadRequest, "too many Host headers")
	}
	if hosts == 0 && !rq.http10 {
		return nil, refused(http.StatusBadRequest, "missing required Host header")
	}
	if !httpguts.ValidHostHeader(host) {
		return nil, refused(http.StatusBadRequest, "malformed Host header")
	}
	if u.Host != "" {
		host = u.Host
	}
	if rq.http10 && !keepAlive {
		rq.close = true
	}

	body := &serverBody{c: c}
	var length int64
	switch {
	case tes > 0:
		if rq.http10 || tes > 1 {
			return nil, refused(http.StatusBadRequest, "unsupported Transfer-Encoding")
		}
		if !strings.EqualFold(te, "chunked") {
			return nil, refused(http.StatusNotImplemented, "unsupported transfer encoding")
		}
		if clSeen {
			// RFC 9112 §6.1: chunked wins, and the connection must not
			// carry another request (a front proxy may have framed this
			// one by its Content-Length).
			rq.close = true
			delete(h, "Content-Length")
		}
		delete(h, "Transfer-Encoding")
		body.chunked = true
		body.cr = httputil.NewChunkedReader(c.br)
		length = -1
	case clSeen:
		n, ok := parseLength(cl)
		if !ok {
			return nil, refused(http.StatusBadRequest, "bad Content-Length")
		}
		length, body.n = n, n
	}
	body.expect = expect && (body.chunked || body.n > 0)

	r := &http.Request{
		Method: method, URL: u, Proto: proto, ProtoMajor: major, ProtoMinor: minor,
		Header: h, ContentLength: length, Close: rq.close, Host: host,
		RemoteAddr: c.remote, RequestURI: target, Body: http.NoBody,
	}
	if body.chunked || body.n > 0 {
		r.Body = body
		r.TransferEncoding = transferChunked(body.chunked)
	} else {
		body.eof = true
	}
	rq.r, rq.body, rq.head = r, body, method == http.MethodHead
	return rq, nil
}

var chunkedTE = []string{"chunked"}

func transferChunked(chunked bool) []string {
	if chunked {
		return chunkedTE
	}
	return nil
}

// cutLine returns the first line of s without its CRLF or LF.
func cutLine(s string) (line, rest string) {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s, ""
	}
	line, rest = s[:i], s[i+1:]
	return strings.TrimSuffix(line, "\r"), rest
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

// canonicalKey returns k in canonical form, without allocating when it is
// already canonical (as clients send the headers that matter).
func canonicalKey(k string) string {
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return http.CanonicalHeaderKey(k)
		}
		upper = c == '-'
	}
	return k
}

// parseLength parses a Content-Length: digits only.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// serverBody is a request body read from the connection.
type serverBody struct {
	c       *serverConn
	n       int64 // bytes left of a Content-Length body
	chunked bool
	cr      io.Reader // the chunked decoder
	expect  bool      // 100 Continue not sent yet
	eof     bool
	err     error // sticky: the connection is unusable
	closed  bool
	onEOF   func()
}

var errBodyAfterClose = http.ErrBodyReadAfterClose

func (b *serverBody) Read(p []byte) (int, error) {
	switch {
	case b.closed:
		return 0, errBodyAfterClose
	case b.eof:
		return 0, io.EOF
	case b.err != nil:
		return 0, b.err
	}
	if b.expect {
		b.expect = false
		c := b.c
		_, _ = c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if err := c.bw.Flush(); err != nil {
			b.err = err
			return 0, err
		}
	}
	if b.chunked {
		n, err := b.cr.Read(p)
		if err == io.EOF {
			if terr := b.readTrailer(); terr != nil {
				b.err = terr
				return n, terr
			}
			b.ended()
		} else if err != nil {
			b.err = err
		}
		return n, err
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.c.br.Read(p)
	b.n -= int64(n)
	if b.n == 0 {
		b.ended()
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = err
	}
	return n, err
}

// readTrailer reads (and drops) a chunked body's trailer section.
func (b *serverBody) readTrailer() error {
	size := 0
	for {
		line, err := b.c.br.ReadSlice('\n')
		if err != nil {
			if err == io.EOF || err == bufio.ErrBufferFull {
				return errors.New("h1: malformed chunked trailer")
			}
			return err
		}
		if size += len(line); size > 64<<10 {
			return errors.New("h1: chunked trailer too large")
		}
		if len(line) == 1 || len(line) == 2 && line[0] == '\r' {
			return nil
		}
	}
}

func (b *serverBody) ended() {
	b.eof = true
	if b.onEOF != nil {
		b.onEOF()
	}
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
