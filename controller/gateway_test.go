package controller_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
)

var securityPolicyGVK = schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "SecurityPolicy"}

// waitGatewayStatus waits until status is for the current generation (its
// GatewayReady condition observed it) and check accepts it.
func waitGatewayStatus(t *testing.T, ns, name string, check func(*v1.ModelRouter) error) *v1.ModelRouter {
	t.Helper()
	ctx := ctxT(t)
	var mr *v1.ModelRouter
	eventually(t, "gateway status of the current generation", func() error {
		mr = getRouter(t, ctx, ns, name)
		c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionGatewayReady)
		if c == nil || c.ObservedGeneration != mr.Generation {
			return fmt.Errorf("GatewayReady %+v at generation %d", c, mr.Generation)
		}
		return check(mr)
	})
	return mr
}

// assertGatewayPrimaryFallbackReady checks the status of the Ready router
// of testdata gateway-primary-fallback: its route ready without auth at the
// Gateway's address, one active rule, both backends, no router-proxy
// condition, and the external provider's health said to be unknown (it
// still counts toward activeRules: it may serve).
func assertGatewayPrimaryFallbackReady(t *testing.T, got *v1.ModelRouter) {
	t.Helper()
	if got.Status.Gateway == nil || !got.Status.Gateway.RouteReady || got.Status.Gateway.AuthEnabled || got.Status.Gateway.Endpoint != "http://203.0.113.10" {
		t.Errorf("status.gateway %+v", got.Status.Gateway)
	}
	if got.Status.Endpoint != "http://203.0.113.10" || got.Status.AgentGateway != nil || got.Status.ActiveRules != 1 || len(got.Status.Backends) != 2 {
		t.Errorf("endpoint %q agentGateway %v activeRules %d backends %+v", got.Status.Endpoint, got.Status.AgentGateway, got.Status.ActiveRules, got.Status.Backends)
	}
	if meta.FindStatusCondition(got.Status.Conditions, v1.ConditionAvailable) != nil {
		t.Errorf("Available (router-proxy) condition on a Gateway router: %+v", got.Status.Conditions)
	}
	cloud := slices.IndexFunc(got.Status.Backends, func(b v1.BackendStatus) bool { return b.Name == "cloud-gpt" })
	if cloud < 0 || !strings.HasPrefix(got.Status.Backends[cloud].Message, controller.ReasonHealthUnknown+": ") {
		t.Errorf("cloud-gpt status missing or without the %s reason: %+v", controller.ReasonHealthUnknown, got.Status.Backends)
	}
}

