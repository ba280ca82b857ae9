// Package tcprelay is a test helper for loopback TCP: a relay in front of
// a server (Redis, an upstream) that can delay or hold the server's
// replies, to make a client's round trip time out while the server still
// does the work, as on a busy node; and a listener that serves each
// connection with a handler (a raw upstream, a front that cuts).
package tcprelay

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// Start relays connections to target and calls beforeReply before it
// passes on each chunk of a reply. It returns the relay's address; it
// stops with the test.
func Start(t testing.TB, target string, beforeReply func()) string {
	t.Helper()
	var done atomic.Bool
	addr := Listen(t, func(c net.Conn) {
		defer c.Close()
		s, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer s.Close()
		go func() { _, _ = io.Copy(s, c) }()
		buf := make([]byte, 32<<10)
		for !done.Load() {
			n, err := s.Read(buf)
			if n > 0 {
				beforeReply()
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	t.Cleanup(func() { done.Store(true) })
	return addr
}

// Listen serves each connection to a new loopback address with handle, on
// a goroutine of its own, until the test ends; it returns the address.
func Listen(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// Hold holds replies while hold is set (the requests have reached the
// server and run).
func Hold(hold *atomic.Bool) func() {
	return func() {
		for hold.Load() {
			time.Sleep(5 * time.Millisecond)
		}
	}
}
