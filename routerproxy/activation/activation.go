// Package activation makes ModelPool members resident for the router-proxy.
//
// A ModelPool's members share one GPU slot: at most one is scaled up at a
// time. A request for a member that is not resident is held (Wait) or skipped
// (IfIdle) while the Activator drains the incumbent and loads the target
// through the Kubernetes API. The policy lives here, free of Kubernetes: the
// cluster (Cluster) and the cross-replica lock (Coordinator) are interfaces,
// implemented over the API server in the kube subpackage.
//
// The rules, per pool:
//   - swaps are serialized: one swap goroutine per pool and, across replicas
//     and routers, one Lease holder; a replica that holds no Lease never
//     scales a member;
//   - the swap scales every other member to zero and waits until it no
//     longer serves before it scales the target to one, so two members are
//     never scaled up at once;
//   - same-member demand coalesces onto one swap;
//   - a cross-member request flips the slot only once the incumbent is idle
//     on this replica, and not before the incumbent has been resident for as
//     long as the last swap took (so alternating demand spends at most half
//     the slot's time swapping);
//   - a swap runs under the Activator's context, not a caller's: a client
//     that leaves does not abort a load another caller waits for; when the
//     last waiter for the target leaves, the swap is cancelled and the target
//     scaled back to zero.
package activation