// TestGatewayCreateUpdateDelete: a Gateway-plane router (testdata
// gateway-primary-fallback, a local primary and an OpenAI fallback) ends
// Ready with exactly the objects render prints, owner-referenced, and its
// endpoint read from the Gateway's status; removing the rule and the
// fallback backend prunes that backend's Backend, AIServiceBackend and
// BackendSecurityPolicy; deleting it removes everything.
func TestGatewayCreateUpdateDelete(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns, name, spec := onGateway(t, ctx, "gateway-primary-fallback", "203.0.113.10")
	mr := createRouter(t, ns, name, specYAML(t, spec))

	want := convergedIn(t, k8s, ns, name)
	kinds := map[string]int{}
	for _, w := range want {
		kinds[w.GetKind()]++
	}
	if kinds["Backend"] != 2 || kinds["AIServiceBackend"] != 2 || kinds["BackendSecurityPolicy"] != 1 || kinds["AIGatewayRoute"] != 1 || kinds["SecurityPolicy"] != 0 {
		t.Fatalf("render kinds %v", kinds)
	}
	liveControlledBy(ctx, t, want, mr.UID)
	waitCondition(t, ctx, ns, name, v1.ConditionGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	assertGatewayPrimaryFallbackReady(t, waitPhase(t, ctx, ns, name, v1.PhaseReady))

	// Update: the rule and the fallback backend go; so do its objects.
	unstructured.RemoveNestedField(spec, "rules")
	spec["backends"] = spec["backends"].([]any)[:1]
	spec["defaultRoute"] = "local-qwen"
	setRouterSpec(t, ctx, ns, name, specYAML(t, spec))
	want = convergedIn(t, k8s, ns, name)
	for k := range want {
		if strings.Contains(k, "cloud-gpt") || strings.HasPrefix(k, "BackendSecurityPolicy ") {
			t.Errorf("render after removal still has %s", k)
		}
	}
	// Ready again once the gateway's controller accepted the new generation
	// of the route (Pending until then).
	waitGatewayStatus(t, ns, name, func(mr *v1.ModelRouter) error {
		if len(mr.Status.Backends) != 1 || mr.Status.ActiveRules != 0 || mr.Status.Phase != v1.PhaseReady {
			return fmt.Errorf("phase %s backends %+v activeRules %d", mr.Status.Phase, mr.Status.Backends, mr.Status.ActiveRules)
		}
		return nil
	})

	// The Gateway's address changes: the next reconcile reports it.
	eventually(t, "Gateway address change", func() error {
		gw := &unstructured.Unstructured{}
		gw.SetGroupVersionKind(gatewayGVK)
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: gwns, Name: "ai-gateway"}, gw); err != nil {
			return err
		}
		_ = unstructured.SetNestedSlice(gw.Object, []any{map[string]any{"type": "Hostname", "value": "ai.example.test"}}, "status", "addresses")
		return k8s.Status().Update(ctx, gw)
	})
	touch(t, ns, name)
	waitGatewayStatus(t, ns, name, func(mr *v1.ModelRouter) error {
		if mr.Status.Endpoint != "http://ai.example.test" || mr.Status.Gateway.Endpoint != "http://ai.example.test" {
			return fmt.Errorf("endpoint %q, gateway %+v", mr.Status.Endpoint, mr.Status.Gateway)
		}
		return nil
	})

	// Delete: the finalizer removes every object (no garbage collector runs
	// in envtest, so owner references alone would leave them).
	deleteRouters(t, ctx, k8s, ns, name)
}

