package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves HTTP/1.1 and HTTP/1.0 to an http.Handler: the router-proxy's
// server core, the counterpart of Transport.
//
// Why not net/http's server: make bench-proxy measured net/http's server
// with this package's client at 35 µs of CPU per proxied request with no
// feature at all, against 13 µs for nginx. Its per-request costs are a
// header map built line by line with a string per key and value, a
// background-read goroutine started and stopped for every request to see a
// client leave, two contexts, a response-head clone and sort. This server
// parses a request head into one string and slices the header out of it,
// keeps one goroutine per connection, watches for a client that leaves only
// when a request outlasts LeaveCheckDelay (an LLM request that matters does;
// a 1 ms answer does not need it), and writes a response head without
// copying the handler's map.
//
// It refuses what net/http refuses (malformed heads and framing, missing or
// repeated Host, invalid field names and values, obsolete line folding,
// unknown transfer codings, HTTP/2 prefaces) and is stricter where
// net/http is lenient to smuggling: a request with both Content-Length and
// Transfer-Encoding is read as chunked (RFC 9112 §6.1) and its connection
// is closed after the response.
//
// As with net/http, a request's Body and ResponseWriter are the handler's
// only until ServeHTTP returns: both are reused for the connection's next
// request.
type Server struct {
	Handler http.Handler
	// ReadHeaderTimeout bounds reading a request head, from its first byte.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request this long.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection one write to which has been blocked
	// this long (a client that stops reading, or pipelines requests and
	// never reads their answers). It bounds every write the server makes,
	// whatever the handler does with deadlines of its own. Zero means none.
	WriteTimeout time.Duration
	// MaxHeaderBytes bounds a request head (request line included);
	// larger ones, or ones with more than MaxHeaderFields header lines,
	// get 431. Zero means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns bounds the connections served at once (nginx's
	// worker_connections). At the bound, a new connection takes the slot
	// of the longest-idle one (waiting for a request: a keep-alive
	// connection between requests, or one that has sent nothing yet),
	// which is closed, as nginx reclaims reusable connections
	// (ngx_drain_connections): idle sockets never starve a new client.
	// Only when every connection is reading or serving a request is the
	// new one answered 503 with Retry-After: 1 and closed, without its
	// request being read, so a client can go to another replica at once.
	// Zero means no bound but the process's descriptors.
	MaxConns int
	// LeaveCheckDelay is how long a request runs before the server
	// watches its connection for the client leaving (which cancels the
	// request's context). Zero means DefaultLeaveCheckDelay.
	LeaveCheckDelay time.Duration
	// ConnContext derives a connection's base context, as in http.Server.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Log gets handler panics and accept errors; nil discards them.
	Log *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	shutting  atomic.Bool
	draining  atomic.Bool   // Drain: every response closes its connection
	connsDone chan struct{} // closed when shutting and no connection is left
	janitorOn bool
	refusing  atomic.Int32 // over-limit connections being answered 503
}

const (
	// DefaultReadHeaderTimeout and DefaultIdleTimeout are the router-proxy's
	// serving timeouts (net/http's server has none by default).
	DefaultReadHeaderTimeout = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	// DefaultMaxHeaderBytes bounds a request head: 64 KiB, as Envoy's
	// default (60 KiB) and above nginx's (32 KiB). net/http's 1 MiB let
	// every connection hold a megabyte of head (and its copy while it is
	// parsed): a connection cap times 1 MiB is past any pod's memory.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultLeaveCheckDelay: a request shorter than this is not watched.
	DefaultLeaveCheckDelay = 10 * time.Millisecond
	// maxDiscard is how much of a body the handler left unread the server
	// reads to keep the connection (net/http's maxPostHandlerReadBytes).
	maxDiscard = 256 << 10
	// pendingSize is how much of a response is held before its head is
	// written: an answer that fits gets a Content-Length, as in net/http.
	pendingSize = 2 << 10
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = http.ErrServerClosed

// Serve accepts connections on ln until Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
		s.conns = map[*serverConn]struct{}{}
	}
	s.listeners[ln] = struct{}{}
	if !s.janitorOn && (s.IdleTimeout > 0 || s.ReadHeaderTimeout > 0 || s.WriteTimeout > 0) {
		s.janitorOn = true
		go s.janitor()
	}
	s.mu.Unlock()
	base := context.Background()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of descriptors and the like: wait and retry, as
				// net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("accept", "error", err, "retry_in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c, over := s.newConn(base, nc)
		switch {
		case over:
			s.refuseOverLimit(nc)
		case c == nil:
			nc.Close()
			return ErrServerClosed
		default:
			go c.serve()
		}
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) logf(msg string, args ...any) {
	if s.Log != nil {
		s.Log.Warn(msg, args...)
	}
}

