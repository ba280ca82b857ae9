package controller_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/targets"
	proxytarget "github.com/llmkube/llmkube-compile/targets/proxy"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

const isvcs = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen}
spec: {modelRef: qwen, runtime: vllm, endpoint: {port: 8000}}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama}
spec: {modelRef: llama, runtime: vllm}
`

const routerSpec = `
backends:
  - name: qwen
    inferenceServiceRef: {name: qwen}
  - name: llama
    inferenceServiceRef: {name: llama}
  - name: claude
    external: {provider: anthropic, model: claude-opus-4-7, credentialsSecretRef: {name: anthropic}}
rules:
  - name: code
    match: {models: ["qwen*"]}
    route: {backends: [qwen, llama]}
  - name: hard
    match: {taskComplexity: complex}
    route: {backends: [claude, qwen]}
defaultRoute: llama
policy:
  budgets:
    - name: monthly
      scope: router
      maxTokens: 1000000
`

func createRouter(t *testing.T, ns, name, spec string) *v1.ModelRouter {
	t.Helper()
	ctx := ctxT(t)
	mustApply(t, ctx, ns, fmt.Sprintf("apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: %s}\nspec:\n%s", name, indent(spec)))
	return getRouter(t, ctx, ns, name)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.Trim(s, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// renderedIn compiles the router as `llmkube-compile render` would, given
// the InferenceServices as read through k8s.
func renderedIn(t *testing.T, k8s client.Client, ns, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	ctx := ctxT(t)
	mr := &v1.ModelRouter{}
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
		t.Fatal(err)
	}
	in := &compiler.Inputs{}
	var list v1.InferenceServiceList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		in.InferenceServices = append(in.InferenceServices, &list.Items[i])
	}
	objs, diags := pipeline.CompileRouter(compiler.RouterSource{Router: mr}, in, builtin.Registry(), pipeline.Options{Compile: compiler.Options{Operator: reconc.Operator}})
	if diags.HasErrors() {
		t.Fatalf("render: %v", diags)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

// converged waits until the router's inventory is exactly what render prints
// and each object holds the rendered spec (ConfigMap data, Service ports).
func converged(t *testing.T, ns, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	ctx := ctxT(t)
	var want map[string]*unstructured.Unstructured
	eventually(t, "inventory equals render", func() error {
		want = renderedIn(t, k8s, ns, name)
		var wantKeys []string
		for k := range want {
			wantKeys = append(wantKeys, k)
		}
		sort.Strings(wantKeys)
		got := inventory(t, ctx, ns, name, proxyKinds()...)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(wantKeys, ",") {
			return fmt.Errorf("inventory %v, render %v", got, wantKeys)
		}
		for k, w := range want {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(w.GroupVersionKind())
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(w), live); err != nil {
				return err
			}
			if w.GetKind() == "ConfigMap" {
				wd, _, _ := unstructured.NestedStringMap(w.Object, "data")
				ld, _, _ := unstructured.NestedStringMap(live.Object, "data")
				if fmt.Sprint(wd) != fmt.Sprint(ld) {
					return fmt.Errorf("%s data differs from render", k)
				}
			}
			if fmt.Sprint(w.GetLabels()) != fmt.Sprint(live.GetLabels()) {
				return fmt.Errorf("%s labels %v, render %v", k, live.GetLabels(), w.GetLabels())
			}
		}
		return nil
	})
	return want
}

// readyProxyRouter creates a Proxy router of routerSpec over Ready
// InferenceServices, answers its /status with healthyProxy (adjusted by
// tune, when set), marks its Deployment ready and waits until it is Ready.
func readyProxyRouter(t *testing.T, name string, tune func(*proxyapi.Status)) (context.Context, string, *v1.ModelRouter) {
	t.Helper()
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	mr := createRouter(t, ns, name, routerSpec)
	st := healthyProxy(mr, "qwen", "llama", "claude")
	if tune != nil {
		tune(&st)
	}
	statuses.set(proxytarget.StatusURL(mr), st)
	converged(t, ns, name)
	markDeploymentReady(t, ctx, ns, name+"-router-proxy")
	waitPhase(t, ctx, ns, name, v1.PhaseReady)
	return ctx, ns, mr
}

func healthyProxy(mr *v1.ModelRouter, names ...string) proxyapi.Status {
	s := proxyapi.Status{Router: proxyapi.RouterInfo{Name: mr.Name, Namespace: mr.Namespace}}
	for _, n := range names {
		s.Backends = append(s.Backends, proxyapi.BackendStatus{Name: n, Healthy: true, LastProbeTime: metav1.Now().Time.UTC().Truncate(1e9)})
	}
	s.Budgets = []proxyapi.BudgetStatus{{Name: "monthly", TokensUsed: 2500, USDUsed: "0.125000", Utilization: "0.002500"}}
	return s
}

// TestProxyCreateUpdateDelete: a router applied with the client ends Ready
// with every object render prints, owner-referenced; editing it converges to
// the new render and prunes what is no longer generated; deleting it runs
// the finalizer, which removes every object.
func TestProxyCreateUpdateDelete(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	mr := createRouter(t, ns, "chat", routerSpec)

	want := converged(t, ns, "chat")
	if len(want) != 4 {
		t.Fatalf("render has %d objects, want ConfigMap, Deployment, 2 Services: %v", len(want), want)
	}
	for k, live := range liveControlledBy(ctx, t, want, mr.UID) {
		var managed []string
		for _, f := range live.GetManagedFields() {
			managed = append(managed, f.Manager+"/"+string(f.Operation))
		}
		if !strings.Contains(strings.Join(managed, ","), "llmkube-compile/Apply") {
			t.Errorf("%s: managed fields %v, want server-side apply by llmkube-compile", k, managed)
		}
	}
	got := getRouter(t, ctx, ns, "chat")
	if !containsString(got.Finalizers, controller.Finalizer) {
		t.Errorf("finalizers %v, want %s", got.Finalizers, controller.Finalizer)
	}

	// The Deployment is not ready yet: Provisioning.
	waitCondition(t, ctx, ns, "chat", v1.ConditionAvailable, metav1.ConditionFalse, targets.ReasonDeploymentNotReady)
	got = waitPhase(t, ctx, ns, "chat", v1.PhaseProvisioning)

	// The proxy becomes ready and reports its probes and budgets.
	statuses.set(proxytarget.StatusURL(got), healthyProxy(got, "qwen", "llama", "claude"))
	markDeploymentReady(t, ctx, ns, "chat-router-proxy")
	waitCondition(t, ctx, ns, "chat", v1.ConditionAvailable, metav1.ConditionTrue, targets.ReasonDeploymentReady)
	waitCondition(t, ctx, ns, "chat", v1.ConditionBackendsReady, metav1.ConditionTrue, controller.ReasonBackendsHealthy)
	waitCondition(t, ctx, ns, "chat", v1.ConditionDegraded, metav1.ConditionFalse, "")
	got = waitCondition(t, ctx, ns, "chat", v1.ConditionValidated, metav1.ConditionTrue, controller.ReasonSpecValid)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionValidated); c.ObservedGeneration != got.Generation || !strings.HasPrefix(c.Message, "the spec is valid") {
		t.Errorf("Validated %+v: want the spec valid at generation %d", c, got.Generation)
	}
	assertChatProxyReady(t, waitPhase(t, ctx, ns, "chat", v1.PhaseReady))

	// Update: drop a rule and a backend; add a backend with endpoint
	// resolution (the proxy then needs a ServiceAccount and RBAC).
	setRouterSpec(t, ctx, ns, "chat", `
