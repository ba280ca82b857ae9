// Package h1 is the router-proxy's upstream client for plain-http (in-cluster)
// backends: HTTP/1.1 with keep-alive, run entirely in the calling goroutine.
//
// Why not net/http's Transport: it hands every request to a per-connection
// write goroutine and takes the response from a per-connection read
// goroutine. make bench-proxy measured that hand-off as most of a proxied
// request's CPU (83 µs per request for a bare httputil.ReverseProxy against
// 24 µs for the same server with a client that writes and reads in the
// caller's goroutine). fasthttp's client is as fast but cannot be cancelled;
// this one is: the request's context sets an immediate deadline on the
// connection (context.AfterFunc, no goroutine per request), which ends a
// dial, a write, a wait for headers or a body read at once.
//
// Anything it does not handle goes to the fallback RoundTripper unchanged:
// https, a proxy from the environment, methods with a body stream of unknown
// length. Response heads are read by the same code as the server's request
// heads (head.go), framed as net/http's ReadResponse frames them.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The upstream transport's defaults, named once: this client and net/http's
// (NewTransport in package routerproxy, for https and proxies) both use them.
const (
	DialTimeout         = 10 * time.Second
	KeepAlive           = 30 * time.Second
	MaxIdleConnsPerHost = 256
	IdleConnTimeout     = 90 * time.Second
	bufSize             = 4 << 10
)

// userAgent is what net/http sends when the request has none.
const userAgent = "Go-http-client/1.1"

// Transport is an http.RoundTripper.
type Transport struct {
	// Fallback serves what Transport does not (https, proxies).
	Fallback http.RoundTripper
	// Proxy is consulted like http.Transport.Proxy; a request it sends to a
	// proxy goes to Fallback. Nil means no proxy.
	Proxy func(*http.Request) (*url.URL, error)

	// IdleTimeout closes a connection idle this long (IdleConnTimeout).
	IdleTimeout time.Duration

	dialer   net.Dialer
	mu       sync.Mutex
	idle     map[string][]*conn // by host:port, most recently used last
	sweeping bool               // a sweep is scheduled
	now      func() time.Time
}

// New returns a Transport with fallback for what it does not serve.
func New(fallback http.RoundTripper, proxy func(*http.Request) (*url.URL, error)) *Transport {
	return &Transport{Fallback: fallback, Proxy: proxy, IdleTimeout: IdleConnTimeout, dialer: net.Dialer{Timeout: DialTimeout, KeepAlive: KeepAlive}, idle: map[string][]*conn{}, now: time.Now}
}

type conn struct {
	nc       net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	idleFrom time.Time
	head     []byte // the last response head read, reused

	// alive's peek, made once (Linux)
	raw    syscall.RawConn
	peek   func(fd uintptr) bool
	idleOK bool
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.serves(req) {
		return t.Fallback.RoundTrip(req)
	}
	if err := validHeader(req.Header); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	addr := hostPort(req)
	c, err := t.get(ctx, addr)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	// Cancellation without a goroutine: an immediate deadline unblocks
	// whatever the connection is doing; such a connection is never reused.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		return nil, err
	}
	if err := writeRequest(c.bw, req); err != nil {
		// Like net/http, a POST whose write failed is not sent again: the
		// caller fails over.
		closeBody(req)
		return fail(err)
	}
	closeBody(req)
	var resp *http.Response
	for range 5 {
		resp, err = readResponse(c, req)
		if err != nil {
			return fail(err)
		}
		// 1xx informational answers (103 Early Hints) precede the final
		// one, as net/http skips them; 101 is final (the caller refuses it).
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		resp.Body.Close()
	}
	if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		return fail(errors.New("too many 1xx informational responses"))
	}
	reusable := !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	resp.Body = &body{rc: resp.Body, t: t, c: c, addr: addr, stop: stop, reusable: reusable}
	return resp, nil
}

