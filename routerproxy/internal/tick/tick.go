// Package tick runs the router-proxy's periodic chores (re-reading the API
// key directories, probing the shared budget store) and the waits between
// retries (a backend's next health probe, a lost holds subscription).
package tick

import (
	"context"
	"time"
)

// Every calls f once each interval, the first time one interval after the
// call (the caller has done the first round itself), until ctx ends. A
// round that outlasts the interval delays the next one; missed ticks are
// not made up.
func Every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// Sleep waits d and reports true, or false as soon as ctx ends.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