// TestGatewayJWTPruning is the upstream bug: removing JWT auth must delete
// the SecurityPolicy, and status.gateway.authEnabled must follow the objects
// actually in place. Whenever status reports on the current generation,
// authEnabled is true exactly when this router's SecurityPolicy exists.
func TestGatewayJWTPruning(t *testing.T) {
	ctx := ctxT(t)
	ns, _, name, withJWT := onGateway(t, ctx, "gateway-jwt-allowlists", "203.0.113.20")
	if _, ok, _ := unstructured.NestedMap(withJWT, "policy", "auth", "jwt"); !ok {
		t.Fatal("testdata/gateway-jwt-allowlists has no policy.auth.jwt")
	}
	without := func() map[string]any {
		s := runtime.DeepCopyJSON(withJWT)
		unstructured.RemoveNestedField(s, "policy")
		return s
	}
	securityPolicies := func() []string {
		var out []string
		for k := range liveInventory(t, ctx, k8s, ns, name) {
			if strings.HasPrefix(k, "SecurityPolicy ") {
				out = append(out, k)
			}
		}
		return out
	}
	truthful := func(wantAuth bool) {
		t.Helper()
		mr := waitGatewayStatus(t, ns, name, func(mr *v1.ModelRouter) error {
			if mr.Status.Gateway == nil || mr.Status.Gateway.AuthEnabled != wantAuth {
				return fmt.Errorf("status.gateway %+v, want authEnabled=%v", mr.Status.Gateway, wantAuth)
			}
			return nil
		})
		// Status was written after apply and prune: the objects agree now.
		sps := securityPolicies()
		if (len(sps) > 0) != mr.Status.Gateway.AuthEnabled {
			t.Errorf("status.gateway.authEnabled=%v but SecurityPolicies in place: %v", mr.Status.Gateway.AuthEnabled, sps)
		}
	}

	createRouter(t, ns, name, specYAML(t, without()))
	convergedIn(t, k8s, ns, name)
	truthful(false)

	// Add JWT: a SecurityPolicy is applied and auth is reported on.
	setRouterSpec(t, ctx, ns, name, specYAML(t, withJWT))
	want := convergedIn(t, k8s, ns, name)
	sp := want["SecurityPolicy "+ns+"/"+name]
	if sp == nil {
		t.Fatalf("render has no SecurityPolicy: %v", sortedKeys(want))
	}
	if jwt, ok, _ := unstructured.NestedMap(sp.Object, "spec", "jwt"); !ok || len(jwt) == 0 {
		t.Errorf("SecurityPolicy without jwt: %v", sp.Object["spec"])
	}
	truthful(true)

	// A switch to a plane that refuses the spec applies and prunes nothing:
	// the SecurityPolicy keeps enforcing, and status must keep saying so.
	// The refusal depends on cluster state the webhook cannot see: a shadow
	// target whose InferenceService is a ModelPool member.
	pool := mustApply(t, ctx, ns, `
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: slot}
spec:
  members:
    - inferenceServiceRef: {name: qwen3}
`)[0]
	refused := runtime.DeepCopyJSON(withJWT)
	refused["dataPlane"] = "Proxy"
	rules, _, _ := unstructured.NestedSlice(refused, "rules")
	rules[0].(map[string]any)["route"].(map[string]any)["strategy"] = "shadow"
	rules[0].(map[string]any)["failClosed"] = false
	_ = unstructured.SetNestedSlice(refused, rules, "rules")
	setRouterSpec(t, ctx, ns, name, specYAML(t, refused))
	waitPhase(t, ctx, ns, name, v1.PhaseFailed)
	if sps := securityPolicies(); len(sps) == 0 {
		t.Fatal("a refused spec must not prune the SecurityPolicy")
	}
	eventually(t, "status of the refused generation", func() error {
		mr := getRouter(t, ctx, ns, name)
		c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated)
		if c == nil || c.ObservedGeneration != mr.Generation || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Validated %+v at generation %d", c, mr.Generation)
		}
		if mr.Status.Gateway == nil || !mr.Status.Gateway.AuthEnabled {
			return fmt.Errorf("status.gateway %+v, want authEnabled=true while the SecurityPolicy is in place", mr.Status.Gateway)
		}
		return nil
	})
	if err := k8s.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	setRouterSpec(t, ctx, ns, name, specYAML(t, withJWT))
	convergedIn(t, k8s, ns, name)
	truthful(true)

	// Remove it: the SecurityPolicy is deleted, auth is reported off.
	setRouterSpec(t, ctx, ns, name, specYAML(t, without()))
	convergedIn(t, k8s, ns, name)
	truthful(false)
	if sps := securityPolicies(); len(sps) != 0 {
		t.Errorf("SecurityPolicy left after JWT was removed: %v", sps)
	}
	// Nothing else labelled SecurityPolicy survives in the namespace either.
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(securityPolicyGVK.GroupVersion().WithKind("SecurityPolicyList"))
	if err := k8s.List(ctx, l); err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Items {
		if it.GetNamespace() == ns {
			t.Errorf("SecurityPolicy %s/%s still in the router's namespace", it.GetNamespace(), it.GetName())
		}
	}

	// And back on.
	setRouterSpec(t, ctx, ns, name, specYAML(t, withJWT))
	convergedIn(t, k8s, ns, name)
	truthful(true)

	// Remove JWT while a new backend's Backend name is held by a foreign
	// object: nothing is pruned (the router keeps what it had), so the
	// SecurityPolicy still enforces, and status must say so.
	foreign := mustApply(t, ctx, ns, fmt.Sprintf(`
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: %s-extra}
spec:
  endpoints:
    - fqdn: {hostname: someone-else.example, port: 80}
`, name))[0]
	taken := without()
	taken["backends"] = append(taken["backends"].([]any), map[string]any{"name": "extra", "inferenceServiceRef": map[string]any{"name": "qwen3"}})
	setRouterSpec(t, ctx, ns, name, specYAML(t, taken))
	waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionTrue, targets.ReasonObjectNameTaken)
	truthful(true)
	if sps := securityPolicies(); len(sps) != 1 {
		t.Errorf("SecurityPolicy pruned although a name was taken: %v", sps)
	}
	// The name frees up: the SecurityPolicy goes and auth is reported off.
	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	touch(t, ns, name)
	convergedIn(t, k8s, ns, name)
	waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionFalse, "")
	truthful(false)
}

