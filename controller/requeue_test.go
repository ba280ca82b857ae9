package controller

import (
	"testing"
	"time"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets"
)

// A router that is not settled is looked at again within 15 s; a Ready one
// at the recheck interval. The real-cluster tests found a router Degraded in
// status for two minutes after its model had turned healthy: the proxy's
// first probe ran before the model pod was Ready, and backend health comes
// from probes no watch sees.
func TestRequeueSoonWhileNotSettled(t *testing.T) {
	r := &Reconciler{}
	for _, tc := range []struct {
		plane, phase v1.Phase
		want         time.Duration
	}{
		{"", v1.PhaseReady, DefaultRecheckInterval},
		{"", v1.PhaseFailed, DefaultRecheckInterval},
		{"", v1.PhaseDegraded, PendingRecheckInterval},
		{"", v1.PhaseProvisioning, PendingRecheckInterval},
		{v1.PhasePending, v1.PhasePending, PendingRecheckInterval},
	} {
		out := &outcome{obs: targets.Observation{Phase: tc.plane}}
		if got := out.requeueAfter(r, tc.phase); got != tc.want {
			t.Errorf("phase %q (plane %q): requeue after %s, want %s", tc.phase, tc.plane, got, tc.want)
		}
	}
	// A shorter configured interval still wins.
	short := &Reconciler{RecheckInterval: 5 * time.Second}
	if got := (&outcome{}).requeueAfter(short, v1.PhaseDegraded); got != 5*time.Second {
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
