package targets

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// Reasons a gateway plane reports on its ReadyCondition when the data plane
// itself, not the apply, decides (docs/controller.md has the table).
const (
	ReasonGatewayNotFound     = "GatewayNotFound"
	ReasonRouteNotAllowed     = "RouteNotAllowed"
	ReasonAwaitingDataPlane   = "AwaitingDataPlane"
	ReasonRejectedByDataPlane = "RejectedByDataPlane"
	ReasonPolicyConflicted    = "PolicyConflicted"
)

var (
	// GatewayGVK is the Gateway API Gateway both gateway planes attach to.
	GatewayGVK   = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}
	namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

// GatewayRef is the Gateway a router attaches to.
type GatewayRef struct {
	Namespace, Name string
	// SectionName limits the attachment to one listener; "" means any.
	SectionName string
}

// CheckGateway reports why the Gateway cannot carry the router's route:
// it does not exist (GatewayNotFound), or no listener admits a route of
// kind HTTPRoute from routeNamespace (RouteNotAllowed: allowedRoutes
// namespaces Same, All or Selector, and allowedRoutes kinds). It returns ""
// when a listener admits it, and when the Gateway cannot be read (the
// acceptance read-back then tells).
func CheckGateway(ctx context.Context, c ClusterReader, gw GatewayRef, routeNamespace string) (reason, msg string) {
	obj, err := c.Get(ctx, GatewayGVK, gw.Namespace, gw.Name)
	if err != nil {
		return "", ""
	}
	if obj == nil {
		return ReasonGatewayNotFound, fmt.Sprintf("Gateway %s/%s does not exist; the route is applied and waits for it (rechecked periodically)", gw.Namespace, gw.Name)
	}
	listeners, _, _ := unstructured.NestedSlice(obj.Object, "spec", "listeners")
	var refusals []string
	for _, l := range listeners {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if gw.SectionName != "" && name != gw.SectionName {
			continue
		}
		why := admits(ctx, c, m, gw.Namespace, routeNamespace)
		if why == "" {
			return "", ""
		}
		refusals = append(refusals, fmt.Sprintf("listener %q %s", name, why))
	}
	if len(refusals) == 0 {
		return ReasonRouteNotAllowed, fmt.Sprintf("Gateway %s/%s has no listener named %q", gw.Namespace, gw.Name, gw.SectionName)
	}
	return ReasonRouteNotAllowed, fmt.Sprintf("no listener of Gateway %s/%s admits an HTTPRoute from namespace %s: %s", gw.Namespace, gw.Name, routeNamespace, strings.Join(refusals, "; "))
}

// admits says why a listener refuses HTTPRoutes from routeNamespace, or "".
func admits(ctx context.Context, c ClusterReader, listener map[string]any, gwNamespace, routeNamespace string) string {
	allowed, _, _ := unstructured.NestedMap(listener, "allowedRoutes")
	if kinds, ok := allowed["kinds"].([]any); ok && len(kinds) > 0 {
		found := false
		for _, k := range kinds {
			km, _ := k.(map[string]any)
			group, hasGroup := km["group"].(string)
			if km["kind"] == "HTTPRoute" && (!hasGroup || group == "gateway.networking.k8s.io") {
				found = true
			}
		}
		if !found {
			return "does not admit kind HTTPRoute (allowedRoutes.kinds)"
		}
	}
	from, _, _ := unstructured.NestedString(allowed, "namespaces", "from")
	switch from {
	case "All":
		return ""
	case "Selector":
		sel, _, _ := unstructured.NestedMap(allowed, "namespaces", "selector")
		ls := &metav1.LabelSelector{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, ls); err != nil {
			return "has an unreadable namespace selector"
		}
		selector, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return "has an invalid namespace selector"
		}
		ns, err := c.Get(ctx, namespaceGVK, "", routeNamespace)
		if err != nil || ns == nil {
			return "selects namespaces by label and namespace " + routeNamespace + " could not be read"
		}
		if !selector.Matches(labels.Set(ns.GetLabels())) {
			return "selects namespaces by label (" + selector.String() + ") and " + routeNamespace + " does not match"
		}
		return ""
	default: // Same, the Gateway API default
		if routeNamespace != gwNamespace {
			return "admits routes only from its own namespace " + gwNamespace + " (allowedRoutes.namespaces.from: Same)"
		}
		return ""
	}
}

// Verdict is the data plane's answer about the objects of one router.
type Verdict struct {
	// Reason is "" when every object was accepted, else one of
	// ReasonRejectedByDataPlane, ReasonPolicyConflicted, ReasonAwaitingDataPlane.
	Reason  string
	Message string
}

// statusOf says where a kind's controller reports acceptance: a route's or
// pool's status.parents, a policy's status.ancestors, or (Envoy AI Gateway's
// AIGatewayRoute) status.conditions itself.
var statusOf = map[string]string{
	"HTTPRoute": "parents", "AIGatewayRoute": "conditions", "InferencePool": "parents",
	"BackendTrafficPolicy": "ancestors", "SecurityPolicy": "ancestors", "AgentgatewayPolicy": "ancestors",
	"ClientTrafficPolicy": "ancestors",
}

