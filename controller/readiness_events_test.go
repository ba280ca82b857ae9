package controller_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// routeTargets reads the live HTTPRoute's rules as "rule=pool".
func routeTargets(t *testing.T, ns, name string) (map[string]string, error) {
	t.Helper()
	hr := &unstructured.Unstructured{}
	hr.SetGroupVersionKind(routeGVK)
	if err := k8s.Get(ctxT(t), types.NamespacedName{Namespace: ns, Name: name + "-agentgateway"}, hr); err != nil {
		return nil, err
	}
	rules, _, _ := unstructured.NestedSlice(hr.Object, "spec", "rules")
	out := map[string]string{}
	for _, r := range rules {
		m := r.(map[string]any)
		refs, _, _ := unstructured.NestedSlice(m, "backendRefs")
		var pools []string
		for _, ref := range refs {
			pools = append(pools, ref.(map[string]any)["kind"].(string)+"/"+ref.(map[string]any)["name"].(string))
		}
		out[fmt.Sprint(m["name"])] = strings.Join(pools, ",")
	}
	return out, nil
}

// TestAgentGatewayReadinessFlip: on the AgentGateway plane (routing
// InferencePool, testdata agentgateway-pool-failover-not-ready) readiness is
// an input of the route: when the rule's first backend's InferenceService
// stops being ready, the HTTPRoute rule moves to the next ready backend's
// InferencePool (and a rule with no other backend leaves the route); when
// it is ready again, the rule moves back. Each step converges to render.
func TestAgentGatewayReadinessFlip(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	objs, name, spec := testCase(t, "agentgateway-pool-failover-not-ready", ns, "")
	applyAll(t, ctx, objs)
	setISVCStatus(t, ctx, ns, "big", "Ready", 1)
	setISVCStatus(t, ctx, ns, "small", "Ready", 1)
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.90")
	createRouter(t, ns, name, specYAML(t, spec))

	expect := func(what string, want map[string]string) {
		t.Helper()
		convergedIn(t, k8s, ns, name)
		eventually(t, what, func() error {
			got, err := routeTargets(t, ns, name)
			if err != nil {
				return err
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("HTTPRoute rules %v, want %v", got, want)
			}
			return nil
		})
	}
	bigPool, smallPool := "InferencePool/"+name+"-big-pool", "InferencePool/"+name+"-small-pool"
	expect("both ready: rules on their first backend", map[string]string{"rule-reasoning": bigPool, "rule-big-only": bigPool, "default": smallPool})
	waitCondition(t, ctx, ns, name, v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	mr := waitCondition(t, ctx, ns, name, v1.ConditionBackendsReady, metav1.ConditionTrue, "")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); strings.Contains(c.Message, "RoutedToFallback") {
		t.Errorf("RoutedToFallback while every backend is ready: %q", c.Message)
	}

	// big stops being ready (a status change only: the router is untouched).
	gen := getRouter(t, ctx, ns, name).Generation
	setISVCStatus(t, ctx, ns, "big", "Progressing", 0)
	expect("big not ready: reasoning moves to small, big-only leaves the route", map[string]string{"rule-reasoning": smallPool, "default": smallPool})
	mr = waitCondition(t, ctx, ns, name, v1.ConditionBackendsReady, metav1.ConditionFalse, controller.ReasonBackendsNotReady)
	if mr.Generation != gen {
		t.Errorf("the router's spec changed (generation %d -> %d); readiness must recompile without it", gen, mr.Generation)
	}
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); !strings.Contains(c.Message, "RoutedToFallback") || !strings.Contains(c.Message, "NoReadyBackend") {
		t.Errorf("Validated message lacks the compiler's RoutedToFallback/NoReadyBackend warnings: %q", c.Message)
	}
	waitPhase(t, ctx, ns, name, v1.PhaseDegraded)

	// Ready again: back to the primary.
	setISVCStatus(t, ctx, ns, "big", "Ready", 1)
	expect("big ready again: rules back on big", map[string]string{"rule-reasoning": bigPool, "rule-big-only": bigPool, "default": smallPool})
	waitPhase(t, ctx, ns, name, v1.PhaseReady)
}

// routerEvents lists the events.k8s.io/v1 Events regarding the router, and
// the core/v1 Events about it, as "Type/Reason: note".
func routerEvents(t *testing.T, ns string, mr *v1.ModelRouter) []string {
	t.Helper()
	return routerEventsIn(t, k8s, ns, mr)
}