// Drain makes every response from now on close its connection (with
// Connection: close) while the server still accepts and serves: clients
// reconnect, and their new connections go where the load balancer now
// sends them. Idle connections are left for their next request, which
// closes them; closing them now would race a client that is sending one.
// Shutdown follows.
func (s *Server) Drain() { s.draining.Store(true) }

// Shutdown stops accepting, closes idle connections, lets requests in
// flight finish (their connections close after the response) and waits
// for every connection to close or ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.shutting.Swap(true) {
		s.connsDone = make(chan struct{})
		if len(s.conns) == 0 {
			close(s.connsDone)
		}
	}
	for ln := range s.listeners {
		ln.Close()
		delete(s.listeners, ln)
	}
	for c := range s.conns {
		c.closeIfIdle()
	}
	done := s.connsDone
	s.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() error {
	_ = s.Shutdown(canceled)
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.nc.Close()
	}
	return nil
}

var canceled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// newConn registers a connection; over reports that MaxConns are served
// already (the connection is not registered).
func (s *Server) newConn(base context.Context, nc net.Conn) (_ *serverConn, over bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return nil, false
	}
	if s.MaxConns > 0 && len(s.conns) >= s.MaxConns && !s.reclaimIdle() {
		return nil, true
	}
	ctx := base
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, nc)
	}
	c := &serverConn{s: s, nc: nc, ctx: ctx, remote: nc.RemoteAddr().String()}
	// Its state and time are set before the janitor can see it: a zero
	// time would read as idle since the process started.
	c.enter(stateIdle)
	s.conns[c] = struct{}{}
	return c, false
}

// reclaimIdle closes the connection idle the longest and frees its slot
// at once (its goroutine forgets it again when it ends); false when every
// connection is busy. The caller holds s.mu. The closed client, if it was
// about to reuse the connection, sees it closed, as with any server's
// keep-alive timeout, and reconnects; the longest-idle one is the least
// likely to be.
func (s *Server) reclaimIdle() bool {
	var victim *serverConn
	var since int64
	for c := range s.conns {
		if c.state.Load() != stateIdle {
			continue
		}
		if t := c.since.Load(); victim == nil || t < since {
			victim, since = c, t
		}
	}
	if victim == nil || !victim.state.CompareAndSwap(stateIdle, stateClosed) {
		return false
	}
	victim.nc.Close()
	delete(s.conns, victim)
	return true
}

// maxRefusing bounds the over-limit connections answered at once; past
// it they are closed without an answer, so a flood of connections costs
// no more than a few goroutines.
const maxRefusing = 64

var overLimitAnswer = func() string {
	msg := "the server is at its connection limit; retry\n"
	return fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
}()

// refuseOverLimit answers a connection beyond MaxConns with 503 and
// closes it, within a second, without reading its request.
func (s *Server) refuseOverLimit(nc net.Conn) {
	if s.refusing.Add(1) > maxRefusing {
		s.refusing.Add(-1)
		nc.Close()
		return
	}
	go func() {
		defer s.refusing.Add(-1)
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(time.Second))
		if _, err := io.WriteString(nc, overLimitAnswer); err != nil {
			return
		}
		// Let the client read the answer before the close resets it.
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
			_, _ = io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
		}
	}()
}

func (s *Server) forget(c *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.shutting.Load() && len(s.conns) == 0 {
		select {
		case <-s.connsDone:
		default:
			close(s.connsDone)
		}
	}
}

// Connection states, for Shutdown and the janitor.
const (
	stateIdle   int32 = iota // waiting for a request's first byte
	stateHead                // reading a request head
	stateActive              // serving a request
	stateClosed
)

