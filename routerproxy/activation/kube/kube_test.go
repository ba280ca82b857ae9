package kube_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/routerproxy/activation/kube"
	"github.com/llmkube/llmkube-compile/test/poolsim"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.RunMain(m, &env) }

const poll = 20 * time.Millisecond

// fixture is one pool of two members (a resident) on the real API server,
// its simulated reconciler, and an Activator over kube.Cluster.
type fixture struct {
	sim      *poolsim.Sim
	act      *activation.Activator
	backends map[string]*proxyapi.Backend
	cluster  *flaky
	ns       string
	cs       kubernetes.Interface
}

// flaky is kube.Cluster with the API server switchable off.
type flaky struct {
	*kube.Cluster
	down atomic.Bool
}

var errDown = errors.New("dial tcp: connect: connection refused (API server down)")

func (f *flaky) Member(ctx context.Context, ns, name string) (activation.Member, error) {
	if f.down.Load() {
		return activation.Member{}, errDown
	}
	return f.Cluster.Member(ctx, ns, name)
}

func (f *flaky) Scale(ctx context.Context, ns, name string, r int32) error {
	if f.down.Load() {
		return errDown
	}
	return f.Cluster.Scale(ctx, ns, name, r)
}

func (f *flaky) Acquire(ctx context.Context, ns, pool, target string) (context.Context, func(), string, error) {
	if f.down.Load() {
		return nil, nil, "", errDown
	}
	return f.Cluster.Acquire(ctx, ns, pool, target)
}

func (f *flaky) Holder(ctx context.Context, ns, pool string) (string, string, error) {
	if f.down.Load() {
		return "", "", errDown
	}
	return f.Cluster.Holder(ctx, ns, pool)
}

func newFixture(t *testing.T, load, budget time.Duration) *fixture {
	t.Helper()
	ns := env.NewNamespace(t)
	sim := poolsim.Start(t, env.Dynamic, ns, "gpu", []string{"llama", "qwen"}, "llama", load)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	cfg := &proxyapi.Config{Router: proxyapi.RouterInfo{Name: "r", Namespace: ns}}
	f := &fixture{sim: sim, backends: map[string]*proxyapi.Backend{}, ns: ns, cs: cs}
	for _, m := range []string{"llama", "qwen"} {
		b := proxyapi.Backend{Name: m, Pool: &proxyapi.Pool{Name: "gpu", InferenceService: m, Members: []string{"llama", "qwen"}, SwapBudget: proxyapi.Duration{Duration: budget}}}
		cfg.Backends = append(cfg.Backends, b)
	}
	for i := range cfg.Backends {
		f.backends[cfg.Backends[i].Name] = &cfg.Backends[i]
	}
	f.cluster = &flaky{Cluster: kube.New(env.Dynamic, "replica-a", 3*time.Second)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.act = activation.New(ctx, cfg, activation.Options{Cluster: f.cluster, Poll: poll, Resync: 200 * time.Millisecond})
	require.Eventually(t, func() bool { r, known := f.act.Resident(f.backends["llama"]); return known && r }, time.Minute, poll, "the resident member is learned on a cold start")
	return f
}

func (f *fixture) acquire(ctx context.Context, member string, mode proxyapi.PoolActivation) (func(), error) {
	return f.act.Acquire(ctx, f.backends[member], mode)
}

func TestWaitSwapsAndServes(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond, 10*time.Second)
	start := time.Now()
	rel, err := f.acquire(context.Background(), "qwen", activation.ModeWait)
	require.NoError(t, err)
	rel()
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "held until the target loaded")
	assert.Equal(t, 1, f.sim.Activations("qwen"))
	assert.EqualValues(t, 0, f.sim.Replicas("llama"), "the incumbent was scaled to zero")
	assert.EqualValues(t, 1, f.sim.Replicas("qwen"))
	maxUp, both := f.sim.MaxScaledUp()
	assert.Equal(t, 1, maxUp, "never two members scaled up: %v", both)
	st := f.act.Status()
	require.Len(t, st, 1)
	assert.Equal(t, "qwen", st[0].Resident)
	assert.EqualValues(t, 1, st[0].Swaps)
	// The Lease was released after the swap.
	l, err := f.cs.CoordinationV1().Leases(f.ns).Get(context.Background(), wellknown.PoolLeaseName("gpu"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, l.Spec.HolderIdentity)
	// A request for the resident member now passes without a hold.
	rel, err = f.acquire(context.Background(), "qwen", activation.ModeWait)
	require.NoError(t, err)
	rel()
	assert.Equal(t, 1, f.sim.Activations("qwen"))
}

func TestWaitPastSwapBudget(t *testing.T) {
	// The budget leaves the swap time to scale the incumbent down and qwen
	// up on a busy machine (qwen never turns Ready), so the message at the
	// budget names qwen's phase, not the incumbent's.
	const budget = 5 * time.Second
	f := newFixture(t, 100*time.Millisecond, budget)
	f.sim.NeverReady("qwen")
	_, err := f.acquire(context.Background(), "qwen", activation.ModeWait)
	var exp *activation.HoldExpired
	require.ErrorAs(t, err, &exp)
	assert.Equal(t, budget, exp.Budget)
	assert.GreaterOrEqual(t, exp.RetryAfter, time.Second)
	assert.Contains(t, exp.Error(), "qwen is in phase Progressing", "the message says what the swap waits for")
	// The last waiter left at its budget and nobody came back within the
	// Retry-After plus one more budget: the swap is cancelled and the
	// target scaled back down.
	require.Eventually(t, func() bool { return f.sim.Replicas("qwen") == 0 }, time.Minute, poll)
}

