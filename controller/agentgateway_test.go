package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
)

var (
	poolGVK   = schema.GroupVersionKind{Group: "inference.networking.k8s.io", Version: "v1", Kind: "InferencePool"}
	routeGVK  = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
	policyGVK = schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}
)

func agentGatewaySpec(gwNamespace string) string {
	return fmt.Sprintf(`
dataPlane: AgentGateway
agentGatewayRef:
  name: agentgateway
  namespace: %s
  endpointPicker: qwen-epp
  endpointPickerPort: 9002
backends:
  - name: qwen-chat
    inferenceServiceRef: {name: qwen}
rules:
  - name: chat
    match: {models: [qwen-chat]}
    route: {backends: [qwen-chat]}
defaultRoute: qwen-chat
`, gwNamespace)
}

// listLabelled lists objects of gvk in ns (all namespaces when empty) with
// the router label.
func listLabelled(t *testing.T, gvk schema.GroupVersionKind, ns, router string) []string {
	t.Helper()
	opts := []client.ListOption{client.MatchingLabels{"inference.llmkube.dev/model-router": router}}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	return listMatching(t, gvk, opts...)
}

// listMatching names the objects of kind gvk the options select.
func listMatching(t *testing.T, gvk schema.GroupVersionKind, opts ...client.ListOption) []string {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(ctxT(t), l, opts...); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	return out
}

// listElsewhere lists the objects of kind gvk generated for router ns/router
// in other namespaces (they carry the router's namespace as a label): this
// router's only, not another test's router of the same name.
func listElsewhere(t *testing.T, gvk schema.GroupVersionKind, ns, router string) []string {
	t.Helper()
	return listMatching(t, gvk, client.MatchingLabels{"inference.llmkube.dev/model-router": router, controller.LabelRouterNamespace: naming.LabelValue(ns)})
}

// TestAgentGatewayCrossNamespace: create, data-plane switch (pruning the other
// plane, including the policy in the Gateway's namespace) and deletion (the
// finalizer removes the cross-namespace policy, which has no owner reference).
func TestAgentGatewayCrossNamespace(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns := env.NewNamespace(t), env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createGateway(t, ctx, k8s, gwns, "agentgateway", "203.0.113.60")
	mr := createRouter(t, ns, "ag", agentGatewaySpec(gwns))

	waitCondition(t, ctx, ns, "ag", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	got := waitPhase(t, ctx, ns, "ag", v1.PhaseReady)
	if got.Status.AgentGateway == nil || !got.Status.AgentGateway.PoolReady {
		t.Errorf("status.agentGateway %+v", got.Status.AgentGateway)
	}
	if meta.FindStatusCondition(got.Status.Conditions, v1.ConditionAvailable) != nil {
		t.Errorf("Available (router-proxy) condition set on an AgentGateway router: %+v", got.Status.Conditions)
	}
	if p := listLabelled(t, poolGVK, ns, "ag"); len(p) != 1 {
		t.Errorf("InferencePools %v", p)
	}
	if r := listLabelled(t, routeGVK, ns, "ag"); len(r) != 1 {
		t.Errorf("HTTPRoutes %v", r)
	}
	pol := listLabelled(t, policyGVK, gwns, "ag")
	if len(pol) != 1 {
		t.Fatalf("policies in the Gateway namespace: %v", pol)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(policyGVK)
	name := strings.SplitN(pol[0], "/", 2)[1]
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: gwns, Name: name}, live); err != nil {
		t.Fatal(err)
	}
	if len(live.GetOwnerReferences()) != 0 || live.GetLabels()[controller.LabelRouterNamespace] != ns {
		t.Errorf("cross-namespace policy: ownerRefs %v labels %v", live.GetOwnerReferences(), live.GetLabels())
	}
	// In the router's namespace only the route rules' own policy: the
	// rewrite of the request's model to the name the pool serves (issue 61).
	if p := listLabelled(t, policyGVK, ns, "ag"); len(p) != 1 || !strings.HasSuffix(p[0], "-model-name") {
		t.Errorf("policies in the router namespace: want only the route rules' model-name policy, have %v", p)
	}

	// Data-plane change: everything AgentGateway goes, the proxy comes.
	setRouterSpec(t, ctx, ns, "ag", `
backends:
  - name: qwen-chat
    inferenceServiceRef: {name: qwen}
defaultRoute: qwen-chat
`)
	converged(t, ns, "ag")
	eventually(t, "AgentGateway objects pruned", func() error {
		var left []string
		for _, gvk := range []schema.GroupVersionKind{poolGVK, routeGVK, policyGVK} {
			left = append(append(left, listLabelled(t, gvk, ns, "ag")...), listElsewhere(t, gvk, ns, "ag")...)
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	})
	got = waitCondition(t, ctx, ns, "ag", v1.ConditionAvailable, metav1.ConditionFalse, targets.ReasonDeploymentNotReady)
	if got.Status.AgentGateway != nil || meta.FindStatusCondition(got.Status.Conditions, v1.ConditionAgentGatewayReady) != nil {
		t.Errorf("AgentGateway status left after the switch: %+v %+v", got.Status.AgentGateway, got.Status.Conditions)
	}

	// Back to AgentGateway: the proxy goes.
	setRouterSpec(t, ctx, ns, "ag", agentGatewaySpec(gwns))
	waitCondition(t, ctx, ns, "ag", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	eventually(t, "proxy pruned", func() error {
		if left := inventory(t, ctx, ns, "ag", proxyKinds()...); len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		if len(listLabelled(t, policyGVK, gwns, "ag")) != 1 {
			return fmt.Errorf("policy not back")
		}
		return nil
	})

	// Delete: the finalizer removes the cross-namespace policy.
	if err := k8s.Delete(ctx, mr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "cross-namespace policy cleaned up", func() error {
		if p := listLabelled(t, policyGVK, gwns, "ag"); len(p) > 0 {
			return fmt.Errorf("left: %v", p)
		}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "ag"}, &v1.ModelRouter{}); !isNotFound(err) {
			return fmt.Errorf("router still there (%v)", err)
		}
		return nil
	})
}

