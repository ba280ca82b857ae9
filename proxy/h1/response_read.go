package h1

import (
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
	if !ok || len(code) != 3 || code[0] < '1' || code[0] > '9' || code[1] < '0' || code[1] > '9' || code[2] < '0' || code[2] > '9' {
		return nil, fmt.Errorf("h1: malformed HTTP status line %q", line)
	}
	resp.StatusCode = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	resp.Status = status
	f, err := parseFields(rest, lines, false)
	if err != nil {
		return nil, fmt.Errorf("h1: malformed response head: %w", err)
	}
	resp.Header = f.h
	resp.Close = f.close || resp.ProtoMinor == 0 && !f.keepAlive
	if f.close {
		delete(resp.Header, "Connection") // as net/http does
	}

	if f.tes > 0 && resp.ProtoMinor == 0 {
		// net/http ignores it and reads to the connection's end; a
		// server that sent it may mean chunked. Neither reading is safe.
		return nil, errors.New("h1: Transfer-Encoding in an HTTP/1.0 response")
	}
	b := &framedBody{br: c.br}
	noBody := req.Method == http.MethodHead || resp.StatusCode < 200 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	// As net/http: the transfer coding and any Content-Length are checked
	// whether or not a body follows; chunked then drops Content-Length.
	if f.tes > 0 && (f.tes > 1 || !strings.EqualFold(f.te, "chunked")) {
		return nil, fmt.Errorf("h1: unsupported transfer encoding %q", f.te)
	}
	var n int64
	if f.clSeen {
		var ok bool
		if n, ok = parseLength(f.cl); !ok {
			return nil, fmt.Errorf("h1: bad Content-Length %q", f.cl)
		}
	}
	if f.tes > 0 {
		delete(resp.Header, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
	}
	switch {
	case f.tes > 0 && !noBody:
		delete(resp.Header, "Content-Length")
		b.setChunked()
	case f.clSeen:
		resp.ContentLength = n
		if !noBody {
			b.n = n
		}
	case !noBody:
		b.toEOF = true
		resp.Close = true
	}
	if noBody {
		if req.Method != http.MethodHead {
			resp.ContentLength = 0
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			// The connection now speaks another protocol: never reused.
			resp.Close = true
		}
		resp.Body = http.NoBody
		return resp, nil
	}
	if b.empty() {
		resp.Body = http.NoBody
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// Read makes a framedBody an io.ReadCloser for the client's responses;
// the client's body wrapper decides the connection's fate on Close.
func (b *framedBody) Read(p []byte) (int, error) { return b.read(p) }

// Close does nothing: see Read.
func (b *framedBody) Close() error { return nil }
