package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// TestPendingRouterWaitsForTheDataPlaneEvent: a router waiting for its
// gateway's controller (Pending, AwaitingDataPlane) is not polled every
// 15 s: the controller watches the status the gateway's controller writes
// on the generated objects, and looks at the router again when the answer
// comes. On an API server of its own, the only controller rechecks every
// hour: the router is requeued after that hour, and the played gateway
// controller's answer still makes it Ready.
func TestPendingRouterWaitsForTheDataPlaneEvent(t *testing.T) {
	e := testenv.StartOwn(t, testenv.Options{})
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	slow := &controller.Reconciler{Registry: builtin.Registry(), Operator: reconc.Operator, GetStatus: statuses.get, RecheckInterval: time.Hour}
	if err := slow.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	go playGatewayControllers(ctx, c)

	ns, gwns := e.NewNamespace(t), e.NewNamespace(t)
	createGateway(t, ctx, c, gwns, "ai-gateway", "203.0.113.31")
	setVerdict("AIGatewayRoute", ns, "gw", verdictSilent)
	applyStrictIn(t, ctx, e, ns, isvcs, "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: gw}\nspec:\n"+indent(gatewayPlaneRouter(gwns)))
	phase := func(want v1.Phase, reason string) func() error {
		return func() error {
			mr := getRouterIn(t, ctx, c, ns, "gw")
			cnd := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionGatewayReady)
			if mr.Status.Phase != want || cnd == nil || cnd.Reason != reason {
				return fmt.Errorf("phase %s, GatewayReady %+v", mr.Status.Phase, cnd)
			}
			return nil
		}
	}
	eventually(t, "Pending, awaiting the data plane", phase(v1.PhasePending, targets.ReasonAwaitingDataPlane))

	// Reconciled here as well as by the manager's worker: a status write
	// from a cache that lags the worker's is refused and retried in 50 ms
	// (StaleRetryInterval); the verdict is the first reconcile that is not.
	var res ctrl.Result
	eventually(t, "a reconcile not refused as stale", func() error {
		var err error
		if res, err = slow.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "gw"}}); err != nil {
			return err
		}
		if res.RequeueAfter == controller.StaleRetryInterval {
			return fmt.Errorf("stale: retried")
		}
		return nil
	})
	if res.RequeueAfter != time.Hour {
		t.Fatalf("a router awaiting its data plane's answer is requeued after %v, want the recheck interval (1h): the answer is watched", res.RequeueAfter)
	}
	setVerdict("AIGatewayRoute", ns, "gw", verdictAccept)
	eventually(t, "Ready on the data plane's answer", phase(v1.PhaseReady, targets.ReasonApplied))
}