// serves reports whether the request is plain http with a known length and
// no proxy.
func (t *Transport) serves(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength <= 0 {
		return false
	}
	if t.Proxy != nil {
		if u, err := t.Proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

func hostPort(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// validHeader refuses what net/http's Transport refuses: a header that
// could split the request.
func validHeader(h http.Header) error {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("h1: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("h1: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// writeRequest writes the request line, the headers and the body.
func writeRequest(w *bufio.Writer, req *http.Request) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: " + userAgent + "\r\n")
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	if req.ContentLength > 0 || req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(max(req.ContentLength, 0), 10))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	if req.Body != nil && req.ContentLength > 0 {
		n, err := io.Copy(w, io.LimitReader(req.Body, req.ContentLength))
		if err != nil {
			return err
		}
		if n != req.ContentLength {
			return fmt.Errorf("h1: request body is %d bytes, ContentLength says %d", n, req.ContentLength)
		}
	}
	return w.Flush()
}

// get returns an idle connection to addr that the server has not closed,
// or dials a new one.
func (t *Transport) get(ctx context.Context, addr string) (*conn, error) {
	now := t.now()
	for {
		t.mu.Lock()
		list := t.idle[addr]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		t.idle[addr] = list[:len(list)-1]
		t.mu.Unlock()
		if now.Sub(c.idleFrom) < t.IdleTimeout && alive(c) {
			return c, nil
		}
		c.nc.Close()
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, bufSize), bw: bufio.NewWriterSize(nc, bufSize)}, nil
}

// put returns a connection whose response was read to its end. It never
// has a deadline: the only one h1 sets is cancellation's, and a cancelled
// connection is closed, not put back.
func (t *Transport) put(addr string, c *conn) {
	c.idleFrom = t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[addr]) >= MaxIdleConnsPerHost {
		c.nc.Close()
		return
	}
	t.idle[addr] = append(t.idle[addr], c)
	if !t.sweeping {
		// Idle connections of pods that went away would otherwise hold
		// their descriptors: a sweep runs while any connection is idle.
		t.sweeping = true
		time.AfterFunc(t.IdleTimeout/2, t.sweep)
	}
}

// sweep closes the connections idle longer than IdleTimeout and runs again
// while any is left.
func (t *Transport) sweep() {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, list := range t.idle {
		fresh := list[:0]
		for _, c := range list {
			if now.Sub(c.idleFrom) < t.IdleTimeout {
				fresh = append(fresh, c)
			} else {
				c.nc.Close()
			}
		}
		if len(fresh) == 0 {
			delete(t.idle, addr)
		} else {
			t.idle[addr] = fresh
		}
	}
	if len(t.idle) > 0 {
		time.AfterFunc(t.IdleTimeout/2, t.sweep)
	} else {
		t.sweeping = false
	}
}

// CloseIdleConnections closes every idle connection.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, list := range t.idle {
		for _, c := range list {
			c.nc.Close()
		}
		delete(t.idle, addr)
	}
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// body returns the connection to the pool when the response was read to
// its end; otherwise closing it closes the connection. Close may come from
// another goroutine while Read blocks: whoever ends the body first decides
// the connection's fate.
type body struct {
	rc       io.ReadCloser
	t        *Transport
	c        *conn
	addr     string
	stop     func() bool
	reusable bool
	done     atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err != nil && b.done.CompareAndSwap(false, true) {
		// stop is false when the context already fired: the connection
		// has a past deadline and is not reused.
		if err == io.EOF && b.stop() && b.reusable && b.c.br.Buffered() == 0 {
			b.t.put(b.addr, b.c)
		} else {
			b.stop()
			b.c.nc.Close()
		}
	}
	return n, err
}

// Buffered is the number of bytes read from the connection and not yet
// returned: the rest of the head's read, the start of the body (framing
// included). Only the reading goroutine may call it.
func (b *body) Buffered() int {
	if b.done.Load() {
		return 0
	}
	return b.c.br.Buffered()
}

func (b *body) Close() error {
	if b.done.CompareAndSwap(false, true) {
		b.stop()
		b.c.nc.Close()
	}
	return nil
}
