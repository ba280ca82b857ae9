package h1

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// response is the server's http.ResponseWriter, one per connection, reset
// for each request. Its head is written at the first flush, when the body
// outgrows pendingSize, or when the handler returns (then with a
// Content-Length).
type response struct {
	c           *serverConn
	rq          *request
	header      http.Header
	status      int
	wroteHeader bool // the handler chose a status
	headWritten bool // the head is on the wire (or in the write buffer)
	chunked     bool
	declared    int64 // the handler's Content-Length, or -1
	written     int64
	closeAfter  bool
	pending     []byte
	err         error // sticky write error
}

func (w *response) reset(c *serverConn, rq *request) {
	h := w.header
	if h == nil {
		h = make(http.Header, 8)
	} else {
		clear(h)
	}
	*w = response{c: c, rq: rq, header: h, declared: -1, pending: w.pending[:0]}
}

// Header implements http.ResponseWriter.
func (w *response) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter.
func (w *response) WriteHeader(code int) {
	if w.wroteHeader {
		w.c.s.logf("superfluous WriteHeader", "status", code)
		return
	}
	if code < 100 || code > 999 {
		panic("h1: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		// Informational: sent at once, the final status comes later.
		w.writeStatusAndHeader(code, nil)
		w.err = w.c.bw.Flush()
		return
	}
	w.status, w.wroteHeader = code, true
	if cl := w.header.Get("Content-Length"); cl != "" {
		if n, ok := parseLength(cl); ok {
			w.declared = n
		} else {
			w.c.s.logf("invalid Content-Length from handler", "value", cl)
			delete(w.header, "Content-Length")
		}
	}
}

// bodyAllowed reports whether the status may carry a body.
func (w *response) bodyAllowed() bool {
	return w.status >= 200 && w.status != http.StatusNoContent && w.status != http.StatusNotModified
}

// Write implements http.ResponseWriter.
func (w *response) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.bodyAllowed() {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	if w.err != nil {
		return 0, w.err
	}
	w.written += int64(len(p))
	if w.rq.head {
		// Writes are eaten; their length is the Content-Length when the
		// handler ends soon enough, as in net/http.
		if !w.headWritten && w.written > pendingSize {
			w.writeHead(false, nil)
		}
		return len(p), nil
	}
	if !w.headWritten {
		if len(w.pending)+len(p) <= pendingSize {
			w.pending = append(w.pending, p...)
			return len(p), nil
		}
		w.writeHead(false, p)
	}
	w.writeBody(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func (w *response) writeBody(p []byte) {
	if len(p) == 0 || w.err != nil || w.rq.head {
		return
	}
	bw := w.c.bw
	if w.chunked {
		var hex [16]byte
		_, _ = bw.Write(strconv.AppendInt(hex[:0], int64(len(p)), 16))
		_, _ = bw.WriteString("\r\n")
		_, _ = bw.Write(p)
		_, w.err = bw.WriteString("\r\n")
		return
	}
	_, w.err = bw.Write(p)
}

// writeHead puts the head in the write buffer, then what was held back.
// final means the handler has returned: the body is all in pending. next
// is the write that did not fit in pending (for the content sniff).
func (w *response) writeHead(final bool, next []byte) {
	w.headWritten = true
	var extra [4]string
	more := extra[:0]
	delete(w.header, "Transfer-Encoding")
	// In this order: the framing may end the connection with the body
	// (HTTP/1.0), which the Connection line then reports.
	for _, line := range [...]string{w.framing(final), w.sniffedType(next), w.connection(final)} {
		if line != "" {
			more = append(more, line)
		}
	}
	w.writeStatusAndHeader(w.status, more)
	body := w.pending
	w.pending = w.pending[:0]
	w.writeBody(body)
}

// framing decides how the body is framed, and returns the head line that
// says so, if any: the length when the handler has returned (final), else
// chunked, or (HTTP/1.0) the connection's end.
func (w *response) framing(final bool) string {
	switch {
	case !w.bodyAllowed():
		delete(w.header, "Content-Length")
	case w.declared >= 0:
	case final:
		return "Content-Length: " + strconv.FormatInt(w.written, 10)
	case w.rq.head: // no body follows, and its length is not known
	case w.rq.http10:
		w.closeAfter = true // the body ends with the connection
	default:
		w.chunked = true
		return "Transfer-Encoding: chunked"
	}
	return ""
}

// sniffedType returns the Content-Type line for a body the handler gave
// no type (nor encoding), from its first bytes as net/http sniffs them.
func (w *response) sniffedType(next []byte) string {
	h := w.header
	if _, ok := h["Content-Type"]; ok || !w.bodyAllowed() || h.Get("Content-Encoding") != "" {
		return ""
	}
	sniff := w.pending
	if len(sniff) == 0 {
		sniff = next
	}
	if len(sniff) == 0 {
		return ""
	}
	return "Content-Type: " + http.DetectContentType(sniff)
}

// connection decides whether the connection ends after this response and
// returns the Connection line that tells the client, if one is needed.
func (w *response) connection(final bool) string {
	rq := w.rq
	handlerClose, _ := connectionOptions(w.header["Connection"])
	if handlerClose || rq.close || w.c.s.shutting.Load() || w.c.s.draining.Load() || final && !rq.body.drainable() {
		// A body the server will not read to its end (a client waiting
		// for 100 Continue, more than maxDiscard left) ends the
		// connection, and the client is told.
		w.closeAfter = true
	}
	switch {
	case w.closeAfter && !handlerClose:
		return "Connection: close"
	case !w.closeAfter && w.rq.http10:
		return "Connection: keep-alive"
	}
	return ""
}

// writeStatusAndHeader writes the status line, the handler's header and
// the extra lines. Values are cleaned as net/http does (a CR or LF becomes
// a space); invalid names are dropped.
func (w *response) writeStatusAndHeader(code int, more []string) {
	bw := w.c.bw
	if line, ok := statusLines[code]; ok {
		_, _ = bw.WriteString(line)
	} else {
		text := http.StatusText(code)
		if text == "" {
			text = "status code " + strconv.Itoa(code)
		}
		_, _ = bw.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n")
	}
	for k, vs := range w.header {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range vs {
			if strings.IndexByte(v, '\r') >= 0 || strings.IndexByte(v, '\n') >= 0 {
				v = newlineToSpace.Replace(v)
			}
			_, _ = bw.WriteString(k)
			_, _ = bw.WriteString(": ")
			_, _ = bw.WriteString(strings.TrimSpace(v))
			_, _ = bw.WriteString("\r\n")
		}
	}
	if _, ok := w.header["Date"]; !ok {
		_, _ = bw.Write(dateLine())
	}
	for _, l := range more {
		_, _ = bw.WriteString(l)
		_, _ = bw.WriteString("\r\n")
	}
	_, w.err = bw.WriteString("\r\n")
}

var newlineToSpace = strings.NewReplacer("\r", " ", "\n", " ")

// finish completes the response after the handler returned.
func (w *response) finish() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headWritten {
		w.writeHead(true, nil)
	} else if w.chunked && w.err == nil {
		_, w.err = w.c.bw.WriteString("0\r\n\r\n")
	}
	if w.declared >= 0 && w.written < w.declared && w.bodyAllowed() && !w.rq.head {
		// The client waits for bytes that will not come.
		w.closeAfter = true
	}
	if w.err == nil {
		w.err = w.c.bw.Flush()
	}
	return w.err
}

// Flush implements http.Flusher.
func (w *response) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (w *response) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headWritten {
		w.writeHead(false, nil)
	}
	if w.err != nil {
		return w.err
	}
	w.err = w.c.bw.Flush()
	return w.err
}

// SetReadDeadline is what http.ResponseController.SetReadDeadline calls.
func (w *response) SetReadDeadline(t time.Time) error { return w.c.nc.SetReadDeadline(t) }

// SetWriteDeadline is what http.ResponseController.SetWriteDeadline calls.
func (w *response) SetWriteDeadline(t time.Time) error { return w.c.nc.SetWriteDeadline(t) }

var statusLines = func() map[int]string {
	m := map[int]string{}
	for _, code := range []int{200, 201, 202, 204, 206, 301, 302, 304, 307, 308, 400, 401, 403, 404, 405, 408, 409, 413, 415, 422, 429, 431, 500, 501, 502, 503, 504} {
		m[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n"
	}
	return m
}()

// dateLine is the Date header line, formatted once per second.
func dateLine() []byte {
	now := time.Now()
	sec := now.Unix()
	if d := cachedDate.Load(); d != nil && d.sec == sec {
		return d.line
	}
	d := &date{sec: sec, line: []byte("Date: " + now.UTC().Format(http.TimeFormat) + "\r\n")}
	cachedDate.Store(d)
	return d.line
}

type date struct {
	sec  int64
	line []byte
}

var cachedDate atomic.Pointer[date]