backends:
  - name: qwen
    inferenceServiceRef: {name: qwen}
    resolution: endpoint
  - name: llama
    inferenceServiceRef: {name: llama}
rules:
  - name: code
    match: {models: ["qwen*"]}
    route: {backends: [qwen, llama]}
defaultRoute: llama
`)
	want = converged(t, ns, "chat")
	for _, k := range []string{"ServiceAccount/chat-router-proxy", "Role/chat-router-proxy", "RoleBinding/chat-router-proxy"} {
		if want[k] == nil {
			t.Errorf("render lacks %s", k)
		}
	}
	got = waitCondition(t, ctx, ns, "chat", v1.ConditionValidated, metav1.ConditionTrue, controller.ReasonSpecValid)
	eventually(t, "status follows the new spec", func() error {
		got = getRouter(t, ctx, ns, "chat")
		if got.Status.ActiveRules != 1 || len(got.Status.Backends) != 2 || len(got.Status.BudgetUtilization) != 0 {
			return fmt.Errorf("activeRules %d backends %d budgets %v", got.Status.ActiveRules, len(got.Status.Backends), got.Status.BudgetUtilization)
		}
		return nil
	})

	// Prune: remove the endpoint-resolution backend feature; the RBAC goes.
	setRouterSpec(t, ctx, ns, "chat", `