// Acceptance reads the status the data plane's controllers wrote on the
// desired objects: Accepted and ResolvedRefs of each parent or ancestor, for
// the object's current generation. A rejected object outweighs a conflicted
// policy, which outweighs one not answered yet. Objects of kinds that carry
// no such status are not read.
func Acceptance(ctx context.Context, c ClusterReader, desired []*unstructured.Unstructured) Verdict {
	var rejected, conflicted, waiting []string
	for _, d := range desired {
		field, ok := statusOf[d.GetKind()]
		if !ok {
			continue
		}
		name := d.GetKind() + " " + d.GetNamespace() + "/" + d.GetName()
		live, err := c.Get(ctx, d.GroupVersionKind(), d.GetNamespace(), d.GetName())
		if err != nil || live == nil {
			waiting = append(waiting, name)
			continue
		}
		entries, _, _ := unstructured.NestedSlice(live.Object, "status", field)
		if field == "conditions" && len(entries) > 0 {
			st, _, _ := unstructured.NestedMap(live.Object, "status")
			entries = []any{st}
		}
		if len(entries) == 0 {
			waiting = append(waiting, name)
			continue
		}
		answered := false
		for _, e := range entries {
			em, _ := e.(map[string]any)
			conds, _, _ := unstructured.NestedSlice(em, "conditions")
			for _, cv := range conds {
				cm, _ := cv.(map[string]any)
				typ, _ := cm["type"].(string)
				status, _ := cm["status"].(string)
				reason, _ := cm["reason"].(string)
				message, _ := cm["message"].(string)
				gen, _, _ := unstructured.NestedInt64(cm, "observedGeneration")
				if typ == "NotAccepted" && status == "True" { // Envoy AI Gateway's refusal
					typ, status = "Accepted", "False"
				}
				if typ != "Accepted" && typ != "ResolvedRefs" {
					continue
				}
				if gen != 0 && gen < live.GetGeneration() {
					continue // about an older generation: no answer yet
				}
				answered = answered || typ == "Accepted"
				if status != "False" {
					continue
				}
				what := fmt.Sprintf("%s: %s %s (%s)", name, typ, reason, message)
				if reason == "Conflicted" || reason == "Overridden" {
					conflicted = append(conflicted, what)
				} else {
					rejected = append(rejected, what)
				}
			}
		}
		if !answered {
			waiting = append(waiting, name)
		}
	}
	switch {
	case len(rejected) > 0:
		sort.Strings(rejected)
		return Verdict{ReasonRejectedByDataPlane, "the data plane refused " + strings.Join(rejected, "; ")}
	case len(conflicted) > 0:
		sort.Strings(conflicted)
		return Verdict{ReasonPolicyConflicted, "another policy takes precedence: " + strings.Join(conflicted, "; ")}
	case len(waiting) > 0:
		sort.Strings(waiting)
		return Verdict{ReasonAwaitingDataPlane, "applied; waiting for the data plane's controller to accept " + strings.Join(waiting, ", ")}
	}
	return Verdict{}
}

// AddForeignConflict records what a plane's CheckForeign found (reason and
// msg, "" for nothing) beside the conflict ObserveGatewayPlane read back
// (one of the router's own policies Conflicted: PolicyConflicted), in the
// one order both gateway planes use: the foreign finding first, its reason
// the condition's, since it names the object in the way and what to do
// about it; the router's own conflicted policy follows as "also", often the
// same event seen from the router's side. Neither is dropped.
func (o *Observation) AddForeignConflict(reason, msg string) {
	if reason == "" {
		return
	}
	if o.Conflict != "" {
		msg += "; also: " + o.Conflict
	}
	o.Conflict, o.ConflictReason = msg, reason
}

// ObserveGatewayPlane is the read-back both gateway planes share: the
// Gateway's presence and listeners first, then the acceptance of every
// object. It fills obs's readiness, reason, message, phase and conflict;
// acceptedMsg is the message when all is accepted.
func ObserveGatewayPlane(ctx context.Context, c ClusterReader, gw GatewayRef, in Applied, obs *Observation, acceptedMsg string) {
	obs.Ready, obs.Reason, obs.Message = true, ReasonApplied, acceptedMsg
	if in.Taken != "" {
		obs.Ready, obs.Reason, obs.Message = false, ReasonObjectNameTaken, in.Taken
		return
	}
	if reason, msg := CheckGateway(ctx, c, gw, in.Router.Namespace); reason != "" {
		obs.Ready, obs.Reason, obs.Message, obs.Phase = false, reason, msg, v1.PhasePending
		return
	}
	switch v := Acceptance(ctx, c, in.Desired); v.Reason {
	case ReasonRejectedByDataPlane:
		obs.Ready, obs.Reason, obs.Message, obs.Phase = false, v.Reason, v.Message, v1.PhaseFailed
	case ReasonAwaitingDataPlane:
		obs.Ready, obs.Reason, obs.Message, obs.Phase = false, v.Reason, v.Message, v1.PhasePending
	case ReasonPolicyConflicted:
		obs.Conflict, obs.ConflictReason = v.Message, v.Reason
	}
}
