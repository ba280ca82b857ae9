package h1

import "syscall"

// alive peeks at an idle connection without blocking: a server that closed
// it (idle timeout) shows EOF, and a connection with unexpected bytes is
// not reusable either. One recvfrom per reuse; net/http's read loop pays
// the same read to learn the same thing.
func alive(c *conn) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var buf [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n
		ok = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait for readiness
	}); err != nil {
		return false
	}
	return ok
}
