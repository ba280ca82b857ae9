package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// expectation is what a settled router's status says on one plane.
type expectation struct {
	phase     v1.Phase
	condition string                 // the plane's readiness condition
	status    metav1.ConditionStatus // its status
	reason    string                 // its reason ("" any)
}

// expected is "settled" per plane. With the data plane absent (nothing runs
// Deployments or gateway controllers in envtest), docs/controller.md's
// phases for a router whose objects are applied and whose data plane has not
// answered: Proxy Provisioning (Available=False DeploymentNotReady), the
// gateway planes Pending (GatewayReady/AgentGatewayReady=False
// AwaitingDataPlane). With the data plane played, Ready everywhere.
func expected(played bool) map[string]expectation {
	if played {
		return map[string]expectation{
			planeProxy:   {v1.PhaseReady, v1.ConditionAvailable, metav1.ConditionTrue, "DeploymentReady"},
			planeGateway: {v1.PhaseReady, v1.ReadyCondition(v1.DataPlaneGateway), metav1.ConditionTrue, "Applied"},
			planeAgentGW: {v1.PhaseReady, v1.ReadyCondition(v1.DataPlaneAgentGateway), metav1.ConditionTrue, "Applied"},
		}
	}
	return map[string]expectation{
		planeProxy:   {v1.PhaseProvisioning, v1.ConditionAvailable, metav1.ConditionFalse, "DeploymentNotReady"},
		planeGateway: {v1.PhasePending, v1.ReadyCondition(v1.DataPlaneGateway), metav1.ConditionFalse, "AwaitingDataPlane"},
		planeAgentGW: {v1.PhasePending, v1.ReadyCondition(v1.DataPlaneAgentGateway), metav1.ConditionFalse, "AwaitingDataPlane"},
	}
}

// settled: the status is about the current generation (every condition's
// observedGeneration), the spec is valid, and the phase and the plane's
// condition are the expected ones.
func settled(mr *v1.ModelRouter, want expectation) (bool, string) {
	if len(mr.Status.Conditions) == 0 {
		return false, "no status"
	}
	for _, c := range mr.Status.Conditions {
		if c.ObservedGeneration != mr.Generation {
			return false, fmt.Sprintf("%s at generation %d of %d", c.Type, c.ObservedGeneration, mr.Generation)
		}
	}
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); c == nil || c.Status != metav1.ConditionTrue {
		msg := "Validated missing"
		if c != nil {
			msg = fmt.Sprintf("Validated=%s %s: %.300s", c.Status, c.Reason, c.Message)
		}
		return false, msg
	}
	c := meta.FindStatusCondition(mr.Status.Conditions, want.condition)
	if c == nil {
		return false, fmt.Sprintf("phase %s, no %s", mr.Status.Phase, want.condition)
	}
	if mr.Status.Phase != want.phase || c.Status != want.status || (want.reason != "" && c.Reason != want.reason) {
		return false, fmt.Sprintf("phase %s, %s=%s %s: %.300s", mr.Status.Phase, c.Type, c.Status, c.Reason, c.Message)
	}
	return true, ""
}

// rstate is what the tracker knows of one router.
type rstate struct {
	plane      string
	generation int64
	settled    bool
	settledAt  time.Time // when it last turned settled
	why        string    // why not settled
	rv         string
}

// tracker follows every ModelRouter through a watch (one LIST and one
// WATCH on the API server for the whole run, instead of polling).
type tracker struct {
	want map[string]expectation

	mu      sync.Mutex
	routers map[string]*rstate // namespace/name
	planeOf map[string]string
	nSet    int
	updates int       // router updates seen (any change of resourceVersion)
	wake    chan bool // closed on every change
	// trace, when set, is the router whose every status the watch shows is
	// printed (-trace-change: what a spec change goes through).
	trace string
}

func newTracker(want map[string]expectation, rs []router) *tracker {
	t := &tracker{want: want, routers: map[string]*rstate{}, planeOf: map[string]string{}, wake: make(chan bool)}
	for _, r := range rs {
		t.planeOf[r.ns+"/"+r.name] = r.plane
	}
	return t
}

func (t *tracker) observe(obj any) {
	mr, ok := obj.(*v1.ModelRouter)
	if !ok {
		return
	}
	now := time.Now()
	key := mr.Namespace + "/" + mr.Name
	t.mu.Lock()
	defer t.mu.Unlock()
	plane, known := t.planeOf[key]
	if !known {
		return
	}
	st := t.routers[key]
	if st == nil {
		st = &rstate{plane: plane}
		t.routers[key] = st
	}
	if st.rv != "" && st.rv != mr.ResourceVersion {
		t.updates++
	}
	st.rv = mr.ResourceVersion
	ok, why := settled(mr, t.want[plane])
	if key == t.trace {
		c := meta.FindStatusCondition(mr.Status.Conditions, t.want[plane].condition)
		desc := "no " + t.want[plane].condition
		if c != nil {
			desc = fmt.Sprintf("%s=%s %s at generation %d: %.200s", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
		}
		fmt.Printf("      %s %s generation %d, phase %s, %s\n", now.Format("15:04:05.000"), key, mr.Generation, mr.Status.Phase, desc)
	}
	if ok && !st.settled {
		t.nSet++
		st.settledAt = now
	}
	if !ok && st.settled {
		t.nSet--
	}
	st.settled, st.why, st.generation = ok, why, mr.Generation
	close(t.wake)
	t.wake = make(chan bool)
}

func (t *tracker) start(ctx context.Context, c cache.Cache) error {
	inf, err := c.GetInformer(ctx, &v1.ModelRouter{})
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    t.observe,
		UpdateFunc: func(_, obj any) { t.observe(obj) },
	})
	return err
}

// waitUntil blocks until cond (called with the lock held) holds, or ctx ends.
func (t *tracker) waitUntil(ctx context.Context, cond func() bool) error {
	for {
		t.mu.Lock()
		ok, wake := cond(), t.wake
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-time.After(time.Second):
		}
	}
}

// settledCount is how many routers are settled.
func (t *tracker) settledCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nSet
}

func (t *tracker) updateCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.updates
}

// lastSettled is, per plane, the latest time a router of it turned settled.
func (t *tracker) lastSettled() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]time.Time{}
	for _, s := range t.routers {
		if s.settled && s.settledAt.After(out[s.plane]) {
			out[s.plane] = s.settledAt
		}
	}
	return out
}

// unsettled describes up to n routers that are not settled, grouped by why.
func (t *tracker) unsettled(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	why := map[string][]string{}
	missing := 0
	for key := range t.planeOf {
		s := t.routers[key]
		switch {
		case s == nil:
			missing++
		case !s.settled:
			why[s.plane+": "+s.why] = append(why[s.plane+": "+s.why], key)
		}
	}
	var lines []string
	for w, keys := range why {
		sort.Strings(keys)
		lines = append(lines, fmt.Sprintf("%d× %s (e.g. %s)", len(keys), w, keys[0]))
	}
	sort.Strings(lines)
	if len(lines) > n {
		lines = lines[:n]
	}
	if missing > 0 {
		lines = append(lines, fmt.Sprintf("%d not seen yet", missing))
	}
	return fmt.Sprint(lines)
}

// router returns a copy of one router's state.
func (t *tracker) router(key string) rstate {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.routers[key]; s != nil {
		return *s
	}
	return rstate{}
}
