package h1

import "syscall"

// alive peeks at an idle connection without blocking: a server that closed
// it (idle timeout) shows EOF, and a connection with unexpected bytes is
// not reusable either. One recvfrom per reuse; net/http's read loop pays
// the same read to learn the same thing. The raw connection and the peek
// function are made once per connection (make bench-proxy counted three
// allocations per request when they were made per reuse).
func alive(c *conn) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.peek == nil {
		sc, ok := c.nc.(syscall.Conn)
		if !ok {
			return true
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		c.raw = rc
		c.peek = func(fd uintptr) bool {
			var buf [1]byte
			_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			c.idleOK = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
			return true // never wait for readiness
		}
	}
	c.idleOK = false
	if err := c.raw.Read(c.peek); err != nil {
		return false
	}
	return c.idleOK
}
