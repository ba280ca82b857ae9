package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// fakeCluster is a plane's controller side for the status steps: it reports
// the condition "PlaneReady" and records SetStatus.
type fakeCluster struct {
	probes bool
	set    []targets.Observation
}

func (c *fakeCluster) ReadyCondition() string { return "PlaneReady" }
func (c *fakeCluster) ProbesBackends() bool   { return c.probes }
func (c *fakeCluster) Observe(context.Context, targets.ClusterReader, targets.Applied) (targets.Observation, error) {
	return targets.Observation{}, nil
}
func (c *fakeCluster) SetStatus(_ *v1.ModelRouterStatus, obs targets.Observation) {
	c.set = append(c.set, obs)
}
func (c *fakeCluster) ServiceName(*ir.Router) string                        { return "" }
func (c *fakeCluster) ClearStatus(*v1.ModelRouterStatus, targets.Lingering) {}
func (c *fakeCluster) Lingering(context.Context, targets.ClusterReader, *v1.ModelRouter) targets.Lingering {
	return targets.Lingering{}
}

// scope is an applied router on fakeCluster with backends a (local, Ready),
// b (external) and a rule per backend.
func scope(probes bool, obs targets.Observation) (*statusScope, *fakeCluster) {
	c := &fakeCluster{probes: probes}
	r := &ir.Router{
		Backends: []ir.Backend{
			{Name: "a", Upstream: ir.Upstream{URL: "http://a:8080"}, Local: &ir.LocalBackend{InferenceService: "a", Found: true, Ready: true}},
			{Name: "b", Upstream: ir.Upstream{URL: "https://b.example"}},
		},
		Rules: []ir.Rule{{Candidates: []string{"a"}}, {Candidates: []string{"b"}}},
	}
	out := &outcome{router: r, plane: "Fake", cluster: c, applied: true, obs: obs}
	return newStatusScope(3, out, &v1.ModelRouterStatus{}), c
}

func cond(t *testing.T, s *statusScope, typ string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(s.st.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, s.st.Conditions)
	}
	if c.ObservedGeneration != 3 {
		t.Errorf("%s at generation %d, want 3", typ, c.ObservedGeneration)
	}
	return *c
}

func TestSetValidatedCondition(t *testing.T) {
	s, _ := scope(true, targets.Observation{})
	s.out.diags.ErrorAt(diag.Rule(0), "Broken", "broken")
	s.out.diags.ErrorAt(diag.Backend(0), "AlsoBroken", "also broken")
	if setValidatedCondition(s) {
		t.Fatal("a refused spec continues the steps")
	}
	if c := cond(t, s, v1.ConditionValidated); c.Status != metav1.ConditionFalse || c.Reason != "AlsoBroken" || !strings.HasPrefix(c.Message, "2 error(s): ") {
		t.Errorf("Validated %+v", c)
	}
	if s.st.Phase != v1.PhaseFailed {
		t.Errorf("phase %s, want Failed", s.st.Phase)
	}

	s, _ = scope(true, targets.Observation{})
	s.out.summary = "2 backends"
	s.out.diags.WarnAt(diag.Rule(0), "Odd", "odd")
	if !setValidatedCondition(s) {
		t.Fatal("a valid spec ends the steps")
	}
	if c := cond(t, s, v1.ConditionValidated); c.Status != metav1.ConditionTrue || c.Reason != ReasonSpecValid ||
		!strings.HasPrefix(c.Message, "the spec is valid: 2 backends; 1 warning(s): ") {
		t.Errorf("Validated %+v", c)
	}
}

func TestSetNotAppliedCondition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*outcome)
		reason string
	}{
		{"not built", func(o *outcome) { o.notBuilt = "no Fake plane in this build"; o.cluster = nil }, ReasonDataPlaneNotImplemented},
		{"CRDs missing", func(o *outcome) { o.missing = []schema.GroupVersionKind{{Group: "g", Version: "v1", Kind: "K"}} }, ReasonCRDsNotInstalled},
		{"CRDs outdated", func(o *outcome) { o.outdated = []string{"K spec.x: not declared (install R)"} }, ReasonCRDsOutdated},
		{"CRDs outdated, apply failed", func(o *outcome) { o.outdated = []string{"K spec.x: not declared"}; o.applyErr = errors.New("boom") }, ReasonCRDsOutdated},
		{"apply failed", func(o *outcome) { o.applyErr = errors.New("boom") }, ReasonApplyFailed},
		{"not applied", func(o *outcome) { o.applied = false }, ReasonApplyFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := scope(true, targets.Observation{})
			tc.edit(s.out)
			s.planeCond = "PlaneReady"
			if setNotAppliedCondition(s) {
				t.Fatal("continues the steps")
			}
			if got := cond(t, s, "PlaneReady"); got.Status != metav1.ConditionFalse || got.Reason != tc.reason {
				t.Errorf("PlaneReady %+v, want False %s", got, tc.reason)
			}
			if s.st.Phase != v1.PhaseFailed {
				t.Errorf("phase %s", s.st.Phase)
			}
			if want := 1; s.out.cluster != nil && len(c.set) != want {
				t.Errorf("SetStatus called %d times, want %d", len(c.set), want)
			}
		})
	}
	s, _ := scope(true, targets.Observation{})
	if !setNotAppliedCondition(s) || len(s.st.Conditions) != 0 {
		t.Errorf("an applied router: %+v", s.st.Conditions)
	}
}

