// Package poll waits, in tests, for a condition that comes to hold in its
// own time: a controller converging, a process getting ready, a cluster
// settling after a fault.
package poll

import (
	"testing"
	"time"
)

// Until calls cond at once and then every interval until it returns nil,
// and fails t, naming what and cond's last error, when timeout passes
// first.
func Until(t testing.TB, timeout, interval time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// Recv waits for a value from c and returns it, and fails t with fail (and
// the bound) when timeout passes first: a goroutine's result, an
// observer's callback, a process's exit.
func Recv[T any](t testing.TB, c <-chan T, timeout time.Duration, fail string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(timeout):
		t.Fatalf("%s (waited %s)", fail, timeout)
		var zero T
		return zero
	}
}
