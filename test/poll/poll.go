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