func routerEventsIn(t *testing.T, k8s client.Client, ns string, mr *v1.ModelRouter) []string {
	t.Helper()
	ctx := ctxT(t)
	var out []string
	var ev eventsv1.EventList
	if err := k8s.List(ctx, &ev, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range ev.Items {
		if e.Regarding.UID == mr.UID {
			out = append(out, e.Type+"/"+e.Reason+": "+e.Note)
		}
	}
	var core corev1.EventList
	if err := k8s.List(ctx, &core, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range out {
		seen[s] = true
	}
	for _, e := range core.Items {
		// events.k8s.io Events are also served as core Events: count each once.
		if s := e.Type + "/" + e.Reason + ": " + e.Message; e.InvolvedObject.UID == mr.UID && !seen[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// TestWarningEvents: the compiler's warnings about ignored settings
// (testdata round-robin-affinity-ignored) are recorded as Warning events on
// the router by the manager's event recorder, once per generation.
func TestWarningEvents(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	objs, name, spec := testCase(t, "round-robin-affinity-ignored", ns, "")
	applyAll(t, ctx, objs)
	mr := createRouter(t, ns, name, specYAML(t, spec))
	waitCondition(t, ctx, ns, name, v1.ConditionValidated, metav1.ConditionTrue, controller.ReasonSpecValid)

	want := map[string]string{
		"PrefixAffinityIgnored":  "spec.backends[0].balancing.prefixAffinity",
		"SessionAffinityIgnored": "spec.backends[1].balancing.sessionAffinity",
	}
	var evs []string
	eventually(t, "Warning events", func() error {
		evs = routerEvents(t, ns, mr)
		for reason, field := range want {
			found := false
			for _, e := range evs {
				if strings.HasPrefix(e, corev1.EventTypeWarning+"/"+reason+": "+field+": ") {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("no Warning %s event on %s; events: %v", reason, field, evs)
			}
		}
		return nil
	})

	// Reconciling the same generation again records nothing: a second
	// reconciler on the same API server, with a recorder that counts, is
	// run directly (synchronously) on the router.
	counter := &countingRecorder{}
	again := &controller.Reconciler{Client: k8s, Reader: k8s, Mapper: reconc.Mapper, Registry: builtin.Registry(), Operator: reconc.Operator, Recorder: counter, GetStatus: statuses.get}
	if _, err := again.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	if len(counter.reasons) != 0 {
		t.Errorf("reconciling an already validated generation recorded %v", counter.reasons)
	}
}

// countingRecorder records the reasons of the events it is given.
type countingRecorder struct {
	mu      sync.Mutex
	reasons []string
}

func (c *countingRecorder) Eventf(_ runtime.Object, _ runtime.Object, eventtype, reason, _, _ string, _ ...interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reasons = append(c.reasons, eventtype+"/"+reason)
}

// TestInvalidRouterCanBeDeleted: a router that was valid and is now refused
// by the compiler because of cluster state the webhook cannot see (its
// InferenceService joined a ModelPool, which the Gateway plane refuses)
// reports Validated=False, keeps the objects of its last valid generation,
// and can still be deleted: the finalizer cleans up without compiling.
func TestInvalidRouterCanBeDeleted(t *testing.T) {
	ctx := ctxT(t)
	ns, _, name, spec := onGateway(t, ctx, "gateway-minimal", "203.0.113.40")
	createRouter(t, ns, name, specYAML(t, spec))
	want := convergedIn(t, k8s, ns, name)
	waitPhase(t, ctx, ns, name, v1.PhaseReady)

	mustApply(t, ctx, ns, `
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: gpu-slot}
spec:
  swapBudget: 2m
  members:
    - inferenceServiceRef: {name: qwen3}
`)
	mr := waitCondition(t, ctx, ns, name, v1.ConditionValidated, metav1.ConditionFalse, "ModelPoolUnsupportedOnGateway")
	if mr.Status.Phase != v1.PhaseFailed {
		t.Errorf("phase %s, want Failed", mr.Status.Phase)
	}
	// The last valid generation's objects keep serving.
	if live := liveInventory(t, ctx, k8s, ns, name); fmt.Sprint(sortedKeys(live)) != fmt.Sprint(sortedKeys(want)) {
		t.Errorf("objects changed while the router is invalid: %v, had %v", sortedKeys(live), sortedKeys(want))
	}

	deleteRouters(t, ctx, k8s, ns, name)
}
