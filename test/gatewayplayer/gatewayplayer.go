// Package gatewayplayer plays the gateway controllers (Envoy Gateway, Envoy
// AI Gateway, agentgateway, the Inference Extension) that a cluster runs
// beside the ModelRouter controller and envtest does not: it gives the
// status those controllers write on a generated route, pool or policy, in
// the shapes of the upstream CRDs in shared/crds. The controller's tests
// and bench-controller play them with it.
package gatewayplayer

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is a kind whose status a played controller writes, with where.
type Kind struct {
	GVK   schema.GroupVersionKind
	Field string // parents, ancestors, or conditions (AIGatewayRoute)
}

// Kinds are the kinds the played controllers answer for.
var Kinds = []Kind{
	{schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, "parents"},
	{schema.GroupVersionKind{Group: "inference.networking.k8s.io", Version: "v1", Kind: "InferencePool"}, "parents"},
	{schema.GroupVersionKind{Group: "aigateway.envoyproxy.io", Version: "v1beta1", Kind: "AIGatewayRoute"}, "conditions"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "BackendTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "SecurityPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "ClientTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}, "ancestors"},
}

// FieldOf is where the status of gvk is written ("" for a kind not played).
func FieldOf(gvk schema.GroupVersionKind) string {
	for _, k := range Kinds {
		if k.GVK == gvk {
			return k.Field
		}
	}
	return ""
}

// Verdicts a played controller gives.
const (
	Accept   = "accept"
	Reject   = "reject"
	Conflict = "conflict"
)

// Conditions are the conditions a played controller writes for verdict on
// an object of generation gen whose status it writes at field (none for a
// verdict it does not know).
func Conditions(verdict, field string, gen int64, now time.Time) []any {
	at := now.UTC().Format(time.RFC3339)
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "observedGeneration": gen, "lastTransitionTime": at}
	}
	switch {
	case verdict == Accept && field == "conditions":
		return []any{cond("Accepted", "True", "Accepted", "AIGatewayRoute reconciled")}
	case verdict == Accept:
		return []any{cond("Accepted", "True", "Accepted", "accepted"), cond("ResolvedRefs", "True", "ResolvedRefs", "resolved")}
	case verdict == Reject && field == "conditions":
		return []any{cond("NotAccepted", "True", "NotAccepted", "backend not-there not found")}
	case verdict == Reject:
		return []any{cond("Accepted", "False", "Invalid", "the played controller refuses it: unsupported value"), cond("ResolvedRefs", "False", "BackendNotFound", "backend not found")}
	case verdict == Conflict:
		return []any{cond("Accepted", "False", "Conflicted", "a policy with higher precedence targets the same Gateway")}
	}
	return nil
}

// SetStatus writes conds into obj's status at field: as its conditions, or
// as its one parent or ancestor entry, from the played controller, for the
// Gateway obj attaches to.
func SetStatus(obj *unstructured.Unstructured, field string, conds []any) {
	if field == "conditions" {
		_ = unstructured.SetNestedSlice(obj.Object, conds, "status", "conditions")
		return
	}
	ref := parentOf(obj)
	entry := map[string]any{"controllerName": "example.test/played-gateway-controller", "conditions": conds}
	if field == "parents" {
		entry["parentRef"] = ref
	} else {
		entry["ancestorRef"] = ref
	}
	_ = unstructured.SetNestedSlice(obj.Object, []any{entry}, "status", field)
}

// Same reports whether obj's status already carries conds' types, statuses
// and reasons for their generation: writing them again would change
// nothing.
func Same(obj *unstructured.Unstructured, field string, conds []any) bool {
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