func TestSetBackendsReadyCondition(t *testing.T) {
	probe := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	// The proxy probes: a healthy, b quarantined.
	s, _ := scope(true, targets.Observation{Health: map[string]targets.BackendHealth{
		"a": {Healthy: true, LastProbeTime: probe},
		"b": {Healthy: true, Quarantined: true},
	}})
	setBackendsReadyCondition(s)
	if c := cond(t, s, v1.ConditionBackendsReady); c.Status != metav1.ConditionFalse || c.Reason != ReasonBackendsNotReady {
		t.Errorf("BackendsReady %+v", c)
	}
	if got := s.st.Backends; len(got) != 2 || !got[0].Healthy || got[0].LastProbeTime == nil || got[1].Healthy || got[1].Message != "quarantined after a failure" {
		t.Errorf("backends %+v", got)
	}
	if strings.Join(s.unhealthy, ",") != "b" || len(s.unknown) != 0 {
		t.Errorf("unhealthy %v unknown %v", s.unhealthy, s.unknown)
	}

	// The proxy did not answer: a keeps its last probe, b was never probed.
	s, _ = scope(true, targets.Observation{})
	last := metav1.NewTime(probe)
	s.st.Backends = []v1.BackendStatus{{Name: "a", Address: "http://a:8080", Healthy: true, Message: "was fine", LastProbeTime: &last}}
	setBackendsReadyCondition(s)
	if c := cond(t, s, v1.ConditionBackendsReady); c.Status != metav1.ConditionUnknown || c.Reason != ReasonAwaitingProbe {
		t.Errorf("BackendsReady %+v", c)
	}
	if got := s.st.Backends[0]; got.Message != "was fine" || !got.Healthy {
		t.Errorf("a %+v: want what the proxy last reported", got)
	}
	if strings.Join(s.unknown, ",") != "b" {
		t.Errorf("unknown %v", s.unknown)
	}

	// A plane that does not probe: a from its InferenceService, b unknown
	// and not counted.
	s, _ = scope(false, targets.Observation{})
	setBackendsReadyCondition(s)
	if c := cond(t, s, v1.ConditionBackendsReady); c.Status != metav1.ConditionTrue || c.Reason != ReasonBackendsResolved {
		t.Errorf("BackendsReady %+v", c)
	}
	if got := s.st.Backends[1].Message; !strings.HasPrefix(got, ReasonHealthUnknown) {
		t.Errorf("b's message %q", got)
	}

	// Every probe healthy.
	s, _ = scope(true, targets.Observation{Health: map[string]targets.BackendHealth{"a": {Healthy: true}, "b": {Healthy: true}}})
	setBackendsReadyCondition(s)
	if c := cond(t, s, v1.ConditionBackendsReady); c.Status != metav1.ConditionTrue || c.Reason != ReasonBackendsHealthy {
		t.Errorf("BackendsReady %+v", c)
	}
}

func TestSetActiveRules(t *testing.T) {
	s, _ := scope(true, targets.Observation{})
	s.st.Backends = []v1.BackendStatus{{Name: "a", Healthy: true}, {Name: "b"}}
	s.unhealthy = []string{"b"}
	setActiveRules(s)
	if s.st.ActiveRules != 1 {
		t.Errorf("activeRules %d, want 1", s.st.ActiveRules)
	}
	s.unhealthy = nil // b of unknown health can serve
	setActiveRules(s)
	if s.st.ActiveRules != 2 {
		t.Errorf("activeRules %d, want 2", s.st.ActiveRules)
	}
}

func TestSetBudgets(t *testing.T) {
	s, _ := scope(true, targets.Observation{Budgets: []targets.BudgetUse{{Name: "daily", TokensUsed: 7}, {Name: "gone", TokensUsed: 9}}})
	s.out.router.Policy.Budgets = []ir.Budget{{Name: "daily"}}
	setBudgets(s)
	if got := s.st.BudgetUtilization; len(got) != 1 || got[0].Name != "daily" || got[0].TokensUsed != 7 {
		t.Errorf("reported: %+v", got)
	}

	// The plane did not answer: the last numbers stay, a removed budget goes.
	s.out.obs.Budgets = nil
	s.st.BudgetUtilization = append(s.st.BudgetUtilization, v1.BudgetUtilization{Name: "gone"})
	setBudgets(s)
	if got := s.st.BudgetUtilization; len(got) != 1 || got[0].TokensUsed != 7 {
		t.Errorf("kept: %+v", got)
	}
}

