package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets"
)

var gatewayGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}

// TestGatewayPlaneControllerProcess: the controller process, as the chart's
// ServiceAccount, reconciles a Gateway-plane router whose Gateway is in
// another namespace. With RBAC as installed it reads the Gateway, its
// listeners' namespace policy and the status Envoy's controllers write: the
// router is Pending until the gateway accepts the route, then Ready with
// the Gateway's address as its endpoint.
func TestGatewayPlaneControllerProcess(t *testing.T) {
	e, admin, p := chartController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	gwNS, ns := e.NewNamespace(t), e.NewNamespace(t)
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(gatewayGVK)
	gw.SetNamespace(gwNS)
	gw.SetName("ai-gateway")
	_ = unstructured.SetNestedField(gw.Object, "envoy-ai-gateway", "spec", "gatewayClassName")
	_ = unstructured.SetNestedSlice(gw.Object, []any{map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP",
		"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}}, "spec", "listeners")
	if err := admin.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(gw.Object, []any{map[string]any{"type": "IPAddress", "value": "203.0.113.70"}}, "status", "addresses")
	if err := admin.Status().Update(ctx, gw); err != nil {
		t.Fatal(err)
	}

	doc := fmt.Sprintf(`
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen}
spec: {modelRef: qwen3-8b, runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: gw}
spec:
  dataPlane: Gateway
  gatewayRef: {name: ai-gateway, namespace: %s}
  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen}
  defaultRoute: qwen
`, gwNS)
	if errs := e.ApplyYAMLInNamespace(ctx, ns, []byte(doc)); len(errs) > 0 {
		t.Fatal(errs)
	}
	eventually(t, "InferenceService Ready", func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1.GroupVersion.WithKind("InferenceService"))
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "qwen"}, u); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, "Ready", "status", "phase")
		_ = unstructured.SetNestedField(u.Object, int64(1), "status", "readyReplicas")
		return admin.Status().Update(ctx, u)
	})

	router := func() *v1.ModelRouter {
		mr := &v1.ModelRouter{}
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw"}, mr); err != nil {
			t.Fatal(err)
		}
		return mr
	}
	ready := v1.ReadyCondition(v1.DataPlaneGateway)
	eventually(t, "Pending while the gateway has not answered", func() error {
		mr := router()
		c := meta.FindStatusCondition(mr.Status.Conditions, ready)
		if mr.Status.Phase != v1.PhasePending || c == nil || c.Reason != targets.ReasonAwaitingDataPlane {
			return fmt.Errorf("phase %q, %s %+v", mr.Status.Phase, ready, c)
		}
		return nil
	})

	// Play Envoy Gateway and Envoy AI Gateway: accept every route and policy.
	played := []struct {
		gvk   schema.GroupVersionKind
		field string
	}{
		{schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, "parents"},
		{schema.GroupVersionKind{Group: "aigateway.envoyproxy.io", Version: "v1beta1", Kind: "AIGatewayRoute"}, "conditions"},
		{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "BackendTrafficPolicy"}, "ancestors"},
	}
	eventually(t, "routes and policies accepted", func() error {
		n := 0
		for _, k := range played {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
			if err := admin.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			for i := range list.Items {
				if err := accept(ctx, admin, &list.Items[i], k.field, gwNS); err != nil {
					return err
				}
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("no route applied yet")
		}
		return nil
	})
	eventually(t, "Ready with the Gateway's address", func() error {
		mr := router()
		if mr.Status.Phase != v1.PhaseReady || mr.Status.Endpoint != "http://203.0.113.70" || mr.Status.Gateway == nil || !mr.Status.Gateway.RouteReady {
			return fmt.Errorf("phase %q endpoint %q gateway %+v conditions %+v", mr.Status.Phase, mr.Status.Endpoint, mr.Status.Gateway, mr.Status.Conditions)
		}
		return nil
	})
	p.stop(t)
}

// accept writes what a gateway controller writes on a route it accepted.
func accept(ctx context.Context, c client.Client, obj *unstructured.Unstructured, field, gwNS string) error {
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": typ, "message": "accepted by the played controller",
			"observedGeneration": obj.GetGeneration(), "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}
	}
	if field == "conditions" {
		_ = unstructured.SetNestedSlice(obj.Object, []any{cond("Accepted")}, "status", "conditions")
	} else {
		ref := "parentRef" // a route's parents; a policy's ancestors
		if field == "ancestors" {
			ref = "ancestorRef"
		}
		_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
			"controllerName": "example.test/played-gateway-controller",
			ref:              map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "ai-gateway", "namespace": gwNS},
			"conditions":     []any{cond("Accepted"), cond("ResolvedRefs")},
		}}, "status", field)
	}
	return c.Status().Update(ctx, obj)
}