func TestFailedMemberFailsFast(t *testing.T) {
	// Held until the budget (an hour), the call would end with the
	// context's deadline instead of SwapFailed.
	f := newFixture(t, 100*time.Millisecond, time.Hour)
	f.sim.Fail("qwen")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := f.acquire(ctx, "qwen", activation.ModeWait)
	var failed *activation.SwapFailed
	require.ErrorAs(t, err, &failed, "not held until the budget")
}

func TestIfIdleSkipsWhileIncumbentBusy(t *testing.T) {
	f := newFixture(t, 100*time.Millisecond, 10*time.Second)
	busy, err := f.acquire(context.Background(), "llama", activation.ModeIfIdle)
	require.NoError(t, err)
	// Held, the call would return only at the hold budget, with
	// HoldExpired: busy is released below, after it.
	_, err = f.acquire(context.Background(), "qwen", activation.ModeIfIdle)
	require.ErrorIs(t, err, activation.ErrBusy, "skipped at once")
	assert.Equal(t, 0, f.sim.Activations("qwen"))
	busy()
	// Idle now: IfIdle starts the swap.
	rel, err := f.acquire(context.Background(), "qwen", activation.ModeIfIdle)
	require.NoError(t, err)
	rel()
	assert.Equal(t, 1, f.sim.Activations("qwen"))
}

func TestConcurrentDemandCoalesces(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond, 10*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			rel, err := f.acquire(context.Background(), "qwen", activation.ModeWait)
			if err == nil {
				rel()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, f.sim.Activations("qwen"), "20 waiters, one activation")
}

