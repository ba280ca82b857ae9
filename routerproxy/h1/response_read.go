package h1

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// maxResponseHead bounds an upstream's response head (net/http's
// Transport allows 10 MiB by default; an inference server's heads are a
// few hundred bytes, and a head held per attempt must stay small beside
// the pod's memory). Its header lines are bounded by MaxHeaderFields.
const maxResponseHead = 1 << 20

// readResponse reads a response head from c and frames its body as
// net/http's ReadResponse does: no body for HEAD, 1xx, 204 and 304;
// chunked (Content-Length dropped); Content-Length; otherwise until the
// connection ends. The head is held in one string, as the server's is.
func readResponse(c *conn, req *http.Request) (*http.Response, error) {
	head, lines, err := readHead(c.br, c.head[:0], maxResponseHead, false, nil)
	hs, next := headString(head)
	c.head = next
	switch {
	case err == errMalformedHead:
		return nil, errors.New("h1: malformed HTTP response: empty status line")
	case err != nil:
		return nil, err
	}
	line, rest := cutLine(hs)
	resp, err := parseStatusLine(line, req)
	if err != nil {
		return nil, err
	}
	f, err := parseFields(rest, lines, false)
	if err != nil {
		return nil, fmt.Errorf("h1: malformed response head: %w", err)
	}
	resp.Header = f.h
	resp.Close = f.close || resp.ProtoMinor == 0 && !f.keepAlive
	if f.close {
		delete(resp.Header, "Connection") // as net/http does
	}
	if err := frameResponse(resp, req, &f, c.br); err != nil {
		return nil, err
	}
	return resp, nil
}

// parseStatusLine parses "HTTP/1.x NNN reason" into the response to req,
// its header and body not yet read.
func parseStatusLine(line string, req *http.Request) (*http.Response, error) {
	proto, status, ok := strings.Cut(line, " ")
	resp := &http.Response{Proto: proto, ProtoMajor: 1, Request: req, ContentLength: -1}
	switch proto {
	case "HTTP/1.1":
		resp.ProtoMinor = 1
	case "HTTP/1.0":
	default:
		return nil, fmt.Errorf("h1: malformed HTTP version in response %q", line)
	}
	status = strings.TrimLeft(status, " ")
	code, _, _ := strings.Cut(status, " ")
	if !ok || !validStatusCode(code) {
		return nil, fmt.Errorf("h1: malformed HTTP status line %q", line)
	}
	resp.StatusCode = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	resp.Status = status
	return resp, nil
}

// validStatusCode reports whether code is three digits, the first not 0.
func validStatusCode(code string) bool {
	return len(code) == 3 && '1' <= code[0] && code[0] <= '9' &&
		'0' <= code[1] && code[1] <= '9' && '0' <= code[2] && code[2] <= '9'
}

// frameResponse checks the framing of a parsed response head and sets its
// body: none for bodiless responses, else chunked, Content-Length, or
// until the connection ends.
func frameResponse(resp *http.Response, req *http.Request, f *fields, br *bufio.Reader) error {
	n, err := responseLength(f, resp.ProtoMinor)
	if err != nil {
		return err
	}
	if f.tes > 0 {
		delete(resp.Header, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
	}
	if bodiless(req.Method, resp.StatusCode) {
		switch {
		case req.Method != http.MethodHead:
			resp.ContentLength = 0
		case f.clSeen:
			resp.ContentLength = n
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			// The connection now speaks another protocol: never reused.
			resp.Close = true
		}
		resp.Body = http.NoBody
		return nil
	}
	b := &framedBody{br: br}
	switch {
	case f.tes > 0:
		delete(resp.Header, "Content-Length")
		b.setChunked()
	case f.clSeen:
		resp.ContentLength, b.n = n, n
	default:
		b.toEOF = true
		resp.Close = true
	}
	resp.Body = http.NoBody
	if !b.empty() {
		resp.Body = b
	}
	return nil
}

// responseLength checks a response head's transfer coding and
// Content-Length, as net/http does whether or not a body follows, and
// returns the Content-Length (0 when there is none).
func responseLength(f *fields, protoMinor int) (int64, error) {
	if f.tes > 0 && protoMinor == 0 {
		// net/http ignores it and reads to the connection's end; a
		// server that sent it may mean chunked. Neither reading is safe.
		return 0, errors.New("h1: Transfer-Encoding in an HTTP/1.0 response")
	}
	if f.tes > 0 && (f.tes > 1 || !strings.EqualFold(f.te, "chunked")) {
		return 0, fmt.Errorf("h1: unsupported transfer encoding %q", f.te)
	}
	if !f.clSeen {
		return 0, nil
	}
	n, ok := parseLength(f.cl)
	if !ok {
		return 0, fmt.Errorf("h1: bad Content-Length %q", f.cl)
	}
	return n, nil
}

// bodiless reports whether a response to method with status code has no
// body whatever its head says: HEAD, 1xx, 204 and 304.
func bodiless(method string, code int) bool {
	return method == http.MethodHead || code < 200 || code == http.StatusNoContent || code == http.StatusNotModified
}

// Read makes a framedBody an io.ReadCloser for the client's responses;
// the client's body wrapper decides the connection's fate on Close.
func (b *framedBody) Read(p []byte) (int, error) { return b.read(p) }

// Close does nothing: see Read.
func (b *framedBody) Close() error { return nil }
