// Package redistest runs a real redis-server (Debian's package, installed
// by hack/install-test-deps.sh) on a loopback port for tests: the budget
// store's, the shared holds' and the router-proxy's process tests.
package redistest

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Server is one redis-server process, without persistence: stopped and
// started again on its address, it comes back empty.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// Start runs redis-server on addr, a free loopback port when addr is "",
// and returns once it answers PING. It stops with the test.
func Start(t testing.TB, addr string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server is not installed: run hack/install-test-deps.sh (make test does)")
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr = l.Addr().String()
		require.NoError(t, l.Close())
	}
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--protected-mode", "yes")
	require.NoError(t, cmd.Start())
	s := &Server{Addr: addr, cmd: cmd}
	t.Cleanup(s.Stop)
	require.Eventually(t, func() bool { return ping(addr) }, 10*time.Second, 20*time.Millisecond, "redis-server did not start")
	return s
}

// Stop kills the server (the test's Redis going away); a second Stop is
// a no-op.
func (s *Server) Stop() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// Restart stops the server and starts a new, empty one on its address.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.cmd = Start(t, s.Addr).cmd
}

// ping reports whether Redis at addr answers PING.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
