package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets"
)

// A router that waits for something no watch delivers is looked at again
// within 15 s; a Ready one, or one waiting for a watched answer, at the
// recheck interval. The real-cluster tests found a router Degraded in
// status for two minutes after its model had turned healthy: the proxy's
// first probe ran before the model pod was Ready, and backend health comes
// from probes no watch sees.
func TestRequeueSoonWhileNotSettled(t *testing.T) {
	r := &Reconciler{}
	awaiting := &unstructured.Unstructured{}
	awaiting.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"})
	for _, tc := range []struct {
		name    string
		obs     targets.Observation
		phase   v1.Phase
		watched bool
		want    time.Duration
	}{
		{"Ready", targets.Observation{Ready: true}, v1.PhaseReady, false, DefaultRecheckInterval},
		{"Failed", targets.Observation{}, v1.PhaseFailed, false, DefaultRecheckInterval},
		{"Degraded: probes are not watched", targets.Observation{Ready: true}, v1.PhaseDegraded, false, PendingRecheckInterval},
		{"Provisioning, awaiting a probe", targets.Observation{Ready: true}, v1.PhaseProvisioning, false, PendingRecheckInterval},
		{"Provisioning, Deployment not ready: watched", targets.Observation{}, v1.PhaseProvisioning, false, DefaultRecheckInterval},
		{"Pending, listener refuses: not watched", targets.Observation{Phase: v1.PhasePending, Reason: targets.ReasonRouteNotAllowed}, v1.PhasePending, true, PendingRecheckInterval},
		{"Pending, awaiting the data plane, kinds not watched", targets.Observation{Phase: v1.PhasePending, Reason: targets.ReasonAwaitingDataPlane}, v1.PhasePending, false, PendingRecheckInterval},
		{"Pending, awaiting the data plane, watched", targets.Observation{Phase: v1.PhasePending, Reason: targets.ReasonAwaitingDataPlane}, v1.PhasePending, true, DefaultRecheckInterval},
		{"Pending, no Gateway, watched", targets.Observation{Phase: v1.PhasePending, Reason: targets.ReasonGatewayNotFound}, v1.PhasePending, true, DefaultRecheckInterval},
	} {
		r.watches.watched = nil
		if tc.watched {
			r.watches.watched = map[schema.GroupVersionKind]bool{targets.GatewayGVK: true, awaiting.GroupVersionKind(): true}
		}
		out := &outcome{obs: tc.obs, desired: []*unstructured.Unstructured{awaiting}}
		if got := out.requeueAfter(r, tc.phase); got != tc.want {
			t.Errorf("%s: requeue after %s, want %s", tc.name, got, tc.want)
		}
	}
	// A shorter configured interval still wins.
	short := &Reconciler{RecheckInterval: 5 * time.Second}
	if got := (&outcome{obs: targets.Observation{Ready: true}}).requeueAfter(short, v1.PhaseDegraded); got != 5*time.Second {
		t.Errorf("Degraded with a 5s recheck interval: %s", got)
	}
}

// A router whose installed CRDs are outdated is looked at again as soon as
// one whose CRDs are missing (30 s), besides the CRD watch.
func TestRequeueSoonWhileCRDsOutdated(t *testing.T) {
	out := &outcome{outdated: []string{"AgentgatewayPolicy spec.x: not declared"}}
	if got := out.requeueAfter(&Reconciler{}, v1.PhaseFailed); got != 30*time.Second {
		t.Errorf("CRDs outdated: requeue after %s, want 30s", got)
	}
}
