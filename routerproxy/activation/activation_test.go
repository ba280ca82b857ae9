package activation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/test/poll"
)

// memCluster is a pool in memory: a member scaled to one serves after load,
// one scaled to zero stops after load/4; a single replica always owns the
// Lease. The envtest suite (kube) runs the same policy on a real API server;
// this one makes the policy cheap enough to benchmark.
type memCluster struct {
	load    time.Duration
	reads   atomic.Int64 // Member calls
	slow    atomic.Int64 // nanoseconds each Member call takes
	mu      sync.Mutex
	members map[string]*activation.Member
	scaleUp int
	swapCtx context.Context // the context the last swap took the Lease with
}

func newMem(load time.Duration, resident string, members ...string) *memCluster {
	c := &memCluster{load: load, members: map[string]*activation.Member{}}
	for _, m := range members {
		c.members[m] = &activation.Member{Phase: "Stopped"}
	}
	c.members[resident].Replicas, c.members[resident].Phase = 1, "Ready"
	return c
}

func (c *memCluster) Member(_ context.Context, _, name string) (activation.Member, error) {
	c.reads.Add(1)
	time.Sleep(time.Duration(c.slow.Load()))
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.members[name], nil
}

func (c *memCluster) Scale(_ context.Context, _, name string, r int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[name]
	if m.Replicas == r {
		return nil
	}
	m.Replicas = r
	phase, d := "Ready", c.load
	if r == 0 {
		phase, d = "Stopped", c.load/4
	} else {
		c.scaleUp++
	}
	time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if m.Replicas == r {
			m.Phase = phase
		}
	})
	return nil
}

func (c *memCluster) Acquire(ctx context.Context, _, _, _ string) (context.Context, func(), string, error) {
	c.mu.Lock()
	c.swapCtx = ctx
	c.mu.Unlock()
	return ctx, func() {}, "self", nil
}

// swapping is the context of the swap that last took the Lease (nil before
// one did).
func (c *memCluster) swapping() context.Context { c.mu.Lock(); defer c.mu.Unlock(); return c.swapCtx }

func (c *memCluster) Holder(context.Context, string, string) (string, string, error) {
	return "", "", nil
}

func (c *memCluster) swaps() int { c.mu.Lock(); defer c.mu.Unlock(); return c.scaleUp }

func pooled(members ...string) (*proxyapi.Config, map[string]*proxyapi.Backend) {
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: "ns"}}
	for _, m := range members {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: m, Pool: &proxyapi.Pool{Name: "gpu", InferenceService: m, Members: members, SwapBudget: proxyapi.Duration{Duration: time.Minute}}})
	}
	out := map[string]*proxyapi.Backend{}
	for i := range cfg.Backends {
		out[cfg.Backends[i].Name] = &cfg.Backends[i]
	}
	return cfg, out
}

// started is an Activator over a two-member pool in memory (llama resident,
// 20 ms swaps), once it has read the pool; it stops with the test.
func started(tb testing.TB, m activation.Metrics) (*activation.Activator, map[string]*proxyapi.Backend, *memCluster) {
	cfg, bs := pooled("llama", "qwen")
	mem := newMem(20*time.Millisecond, "llama", "llama", "qwen")
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	a := activation.New(ctx, cfg, activation.Options{Cluster: mem, Metrics: m, Poll: time.Millisecond})
	for {
		if _, known := a.Resident(bs["llama"]); known {
			return a, bs, mem
		}
		time.Sleep(time.Millisecond)
	}
}

// holdRecorder is activation.Metrics keeping every hold.
type holdRecorder struct {
	mu    sync.Mutex
	holds []time.Duration
	skips int
}

func (h *holdRecorder) Swap(string, string, string, time.Duration) {}
func (h *holdRecorder) Hold(_, _, outcome string, d time.Duration) {
	if outcome == activation.HoldServed {
		h.mu.Lock()
		h.holds = append(h.holds, d)
		h.mu.Unlock()
	}
}
func (h *holdRecorder) Skip(string, string)               { h.mu.Lock(); h.skips++; h.mu.Unlock() }
func (h *holdRecorder) Resident(string, []string, string) {}