import (
	"golang.org/x/sync/singleflight"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Modes of spec.rules[].route.poolActivation (proxyapi's vocabulary).
const (
	ModeWait   = proxyapi.PoolActivationWait
	ModeIfIdle = proxyapi.PoolActivationIfIdle
)

// Defaults of the router-proxy's pool flags.
const (
	DefaultPollInterval   = time.Second
	DefaultResyncInterval = 5 * time.Second
	DefaultLeaseDuration  = 15 * time.Second
)

// ErrBusy is returned in IfIdle mode when the member is not resident and a
// swap cannot start now: the caller skips the backend.
var ErrBusy = errors.New("pool member not resident and the pool is busy")

// HoldExpired is returned when a Wait hold passes the pool's swapBudget.
type HoldExpired struct {
	Pool, Member string
	Budget       time.Duration
	// RetryAfter is when trying again may find the member resident.
	RetryAfter time.Duration
	// Cause is what the pending swap last ran into, if anything.
	Cause string
}

func (e *HoldExpired) Error() string {
	msg := fmt.Sprintf("ModelPool %s: member %s did not become resident within the swap budget %s", e.Pool, e.Member, e.Budget)
	if e.Cause != "" {
		msg += " (" + e.Cause + ")"
	}
	return msg
}

// SwapFailed is returned to the callers of a swap that cannot succeed (the
// member reports Failed).
type SwapFailed struct {
	Pool, Member, Reason string
}

func (e *SwapFailed) Error() string {
	return fmt.Sprintf("ModelPool %s: member %s cannot be made resident: %s", e.Pool, e.Member, e.Reason)
}

// Member is what the cluster says about one pool member.
type Member struct {
	// Replicas is the InferenceService's spec.replicas.
	Replicas int32
	// Phase is its status.phase.
	Phase string
}

// Serving reports whether the member is scaled up and Ready.
func (m Member) Serving() bool { return m.Replicas > 0 && m.Phase == wellknown.MemberReadyPhase }

// Cluster reads and scales pool members.
type Cluster interface {
	Member(ctx context.Context, namespace, name string) (Member, error)
	// Scale sets the member's spec.replicas; it is idempotent.
	Scale(ctx context.Context, namespace, name string, replicas int32) error
}

// Coordinator is the cross-replica swap lock of a pool.
type Coordinator interface {
	// Acquire claims the pool's Lease for a swap to target and keeps it
	// renewed until release. holder names the holder: this replica when it is
	// claimed, else another live replica, and release is nil. held ends with
	// ctx, or with the cause ErrLeaseLost when the Lease is lost first.
	Acquire(ctx context.Context, namespace, pool, target string) (held context.Context, release func(), holder string, err error)
	// Holder reads who holds the pool's Lease ("" when nobody does).
	Holder(ctx context.Context, namespace, pool string) (holder, target string, err error)
}

// Metrics receives the Activator's observations; nil discards them.
type Metrics interface {
	Swap(pool, from, to string, d time.Duration)
	Hold(pool, member, outcome string, d time.Duration)
	Skip(pool, member string)
	Resident(pool string, members []string, resident string)
}

// Hold outcomes reported to Metrics.
const (
	HoldServed         = "served"
	HoldBudgetExceeded = "budget_exceeded"
	HoldCancelled      = "client_cancelled"
	HoldFailed         = "swap_failed"
	HoldSkipped        = "skipped"
)

// ErrLeaseLost is the cause of a held Lease's context when another replica
// took the Lease over.
var ErrLeaseLost = errors.New("the pool's Lease was taken over by another replica")

// Options configure an Activator.
type Options struct {
	Cluster     Coordinated
	Logger      *slog.Logger
	Metrics     Metrics
	Poll        time.Duration // how often a swap re-reads members and the Lease
	Resync      time.Duration // how stale the resident belief may get
	Now         func() time.Time
	DefaultHold time.Duration // a pool without swapBudget
	// AfterFunc arms the abandon timers (time.AfterFunc when nil); a test
	// fires them in the order it needs.
	AfterFunc func(time.Duration, func()) *time.Timer
}

// Coordinated is a Cluster with its Coordinator.
type Coordinated interface {
	Cluster
	Coordinator
}

// Activator holds every pool of one router-proxy.
type Activator struct {
	c       Coordinated
	log     *slog.Logger
	m       Metrics
	poll    time.Duration
	resync  time.Duration
	now     func() time.Time
	after   func(time.Duration, func()) *time.Timer
	defHold time.Duration
	base    context.Context

	// reads coalesces concurrent reads of one pool: a burst of failed
	// dispatches to a member another replica swapped out makes one read.
	reads singleflight.Group

	mu    sync.Mutex
	pools map[string]*pool
}

// pool is one ModelPool's state; guarded by Activator.mu.
type pool struct {
	ns, name string
	members  []string
	budget   time.Duration

	// known is false until the members were read once (and after a swap
	// that ended without a resident): requests wait for the read.
	known bool
	// resident is the member serving, or "" when the pool is cold or loading.
	resident      string
	residentSince time.Time
	// coldSince is when this replica saw the pool lose its resident without
	// swapping it itself: the start of another replica's swap.
	coldSince time.Time
	// lastSwap is how long the last swap took; the incumbent keeps the slot
	// at least this long.
	lastSwap time.Duration

	swapping   bool
	target     string
	swapStart  time.Time
	swapCancel context.CancelFunc
	swapSeq    uint64 // counts swaps, so a timer knows its own
	// abandon cancels the running swap once its last caller, answered 503,
	// has not come back within the Retry-After plus one budget
	// (abandonLater).
	abandon *time.Timer
	// cause is the last problem the running swap met (API errors, a Lease
	// held elsewhere), for the 503 message.
	cause string
	// failed holds a swap failure per member and when it happened: waiters
	// that started before it receive it.
	failed map[string]failure

	inflight map[string]int
	waiting  map[string]int

	holder, holderTarget string // the Lease as last read
	swaps                int64

	kick   chan struct{} // wakes the resync loop
	change chan struct{} // closed and replaced on every state change
}

type failure struct {
	at  time.Time
	err error
}

func (p *pool) notify() {
	close(p.change)
	p.change = make(chan struct{})
}

// New starts an Activator for the pooled backends of cfg. Its background
// work (resync loops, swaps) ends with ctx.
func New(ctx context.Context, cfg *proxyapi.Config, o Options) *Activator {
	a := &Activator{c: o.Cluster, log: o.Logger, m: o.Metrics, poll: o.Poll, resync: o.Resync, now: o.Now, after: o.AfterFunc, defHold: o.DefaultHold, base: ctx, pools: map[string]*pool{}}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.m == nil {
		a.m = nopMetrics{}
	}
	if a.poll <= 0 {
		a.poll = DefaultPollInterval
	}
	if a.resync <= 0 {
		a.resync = DefaultResyncInterval
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.after == nil {
		a.after = time.AfterFunc
	}
	if a.defHold <= 0 {
		// A pool without swapBudget in a config built in code (Parse's
		// SetDefaults sets it at load).
		a.defHold = wellknown.PoolSwapBudget
	}
	for i := range cfg.Backends {
		bp := cfg.Backends[i].Pool
		if bp == nil || a.pools[bp.Name] != nil {
			continue
		}
		p := &pool{ns: cfg.Router.Namespace, name: bp.Name, members: append([]string(nil), bp.Members...), budget: bp.SwapBudget.Duration,
			failed: map[string]failure{}, inflight: map[string]int{}, waiting: map[string]int{}, kick: make(chan struct{}, 1), change: make(chan struct{})}
		if p.budget <= 0 {
			p.budget = a.defHold
		}
		a.pools[bp.Name] = p
		go a.resyncLoop(p)
	}
	return a
}

// Acquire makes b's member resident before the caller dispatches to it. On
// success the caller must call release once the request is done. Errors:
// ErrBusy (IfIdle: skip the backend), *HoldExpired (Wait: past swapBudget),
// *SwapFailed, or the caller's context error.
func (a *Activator) Acquire(ctx context.Context, b *proxyapi.Backend, mode proxyapi.PoolActivation) (release func(), err error) {
	a.mu.Lock()
	p := a.pools[b.Pool.Name]
	if p == nil {
		a.mu.Unlock()
		return func() {}, nil
	}
	member := b.Pool.InferenceService
	if p.known && !p.swapping && p.resident == member && a.admits(p, mode) { // the common case: no hold
		p.inflight[member]++
		a.mu.Unlock()
		return a.releaser(p, member), nil
	}
	h := hold{a: a, p: p, member: member, mode: mode, start: a.now(), outcome: HoldServed}
	p.waiting[member]++
	defer h.leave()
	budget := time.NewTimer(p.budget)
	defer budget.Stop()
	for {
		release, dwell, wait, err := h.admit()
		if !wait {
			return release, err
		}
		if err := h.await(ctx, budget.C, dwell); err != nil {
			return nil, err
		}
	}
}

// admits reports whether the resident member takes a new request: IfIdle
// serves on the warm member even while it drains (such a request never
// waits behind other work); otherwise not while it drains. Caller holds mu.
func (a *Activator) admits(p *pool, mode proxyapi.PoolActivation) bool {
	return mode == ModeIfIdle || !a.draining(p)
}

// hold is one caller of Acquire waiting for its member, from its first
// look at the pool to its answer. Its methods run with the Activator's mu
// held, except where await releases it.
type hold struct {
	a       *Activator
	p       *pool
	member  string
	mode    proxyapi.PoolActivation
	start   time.Time
	outcome string // for Metrics.Hold
}

// admit decides what the caller does now: it is served (release), refused
// (err), or it waits (wait) for a change of the pool and, when dwell > 0,
// for the incumbent's dwell to end. An idle slot past its dwell is swapped
// to the member here, and the pool looked at again.
func (h *hold) admit() (release func(), dwell time.Duration, wait bool, err error) {
	a, p, member := h.a, h.p, h.member
	for {
		if f, ok := p.failed[member]; ok && !f.at.Before(h.start) {
			h.outcome = HoldFailed
			return nil, 0, false, f.err
		}
		switch {
		case !p.known && h.mode == ModeIfIdle:
			// Whether the incumbent is idle is not known yet: skip.
			return h.skip()
		case !p.known:
			a.kickResync(p)
		case p.swapping:
			if h.mode == ModeIfIdle && p.target != member {
				return h.skip()
			}
		case p.resident == member:
			if a.admits(p, h.mode) {
				p.inflight[member]++
				return a.releaser(p, member), 0, false, nil
			}
			// Another member's callers take the slot next; wait for it.
		default:
			idle := p.resident == "" || p.inflight[p.resident] == 0
			left := a.dwellLeft(p)
			if idle && left <= 0 {
				a.startSwap(p, member)
				continue
			}
			if h.mode == ModeIfIdle {
				return h.skip()
			}
			if idle {
				dwell = left
			}
		}
		return nil, dwell, true, nil
	}
}

// skip refuses an IfIdle caller: the pool is busy with another member.
func (h *hold) skip() (func(), time.Duration, bool, error) {
	h.outcome = HoldSkipped
	h.a.m.Skip(h.p.name, h.member)
	return nil, 0, false, ErrBusy
}

// await releases mu until the pool changes, the dwell (when positive)
// ends, the swap budget runs out or the caller leaves; it returns with mu
// held, and an error when the caller is answered without its member.
func (h *hold) await(ctx context.Context, budget <-chan time.Time, dwell time.Duration) error {
	a, p := h.a, h.p
	var wake <-chan time.Time
	if dwell > 0 {
		t := time.NewTimer(dwell)
		defer t.Stop()
		wake = t.C
	}
	ch := p.change
	a.mu.Unlock()
	select {
	case <-ch:
	case <-wake:
	case <-budget:
		a.mu.Lock()
		h.outcome = HoldBudgetExceeded
		return &HoldExpired{Pool: p.name, Member: h.member, Budget: p.budget, RetryAfter: a.retryAfter(p), Cause: p.cause}
	case <-ctx.Done():
		a.mu.Lock()
		h.outcome = HoldCancelled
		return ctx.Err()
	}
	a.mu.Lock()
	return nil
}

// leave ends the hold: the last caller waiting for a swap's target that
// was not served abandons the swap, then mu is released and the hold
// reported.
func (h *hold) leave() {
	a, p, member := h.a, h.p, h.member
	p.waiting[member]--
	if p.waiting[member] == 0 {
		if p.swapping && p.target == member && p.swapCancel != nil && h.outcome != HoldServed {
			if h.outcome == HoldBudgetExceeded {
				// Its 503 told the caller to retry: the swap goes
				// on, so the retry finds the member loaded.
				a.abandonLater(p)
			} else {
				// The last caller that wanted the target left: do
				// not finish a swap nobody will use.
				p.swapCancel()
			}
		}
		p.notify() // the incumbent may stop draining
	}
	a.mu.Unlock()
	a.m.Hold(p.name, member, h.outcome, a.now().Sub(h.start))
}

// draining is true when another member's waiters may take the slot: the
// incumbent then admits no new requests, so it drains. Caller holds mu.
func (a *Activator) draining(p *pool) bool {
	if a.dwellLeft(p) > 0 {
		return false
	}
	for m, n := range p.waiting {
		if n > 0 && m != p.resident {
			return true
		}
	}
	return false
}

// dwellLeft is how long the incumbent still keeps the slot. Caller holds mu.
func (a *Activator) dwellLeft(p *pool) time.Duration {
	if p.resident == "" {
		return 0
	}
	return p.lastSwap - a.now().Sub(p.residentSince)
}

func (a *Activator) retryAfter(p *pool) time.Duration {
	d := p.lastSwap
	if p.swapping {
		d -= a.now().Sub(p.swapStart)
	}
	return max(d, time.Second)
}

func (a *Activator) releaser(p *pool, member string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			p.inflight[member]--
			if p.inflight[member] == 0 {
				p.notify() // the incumbent went idle: a waiter may flip the slot
			}
			a.mu.Unlock()
		})
	}
}