// TestGatewayDataPlaneSwitch: Proxy -> Gateway -> Proxy; each switch prunes
// every object of the previous plane and its status block and conditions.
func TestGatewayDataPlaneSwitch(t *testing.T) {
	ctx := ctxT(t)
	ns, _, name, gwSpec := onGateway(t, ctx, "gateway-minimal", "203.0.113.30")
	proxySpec := `
backends:
  - name: local-qwen
    inferenceServiceRef: {name: qwen3}
defaultRoute: local-qwen
`
	createRouter(t, ns, name, proxySpec)
	want := convergedIn(t, k8s, ns, name)
	if want["Deployment "+ns+"/"+name+"-router-proxy"] == nil {
		t.Fatalf("proxy render: %v", sortedKeys(want))
	}
	waitCondition(t, ctx, ns, name, v1.ConditionAvailable, metav1.ConditionFalse, targets.ReasonDeploymentNotReady)

	// To Gateway: the proxy's objects go, the Gateway plane's come.
	setRouterSpec(t, ctx, ns, name, specYAML(t, gwSpec))
	want = convergedIn(t, k8s, ns, name)
	for k := range want {
		if strings.HasPrefix(k, "Deployment ") || strings.HasPrefix(k, "ConfigMap ") || strings.HasPrefix(k, "Service ") {
			t.Errorf("Gateway render has %s", k)
		}
	}
	got := waitCondition(t, ctx, ns, name, v1.ConditionGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	if meta.FindStatusCondition(got.Status.Conditions, v1.ConditionAvailable) != nil {
		t.Errorf("Available left after switching to Gateway: %+v", got.Status.Conditions)
	}
	got = waitPhase(t, ctx, ns, name, v1.PhaseReady)
	if got.Status.Gateway == nil || got.Status.Endpoint != "http://203.0.113.30" {
		t.Errorf("status.gateway %+v endpoint %q", got.Status.Gateway, got.Status.Endpoint)
	}

	// Back to Proxy: the Gateway plane's objects go.
	setRouterSpec(t, ctx, ns, name, proxySpec)
	want = convergedIn(t, k8s, ns, name)
	for k := range want {
		if strings.Contains(k, "Backend ") || strings.HasPrefix(k, "AIGatewayRoute ") {
			t.Errorf("Proxy render has %s", k)
		}
	}
	got = waitCondition(t, ctx, ns, name, v1.ConditionAvailable, metav1.ConditionFalse, targets.ReasonDeploymentNotReady)
	if got.Status.Gateway != nil || meta.FindStatusCondition(got.Status.Conditions, v1.ConditionGatewayReady) != nil {
		t.Errorf("Gateway status left after switching back: %+v %+v", got.Status.Gateway, got.Status.Conditions)
	}
	if !strings.HasPrefix(got.Status.Endpoint, "http://"+name+"-router-proxy.") {
		t.Errorf("endpoint %q after switching back", got.Status.Endpoint)
	}
}

// TestGatewaySharedByOverlappingRouters: two routers whose routes meet on
// one Gateway (both have a catch-all default route) are both refused,
// each naming the other; deleting one lets the other through.
func TestGatewaySharedByOverlappingRouters(t *testing.T) {
	ctx := ctxT(t)
	ns, _, name, spec := readyOnGateway(t, ctx, "gateway-primary-fallback", "203.0.113.11")
	createRouter(t, ns, "second", specYAML(t, spec))
	mr := waitCondition(t, ctx, ns, "second", v1.ConditionValidated, metav1.ConditionFalse, "GatewayRoutesOverlap")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); !strings.Contains(c.Message, "ModelRouter "+ns+"/"+name) {
		t.Errorf("the refusal does not name the other router: %s", c.Message)
	}
	if err := k8s.Delete(ctx, &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "first router gone", func() error {
		err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &v1.ModelRouter{})
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	waitCondition(t, ctx, ns, "second", v1.ConditionValidated, metav1.ConditionTrue, "")
}

// TestGatewayAuthRouterOwnsItsGateway: a router with policy.auth on the
// Gateway plane removes the client's team header on its Gateway (a
// ClientTrafficPolicy in the Gateway's namespace, deleted with the router),
// refuses another ModelRouter on its Gateway (GatewaySharedWithAuth), and
// reports any other route attached there (Degraded).
func TestGatewayAuthRouterOwnsItsGateway(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns, name, _ := readyOnGateway(t, ctx, "gateway-jwt-allowlists", "203.0.113.21")

	ctpGVK := schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "ClientTrafficPolicy"}
	ctps := func() []unstructured.Unstructured {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(ctpGVK.GroupVersion().WithKind("ClientTrafficPolicyList"))
		if err := k8s.List(ctx, l, client.InNamespace(gwns)); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	got := ctps()
	if len(got) != 1 {
		t.Fatalf("want one ClientTrafficPolicy in the Gateway's namespace, got %d", len(got))
	}
	remove, _, _ := unstructured.NestedStringSlice(got[0].Object, "spec", "headers", "earlyRequestHeaders", "remove")
	if len(remove) != 1 || remove[0] != "x-llmkube-team" {
		t.Errorf("earlyRequestHeaders.remove = %v, want [x-llmkube-team]", remove)
	}

	// Another ModelRouter on the same Gateway, rules disjoint: refused.
	other := map[string]any{
		"dataPlane":  "Gateway",
		"gatewayRef": map[string]any{"name": "ai-gateway", "namespace": gwns},
		"backends":   []any{map[string]any{"name": "q", "inferenceServiceRef": map[string]any{"name": "qwen3"}}},
		"rules": []any{map[string]any{"name": "open", "failClosed": true,
			"match": map[string]any{"models": []any{"open-model"}}, "route": map[string]any{"backends": []any{"q"}}}},
	}
	createRouter(t, ns, "open", specYAML(t, other))
	// The tenants router's default route also overlaps every request, so
	// GatewayRoutesOverlap comes with it; the condition lists both.
	eventually(t, "the second router refused with GatewaySharedWithAuth", func() error {
		c := meta.FindStatusCondition(getRouter(t, ctx, ns, "open").Status.Conditions, v1.ConditionValidated)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "(GatewaySharedWithAuth)") {
			return fmt.Errorf("Validated %+v", c)
		}
		return nil
	})
	if err := k8s.Delete(ctx, &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "open"}}); err != nil {
		t.Fatal(err)
	}

	// A foreign HTTPRoute on the Gateway: the router is Degraded, naming it.
	foreign := mustApply(t, ctx, ns, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: someone-else}