type serverConn struct {
	s      *Server
	nc     net.Conn
	ctx    context.Context
	remote string
	br     *bufio.Reader
	bw     *bufio.Writer
	state  atomic.Int32
	since  atomic.Int64 // when the state began (monoNow)
	// writing is when the write on the wire began (monoNow+1), 0 when
	// none is: the janitor closes a write blocked past WriteTimeout.
	writing atomic.Int64
	served  atomic.Bool // a request was read: the idle wait is IdleTimeout
	head    []byte      // the current request head, reused
	resp    response
	leave   leaveWatch

	// reused per request (request.go)
	req      request
	body     serverBody
	tmpl     http.Request
	armLeave func() // c.leave.arm, bound once
}

// closeIfIdle closes a connection waiting for its next request.
func (c *serverConn) closeIfIdle() {
	if c.state.CompareAndSwap(stateIdle, stateClosed) {
		c.nc.Close()
	}
}

// enter records a state and when it began; the time is stored first, so
// the janitor never pairs a new state with an old time.
func (c *serverConn) enter(to int32) {
	c.since.Store(int64(monoNow()))
	c.state.Store(to)
}

// move is enter from a known state; false when Shutdown or the janitor
// closed the connection first.
func (c *serverConn) move(from, to int32) bool {
	c.since.Store(int64(monoNow()))
	return c.state.CompareAndSwap(from, to)
}

func (c *serverConn) serve() {
	defer c.s.forget(c)
	defer c.nc.Close()
	c.br = bufio.NewReaderSize(c.nc, bufSize)
	c.bw = bufio.NewWriterSize(connWriter{c}, bufSize)
	c.leave.c = c
	c.armLeave = c.leave.arm
	for {
		if c.br.Buffered() == 0 {
			if _, err := c.br.Peek(1); err != nil {
				return
			}
		}
		if !c.move(stateIdle, stateHead) {
			return // Shutdown or the janitor closed it
		}
		c.served.Store(true)
		req, herr := c.readRequest()
		if herr != nil {
			c.refuse(herr)
			return
		}
		if !c.state.CompareAndSwap(stateHead, stateActive) {
			return // the head took longer than ReadHeaderTimeout
		}
		keep := c.serveRequest(req)
		if !keep || c.s.shutting.Load() {
			return
		}
		c.enter(stateIdle)
		if c.s.shutting.Load() {
			// Shutdown may have looked before the store.
			c.closeIfIdle()
			return
		}
	}
}

// connWriter is the connection as the write buffer sees it: each write
// on the wire is timed for the janitor (two atomic stores, no timer).
type connWriter struct{ c *serverConn }

func (w connWriter) Write(p []byte) (int, error) {
	w.c.writing.Store(int64(monoNow()) + 1)
	n, err := w.c.nc.Write(p)
	w.c.writing.Store(0)
	return n, err
}

// The idle, header and write timeouts are kept by a janitor that looks at every
// connection a few times per timeout, not by a read deadline set and
// cleared on each request: make bench-proxy counted three deadline
// updates and two clock reads per request for them.

// monoNow is a monotonic clock reading (one clock read; time.Now takes two).
func monoNow() time.Duration { return time.Since(epoch) }

var epoch = time.Now()

// janitorTick is how often the janitor looks: an eighth of the shortest
// timeout, between 10 ms and 1 s.
func (s *Server) janitorTick() time.Duration {
	t := time.Duration(0)
	for _, d := range []time.Duration{s.IdleTimeout, s.ReadHeaderTimeout, s.WriteTimeout} {
		if d > 0 && (t == 0 || d < t) {
			t = d
		}
	}
	return min(max(t/8, 10*time.Millisecond), time.Second)
}

// janitor closes connections idle past IdleTimeout, reading a head past
// ReadHeaderTimeout or blocked in a write past WriteTimeout, until the server has shut down and its last
// connection is gone.
func (s *Server) janitor() {
	tick := time.NewTicker(s.janitorTick())
	defer tick.Stop()
	var conns []*serverConn
	for range tick.C {
		var done bool
		if conns, done = s.sweep(conns[:0]); done {
			return
		}
	}
}

