package tick

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/test/poll"
)

// TestEvery: f runs round after round until ctx ends, and then Every
// returns.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var rounds atomic.Int64
	done := make(chan struct{})
	go func() { Every(ctx, time.Millisecond, func() { rounds.Add(1) }); close(done) }()
	require.Eventually(t, func() bool { return rounds.Load() >= 3 }, 30*time.Second, time.Millisecond)
	cancel()
	poll.Recv(t, done, 30*time.Second, "Every did not return after its context ended")
}

// TestSleep: Sleep waits out its time, and ends early with its context.
func TestSleep(t *testing.T) {
	require.True(t, Sleep(context.Background(), time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.False(t, Sleep(ctx, time.Hour))
}