func (h *holdRecorder) percentile(p float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.holds) == 0 {
		return 0
	}
	s := slices.Clone(h.holds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// BenchmarkAlternatingTwoModels: four clients, two per model, each request
// 2 ms of work, a swap 20 ms. It reports swaps and hold percentiles per mode
// (IfIdle falls back to the resident member when it skips). The requests
// that were not held are not in the percentiles; swaps/request says how
// often a request paid for a swap.
func BenchmarkAlternatingTwoModels(b *testing.B) {
	for _, mode := range []proxyapi.PoolActivation{activation.ModeWait, activation.ModeIfIdle} {
		b.Run(string(mode), func(b *testing.B) {
			rec := &holdRecorder{}
			a, bs, mem := started(b, rec)
			ctx := context.Background()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := max(b.N/4, 1)
			for i := range 4 {
				want := []string{"llama", "qwen"}[i%2]
				other := []string{"qwen", "llama"}[i%2]
				wg.Go(func() {
					for range per {
						rel, err := a.Acquire(ctx, bs[want], mode)
						if err == activation.ErrBusy {
							// IfIdle: the rule's next backend is the other member.
							rel, err = a.Acquire(ctx, bs[other], activation.ModeWait)
						}
						if err != nil {
							b.Error(err)
							return
						}
						time.Sleep(2 * time.Millisecond)
						rel()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(mem.swaps()), "swaps")
			b.ReportMetric(float64(mem.swaps())/float64(per*4), "swaps/request")
			b.ReportMetric(float64(rec.percentile(0.5).Microseconds())/1000, "hold-p50-ms")
			b.ReportMetric(float64(rec.percentile(0.99).Microseconds())/1000, "hold-p99-ms")
			b.ReportMetric(float64(rec.skips), "ifidle-skips")
		})
	}
}

// TestNoPingPongInMemory: the same workload as the benchmark, bounded: a
// swap at most every two swap durations, and neither model starves.
func TestNoPingPongInMemory(t *testing.T) {
	a, bs, mem := started(t, nil)
	ctx := context.Background()
	deadline := time.Now().Add(time.Second)
	var served [2]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 4 {
		want := []string{"llama", "qwen"}[i%2]
		wg.Go(func() {
			for time.Now().Before(deadline) {
				rel, err := a.Acquire(ctx, bs[want], activation.ModeWait)
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(2 * time.Millisecond)
				rel()
				mu.Lock()
				served[i%2]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if served[0] == 0 || served[1] == 0 {
		t.Fatalf("a model starved: %v", served)
	}
	if s := mem.swaps(); s > int(time.Second/(40*time.Millisecond))+1 {
		t.Errorf("%d swaps in 1s with 20ms swaps: ping-pong", s)
	}
	t.Logf("served %v with %d swaps", served, mem.swaps())
}

// TestDrainingIncumbent: once another member has waiters, the incumbent
// admits no new Wait requests (it drains, so the waiters are not starved),
// while an IfIdle request for it is still served at once.
func TestDrainingIncumbent(t *testing.T) {
	a, bs, mem := started(t, nil)
	ctx := context.Background()
	busy, err := a.Acquire(ctx, bs["llama"], activation.ModeWait)
	if err != nil {
		t.Fatal(err)
	}
	qwen := make(chan error, 1)
	go func() {
		rel, err := a.Acquire(ctx, bs["qwen"], activation.ModeWait)
		if err == nil {
			rel()
		}
		qwen <- err
	}()
	waitForWaiters(t, a, 1) // qwen waits: llama is busy
	rel, err := a.Acquire(ctx, bs["llama"], activation.ModeIfIdle)
	if err != nil {
		t.Fatalf("IfIdle on the warm member: %v", err)
	}
	rel()
	held, hcancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer hcancel()
	if _, err := a.Acquire(held, bs["llama"], activation.ModeWait); err == nil {
		t.Fatal("a new Wait request entered the draining incumbent")
	}
	busy() // the incumbent drains: the swap to qwen goes ahead
	if err := <-qwen; err != nil {
		t.Fatal(err)
	}
	if mem.swaps() != 1 {
		t.Errorf("swaps %d, want 1", mem.swaps())
	}
}

// TestAnotherReplicasSwapSetsTheDwell: a swap this replica only observed
// (another replica, or the operator, made qwen resident) keeps qwen resident
// here as long as that swap took, so replicas with opposite demand do not
// flip the slot back at once.
func TestAnotherReplicasSwapSetsTheDwell(t *testing.T) {
	cfg, bs := pooled("llama", "qwen")
	mem := newMem(150*time.Millisecond, "llama", "llama", "qwen")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := activation.New(ctx, cfg, activation.Options{Cluster: mem, Poll: time.Millisecond, Resync: 5 * time.Millisecond})
	for {
		if r, known := a.Resident(bs["llama"]); known && r {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The other replica's swap, about a second long: the dwell it sets
	// outlasts the 60-ms request below by far, whenever a busy machine
	// runs it.
	_ = mem.Scale(ctx, "ns", "llama", 0)
	time.Sleep(time.Second)
	_ = mem.Scale(ctx, "ns", "qwen", 1)
	for {
		if r, _ := a.Resident(bs["qwen"]); r {
			break
		}
		time.Sleep(time.Millisecond)
	}
	before := mem.swaps()
	short, scancel := context.WithTimeout(ctx, 60*time.Millisecond)
	defer scancel()
	if _, err := a.Acquire(short, bs["llama"], activation.ModeWait); err == nil {
		t.Fatal("llama was made resident while qwen's dwell lasted")
	}
	if mem.swaps() != before {
		t.Fatalf("a swap started during the dwell")
	}
	// After the dwell the swap goes ahead.
	rel, err := a.Acquire(ctx, bs["llama"], activation.ModeWait)
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if mem.swaps() != before+1 {
		t.Errorf("swaps %d, want %d", mem.swaps(), before+1)
	}
}

// TestConcurrentRefreshesShareOneRead: a burst of failed dispatches to a
// pool's member (another replica swapped it out) reads the pool once, not
// once per request.
func TestConcurrentRefreshesShareOneRead(t *testing.T) {
	a, bs, mem := started(t, nil)
	mem.slow.Store(int64(time.Second)) // every refresh starts while the first read goes on, however busy the machine
	before := mem.reads.Load()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { a.Refresh(bs["llama"]) })
	}
	wg.Wait()
	// One shared read of both members; a resync tick may add one more.
	if n := mem.reads.Load() - before; n > 4 {
		t.Errorf("%d member reads for 20 concurrent refreshes", n)
	}
}

// waitForWaiters returns once n requests wait for a member that is not
// resident (the activator's own count), so the test goes on from that state
// however late the waiting goroutines ran.
func waitForWaiters(t *testing.T, a *activation.Activator, n int) {
	t.Helper()
	poll.Until(t, time.Minute, time.Millisecond, "requests waiting", func() error {
		waiting := 0
		for _, p := range a.Status() {
			waiting += p.Waiting
		}
		if waiting != n {
			return fmt.Errorf("%d waiting, want %d", waiting, n)
		}
		return nil
	})
}

// heldTimers stands in for time.AfterFunc: it keeps each function for the
// test to run, in the order the test needs, instead of at its time.
type heldTimers struct {
	mu  sync.Mutex
	fns []func()
}

func (h *heldTimers) AfterFunc(_ time.Duration, f func()) *time.Timer {
	h.mu.Lock()
	h.fns = append(h.fns, f)
	h.mu.Unlock()
	return time.NewTimer(time.Hour) // Stop works on it; f runs only when fired
}

func (h *heldTimers) fire(t *testing.T, i int) {
	h.mu.Lock()
	if i >= len(h.fns) {
		h.mu.Unlock()
		t.Fatalf("timer %d was never armed (%d were)", i, len(h.fns))
	}
	f := h.fns[i]
	h.mu.Unlock()
	f()
}

// TestStaleAbandonTimerKeepsTheSwap: the first caller's 503 arms the swap's
// abandonment for Retry-After plus one budget; its retry, held one budget
// and answered 503 in turn, re-arms it. The first timer fires at that very
// moment when the retry came exactly Retry-After later, and can be past Stop
// (its function waiting for the lock): it must not cancel the swap the
// retry was just told to come back for. The last timer still abandons a
// swap nobody came back for.
func TestStaleAbandonTimerKeepsTheSwap(t *testing.T) {
	cfg, bs := pooled("llama", "qwen")
	for i := range cfg.Backends {
		cfg.Backends[i].Pool.SwapBudget.Duration = 20 * time.Millisecond
	}
	mem := newMem(time.Hour, "llama", "llama", "qwen") // a load that outlasts every budget
	timers := &heldTimers{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := activation.New(ctx, cfg, activation.Options{Cluster: mem, Poll: time.Millisecond, AfterFunc: timers.AfterFunc})
	poll.Until(t, time.Minute, time.Millisecond, "the pool read once", func() error {
		if _, known := a.Resident(bs["llama"]); !known {
			return errors.New("not yet") // a hold would expire waiting for the read, not for a swap
		}
		return nil
	})
	for _, caller := range []string{"the first request", "its retry"} {
		_, err := a.Acquire(ctx, bs["qwen"], activation.ModeWait)
		var expired *activation.HoldExpired
		if !errors.As(err, &expired) {
			t.Fatalf("%s: %v, want the hold to expire at the swap budget", caller, err)
		}
	}
	poll.Until(t, time.Minute, time.Millisecond, "the swap takes the Lease", func() error {
		if mem.swapping() == nil {
			return errors.New("not yet")
		}
		return nil
	})
	timers.mu.Lock()
	armed := len(timers.fns)
	timers.mu.Unlock()
	if armed != 2 {
		t.Fatalf("%d abandon timers armed, want one per 503", armed)
	}
	timers.fire(t, 0) // the first 503's timer, late
	if err := mem.swapping().Err(); err != nil {
		t.Fatalf("the first 503's timer cancelled the swap its retry waits for: %v", err)
	}
	timers.fire(t, 1) // the retry's: nobody came back
	if err := mem.swapping().Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the swap nobody came back for goes on: %v", err)
	}
}
