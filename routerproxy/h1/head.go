package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"unsafe"

	"golang.org/x/net/http/httpguts"
)

// Message heads, both ways: the server's requests and the client's
// responses are read and parsed by the same code, so both sides refuse the
// same malformed heads.

var (
	errHeadTooLarge  = errors.New("h1: message head too large")
	errTooManyFields = errors.New("h1: message head has too many header fields")
	errMalformedHead = errors.New("h1: malformed message head")
)

// MaxHeaderFields bounds the header lines of a head, both ways (requests
// get 431 past it; a response past it fails its attempt). With the byte
// limit it bounds what one head costs: a head of tiny lines ("a:\n")
// would otherwise be a line count of map entries and value slices, many
// times the bytes sent. Envoy's default is 100; a client sends about 20.
const MaxHeaderFields = 256

// maxEmptyLines is how many empty lines before a request line are skipped
// (RFC 9112 §2.2: some clients send a CRLF after a POST body).
const maxEmptyLines = 4

// readHead reads a message head (start line and header section, up to the
// empty line) into buf, at most limit bytes and MaxHeaderFields header
// lines, and counts its lines.
// checkStart, when set, judges the start line as soon as it is complete,
// so a line that cannot start the head is refused without waiting for a
// header section.
func readHead(br *bufio.Reader, buf []byte, limit int, skipEmpty bool, checkStart func(line []byte) error) (head []byte, lines int, err error) {
	head = buf[:0]
	empties, lineStart := 0, 0
	for {
		frag, err := br.ReadSlice('\n')
		if len(head)+len(frag) > limit {
			return head, 0, errHeadTooLarge
		}
		if need := len(head) + len(frag); need > cap(head) {
			// Doubling, never past the limit: append's 1.25x growth of
			// large slices left about four heads of garbage per head.
			grown := make([]byte, len(head), min(max(2*cap(head), need, 512), limit))
			copy(grown, head)
			head = grown
		}
		head = append(head, frag...)
		if err == bufio.ErrBufferFull {
			continue // a line longer than the buffer
		}
		if err != nil {
			if err == io.EOF && len(head) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return head, 0, err
		}
		line := head[lineStart:]
		if len(line) == 1 || len(line) == 2 && line[0] == '\r' {
			if lines > 0 {
				return head, lines, nil
			}
			if !skipEmpty || empties == maxEmptyLines {
				return head, 0, errMalformedHead
			}
			empties++
			head, lineStart = head[:0], 0
			continue
		}
		if lines == 0 && checkStart != nil {
			if err := checkStart(line); err != nil {
				return head, 0, err
			}
		}
		if lines++; lines > MaxHeaderFields+1 {
			return head, 0, errTooManyFields
		}
		lineStart = len(head)
	}
}

// maxKeptHead is the largest head buffer a connection keeps for its next
// head: one large head (up to 1 MiB for a request, 10 MiB for a response)
// must not stay allocated on every idle connection that once carried one.
const maxKeptHead = 16 << 10

// keepHeadBuf returns the buffer to read the next head into: buf when it is
// small, nil (allocate again) when a large head grew it.
func keepHeadBuf(buf []byte) []byte {
	if cap(buf) > maxKeptHead {
		return nil
	}
	return buf[:0]
}

// headString is the head as the string its header is sliced from, and the
// buffer to read the next head into. A small head is copied (its buffer
// is reused); a large one's buffer is never written again, so the string
// is the buffer itself: a head at the limits is held once, not twice.
func headString(head []byte) (s string, next []byte) {
	next = keepHeadBuf(head)
	if next == nil && len(head) > 0 {
		return unsafe.String(unsafe.SliceData(head), len(head)), nil
	}
	return string(head), next
}

// fields is a parsed header section and what it says about framing.
type fields struct {
	h                http.Header
	host             string // the last Host (kept out of h when asked)
	hosts            int
	cl               string // Content-Length, all its lines agreeing
	clSeen           bool
	te               string // the last Transfer-Encoding
	tes              int
	close, keepAlive bool // Connection tokens
	expect           string
}

// parseFields parses the header lines of s (at most n) into one Header
// whose keys and values are slices of s: one allocation for the strings of
// a head. With hostApart, Host is kept out of the map (as net/http keeps it
// in Request.Host).
func parseFields(s string, n int, hostApart bool) (fields, error) {
	// n counts the start line: n-1 header lines at most. Up to 8 keys fit
	// a map's first group, sized without a table. The size hints are
	// capped as net/http caps them (CVE-2023-24534): readHead bounds the
	// line count, and a head that did not come from it must not size
	// memory by its line count either.
	hint := min(max(n-1, 0), MaxHeaderFields)
	f := fields{h: make(http.Header, hint)}
	vals := make([]string, hint) // backing for one-value keys
	var seenBuf [16]string
	seen := seenBuf[:0]
	for i := 0; len(s) > 0; i++ {
		var line string
		line, s = cutLine(s)
		if line == "" {
			break
		}
		key, v, err := parseFieldLine(line)
		if err != nil {
			return f, err
		}
		keep, err := f.note(key, v, hostApart)
		if err != nil {
			return f, err
		}
		if keep {
			seen = f.add(key, v, i, vals, seen)
		}
	}
	if conn := f.h["Connection"]; conn != nil {
		f.close, f.keepAlive = connectionOptions(conn)
	}
	return f, nil
}