func TestSetDataPlaneReadyCondition(t *testing.T) {
	s, c := scope(true, targets.Observation{Ready: true, Reason: "Up", Message: "up", Endpoint: "http://x"})
	setDataPlaneReadyCondition(s)
	if got := cond(t, s, "PlaneReady"); got.Status != metav1.ConditionTrue || got.Reason != "Up" {
		t.Errorf("PlaneReady %+v", got)
	}
	if s.st.Endpoint != "http://x" || len(c.set) != 1 {
		t.Errorf("endpoint %q, SetStatus %d", s.st.Endpoint, len(c.set))
	}

	s, _ = scope(true, targets.Observation{Ready: true, Reason: "Up", Conflict: "policy p overrides"})
	setDataPlaneReadyCondition(s)
	if got := cond(t, s, "PlaneReady"); got.Status != metav1.ConditionFalse || got.Reason != targets.ReasonConflictingPolicy {
		t.Errorf("PlaneReady %+v", got)
	}
}

func TestSetDegradedConditionAndPhase(t *testing.T) {
	for _, tc := range []struct {
		name      string
		obs       targets.Observation
		taken     []taken
		unhealthy []string
		unknown   []string
		endpoint  string
		reason    string // Degraded=True reason, "" for False
		phase     v1.Phase
	}{
		{name: "ready", obs: targets.Observation{Ready: true}, phase: v1.PhaseReady},
		{name: "awaiting probes", obs: targets.Observation{Ready: true}, unknown: []string{"b"}, phase: v1.PhaseProvisioning},
		{name: "unhealthy backend", obs: targets.Observation{Ready: true}, unhealthy: []string{"b"}, reason: ReasonBackendsUnhealthy, phase: v1.PhaseDegraded},
		{name: "not ready, unhealthy", unhealthy: []string{"b"}, phase: v1.PhaseProvisioning},
		{name: "plane's handicap", obs: targets.Observation{Ready: true, Degraded: "slow", DegradedReason: "Slow"}, reason: "Slow", phase: v1.PhaseDegraded},
		{name: "conflict", obs: targets.Observation{Conflict: "p", ConflictReason: "Shadowed"}, reason: "Shadowed", phase: v1.PhaseProvisioning},
		{name: "plane's phase", obs: targets.Observation{Phase: v1.PhasePending}, phase: v1.PhasePending},
		{name: "name taken, no endpoint", taken: []taken{{proxyName: true}}, reason: ReasonRouterProxyNameTaken, phase: v1.PhaseFailed},
		{name: "name taken, serving", obs: targets.Observation{Ready: true}, taken: []taken{{}}, endpoint: "http://x", reason: targets.ReasonObjectNameTaken, phase: v1.PhaseDegraded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := scope(true, tc.obs)
			for i := range tc.taken {
				tc.taken[i].obj = &unstructured.Unstructured{}
				tc.taken[i].obj.SetAPIVersion("v1")
				tc.taken[i].obj.SetKind("Service")
				tc.taken[i].obj.SetName("svc")
			}
			s.out.taken, s.unhealthy, s.unknown, s.st.Endpoint = tc.taken, tc.unhealthy, tc.unknown, tc.endpoint
			setDegradedCondition(s)
			c := cond(t, s, v1.ConditionDegraded)
			if tc.reason == "" && (c.Status != metav1.ConditionFalse || c.Reason != ReasonNotDegraded) ||
				tc.reason != "" && (c.Status != metav1.ConditionTrue || c.Reason != tc.reason) {
				t.Errorf("Degraded %+v, want reason %q", c, tc.reason)
			}
			setPhase(s)
			if s.st.Phase != tc.phase {
				t.Errorf("phase %s, want %s", s.st.Phase, tc.phase)
			}
		})
	}
}

// TestStatusFromAStaleRouterIsRefused: a status patch computed from a
// router older than the server's (the manager's cache lagging behind the
// controller's own last status write) is refused, not merged over the
// newer status. Merged, it would carry only the fields that differ from the
// stale copy: make bench-controller saw phase Provisioning stay beside
// Available=True for a whole recheck interval after a spec change.
func TestStatusFromAStaleRouterIsRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1.ModelRouter{}).
		WithObjects(&v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}}).Build()
	r := &Reconciler{Client: c}
	stale := &v1.ModelRouter{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "r"}, stale); err != nil {
		t.Fatal(err)
	}
	// The controller's own write, which the stale copy has not seen.
	fresh := stale.DeepCopy()
	if err := r.patchStatus(ctx, fresh, v1.ModelRouterStatus{Phase: v1.PhaseProvisioning}); err != nil {
		t.Fatal(err)
	}
	err := r.patchStatus(ctx, stale, v1.ModelRouterStatus{Phase: v1.PhaseReady})
	if !apierrors.IsConflict(err) {
		t.Fatalf("status patch from a stale router: %v, want a conflict", err)
	}
	got := &v1.ModelRouter{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "r"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PhaseProvisioning {
		t.Errorf("phase %q after the refused patch, want the newer write's Provisioning", got.Status.Phase)
	}
	// From the fresh copy it goes through.
	if err := r.patchStatus(ctx, got, v1.ModelRouterStatus{Phase: v1.PhaseReady}); err != nil {
		t.Fatal(err)
	}
}