spec:
  parentRefs: [{name: ai-gateway, namespace: %s}]
  rules:
    - backendRefs: [{name: svc, port: 80}]
`, gwns))[0]
	touch(t, ns, name)
	mr := waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionTrue, "GatewaySharedWithAuth")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionDegraded); !strings.Contains(c.Message, "HTTPRoute "+ns+"/someone-else") {
		t.Errorf("Degraded does not name the foreign route: %s", c.Message)
	}
	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	touch(t, ns, name)
	waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionFalse, "")

	// Another ClientTrafficPolicy on the Gateway takes precedence: ours is
	// Conflicted and the team header can be forged, so the router says so.
	setVerdict("ClientTrafficPolicy", gwns, got[0].GetName(), verdictConflict)
	touch(t, ns, name)
	mr = waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionTrue, targets.ReasonPolicyConflicted)
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionDegraded); !strings.Contains(c.Message, "ClientTrafficPolicy "+gwns+"/"+got[0].GetName()) {
		t.Errorf("Degraded does not name the conflicted ClientTrafficPolicy: %s", c.Message)
	}
	setVerdict("ClientTrafficPolicy", gwns, got[0].GetName(), verdictAccept)
	touch(t, ns, name)
	waitCondition(t, ctx, ns, name, v1.ConditionDegraded, metav1.ConditionFalse, "")

	// Deleting the router deletes its policy in the Gateway's namespace.
	if err := k8s.Delete(ctx, &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ClientTrafficPolicy deleted with the router", func() error {
		if n := len(ctps()); n != 0 {
			return fmt.Errorf("%d left", n)
		}
		return nil
	})
}

// TestGatewayAuthRoutersOnDisjointHostnames: two routers with policy.auth
// share a Gateway when their gatewayRef.hostnames are disjoint. Both are
// Ready; the one whose ClientTrafficPolicy Envoy Gateway marks Conflicted
// (one per Gateway is in force) is not Degraded while the other router's
// removes the same team header. Another team's AIGatewayRoute on one
// router's host makes that router Degraded (GatewaySharedWithAuth, naming
// the route), not the other.
func TestGatewayAuthRoutersOnDisjointHostnames(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns, _, spec := onGateway(t, ctx, "gateway-jwt-allowlists", "203.0.113.31")
	withHosts := func(h string) map[string]any {
		s := runtime.DeepCopyJSON(spec)
		_ = unstructured.SetNestedStringSlice(s, []string{h}, "gatewayRef", "hostnames")
		return s
	}
	createRouter(t, ns, "alpha", specYAML(t, withHosts("a.example.com")))
	waitPhase(t, ctx, ns, "alpha", v1.PhaseReady)
	createRouter(t, ns, "beta", specYAML(t, withHosts("b.example.com")))
	waitPhase(t, ctx, ns, "beta", v1.PhaseReady)

	ctp := func(router string) string {
		return naming.GatewayClientPolicyName(ns, router, true)
	}
	setVerdict("ClientTrafficPolicy", gwns, ctp("beta"), verdictConflict)
	touch(t, ns, "beta")
	eventually(t, "beta notes alpha's ClientTrafficPolicy", func() error {
		mr := getRouter(t, ctx, ns, "beta")
		c := meta.FindStatusCondition(mr.Status.Conditions, v1.ReadyCondition(v1.DataPlaneGateway))
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "ClientTrafficPolicy "+gwns+"/"+ctp("alpha")) {
			return fmt.Errorf("%+v", c)
		}
		return nil
	})
	waitCondition(t, ctx, ns, "beta", v1.ConditionDegraded, metav1.ConditionFalse, "")

	foreign := mustApply(t, ctx, ns, fmt.Sprintf(`
apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIGatewayRoute
metadata: {name: chatbot}
spec:
  parentRefs: [{name: ai-gateway, namespace: %s}]
  hostnames: [a.example.com]
  rules: [{backendRefs: [{name: openai}]}]
`, gwns))[0]
	touch(t, ns, "alpha")
	mr := waitCondition(t, ctx, ns, "alpha", v1.ConditionDegraded, metav1.ConditionTrue, "GatewaySharedWithAuth")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionDegraded); !strings.Contains(c.Message, "AIGatewayRoute "+ns+"/chatbot") {
		t.Errorf("Degraded does not name the foreign AIGatewayRoute: %s", c.Message)
	}
	touch(t, ns, "beta")
	waitCondition(t, ctx, ns, "beta", v1.ConditionDegraded, metav1.ConditionFalse, "")
	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	touch(t, ns, "alpha")
	waitCondition(t, ctx, ns, "alpha", v1.ConditionDegraded, metav1.ConditionFalse, "")
}

// TestNoApplyAfterDataPlaneStatus: a gateway controller writing status on a
// generated object (a new answer, a changed message) is not drift: no
// reconcile applies the object again for it. make bench-controller with a
// played data plane counted one no-op APPLY per route, pool and policy after
// each such status write.
func TestNoApplyAfterDataPlaneStatus(t *testing.T) {
	ctx := ctxT(t)
	ns, _, name, _ := readyOnGateway(t, ctx, "gateway-minimal", "203.0.113.11")
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	if _, err := reconc.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	before := len(rec.opsIn(ns))

	// The gateway controller rewrites the route's status (same verdict, a
	// new message): its resourceVersion moves, its spec does not.
	route := &unstructured.Unstructured{}
	route.SetGroupVersionKind(schema.GroupVersionKind{Group: "aigateway.envoyproxy.io", Version: "v1beta1", Kind: "AIGatewayRoute"})
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, route); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(route.Object, "status", "conditions")
	if len(conds) == 0 {
		t.Fatal("the played gateway controller wrote no status on the AIGatewayRoute")
	}
	conds[0].(map[string]any)["message"] = "reconciled again by the gateway controller"
	if err := unstructured.SetNestedSlice(route.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Update(ctx, route); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := reconc.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if ops := rec.opsIn(ns); len(ops) != before {
		t.Errorf("after the data plane's status write the controller wrote: %+v", ops[before:])
	}
}