// sweep is one look of the janitor over every connection (conns is
// scratch space); done reports that the server has shut down and its last
// connection is gone.
func (s *Server) sweep(conns []*serverConn) (_ []*serverConn, done bool) {
	s.mu.Lock()
	if s.shutting.Load() && len(s.conns) == 0 {
		s.mu.Unlock()
		return conns, true
	}
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	now := monoNow()
	for _, c := range conns {
		st := c.state.Load()
		age := now - time.Duration(c.since.Load())
		// A new connection's wait for its first byte counts as part of
		// its head, as in net/http.
		idle := s.IdleTimeout
		if !c.served.Load() && s.ReadHeaderTimeout > 0 {
			idle = s.ReadHeaderTimeout
		}
		switch {
		case st == stateIdle && idle > 0 && age > idle:
			c.closeIfIdle()
		case st == stateHead && s.ReadHeaderTimeout > 0 && age > s.ReadHeaderTimeout:
			if c.state.CompareAndSwap(stateHead, stateClosed) {
				c.nc.Close()
			}
		}
		if w := c.writing.Load(); w != 0 && s.WriteTimeout > 0 && now-time.Duration(w-1) > s.WriteTimeout {
			// The blocked write fails and the connection's goroutine ends
			// (a handler sees the error on its next write).
			c.nc.Close()
		}
	}
	return conns, false
}

// refuse answers a request that could not be read and closes.
func (c *serverConn) refuse(e *headError) {
	if e.status == 0 {
		return // the connection failed or the client left
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c.bw, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		e.status, http.StatusText(e.status), len(e.msg), e.msg)
	_ = c.bw.Flush()
	// Let the client read the answer before the close resets it.
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = c.nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(c.nc, 64<<10))
	}
}

// serveRequest runs the handler and finishes the response; it reports
// whether the connection can carry another request.
func (c *serverConn) serveRequest(req *request) (keep bool) {
	ctx, cancel := context.WithCancelCause(c.ctx)
	r := req.r.WithContext(ctx)
	w := &c.resp
	w.reset(c, req)
	c.leave.cancel = cancel
	if req.body.empty() {
		c.leave.arm()
	}
	defer func() {
		c.leave.disarm()
		cancel(context.Canceled)
		if p := recover(); p != nil {
			keep = false
			if p == http.ErrAbortHandler {
				return
			}
			buf := make([]byte, 16<<10)
			buf = buf[:runtime.Stack(buf, false)]
			c.s.logf("handler panic", "remote", c.remote, "uri", r.RequestURI, "panic", p, "stack", string(buf))
		}
	}()
	c.s.Handler.ServeHTTP(w, r)
	c.leave.disarm()
	if err := w.finish(); err != nil {
		return false
	}
	if w.closeAfter || req.close || c.leave.gone.Load() {
		return false
	}
	return req.body.drain()
}

// leaveWatch cancels a request whose client closes the connection while
// the handler runs: armed when the request body has been read, it starts
// watching the connection after LeaveCheckDelay with a blocking one-byte
// peek (a pipelined next request stays in the buffer; a closed connection
// cancels the request).
type leaveWatch struct {
	c      *serverConn
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
	armed  bool
	active bool          // a peek runs
	done   chan struct{} // closed when the peek returns
	gone   atomic.Bool   // the client closed the connection
}

// ErrClientGone is the cause of a request context cancelled because the
// client closed its connection.
var ErrClientGone = errors.New("h1: client closed the connection")

func (l *leaveWatch) arm() {
	if l.c.br.Buffered() > 0 {
		return // a pipelined request is waiting; nothing to watch
	}
	d := l.c.s.LeaveCheckDelay
	if d <= 0 {
		d = DefaultLeaveCheckDelay
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed {
		return
	}
	l.armed = true
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.watch)
	} else {
		l.timer.Reset(d)
	}
}

func (l *leaveWatch) watch() {
	l.mu.Lock()
	if !l.armed || l.active {
		// Disarmed, or a timer of an earlier arming that fired late
		// already watches.
		l.mu.Unlock()
		return
	}
	l.active = true
	l.done = make(chan struct{})
	l.mu.Unlock()
	_, err := l.c.br.Peek(1)
	if err != nil && !errors.Is(err, errAbortPeek) {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) {
			l.gone.Store(true)
			l.cancel(ErrClientGone)
		}
	}
	close(l.done)
}

var errAbortPeek = errors.New("peek aborted")

// disarm stops the watch before the connection is used again.
func (l *leaveWatch) disarm() {
	l.mu.Lock()
	if !l.armed {
		l.mu.Unlock()
		return
	}
	l.armed = false
	l.timer.Stop()
	active, done := l.active, l.done
	l.active = false
	l.mu.Unlock()
	if active {
		// Unblock the peek with a deadline in the past, wait for it, and
		// clear the deadline (bufio keeps no error across calls).
		_ = l.c.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		_ = l.c.nc.SetReadDeadline(time.Time{})
	}
}