// parseFieldLine splits a header line into its canonical key and its
// value without optional whitespace, refusing what net/http refuses.
func parseFieldLine(line string) (key, v string, err error) {
	if line[0] == ' ' || line[0] == '\t' {
		return "", "", errors.New("obsolete line folding in header")
	}
	colon := strings.IndexByte(line, ':')
	if colon <= 0 {
		return "", "", errors.New("malformed header line")
	}
	key = line[:colon]
	if !httpguts.ValidHeaderFieldName(key) {
		return "", "", errors.New("invalid header field name")
	}
	v = trimOWS(line[colon+1:])
	if !httpguts.ValidHeaderFieldValue(v) {
		return "", "", errors.New("invalid header field value")
	}
	return canonicalKey(key), v, nil
}

// note records what a field says about framing. keep is false for a field
// that does not go into the header map: Host when hostApart, and a repeat
// of an equal Content-Length.
func (f *fields) note(key, v string, hostApart bool) (keep bool, err error) {
	switch key {
	case "Host":
		f.host = v
		f.hosts++
		return !hostApart, nil
	case "Content-Length":
		if f.clSeen {
			if v != f.cl {
				return false, errors.New("conflicting Content-Length")
			}
			// Equal repeats are one field, as net/http reads them:
			// a proxy relays one (RFC 9112 §6.3).
			return false, nil
		}
		f.cl, f.clSeen = v, true
	case "Transfer-Encoding":
		f.te = v
		f.tes++
	case "Expect":
		f.expect = v
	}
	return true, nil
}

// add puts the i-th field in the header map. A first value is a slice of
// vals (one backing array for the head); a repeated key is found among
// the keys seen so far without hashing it (heads have a handful of
// headers), so only new keys and repeats touch the map. It returns seen
// with key added.
func (f *fields) add(key, v string, i int, vals, seen []string) []string {
	repeat := false
	if len(seen) < cap(seen) {
		for _, k := range seen {
			if k == key {
				repeat = true
				break
			}
		}
		if !repeat {
			seen = append(seen, key)
		}
	} else {
		_, repeat = f.h[key]
	}
	if repeat || i >= len(vals) {
		f.h[key] = append(f.h[key], v)
	} else {
		vals[i] = v
		f.h[key] = vals[i : i+1 : i+1]
	}
	return seen
}

// connectionOptions reads the close and keep-alive options of a
// Connection header (all its lines, any case): for request and response
// heads, and for what a handler set.
func connectionOptions(vs []string) (close, keepAlive bool) {
	for _, v := range vs {
		for t := range strings.SplitSeq(v, ",") {
			switch t = strings.TrimSpace(t); {
			case strings.EqualFold(t, "close"):
				close = true
			case strings.EqualFold(t, "keep-alive"):
				keepAlive = true
			}
		}
	}
	return close, keepAlive
}

// trimOWS trims optional whitespace (spaces and tabs) from both ends.
func trimOWS(v string) string {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
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

// framedBody reads a message body from the connection's reader: n bytes
// (Content-Length), chunked, or until the connection ends.
type framedBody struct {
	br      *bufio.Reader
	n       int64 // bytes left of a Content-Length body
	chunked bool
	toEOF   bool      // delimited by the connection's end
	cr      io.Reader // the chunked decoder
	eof     bool
	err     error // sticky: the connection is unusable
	onEOF   func()
}

func (b *framedBody) setChunked() {
	b.chunked = true
	b.cr = httputil.NewChunkedReader(b.br)
}

// empty reports whether there is no body to read.
func (b *framedBody) empty() bool { return !b.chunked && !b.toEOF && b.n == 0 }

func (b *framedBody) read(p []byte) (int, error) {
	switch {
	case b.eof:
		return 0, io.EOF
	case b.err != nil:
		return 0, b.err
	}
	var n int
	var err error
	switch {
	case b.chunked:
		n, err = b.cr.Read(p)
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
	case b.toEOF:
		n, err = b.br.Read(p)
		if err == io.EOF {
			b.ended()
		} else if err != nil {
			b.err = err
		}
		return n, err
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err = b.br.Read(p)
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

// maxTrailer bounds a chunked body's trailer section: net/http refuses a
// trailer whose end is not within its 4 KiB read buffer.
const maxTrailer = 4 << 10

// readTrailer reads (and drops) a chunked body's trailer section. Its
// lines must be header fields ending in CRLF, as net/http reads them: a
// line net/http would refuse, or a bare LF (net/http ends a trailer only
// at a CRLF empty line), would let the two find the next message at
// different bytes.
func (b *framedBody) readTrailer() error {
	size := 0
	for {
		line, err := b.br.ReadSlice('\n')
		if err != nil {
			if err == io.EOF || err == bufio.ErrBufferFull {
				return errors.New("h1: malformed chunked trailer")
			}
			return err
		}
		if size += len(line); size > maxTrailer {
			return errors.New("h1: chunked trailer too large")
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return errors.New("h1: chunked trailer line without CRLF")
		}
		if len(line) == 2 {
			return nil
		}
		k, v, ok := bytes.Cut(line[:len(line)-2], []byte(":"))
		if !ok || !httpguts.ValidHeaderFieldName(string(k)) || !httpguts.ValidHeaderFieldValue(trimOWS(string(v))) {
			return errors.New("h1: malformed chunked trailer")
		}
	}
}

func (b *framedBody) ended() {
	b.eof = true
	if b.onEOF != nil {
		b.onEOF()
	}
}