// TestConflictingPreRoutingPolicy: a foreign PreRouting transformation on
// the same Gateway sets ConflictingPreRoutingPolicy and the router keeps its
// own policy; the periodic recheck clears the condition once it goes.
func TestConflictingPreRoutingPolicy(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	foreign := mustApply(t, ctx, ns, `
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: someone-elses-extraction}
spec:
  targetRefs:
    - {group: gateway.networking.k8s.io, kind: Gateway, name: agentgateway}
  traffic:
    phase: PreRouting
    transformation:
      request:
        set:
          - {name: X-Model, value: json(request.body).model}
`)[0]
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.61")
	createRouter(t, ns, "conf", agentGatewaySpec(ns))
	mr := waitCondition(t, ctx, ns, "conf", v1.ConditionAgentGatewayReady, metav1.ConditionFalse, targets.ReasonConflictingPolicy)
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady); !strings.Contains(c.Message, "someone-elses-extraction") {
		t.Errorf("message does not name the foreign policy: %q", c.Message)
	}
	waitPhase(t, ctx, ns, "conf", v1.PhaseDegraded)
	if p := listLabelled(t, policyGVK, ns, "conf"); !slices.Contains(p, ns+"/conf-model-extraction") {
		t.Errorf("the router's own policy must be kept on conflict; have %v", p)
	}

	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	// No event touches the router: the periodic recheck clears the condition.
	waitCondition(t, ctx, ns, "conf", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	waitPhase(t, ctx, ns, "conf", v1.PhaseReady)
}