backends:
  - name: llama
    inferenceServiceRef: {name: llama}
defaultRoute: llama
`)
	want = converged(t, ns, "chat")
	if len(want) != 4 {
		t.Errorf("render after pruning: %d objects", len(want))
	}

	// Delete: the finalizer removes every object, then the router goes.
	deleteRouters(t, ctx, k8s, ns, "chat")
}

// assertChatProxyReady checks the status of TestProxyCreateUpdateDelete's
// Ready router: the proxy's endpoint, two active rules, three healthy
// probed backends, the proxy's budget report, no gateway plane's fields.
func assertChatProxyReady(t *testing.T, got *v1.ModelRouter) {
	t.Helper()
	if got.Status.Endpoint != "http://chat-router-proxy."+got.Namespace+".svc.cluster.local:8080/v1/chat/completions" {
		t.Errorf("endpoint %q", got.Status.Endpoint)
	}
	if got.Status.ActiveRules != 2 || len(got.Status.Backends) != 3 {
		t.Errorf("activeRules %d, backends %+v", got.Status.ActiveRules, got.Status.Backends)
	}
	for _, b := range got.Status.Backends {
		if !b.Healthy || b.Address == "" || b.LastProbeTime == nil {
			t.Errorf("backend %+v: want healthy, an address and a probe time", b)
		}
	}
	if len(got.Status.BudgetUtilization) != 1 || got.Status.BudgetUtilization[0].TokensUsed != 2500 {
		t.Errorf("budgetUtilization %+v", got.Status.BudgetUtilization)
	}
	if got.Status.Gateway != nil || got.Status.AgentGateway != nil || got.Status.LastUpdated == nil {
		t.Errorf("gateway %v agentGateway %v lastUpdated %v", got.Status.Gateway, got.Status.AgentGateway, got.Status.LastUpdated)
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestIdempotent: once a router has converged, reconciling it again makes no
// write at all, and no object's resourceVersion moves.
func TestIdempotent(t *testing.T) {
	ctx, ns, _ := readyProxyRouter(t, "idem", nil)

	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "idem"}}
	// Settle: the reconcile the Deployment status change triggered may still be queued.
	if _, err := reconc.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	versions := func() map[string]string {
		out := map[string]string{}
		for _, l := range append(proxyKinds(), &v1.ModelRouterList{}) {
			if err := k8s.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			items, _ := meta.ExtractList(l)
			for _, it := range items {
				o := it.(client.Object)
				out[fmt.Sprintf("%T/%s", o, o.GetName())] = o.GetResourceVersion()
			}
		}
		return out
	}
	before, rvBefore := len(rec.opsIn(ns)), versions()
	for i := 0; i < 2; i++ {
		if _, err := reconc.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if ops := rec.opsIn(ns); len(ops) != before {
		t.Errorf("reconciling an unchanged router wrote: %+v", ops[before:])
	}
	if after := versions(); fmt.Sprint(after) != fmt.Sprint(rvBefore) {
		t.Errorf("resourceVersions moved:\n before %v\n after  %v", rvBefore, after)
	}
}

// TestRecheckWaitsBehindEvents: the periodic recheck a reconcile asks for
// is queued at low priority, so a watch event (a spec change) is served
// before every pending recheck (make bench-controller: at 1,000 routers
// Provisioning or Pending, a spec change otherwise waited behind the 15 s
// rechecks of all of them).
func TestRecheckWaitsBehindEvents(t *testing.T) {
	ctx, ns, _ := readyProxyRouter(t, "recheck", nil)
	res, err := reconc.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "recheck"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.Priority == nil || *res.Priority != handler.LowPriority {
		t.Errorf("result %+v (priority %v): want a recheck at priority %d", res, res.Priority, handler.LowPriority)
	}
}

// TestSteadyStateWritesNothing: a settled router is rechecked without a
// write, even while the router-proxy reports a new probe time at every
// recheck (Kubernetes' SLO for controllers: no writes at steady state).
// lastUpdated stays the time of the last status write, and a real change
// is still written at once, with the probe's time.
func TestSteadyStateWritesNothing(t *testing.T) {
	ctx, ns, mr := readyProxyRouter(t, "steady", nil)
	url := proxytarget.StatusURL(mr)
	settled := getRouter(t, ctx, ns, "steady")
	if settled.Status.LastUpdated == nil {
		t.Fatal("no lastUpdated on a reconciled router")
	}
	writes := len(rec.opsIn(ns))
	// Three more reconciles, each seeing a newer probe: the recheck interval
	// passes at least twice.
	start := statuses.reads(url)
	eventually(t, "three more reconciles", func() error {
		statuses.set(url, healthyProxy(mr, "qwen", "llama", "claude"))
		if n := statuses.reads(url) - start; n < 3 {
			return fmt.Errorf("%d reconciles", n)
		}
		return nil
	})
	if got := rec.opsIn(ns)[writes:]; len(got) > 0 {
		t.Errorf("writes at steady state: %+v", got)
	}
	now := getRouter(t, ctx, ns, "steady")
	if now.ResourceVersion != settled.ResourceVersion || !now.Status.LastUpdated.Equal(settled.Status.LastUpdated) {
		t.Errorf("router written at steady state: resourceVersion %s → %s, lastUpdated %v → %v",
			settled.ResourceVersion, now.ResourceVersion, settled.Status.LastUpdated, now.Status.LastUpdated)
	}

	down := healthyProxy(mr, "qwen", "llama", "claude")
	down.Backends[0].Healthy, down.Backends[0].Message = false, "probe: connection refused"
	statuses.set(url, down)
	eventually(t, "the unhealthy probe written", func() error {
		got := getRouter(t, ctx, ns, "steady")
		if len(got.Status.Backends) == 0 || got.Status.Backends[0].Healthy {
			return fmt.Errorf("backends %+v", got.Status.Backends)
		}
		if !got.Status.LastUpdated.After(settled.Status.LastUpdated.Time) {
			return fmt.Errorf("lastUpdated %v not after %v", got.Status.LastUpdated, settled.Status.LastUpdated)
		}
		if p := got.Status.Backends[0].LastProbeTime; p == nil || !p.Equal(&metav1.Time{Time: down.Backends[0].LastProbeTime}) {
			return fmt.Errorf("lastProbeTime %v, want the unhealthy probe's %v", p, down.Backends[0].LastProbeTime)
		}
		return nil
	})
}

// TestReadinessFlip: an InferenceService going not-ready recompiles the
// router: its backend is reported unhealthy and the router Degraded; back
// to Ready, the router is Ready again.
func TestReadinessFlip(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	createRouter(t, ns, "flip", `
backends:
  - name: qwen
    inferenceServiceRef: {name: qwen}
  - name: llama
    inferenceServiceRef: {name: llama}