// Refresh re-reads b's pool now, unless this replica is swapping it: a
// dispatch to its member failed, and another replica may have swapped it out.
func (a *Activator) Refresh(b *proxyapi.Backend) {
	if b.Pool == nil {
		return
	}
	a.mu.Lock()
	p := a.pools[b.Pool.Name]
	swapping := p == nil || p.swapping
	a.mu.Unlock()
	if !swapping {
		a.observe(p)
	}
}

// Resident reports whether b's member is the resident one, once the pool
// was read.
func (a *Activator) Resident(b *proxyapi.Backend) (resident, known bool) {
	if b.Pool == nil {
		return false, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pools[b.Pool.Name]
	if p == nil {
		return false, false
	}
	// While this replica swaps the pool no member is resident: the
	// incumbent is being unloaded (its pod answers no probe) and the target
	// does not serve yet.
	return p.resident == b.Pool.InferenceService && !p.swapping, p.known
}

func (a *Activator) kickResync(p *pool) {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// resyncLoop learns the resident member on a cold start and re-reads it
// every resync interval, or at once when kicked.
func (a *Activator) resyncLoop(p *pool) {
	t := time.NewTicker(a.resync)
	defer t.Stop()
	for {
		a.observe(p)
		select {
		case <-a.base.Done():
			return
		case <-t.C:
		case <-p.kick:
		}
	}
}

// observe reads the members and the Lease and updates the belief, unless a
// swap of this replica owns it. Callers that arrive during a read share it.
func (a *Activator) observe(p *pool) {
	_, _, _ = a.reads.Do(p.name, func() (any, error) { a.read(p); return nil, nil })
}

func (a *Activator) read(p *pool) {
	ctx, cancel := context.WithTimeout(a.base, max(a.poll*5, 5*time.Second))
	defer cancel()
	states, err := a.members(ctx, p)
	holder, target, herr := a.c.Holder(ctx, p.ns, p.name)
	a.mu.Lock()
	defer a.mu.Unlock()
	if herr == nil {
		p.holder, p.holderTarget = holder, target
	}
	if err != nil {
		a.log.Warn("ModelPool members unreadable; keeping the last belief", "pool", p.name, "error", err.Error())
		if !p.known {
			p.cause = "cannot read the pool's members: " + err.Error()
		}
		return
	}
	if p.swapping {
		return
	}
	resident := ""
	for _, m := range p.members {
		if states[m].Serving() {
			resident = m
			break
		}
	}
	if resident != p.resident || !p.known {
		if resident != p.resident {
			now := a.now()
			switch {
			case resident == "":
				p.coldSince = now
			case !p.coldSince.IsZero():
				// Another replica (or the operator) swapped the pool: the
				// time it had no resident is that swap's length, and the
				// new incumbent keeps the slot at least as long here too,
				// so replicas with opposite demand do not flip it back at
				// once.
				// A pool left cold for long is not a long swap: the dwell
				// never takes more than half the hold budget.
				p.lastSwap = max(p.lastSwap, min(now.Sub(p.coldSince), p.budget/2))
				p.coldSince = time.Time{}
			}
			p.residentSince = now
		}
		p.resident, p.known = resident, true
		a.m.Resident(p.name, p.members, resident)
		p.notify()
	}
}

func (a *Activator) members(ctx context.Context, p *pool) (map[string]Member, error) {
	out := make(map[string]Member, len(p.members))
	for _, m := range p.members {
		st, err := a.c.Member(ctx, p.ns, m)
		if err != nil {
			return nil, fmt.Errorf("InferenceService %s: %w", m, err)
		}
		out[m] = st
	}
	return out, nil
}

// startSwap launches the swap to target under the Activator's context.
// Caller holds mu.
func (a *Activator) startSwap(p *pool, target string) {
	ctx, cancel := context.WithCancel(a.base)
	from := p.resident
	p.swapping, p.target, p.swapCancel, p.swapStart, p.cause = true, target, cancel, a.now(), ""
	p.swapSeq++
	p.notify()
	go func() {
		defer cancel()
		err := a.swap(ctx, p, target)
		a.mu.Lock()
		defer a.mu.Unlock()
		d := a.now().Sub(p.swapStart)
		p.swapping, p.target, p.swapCancel = false, "", nil
		if p.abandon != nil {
			p.abandon.Stop()
			p.abandon = nil
		}
		switch {
		case err == nil:
			p.resident, p.residentSince, p.lastSwap, p.known, p.coldSince = target, a.now(), d, true, time.Time{}
			p.swaps++
			a.m.Swap(p.name, from, target, d)
			a.m.Resident(p.name, p.members, target)
			a.log.Info("ModelPool member resident", "pool", p.name, "from", from, "to", target, "took", d.String())
		case ctx.Err() != nil:
			a.log.Info("ModelPool swap cancelled: no caller waits for it any more", "pool", p.name, "to", target)
			p.resident, p.known = "", false
			a.kickResync(p)
		default:
			a.log.Error("ModelPool swap failed", "pool", p.name, "to", target, "error", err.Error())
			p.failed[target] = failure{at: a.now(), err: err}
			p.resident, p.known = "", false
			a.kickResync(p)
		}
		p.notify()
	}()
}

// swap takes the pool's Lease and makes target the only member scaled up.
func (a *Activator) swap(ctx context.Context, p *pool, target string) error {
	for {
		a.setCause(p, "taking the pool's Lease")
		held, release, holder, err := a.c.Acquire(ctx, p.ns, p.name, target)
		switch {
		case err != nil:
			a.setCause(p, "the pool's Lease is unavailable: "+err.Error())
		case release == nil:
			a.setCause(p, "replica "+holder+" holds the pool's Lease")
			a.mu.Lock()
			p.holder = holder
			a.mu.Unlock()
			// Another replica is swapping: when it made our target
			// resident, there is nothing left to do.
			if st, err := a.c.Member(ctx, p.ns, target); err == nil && st.Serving() {
				if others, err := a.othersDown(ctx, p, target); err == nil && others {
					return nil
				}
			}
		default:
			a.mu.Lock()
			p.holder, p.holderTarget = holder, target
			a.mu.Unlock()
			err := a.drive(held, p, target)
			if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(held), ErrLeaseLost) {
				// Cancelled by the last waiter: undo the scale-up we may
				// have made, while still holding the Lease.
				uctx, ucancel := context.WithTimeout(context.WithoutCancel(held), 10*time.Second)
				if serr := a.c.Scale(uctx, p.ns, target, 0); serr != nil {
					a.log.Warn("ModelPool: scaling the abandoned target back down failed", "pool", p.name, "member", target, "error", serr.Error())
				}
				ucancel()
			}
			release()
			a.mu.Lock()
			p.holder, p.holderTarget = "", ""
			a.mu.Unlock()
			var failed *SwapFailed
			if err == nil || errors.As(err, &failed) || ctx.Err() != nil {
				return err
			}
			// The Lease was lost or the API failed mid-swap: try again.
			a.setCause(p, err.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(a.poll):
		}
	}
}

// abandonLater arms the running swap's cancellation for one swap budget
// past the Retry-After its last caller was just given with its 503. A retry
// within that time waits for the same swap (and re-arms this when its own
// budget passes); a member nobody comes back for is scaled down again.
// Caller holds mu.
//
// Only the timer armed last may cancel. The retry that comes exactly
// Retry-After after a 503 is answered at the same moment the timer that
// 503 armed fires: that timer's function may already be waiting for mu
// while the retry's 503 re-arms, when Stop is too late. Without the check
// it then found no caller waiting and cancelled the swap the retry had
// just been told to come back for (seen in TestPoolSwapOutlastsBudget on a
// busy machine: the member loaded twice).
func (a *Activator) abandonLater(p *pool) {
	if p.abandon != nil {
		p.abandon.Stop()
	}
	seq, target := p.swapSeq, p.target
	var t *time.Timer
	t = a.after(a.retryAfter(p)+p.budget, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if p.abandon == t && p.swapping && p.swapSeq == seq && p.waiting[target] == 0 {
			p.swapCancel()
		}
	})
	p.abandon = t
}

func (a *Activator) setCause(p *pool, c string) {
	a.mu.Lock()
	p.cause = c
	a.mu.Unlock()
}

// othersDown reports whether every member but target is scaled to zero.
func (a *Activator) othersDown(ctx context.Context, p *pool, target string) (bool, error) {
	for _, m := range p.members {
		if m == target {
			continue
		}
		st, err := a.c.Member(ctx, p.ns, m)
		if err != nil {
			return false, err
		}
		if st.Replicas > 0 {
			return false, nil
		}
	}
	return true, nil
}

// drive runs one swap under the Lease: scale the other members to zero, wait
// until none of them serves, scale target to one, wait until it serves.
func (a *Activator) drive(ctx context.Context, p *pool, target string) error {
	for _, m := range p.members {
		if m == target {
			continue
		}
		st, err := a.c.Member(ctx, p.ns, m)
		if err != nil {
			return fmt.Errorf("read InferenceService %s: %w", m, err)
		}
		if st.Replicas > 0 {
			a.setCause(p, "scaling InferenceService "+m+" to 0")
			if err := a.c.Scale(ctx, p.ns, m, 0); err != nil {
				return fmt.Errorf("scale InferenceService %s to 0: %w", m, err)
			}
		}
	}
	for _, m := range p.members {
		if m == target {
			continue
		}
		if err := a.waitFor(ctx, p, m, func(st Member) (bool, error) { return st.Phase != wellknown.MemberReadyPhase, nil }); err != nil {
			return fmt.Errorf("wait for InferenceService %s to unload: %w", m, err)
		}
	}
	a.setCause(p, "scaling InferenceService "+target+" to 1")
	if err := a.c.Scale(ctx, p.ns, target, 1); err != nil {
		return fmt.Errorf("scale InferenceService %s to 1: %w", target, err)
	}
	return a.waitFor(ctx, p, target, func(st Member) (bool, error) {
		if st.Phase == wellknown.MemberFailedPhase {
			return false, &SwapFailed{Pool: p.name, Member: target, Reason: "its InferenceService reports phase Failed"}
		}
		return st.Serving(), nil
	})
}

// waitFor polls a member until done says so, riding out API errors.
func (a *Activator) waitFor(ctx context.Context, p *pool, member string, done func(Member) (bool, error)) error {
	for {
		st, err := a.c.Member(ctx, p.ns, member)
		if err == nil {
			ok, derr := done(st)
			if derr != nil || ok {
				return derr
			}
			a.setCause(p, fmt.Sprintf("InferenceService %s is %s", member, phaseOr(st.Phase)))
		} else if ctx.Err() == nil {
			a.setCause(p, "cannot read InferenceService "+member+": "+err.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(a.poll):
		}
	}
}

func phaseOr(s string) string {
	if s == "" {
		return "without a phase"
	}
	return "in phase " + s
}

// Status is each pool as this replica sees it.
func (a *Activator) Status() []proxyapi.PoolStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]proxyapi.PoolStatus, 0, len(a.pools))
	for _, p := range a.pools {
		s := proxyapi.PoolStatus{Name: p.name, Members: p.members, Resident: p.resident, Known: p.known, LeaseHolder: p.holder, Swaps: p.swaps, Message: p.cause}
		switch {
		case p.swapping:
			s.Pending = p.target
		case p.holder != "":
			s.Pending = p.holderTarget // another replica's swap, from its Lease
		}
		for _, n := range p.waiting {
			s.Waiting += n
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type nopMetrics struct{}

func (nopMetrics) Swap(string, string, string, time.Duration) {}
func (nopMetrics) Hold(string, string, string, time.Duration) {}
func (nopMetrics) Skip(string, string)                        {}
func (nopMetrics) Resident(string, []string, string)          {}