// TestTwoRoutersShareAGateway: two LLMKube routers on one Gateway, on
// disjoint hostnames, each emit the same model extraction, which is no
// conflict. A third on the same listener and hosts whose routes meet theirs
// is refused (GatewayRoutesOverlap), naming the other (issue 28 item 3).
func TestTwoRoutersShareAGateway(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.62")
	withHost := func(host string) string {
		return strings.Replace(agentGatewaySpec(ns), "  endpointPicker: qwen-epp\n", "  endpointPicker: qwen-epp\n  hostnames: ["+host+"]\n", 1)
	}
	createRouter(t, ns, "first", withHost("first.example"))
	waitCondition(t, ctx, ns, "first", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	createRouter(t, ns, "second", withHost("second.example"))
	waitCondition(t, ctx, ns, "second", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	waitPhase(t, ctx, ns, "second", v1.PhaseReady)
	waitPhase(t, ctx, ns, "first", v1.PhaseReady)
	if p := listLabelled(t, policyGVK, ns, "second"); !slices.Contains(p, ns+"/second-model-extraction") {
		t.Errorf("each router keeps its own extraction policy; second has %v", p)
	}

	createRouter(t, ns, "third", withHost(`"*.example"`))
	mr := waitCondition(t, ctx, ns, "third", v1.ConditionValidated, metav1.ConditionFalse, "GatewayRoutesOverlap")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); !strings.Contains(c.Message, "ModelRouter "+ns+"/first") {
		t.Errorf("the refusal does not name the other router: %s", c.Message)
	}
}

// TestOverridingPolicyReported: a foreign AgentgatewayPolicy with
// strategy.inheritance Override on the router's Gateway that sets
// authorization would drop the router's allowlist; the controller reports
// it (OverridingPolicy, Degraded) and clears it once the policy goes (issue
// 28 item 2).
func TestOverridingPolicyReported(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	foreign := mustApply(t, ctx, ns, allowAllPolicy("allow-everyone", `targetRefs:
    - {group: gateway.networking.k8s.io, kind: Gateway, name: agentgateway}`))[0]
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.63")
	createRouter(t, ns, "guarded", agentGatewaySpec(ns)+platformAllowlist)
	waitOverriddenBy(t, ctx, ns, "allow-everyone")
	waitPhase(t, ctx, ns, "guarded", v1.PhaseDegraded)
	if err := k8s.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ctx, ns, "guarded", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
}

// platformAllowlist is a router's policy that lets only team platform in,
// with its JWT verified.
const platformAllowlist = `policy:
  auth:
    jwt: {provider: keycloak, issuer: "https://issuer.example/realms/lab", jwksURI: "https://issuer.example/realms/lab/certs", teamClaim: team}
    allowlists:
      - team: platform
`

// allowAllPolicy is a foreign AgentgatewayPolicy that overrides what it
// targets (a targetRefs or targetSelectors field) with an authorization
// allowing everyone.
func allowAllPolicy(name, targets string) string {
	return `
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: ` + name + `}
spec:
  ` + targets + `
  strategy: {inheritance: Override}
  traffic:
    authorization:
      action: Allow
      policy: {matchExpressions: ["true"]}
`
}

// waitOverriddenBy waits until router guarded reports OverridingPolicy
// naming policy's authorization.
func waitOverriddenBy(t *testing.T, ctx context.Context, ns, policy string) {
	t.Helper()
	mr := waitCondition(t, ctx, ns, "guarded", v1.ConditionAgentGatewayReady, metav1.ConditionFalse, "OverridingPolicy")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady); !strings.Contains(c.Message, policy+" (authorization)") {
		t.Errorf("message does not name the policy and field: %q", c.Message)
	}
	// The recheck the message promises is the reconciler's (the suite's
	// RecheckInterval), not a figure written into the plane's finding.
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady); !strings.HasSuffix(c.Message, "(rechecked at least every 3s)") {
		t.Errorf("message does not say the reconciler's recheck interval: %q", c.Message)
	}
}

