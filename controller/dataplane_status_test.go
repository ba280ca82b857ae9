package controller_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets"
	proxytarget "github.com/llmkube/llmkube-compile/targets/proxy"
)

// waitEvent waits until the router has an event containing want
// ("Type/Reason" and, optionally, part of the note).
func waitEvent(t *testing.T, ns, name, want string) {
	t.Helper()
	ctx := ctxT(t)
	eventually(t, "event "+want, func() error {
		evs := routerEvents(t, ns, getRouter(t, ctx, ns, name))
		for _, e := range evs {
			if strings.Contains(e, want) {
				return nil
			}
		}
		return fmt.Errorf("events: %v", evs)
	})
}

// waitRuleOn waits until the router's HTTPRoute sends rule to a pool whose
// name contains pool.
func waitRuleOn(t *testing.T, ns, router, rule, pool string) {
	t.Helper()
	eventually(t, rule+" on "+pool+"'s pool", func() error {
		got, err := routeTargets(t, ns, router)
		if err != nil {
			return err
		}
		if !strings.Contains(got[rule], pool) {
			return fmt.Errorf("targets %v", got)
		}
		return nil
	})
}

// gatewayPlaneRouter is a Gateway-plane router on Gateway gwns/ai-gateway.
func gatewayPlaneRouter(gwns string) string {
	return fmt.Sprintf(`
dataPlane: Gateway
gatewayRef: {name: ai-gateway, namespace: %s}
backends:
  - name: qwen
    inferenceServiceRef: {name: qwen}
defaultRoute: qwen
`, gwns)
}

// TestGatewayMissingThenCreated: a router whose Gateway does not exist is
// Pending with GatewayNotFound (not Ready); once the Gateway appears, the
// periodic recheck finds it and the router becomes Ready when the data
// plane accepts its objects.
func TestGatewayMissingThenCreated(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns := env.NewNamespace(t), env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createRouter(t, ns, "gw", gatewayPlaneRouter(gwns))

	got := waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionFalse, targets.ReasonGatewayNotFound)
	if got.Status.Phase != v1.PhasePending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionGatewayReady)
	if !strings.Contains(c.Message, gwns+"/ai-gateway") {
		t.Errorf("message does not name the Gateway: %q", c.Message)
	}
	waitEvent(t, ns, "gw", "Warning/GatewayNotFound")

	createGateway(t, ctx, k8s, gwns, "ai-gateway", "203.0.113.20")
	waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	waitPhase(t, ctx, ns, "gw", v1.PhaseReady)
	waitEvent(t, ns, "gw", "Normal/Applied")
}