rules:
  - name: code
    route: {backends: [qwen, llama]}
`)
	converged(t, ns, "flip")
	markDeploymentReady(t, ctx, ns, "flip-router-proxy")
	waitCondition(t, ctx, ns, "flip", v1.ConditionBackendsReady, metav1.ConditionTrue, controller.ReasonBackendsResolved)
	waitPhase(t, ctx, ns, "flip", v1.PhaseReady)

	setISVCStatus(t, ctx, ns, "qwen", "Failed", 0)
	mr := waitCondition(t, ctx, ns, "flip", v1.ConditionBackendsReady, metav1.ConditionFalse, controller.ReasonBackendsNotReady)
	if !strings.Contains(meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionBackendsReady).Message, "qwen") {
		t.Errorf("BackendsReady message does not name qwen: %+v", mr.Status.Conditions)
	}
	waitCondition(t, ctx, ns, "flip", v1.ConditionDegraded, metav1.ConditionTrue, controller.ReasonBackendsUnhealthy)
	mr = waitPhase(t, ctx, ns, "flip", v1.PhaseDegraded)
	for _, b := range mr.Status.Backends {
		if b.Name == "qwen" && b.Healthy {
			t.Errorf("qwen reported healthy while its InferenceService is not ready: %+v", b)
		}
	}
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); !strings.Contains(c.Message, "InferenceServiceNotReady") {
		t.Errorf("Validated message does not carry the compiler's InferenceServiceNotReady warning: %q", c.Message)
	}

	if mr.Status.ActiveRules != 1 {
		t.Errorf("activeRules %d with llama still serving, want 1", mr.Status.ActiveRules)
	}

	// No candidate can serve the rule: it is not active.
	setISVCStatus(t, ctx, ns, "llama", "Failed", 0)
	waitActiveRules(t, ctx, ns, "flip", 0)

	setISVCStatus(t, ctx, ns, "qwen", "Ready", 1)
	setISVCStatus(t, ctx, ns, "llama", "Ready", 1)
	waitPhase(t, ctx, ns, "flip", v1.PhaseReady)
	waitActiveRules(t, ctx, ns, "flip", 1)
}

func waitActiveRules(t *testing.T, ctx context.Context, ns, name string, want int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("activeRules %d", want), func() error {
		if got := getRouter(t, ctx, ns, name).Status.ActiveRules; got != want {
			return fmt.Errorf("activeRules %d", got)
		}
		return nil
	})
}

// TestServiceNameTaken: a Service the router does not control is never
// adopted: RouterProxyNameTaken, the previous Service stays; once the name
// is free the new Service is created and only then the old one deleted.
func TestServiceNameTaken(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	mustApply(t, ctx, ns, isvcs)
	setISVCStatus(t, ctx, ns, "llama", "Ready", 1)
	spec := `