// TestAlternatingLoadIsBounded: two members wanted at once, each by two
// callers, until each has served 20 requests (a minute at most: a member
// still unserved then starves).
func TestAlternatingLoadIsBounded(t *testing.T) {
	const load, enough = 150 * time.Millisecond, 20
	f := newFixture(t, load, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var served [2]atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, m := range []string{"llama", "qwen"} {
		for range 2 {
			wg.Go(func() {
				for ctx.Err() == nil {
					rel, err := f.acquire(ctx, m, activation.ModeWait)
					if err != nil {
						continue
					}
					time.Sleep(10 * time.Millisecond) // the request's work
					rel()
					served[i].Add(1)
					if served[0].Load() >= enough && served[1].Load() >= enough {
						cancel()
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	swaps := f.sim.TotalActivations()
	t.Logf("served llama %d, qwen %d; swaps %d in %s", served[0].Load(), served[1].Load(), swaps, elapsed)
	assert.GreaterOrEqual(t, served[0].Load(), int64(enough))
	assert.GreaterOrEqual(t, served[1].Load(), int64(enough), "neither member starves")
	// A swap takes about load (+ unload); the incumbent keeps the slot at
	// least that long, so the run holds at most elapsed/(2*load) swaps (a
	// busy machine only makes swaps slower, never more frequent).
	assert.LessOrEqual(t, swaps, int(elapsed/(2*load))+1, "no ping-pong")
	assert.Greater(t, served[0].Load()+served[1].Load(), int64(4*swaps), "many requests per swap")
	maxUp, both := f.sim.MaxScaledUp()
	assert.Equal(t, 1, maxUp, "%v", both)
}

func TestClientDisconnectCancelsPendingSwap(t *testing.T) {
	// A 10-s load: the client leaves before it ends, however busy the machine.
	f := newFixture(t, 10*time.Second, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := f.acquire(ctx, "qwen", activation.ModeWait); done <- err }()
	require.Eventually(t, func() bool { return f.sim.Replicas("qwen") == 1 }, time.Minute, poll, "the swap started")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return f.sim.Replicas("qwen") == 0 }, time.Minute, poll, "the abandoned target is scaled back down")
}

func TestDisconnectDoesNotAbortAnotherWaitersLoad(t *testing.T) {
	// A 5-s load: both requests are waiting before it ends, however busy
	// the machine.
	f := newFixture(t, 5*time.Second, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := f.acquire(ctx, "qwen", activation.ModeWait); first <- err }()
	require.Eventually(t, func() bool { return f.sim.Replicas("qwen") == 1 }, time.Minute, poll)
	second := make(chan error, 1)
	go func() {
		rel, err := f.acquire(context.Background(), "qwen", activation.ModeWait)
		if err == nil {
			rel()
		}
		second <- err
	}()
	// Both wait for qwen (the activator's own count) before the first
	// leaves, however late the second goroutine ran.
	require.Eventually(t, func() bool {
		waiting := 0
		for _, p := range f.act.Status() {
			waiting += p.Waiting
		}
		return waiting == 2
	}, time.Minute, time.Millisecond, "two requests wait for qwen")
	cancel()
	require.ErrorIs(t, <-first, context.Canceled)
	require.NoError(t, <-second, "the load another caller waits for went on")
	assert.Equal(t, 1, f.sim.Activations("qwen"))
}

func TestAPIServerUnavailable(t *testing.T) {
	// A 5-s budget: the swap meets the dead API server (the 503's cause)
	// well within it, and once the server is back, a swap fits in one hold
	// however busy the machine; a retry is tried should it not.
	f := newFixture(t, 100*time.Millisecond, 5*time.Second)
	f.cluster.down.Store(true)
	// The resident member keeps serving: no API call on that path.
	rel, err := f.acquire(context.Background(), "llama", activation.ModeWait)
	require.NoError(t, err)
	rel()
	_, err = f.acquire(context.Background(), "qwen", activation.ModeWait)
	var exp *activation.HoldExpired
	require.ErrorAs(t, err, &exp)
	assert.Contains(t, exp.Error(), "API server down", "the 503 says why")
	f.cluster.down.Store(false)
	for deadline := time.Now().Add(time.Minute); ; {
		rel, err = f.acquire(context.Background(), "qwen", activation.ModeWait)
		if err == nil {
			rel()
			break
		}
		// Only a hold past its budget is retried, as a client does.
		require.ErrorAs(t, err, &exp)
		require.True(t, time.Now().Before(deadline), "the swap works once the API server is back: %v", err)
	}
}

func TestDispatchFailureResyncs(t *testing.T) {
	f := newFixture(t, 100*time.Millisecond, 10*time.Second)
	// The resident member loses its pod out of band (the operator scales
	// it down): a dispatch failure makes the proxy re-read at once.
	_, err := env.Dynamic.Resource(kube.InferenceServices).Namespace(f.ns).Patch(context.Background(), "llama", "application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.sim.Replicas("llama") == 0 }, time.Minute, poll)
	time.Sleep(100 * time.Millisecond) // the sim's unload
	f.act.Refresh(f.backends["llama"])
	r, known := f.act.Resident(f.backends["llama"])
	require.True(t, known)
	require.False(t, r, "re-read before Refresh returns")
	rel, err := f.acquire(context.Background(), "llama", activation.ModeWait)
	require.NoError(t, err, "the next request makes it resident again")
	rel()
	assert.Equal(t, 1, f.sim.Activations("llama"))
}

func TestLeaseSerializesAndExpires(t *testing.T) {
	ns := env.NewNamespace(t)
	a := kube.New(env.Dynamic, "replica-a", 2*time.Second)
	b := kube.New(env.Dynamic, "replica-b", 2*time.Second)
	ctx := context.Background()
	held, release, holder, err := a.Acquire(ctx, ns, "gpu", "qwen")
	require.NoError(t, err)
	require.NotNil(t, release)
	assert.Equal(t, "replica-a", holder)
	_, rb, holder, err := b.Acquire(ctx, ns, "gpu", "llama")
	require.NoError(t, err)
	assert.Nil(t, rb, "a replica that holds no Lease never activates")
	assert.Equal(t, "replica-a", holder)
	h, target, err := b.Holder(ctx, ns, "gpu")
	require.NoError(t, err)
	assert.Equal(t, "replica-a", h)
	assert.Equal(t, "qwen", target)
	// Renewal keeps it past its duration.
	time.Sleep(2500 * time.Millisecond)
	_, rb, _, err = b.Acquire(ctx, ns, "gpu", "llama")
	require.NoError(t, err)
	assert.Nil(t, rb, "renewed: still held")
	require.NoError(t, held.Err())
	release()
	_, rb, holder, err = b.Acquire(ctx, ns, "gpu", "llama")
	require.NoError(t, err)
	require.NotNil(t, rb, "released: b takes it at once")
	assert.Equal(t, "replica-b", holder)
	rb()
}

func TestCrashedHolderLeaseExpires(t *testing.T) {
	ns := env.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx := context.Background()
	// A holder that died mid-swap: its Lease is never renewed again.
	dead := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: wellknown.PoolLeaseName("gpu"), Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("replica-dead"), LeaseDurationSeconds: ptr.To(int32(1)), RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))}}
	_, err := cs.CoordinationV1().Leases(ns).Create(ctx, dead, metav1.CreateOptions{})
	require.NoError(t, err)
	b := kube.New(env.Dynamic, "replica-b", time.Second)
	_, rb, holder, err := b.Acquire(ctx, ns, "gpu", "qwen")
	require.NoError(t, err)
	assert.Nil(t, rb)
	assert.Equal(t, "replica-dead", holder)
	var got func()
	require.Eventually(t, func() bool {
		_, got, holder, err = b.Acquire(ctx, ns, "gpu", "qwen")
		return err == nil && got != nil
	}, time.Minute, 100*time.Millisecond, "the dead holder's Lease expires and another replica takes over")
	assert.Equal(t, "replica-b", holder)
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, wellknown.PoolLeaseName("gpu"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, ptr.Deref(l.Spec.LeaseTransitions, 0))
	got()
}
