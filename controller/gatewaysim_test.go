package controller_test

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The suite plays the gateway controllers (Envoy Gateway, Envoy AI Gateway,
// agentgateway, the Inference Extension) that a cluster runs beside ours:
// it writes on every generated route, pool and policy the status those
// controllers write, in the shapes of the upstream CRDs in ../shared/crds.
// A test chooses the verdict for one object with setVerdict.

// Verdicts a played gateway controller gives.
const (
	verdictAccept   = "accept"
	verdictReject   = "reject"
	verdictConflict = "conflict"
	// verdictSilent writes nothing, as before a controller got to it.
	verdictSilent = "silent"
)

var verdicts sync.Map // "Kind ns/name" -> verdict

// setVerdict chooses how the played controller answers for one object.
func setVerdict(kind, ns, name, v string) { verdicts.Store(kind+" "+ns+"/"+name, v) }

// playedKinds are the kinds whose status the played controllers write, with
// where they write it.
var playedKinds = []struct {
	gvk   schema.GroupVersionKind
	field string // parents, ancestors, or conditions (AIGatewayRoute)
}{
	{schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, "parents"},
	{schema.GroupVersionKind{Group: "inference.networking.k8s.io", Version: "v1", Kind: "InferencePool"}, "parents"},
	{schema.GroupVersionKind{Group: "aigateway.envoyproxy.io", Version: "v1beta1", Kind: "AIGatewayRoute"}, "conditions"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "BackendTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "SecurityPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "ClientTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}, "ancestors"},
}

// playGatewayControllers answers for every played object until ctx ends.
func playGatewayControllers(ctx context.Context, c client.Client) {
	for {
		for _, k := range playedKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
			if err := c.List(ctx, list); err != nil {
				continue // not served on this API server
			}
			for i := range list.Items {
				answer(ctx, c, &list.Items[i], k.gvk, k.field)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answer writes the verdict's status on obj unless it is already there for
// obj's generation.
func answer(ctx context.Context, c client.Client, obj *unstructured.Unstructured, gvk schema.GroupVersionKind, field string) {
	v := verdictAccept
	if s, ok := verdicts.Load(gvk.Kind + " " + obj.GetNamespace() + "/" + obj.GetName()); ok {
		v = s.(string)
	}
	if v == verdictSilent {
		return
	}
	gen := obj.GetGeneration()
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "observedGeneration": gen, "lastTransitionTime": now}
	}
	var conds []any
	switch {
	case v == verdictAccept && field == "conditions":
		conds = []any{cond("Accepted", "True", "Accepted", "AIGatewayRoute reconciled")}
	case v == verdictAccept:
		conds = []any{cond("Accepted", "True", "Accepted", "accepted"), cond("ResolvedRefs", "True", "ResolvedRefs", "resolved")}
	case v == verdictReject && field == "conditions":
		conds = []any{cond("NotAccepted", "True", "NotAccepted", "backend not-there not found")}
	case v == verdictReject:
		conds = []any{cond("Accepted", "False", "Invalid", "the played controller refuses it: unsupported value"), cond("ResolvedRefs", "False", "BackendNotFound", "backend not found")}
	case v == verdictConflict:
		conds = []any{cond("Accepted", "False", "Conflicted", "a policy with higher precedence targets the same Gateway")}
	}
	// Idempotent: the same verdict for the same generation is written once.
	if current, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status"); current != nil && sameVerdict(obj, field, conds) {
		return
	}
	if field == "conditions" {
		_ = unstructured.SetNestedSlice(obj.Object, conds, "status", "conditions")
	} else {
		ref := parentOf(obj)
		entry := map[string]any{"controllerName": "example.test/played-gateway-controller", "conditions": conds}
		if field == "parents" {
			entry["parentRef"] = ref
		} else {
			entry["ancestorRef"] = ref
		}
		_ = unstructured.SetNestedSlice(obj.Object, []any{entry}, "status", field)
	}
	_ = c.Status().Update(ctx, obj)
}

// parentOf is the Gateway an object attaches to (its first parentRef or
// targetRef), as a status parent or ancestor reference.
func parentOf(obj *unstructured.Unstructured) map[string]any {
	for _, path := range [][]string{{"spec", "parentRefs"}, {"spec", "targetRefs"}} {
		refs, _, _ := unstructured.NestedSlice(obj.Object, path...)
		if len(refs) > 0 {
			m, _ := refs[0].(map[string]any)
			out := map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": m["name"]}
			if ns, ok := m["namespace"].(string); ok {
				out["namespace"] = ns
			}
			if kind, ok := m["kind"].(string); ok && !strings.EqualFold(kind, "Gateway") {
				out["kind"], out["group"] = kind, m["group"]
			}
			return out
		}
	}
	return map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "unknown"}
}

// sameVerdict reports whether obj's status already carries conds' types,
// statuses and reasons for its generation.
func sameVerdict(obj *unstructured.Unstructured, field string, conds []any) bool {
	var have []any
	if field == "conditions" {
		have, _, _ = unstructured.NestedSlice(obj.Object, "status", "conditions")
	} else {
		entries, _, _ := unstructured.NestedSlice(obj.Object, "status", field)
		if len(entries) != 1 {
			return false
		}
		have, _, _ = unstructured.NestedSlice(entries[0].(map[string]any), "conditions")
	}
	if len(have) != len(conds) {
		return false
	}
	for i := range conds {
		a, b := have[i].(map[string]any), conds[i].(map[string]any)
		for _, k := range []string{"type", "status", "reason"} {
			if a[k] != b[k] {
				return false
			}
		}
		if g, _, _ := unstructured.NestedInt64(a, "observedGeneration"); g != b["observedGeneration"].(int64) {
			return false
		}
	}
	return true
}