backends:
  - name: llama
    inferenceServiceRef: {name: llama}
defaultRoute: llama
`
	createRouter(t, ns, "svc", spec)
	converged(t, ns, "svc")
	markDeploymentReady(t, ctx, ns, "svc-router-proxy")
	waitPhase(t, ctx, ns, "svc", v1.PhaseReady)

	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "llmkube", Namespace: ns, Labels: map[string]string{"owner": "someone-else"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "other"}},
	}
	if err := k8s.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	setRouterSpec(t, ctx, ns, "svc", spec+"proxy: {serviceName: llmkube}\n")
	mr := waitCondition(t, ctx, ns, "svc", v1.ConditionDegraded, metav1.ConditionTrue, controller.ReasonRouterProxyNameTaken)
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionDegraded); !strings.Contains(c.Message, "svc-router-proxy") {
		t.Errorf("message does not name the kept Service: %q", c.Message)
	}
	if mr.Status.Phase != v1.PhaseDegraded || !strings.HasPrefix(mr.Status.Endpoint, "http://svc-router-proxy.") {
		t.Errorf("phase %s endpoint %q: want Degraded on the previous Service", mr.Status.Phase, mr.Status.Endpoint)
	}
	// The foreign Service is untouched and the previous one kept.
	assertForeignServiceUntouched(ctx, t, foreign)
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "svc-router-proxy"}, &corev1.Service{}); err != nil {
		t.Fatalf("previous Service: %v", err)
	}

	// The name frees up: the rename completes, new Service before old deleted.
	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	eventually(t, "foreign Service gone", func() error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.Service{})
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	mark := len(rec.opsIn(ns))
	touch(t, ns, "svc")
	converged(t, ns, "svc")
	mr = waitCondition(t, ctx, ns, "svc", v1.ConditionDegraded, metav1.ConditionFalse, "")
	if !strings.HasPrefix(mr.Status.Endpoint, "http://llmkube.") {
		t.Errorf("endpoint %q does not follow the Service", mr.Status.Endpoint)
	}
	assertAppliedBeforeDeleted(t, rec.opsIn(ns)[mark:], "llmkube", "svc-router-proxy")
}

// assertForeignServiceUntouched checks that the Service the controller
// does not own is as its owner made it: no owner reference, no router
// label, its one port, no field managed by the controller.
func assertForeignServiceUntouched(ctx context.Context, t *testing.T, foreign *corev1.Service) {
	t.Helper()
	live := &corev1.Service{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(foreign), live); err != nil {
		t.Fatal(err)
	}
	if len(live.OwnerReferences) > 0 || live.Labels["inference.llmkube.dev/model-router"] != "" || len(live.Spec.Ports) != 1 || live.Spec.Ports[0].Port != 80 {
		t.Errorf("foreign Service was modified: %+v", live)
	}
	for _, f := range live.ManagedFields {
		if f.Manager == "llmkube-compile" {
			t.Errorf("the controller manages fields of the foreign Service: %+v", f)
		}
	}
}

// assertAppliedBeforeDeleted checks, in the controller's writes, that the
// Service renamed to newName was applied before the one of oldName was
// deleted.
func assertAppliedBeforeDeleted(t *testing.T, ops []op, newName, oldName string) {
	t.Helper()
	applied, deleted := -1, -1
	for i, o := range ops {
		if o.kind == "Service" && o.name == newName && o.verb == "apply" && applied < 0 {
			applied = i
		}
		if o.kind == "Service" && o.name == oldName && o.verb == "delete" {
			deleted = i
		}
	}
	if applied < 0 || deleted < 0 || applied > deleted {
		t.Errorf("want the new Service applied before the old one is deleted; writes: %+v", ops)
	}
}

// touch changes an annotation so the controller reconciles the router now.
func touch(t *testing.T, ns, name string) {
	t.Helper()
	ctx := ctxT(t)
	eventually(t, "annotate router", func() error {
		mr := getRouter(t, ctx, ns, name)
		if mr.Annotations == nil {
			mr.Annotations = map[string]string{}
		}
		mr.Annotations["test/touch"] = fmt.Sprint(len(mr.Annotations["test/touch"]) + 1)
		return k8s.Update(ctx, mr)
	})
}

var _ = appsv1.Deployment{}

// TestPoolResidentInStatus: the router's status shows which ModelPool member
// is resident, as the router-proxy reports it, and that the other member is
// made resident on demand.
func TestPoolResidentInStatus(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	setISVCStatus(t, ctx, ns, "llama", "Stopped", 0)
	mustApply(t, ctx, ns, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: gpu}
spec:
  members: [{inferenceServiceRef: {name: qwen}}, {inferenceServiceRef: {name: llama}}]
`)
	mr := createRouter(t, ns, "pooled", routerSpec)
	st := healthyProxy(mr, "qwen", "llama", "claude")
	st.Pools = []proxyapi.PoolStatus{{Name: "gpu", Members: []string{"qwen", "llama"}, Resident: "qwen", Known: true, Pending: "llama"}}
	statuses.set(proxytarget.StatusURL(mr), st)
	markDeploymentReady(t, ctx, ns, "pooled-router-proxy")
	got := waitPhase(t, ctx, ns, "pooled", v1.PhaseReady)
	msgs := map[string]string{}
	for _, b := range got.Status.Backends {
		msgs[b.Name] = b.Message
	}
	if msgs["qwen"] != "resident in ModelPool gpu; swapping to llama" {
		t.Errorf("qwen: %q", msgs["qwen"])
	}
	if msgs["llama"] != "not resident in ModelPool gpu (resident: qwen); made resident on demand; swapping to llama" {
		t.Errorf("llama: %q", msgs["llama"])
	}
	if got.Status.ActiveRules != 2 {
		t.Errorf("activeRules %d: a member that is not resident still serves (on demand)", got.Status.ActiveRules)
	}
}