// TestListenerRefusesNamespace: a listener that admits routes from its own
// namespace only (the Gateway API default) or from labelled namespaces
// refuses the router's route: RouteNotAllowed, Pending. Labelling the
// router's namespace admits it.
func TestListenerRefusesNamespace(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns := env.NewNamespace(t), env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	mustApply(t, ctx, gwns, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai-gateway}
spec:
  gatewayClassName: envoy-ai-gateway
  listeners:
    - {name: same, port: 80, protocol: HTTP}
    - name: labelled
      port: 8080
      protocol: HTTP
      allowedRoutes:
        namespaces:
          from: Selector
          selector: {matchLabels: {llm-routes: allowed}}
`)
	createRouter(t, ns, "gw", gatewayPlaneRouter(gwns))
	got := waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionFalse, targets.ReasonRouteNotAllowed)
	if got.Status.Phase != v1.PhasePending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
	msg := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionGatewayReady).Message
	for _, want := range []string{`listener "same"`, "from: Same", `listener "labelled"`, "llm-routes=allowed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	waitEvent(t, ns, "gw", "Warning/RouteNotAllowed")

	eventually(t, "label the namespace", func() error {
		n := &corev1.Namespace{}
		if err := k8s.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
			return err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["llm-routes"] = "allowed"
		return k8s.Update(ctx, n)
	})
	waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	waitPhase(t, ctx, ns, "gw", v1.PhaseReady)
}

// TestDataPlaneVerdicts: what the gateway's controllers write decides the
// router's status. No answer yet: Pending (AwaitingDataPlane). A rejected
// route: Failed (RejectedByDataPlane) naming the object and the data plane's
// message. A conflicted policy: Degraded (PolicyConflicted). Accepted: Ready.
func TestDataPlaneVerdicts(t *testing.T) {
	ctx := ctxT(t)
	ns, gwns := env.NewNamespace(t), env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen")
	createGateway(t, ctx, k8s, gwns, "ai-gateway", "203.0.113.30")
	setVerdict("AIGatewayRoute", ns, "gw", verdictSilent)
	createRouter(t, ns, "gw", gatewayPlaneRouter(gwns))

	got := waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionFalse, targets.ReasonAwaitingDataPlane)
	if got.Status.Phase != v1.PhasePending || got.Status.Gateway == nil || got.Status.Gateway.RouteReady {
		t.Errorf("phase %s gateway %+v, want Pending and routeReady false", got.Status.Phase, got.Status.Gateway)
	}

	setVerdict("AIGatewayRoute", ns, "gw", verdictReject)
	got = waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionFalse, targets.ReasonRejectedByDataPlane)
	msg := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionGatewayReady).Message
	if !strings.Contains(msg, "AIGatewayRoute "+ns+"/gw") || !strings.Contains(msg, "backend not-there not found") {
		t.Errorf("the rejection does not name the object and the data plane's message: %q", msg)
	}
	waitPhase(t, ctx, ns, "gw", v1.PhaseFailed)
	waitEvent(t, ns, "gw", "Warning/RejectedByDataPlane")

	setVerdict("AIGatewayRoute", ns, "gw", verdictAccept)
	setVerdict("BackendTrafficPolicy", ns, "gw", verdictConflict)
	got = waitCondition(t, ctx, ns, "gw", v1.ConditionDegraded, metav1.ConditionTrue, targets.ReasonPolicyConflicted)
	if !strings.Contains(meta.FindStatusCondition(got.Status.Conditions, v1.ConditionDegraded).Message, "BackendTrafficPolicy "+ns+"/gw") {
		t.Errorf("Degraded does not name the policy: %+v", got.Status.Conditions)
	}
	waitPhase(t, ctx, ns, "gw", v1.PhaseDegraded)
	waitEvent(t, ns, "gw", "Warning/PolicyConflicted")

	setVerdict("BackendTrafficPolicy", ns, "gw", verdictAccept)
	waitCondition(t, ctx, ns, "gw", v1.ConditionGatewayReady, metav1.ConditionTrue, targets.ReasonApplied)
	got = waitPhase(t, ctx, ns, "gw", v1.PhaseReady)
	if got.Status.Gateway == nil || !got.Status.Gateway.RouteReady {
		t.Errorf("status.gateway %+v", got.Status.Gateway)
	}
	waitEvent(t, ns, "gw", "Normal/NotDegraded")
}

// TestInferenceServiceDeletedUnderTraffic: on AgentGateway, deleting the
// primary's InferenceService makes it not ready (it does not exist), so the
// rule moves to the next backend and BackendsReady turns False; recreating it
// moves the rule back.
func TestInferenceServiceDeletedUnderTraffic(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	createGateway(t, ctx, k8s, ns, "agentgateway", "203.0.113.40")
	createRouter(t, ns, "ag", fmt.Sprintf(`
dataPlane: AgentGateway
agentGatewayRef: {name: agentgateway, namespace: %s}
backends:
  - name: qwen
    inferenceServiceRef: {name: qwen}
    endpointPicker: {service: {name: qwen-epp, port: 9002}}
  - name: llama
    inferenceServiceRef: {name: llama}
    endpointPicker: {service: {name: llama-epp, port: 9002}}
rules:
  - name: chat
    match: {models: [chat]}
    route: {backends: [qwen, llama]}
defaultRoute: llama
`, ns))
	waitPhase(t, ctx, ns, "ag", v1.PhaseReady)
	waitRuleOn(t, ns, "ag", "rule-chat", "qwen")

	isvc := &unstructured.Unstructured{}
	isvc.SetGroupVersionKind(v1.GroupVersion.WithKind("InferenceService"))
	isvc.SetNamespace(ns)
	isvc.SetName("qwen")
	if err := k8s.Delete(ctx, isvc); err != nil {
		t.Fatal(err)
	}
	got := waitCondition(t, ctx, ns, "ag", v1.ConditionBackendsReady, metav1.ConditionFalse, controller.ReasonBackendsNotReady)
	waitRuleOn(t, ns, "ag", "rule-chat", "llama")
	for _, b := range got.Status.Backends {
		if b.Name == "qwen" && (b.Healthy || !strings.Contains(b.Message, "not found")) {
			t.Errorf("qwen status %+v", b)
		}
	}
	waitPhase(t, ctx, ns, "ag", v1.PhaseDegraded)
	waitEvent(t, ns, "ag", "Warning/BackendsUnhealthy")
}

// TestBudgetStoreUnavailableIsDegraded: when the router-proxy reports that
// it cannot reach its shared budget store, the router is Degraded with
// BudgetStoreUnavailable and the failure mode in the message, with an
// event; once the store is back it is Ready again.
func TestBudgetStoreUnavailableIsDegraded(t *testing.T) {
	storeUp := func(st *proxyapi.Status) {
		st.BudgetStore = &proxyapi.BudgetStoreStatus{Healthy: true, Failure: "closed"}
	}
	ctx, ns, mr := readyProxyRouter(t, "store", storeUp)
	healthy := healthyProxy(mr, "qwen", "llama", "claude")
	storeUp(&healthy)

	down := healthyProxy(mr, "qwen", "llama", "claude")
	down.BudgetStore = &proxyapi.BudgetStoreStatus{Healthy: false, Failure: "closed", Message: "dial tcp 10.0.0.9:6379: connect: connection refused"}
	statuses.set(proxytarget.StatusURL(mr), down)
	got := waitCondition(t, ctx, ns, "store", v1.ConditionDegraded, metav1.ConditionTrue, targets.ReasonBudgetStoreUnavailable)
	msg := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionDegraded).Message
	if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "failure mode closed") {
		t.Errorf("Degraded message %q", msg)
	}
	waitPhase(t, ctx, ns, "store", v1.PhaseDegraded)
	waitEvent(t, ns, "store", "Warning/BudgetStoreUnavailable")

	statuses.set(proxytarget.StatusURL(mr), healthy)
	waitPhase(t, ctx, ns, "store", v1.PhaseReady)
}