// TestOverridingPolicyBySelectorReported: the same foreign Override policy
// attached by label (spec.targetSelectors, the CRD's other attachment form)
// to the router's Gateway, then to its HTTPRoute, is reported too (issue
// 51: a policy attached by label was invisible and dropped the allowlist).
func TestOverridingPolicyBySelectorReported(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.64")
	eventually(t, "Gateway labelled", func() error {
		gw := &unstructured.Unstructured{}
		gw.SetGroupVersionKind(gatewayGVK)
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "agentgateway"}, gw); err != nil {
			return err
		}
		gw.SetLabels(map[string]string{"platform.example/tier": "shared"})
		return k8s.Update(ctx, gw)
	})
	byGateway := mustApply(t, ctx, ns, allowAllPolicy("allow-shared", `targetSelectors:
    - {group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {platform.example/tier: shared}}`))[0]
	createRouter(t, ns, "guarded", agentGatewaySpec(ns)+platformAllowlist)
	waitOverriddenBy(t, ctx, ns, "allow-shared")
	if err := k8s.Delete(ctx, byGateway); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ctx, ns, "guarded", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)

	// By the route's label: the router's own HTTPRoute carries it.
	mustApply(t, ctx, ns, allowAllPolicy("allow-routes", `targetSelectors:
    - {group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {inference.llmkube.dev/model-router: guarded}}`))
	// The controller rechecks foreign policies on its two-minute period or
	// on the router's next change: touch the router.
	eventually(t, "router touched", func() error {
		r := getRouter(t, ctx, ns, "guarded")
		r.Annotations = map[string]string{"test/touch": "1"}
		return k8s.Update(ctx, r)
	})
	waitOverriddenBy(t, ctx, ns, "allow-routes")
}

// TestForeignModelOnListenerReported: in routing Model, an
// AgentgatewayModel the router did not generate, attached directly to the
// router's listener, makes agentgateway refuse the router's own models and
// route (issue 51: every request 404, and the router's status said
// nothing). The router reports ForeignModelOnListener naming the model; a
// foreign model on another listener or behind an HTTPRoute parent is no
// conflict.
func TestForeignModelOnListenerReported(t *testing.T) {
	ctx := ctxT(t)
	ns, other := env.NewNamespace(t), env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.65")
	foreignModel := func(name, parentRef string) string {
		return fmt.Sprintf(`
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayModel
metadata: {name: %s}
spec:
  parentRefs: [%s]
  match: {model: other-model}
  provider: Custom
  custom:
    backendRef: {name: other, port: 8000}
    formats: [{type: Completions}]
`, name, parentRef)
	}
	mustApply(t, ctx, other, foreignModel("elsewhere", `{name: agentgateway, namespace: `+ns+`, sectionName: https}`))
	mustApply(t, ctx, other, foreignModel("behind-route", `{kind: HTTPRoute, name: someone-elses}`))
	createRouter(t, ns, "models", `
dataPlane: AgentGateway
agentGatewayRef: {name: agentgateway, routing: Model, sectionName: http, hostnames: [models.example]}
defaultRouteStrategy: BackendNameMatch
backends:
  - {name: qwen, inferenceServiceRef: {name: qwen}}
`)
	waitCondition(t, ctx, ns, "models", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)

	// Attached to the whole Gateway from another namespace: it takes the
	// router's listener too.
	onListener := mustApply(t, ctx, other, foreignModel("direct", `{name: agentgateway, namespace: `+ns+`}`))[0]
	eventually(t, "router touched", func() error {
		r := getRouter(t, ctx, ns, "models")
		r.Annotations = map[string]string{"test/touch": "1"}
		return k8s.Update(ctx, r)
	})
	mr := waitCondition(t, ctx, ns, "models", v1.ConditionAgentGatewayReady, metav1.ConditionFalse, "ForeignModelOnListener")
	c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady)
	if !strings.Contains(c.Message, "AgentgatewayModel "+other+"/direct attaches directly to Gateway "+ns+"/agentgateway listener http") {
		t.Errorf("message does not name the model and listener: %q", c.Message)
	}
	if strings.Contains(c.Message, "elsewhere") || strings.Contains(c.Message, "behind-route") {
		t.Errorf("message names a model that does not attach to the listener: %q", c.Message)
	}
	if err := k8s.Delete(ctx, onListener); err != nil {
		t.Fatal(err)
	}
	eventually(t, "router touched again", func() error {
		r := getRouter(t, ctx, ns, "models")
		r.Annotations = map[string]string{"test/touch": "2"}
		return k8s.Update(ctx, r)
	})
	waitCondition(t, ctx, ns, "models", v1.ConditionAgentGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
}

var _ = appsv1.Deployment{}
