package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// proxyStatus is what the router-proxy's admin endpoint reported.
type proxyStatus struct {
	backends map[string]proxyapi.BackendStatus
	budgets  []proxyapi.BudgetStatus
}

// ProxyStatusURL is where the controller reads a router's proxy status: the
// admin Service on the admin port, at the status path.
func ProxyStatusURL(router *v1.ModelRouter) string {
	return fmt.Sprintf("http://%s.%s.svc:%d%s", naming.ProxyAdminServiceName(router.Name), router.Namespace, wellknown.AdminPort, wellknown.StatusPath)
}

// readProxyStatus asks the proxy for its live state; nil when it does not
// answer (status then keeps what it last reported).
func (r *Reconciler) readProxyStatus(ctx context.Context, router *v1.ModelRouter) *proxyStatus {
	get := r.GetStatus
	if get == nil {
		get = defaultGetStatus
	}
	body, err := get(ctx, ProxyStatusURL(router))
	if err != nil {
		logf.FromContext(ctx).V(1).Info("router-proxy status unavailable", "error", err.Error())
		return nil
	}
	var s proxyapi.Status
	if err := json.Unmarshal(body, &s); err != nil {
		logf.FromContext(ctx).Info("router-proxy status is not valid JSON", "error", err.Error())
		return nil
	}
	ps := &proxyStatus{backends: map[string]proxyapi.BackendStatus{}, budgets: s.Budgets}
	for _, b := range s.Backends {
		ps.backends[b.Name] = b
	}
	return ps
}

// planeCondition is the readiness condition type of each data plane.
var planeCondition = map[ir.DataPlane]string{
	ir.DataPlaneProxy:        v1.ConditionAvailable,
	ir.DataPlaneGateway:      v1.ConditionGatewayReady,
	ir.DataPlaneAgentGateway: v1.ConditionAgentGatewayReady,
}

// writeStatus computes status from what the reconcile did and writes it when
// anything but lastUpdated changed.
func (r *Reconciler) writeStatus(ctx context.Context, router *v1.ModelRouter, out *outcome) error {
	st := router.Status.DeepCopy()
	r.computeStatus(ctx, router, out, st)
	prev := router.Status.DeepCopy()
	prev.LastUpdated, st.LastUpdated = nil, nil
	if equality.Semantic.DeepEqual(prev, st) {
		return nil
	}
	now := metav1.Now()
	st.LastUpdated = &now
	orig := router.DeepCopy()
	router.Status = *st
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, router, client.MergeFrom(orig)))
}

func (r *Reconciler) computeStatus(ctx context.Context, router *v1.ModelRouter, out *outcome, st *v1.ModelRouterStatus) {
	gen := router.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: truncate(msg, 32000), ObservedGeneration: gen})
	}
	plane := out.plane
	planeCond := planeCondition[plane]
	for p, t := range planeCondition {
		if p != plane {
			meta.RemoveStatusCondition(&st.Conditions, t)
		}
	}
	if plane != ir.DataPlaneGateway {
		st.Gateway = nil
		// A refused switch away from Gateway leaves its objects serving:
		// while a SecurityPolicy of this router is in place, say so.
		if out.authKnown && out.authLive {
			st.Gateway = &v1.GatewayStatus{AuthEnabled: true}
		}
	}
	if plane != ir.DataPlaneAgentGateway {
		st.AgentGateway = nil
	}

	// 1. The spec (and the plane's own checks) refused it: nothing was
	// applied or pruned, the objects of the last valid generation stay.
	if out.diags.HasErrors() {
		errs := out.diags.Errors().Sorted()
		set(v1.ConditionValidated, metav1.ConditionFalse, errs[0].Reason,
			fmt.Sprintf("%d error(s): %s", len(errs), diagLines(errs)))
		st.Phase = v1.PhaseFailed
		return
	}
	valid := "the spec is valid"
	if out.summary != "" {
		valid += ": " + out.summary
	}
	if w := out.diags.Warnings(); len(w) > 0 {
		valid += fmt.Sprintf("; %d warning(s): %s", len(w), diagLines(w))
	}
	set(v1.ConditionValidated, metav1.ConditionTrue, ReasonSpecValid, valid)

	fail := func(reason, msg string) {
		if planeCond != "" {
			set(planeCond, metav1.ConditionFalse, reason, msg)
		}
		st.Phase = v1.PhaseFailed
		if plane == ir.DataPlaneGateway && out.authKnown && (st.Gateway != nil || out.authLive) {
			if st.Gateway == nil {
				st.Gateway = &v1.GatewayStatus{}
			}
			st.Gateway.AuthEnabled = out.authLive
		}
		if st.Gateway != nil {
			st.Gateway.RouteReady = false
		}
		if st.AgentGateway != nil {
			st.AgentGateway.PoolReady = false
		}
	}
	switch {
	case out.notBuilt != "":
		fail(ReasonDataPlaneNotImplemented, out.notBuilt+"; nothing is generated for this router")
		return
	case len(out.missing) > 0:
		fail(ReasonCRDsNotInstalled, fmt.Sprintf("the %s data plane needs CRDs that are not installed: %s; nothing is generated until they are (rechecked when CRDs change)",
			plane, strings.Join(sortedKinds(out.missing), ", ")))
		return
	case out.applyErr != nil:
		fail(ReasonApplyFailed, out.applyErr.Error())
		return
	case !out.applied:
		fail(ReasonApplyFailed, "not applied")
		return
	}
	cr := out.router

	// Backends.
	prevBackends := map[string]v1.BackendStatus{}
	for _, b := range st.Backends {
		prevBackends[b.Name] = b
	}
	st.Backends = nil
	var unhealthy, unknown []string
	probed := out.proxy != nil
	for i := range cr.Backends {
		b := &cr.Backends[i]
		bs := v1.BackendStatus{Name: b.Name, Tier: v1.Tier(b.Tier), Address: b.Upstream.URL}
		switch p, ok := prevBackends[b.Name]; {
		case out.proxy != nil && hasBackend(out.proxy, b.Name):
			ps := out.proxy.backends[b.Name]
			bs.Healthy = ps.Healthy && !ps.Quarantined
			bs.Message = ps.Message
			if ps.Quarantined && bs.Message == "" {
				bs.Message = "quarantined after a failure"
			}
			if !ps.LastProbeTime.IsZero() {
				t := metav1.NewTime(ps.LastProbeTime)
				bs.LastProbeTime = &t
			}
		case ok && p.LastProbeTime != nil && p.Address == bs.Address && plane == ir.DataPlaneProxy:
			// The proxy did not answer: keep what it last reported.
			bs.Healthy, bs.Message, bs.LastProbeTime = p.Healthy, p.Message, p.LastProbeTime
		case b.Local != nil:
			bs.Healthy, bs.Message = localReadiness(b.Local)
		default:
			bs.Message = "not probed yet: the router-proxy has not reported this backend"
			if plane != ir.DataPlaneProxy {
				bs.Message = fmt.Sprintf("external provider; the %s data plane does not report its health", plane)
			} else {
				unknown = append(unknown, b.Name)
			}
		}
		if !bs.Healthy && !contains(unknown, b.Name) && (b.Local != nil || plane == ir.DataPlaneProxy) {
			unhealthy = append(unhealthy, b.Name)
		}
		st.Backends = append(st.Backends, bs)
	}
	switch {
	case len(unhealthy) > 0:
		set(v1.ConditionBackendsReady, metav1.ConditionFalse, ReasonBackendsNotReady,
			fmt.Sprintf("%d of %d backend(s) not ready: %s", len(unhealthy), len(cr.Backends), strings.Join(unhealthy, ", ")))
	case len(unknown) > 0:
		set(v1.ConditionBackendsReady, metav1.ConditionUnknown, ReasonAwaitingProbe,
			"waiting for the router-proxy's first probe of: "+strings.Join(unknown, ", "))
	case probed:
		set(v1.ConditionBackendsReady, metav1.ConditionTrue, ReasonBackendsHealthy, fmt.Sprintf("all %d backend(s) healthy (router-proxy probes)", len(cr.Backends)))
	default:
		set(v1.ConditionBackendsReady, metav1.ConditionTrue, ReasonBackendsResolved, fmt.Sprintf("all %d backend(s) resolved; local InferenceServices are Ready", len(cr.Backends)))
	}

	active := int32(0)
	for _, rule := range cr.Rules {
		if len(rule.Candidates) > 0 {
			active++
		}
	}
	st.ActiveRules = active

	// Budgets: the proxy's numbers, or the last ones it reported.
	budgetNames := map[string]bool{}
	for _, b := range cr.Policy.Budgets {
		budgetNames[b.Name] = true
	}
	if out.proxy != nil {
		st.BudgetUtilization = nil
		for _, b := range out.proxy.budgets {
			if budgetNames[b.Name] {
				st.BudgetUtilization = append(st.BudgetUtilization, v1.BudgetUtilization{Name: b.Name, TokensUsed: b.TokensUsed, USDUsed: b.USDUsed, Utilization: b.Utilization})
			}
		}
	} else {
		var kept []v1.BudgetUtilization
		for _, b := range st.BudgetUtilization {
			if budgetNames[b.Name] {
				kept = append(kept, b)
			}
		}
		st.BudgetUtilization = kept
	}

	// The plane itself.
	planeReady := false
	switch plane {
	case ir.DataPlaneProxy:
		st.Endpoint = ""
		if svc := out.live[dataPlaneServiceKey(cr)]; svc != nil {
			st.Endpoint = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d%s", svc.GetName(), svc.GetNamespace(), servicePort(svc, cr.Exposure.Port), cr.Exposure.Path)
		}
		ready, msg := deploymentReady(out)
		if ready {
			set(v1.ConditionAvailable, metav1.ConditionTrue, ReasonDeploymentReady, msg)
		} else {
			set(v1.ConditionAvailable, metav1.ConditionFalse, ReasonDeploymentNotReady, msg)
		}
		planeReady = ready
	default:
		endpoint := gatewayEndpoint(ctx, r.Reader, cr)
		msg := fmt.Sprintf("applied %d object(s): %s", len(out.desired), out.summary)
		planeReady = len(out.taken) == 0
		reason := ReasonApplied
		if out.conflict != "" {
			reason, msg = ReasonConflictingPolicy, out.conflict
		}
		status := metav1.ConditionTrue
		if !planeReady {
			status, reason, msg = metav1.ConditionFalse, ReasonObjectNameTaken, takenMessage(out.taken)
		}
		set(planeCond, status, reason, msg)
		if out.conflict != "" {
			set(planeCond, metav1.ConditionFalse, ReasonConflictingPolicy, out.conflict)
		}
		if plane == ir.DataPlaneGateway {
			auth := out.authLive
			if !out.authKnown {
				auth = generates(out, "SecurityPolicy") // applied and, unless a name was taken, pruned
			}
			st.Gateway = &v1.GatewayStatus{RouteReady: planeReady, Endpoint: endpoint, AuthEnabled: auth}
		} else {
			st.AgentGateway = &v1.AgentGatewayStatus{PoolReady: planeReady}
			if planeReady {
				st.AgentGateway.Endpoint = endpoint
			}
		}
		st.Endpoint = endpoint
	}

	// Degraded and phase.
	var degradedReason, degradedMsg string
	switch {
	case len(out.taken) > 0:
		degradedReason = ReasonObjectNameTaken
		for _, t := range out.taken {
			if t.proxyName {
				degradedReason = ReasonRouterProxyNameTaken
			}
		}
		degradedMsg = takenMessage(out.taken)
	case out.conflict != "":
		degradedReason, degradedMsg = ReasonConflictingPolicy, out.conflict
	case planeReady && len(unhealthy) > 0:
		degradedReason, degradedMsg = ReasonBackendsUnhealthy, "serving, but these backends are not ready: "+strings.Join(unhealthy, ", ")
	}
	if degradedReason != "" {
		set(v1.ConditionDegraded, metav1.ConditionTrue, degradedReason, degradedMsg)
	} else {
		set(v1.ConditionDegraded, metav1.ConditionFalse, ReasonNotDegraded, "every object applied; no unhealthy backend")
	}
	switch {
	case !planeReady && len(out.taken) > 0 && st.Endpoint == "":
		st.Phase = v1.PhaseFailed
	case !planeReady:
		st.Phase = v1.PhaseProvisioning
	case degradedReason != "":
		st.Phase = v1.PhaseDegraded
	case len(unknown) > 0:
		st.Phase = v1.PhaseProvisioning
	default:
		st.Phase = v1.PhaseReady
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func hasBackend(p *proxyStatus, name string) bool {
	_, ok := p.backends[name]
	return ok
}

func localReadiness(l *ir.LocalBackend) (bool, string) {
	switch {
	case !l.Found:
		// Nothing in the cluster says this backend can serve: never report
		// it healthy.
		return false, fmt.Sprintf("InferenceService %s not found (InferenceServiceNotFound); requests go to Service %s:%d", l.InferenceService, l.ServiceName, l.Port)
	case l.Ready:
		return true, fmt.Sprintf("InferenceService %s is Ready", l.InferenceService)
	default:
		return false, fmt.Sprintf("InferenceService %s is not Ready", l.InferenceService)
	}
}

func takenMessage(ts []taken) string {
	var parts []string
	for _, t := range ts {
		owner := "no owner"
		if t.controller != "" {
			owner = "controlled by " + t.controller
		}
		p := fmt.Sprintf("%s already exists (%s) and is not controlled by this ModelRouter; it is never adopted or overwritten", describe(t.obj), owner)
		if t.proxyName {
			if t.previous != "" {
				p += fmt.Sprintf("; keeping the previous Service %s", t.previous)
			} else {
				p += "; no previous Service to keep"
			}
			p += ". Choose another spec.proxy.serviceName or remove that Service"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// dataPlaneServiceKey is the key of the desired data-plane Service.
func dataPlaneServiceKey(cr *ir.Router) string {
	return key(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, cr.Namespace, cr.Proxy.ServiceName)
}

func servicePort(svc *unstructured.Unstructured, def int32) int64 {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if n, ok := m["port"].(int64); ok {
				return n
			}
		}
	}
	return int64(def)
}

// deploymentReady reads the proxy Deployment's readiness:
// readyReplicas >= spec.replicas > 0 for the current generation.
func deploymentReady(out *outcome) (bool, string) {
	for _, o := range out.desired {
		if o.GetKind() != "Deployment" {
			continue
		}
		live := out.live[objKey(o)]
		if live == nil {
			return false, "Deployment " + o.GetName() + " not applied"
		}
		want, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(live.Object, "status", "readyReplicas")
		observed, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		msg := fmt.Sprintf("Deployment %s: %d/%d replicas ready", o.GetName(), ready, want)
		if want > 0 && ready >= want && observed >= live.GetGeneration() {
			return true, msg
		}
		return false, msg
	}
	return false, "no Deployment generated"
}

func generates(out *outcome, kind string) bool {
	for _, o := range out.desired {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

// gatewayEndpoint is the first address the referenced Gateway reports, as a
// URL; empty when the Gateway or its addresses are not known.
func gatewayEndpoint(ctx context.Context, c client.Reader, cr *ir.Router) string {
	var name, ns string
	switch {
	case cr.Gateway != nil:
		name, ns = cr.Gateway.Name, cr.Gateway.Namespace
	case cr.AgentGateway != nil:
		name, ns = cr.AgentGateway.Name, cr.AgentGateway.Namespace
	default:
		return ""
	}
	if ns == "" {
		ns = cr.Namespace
	}
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, gw); err != nil {
		return ""
	}
	addrs, _, _ := unstructured.NestedSlice(gw.Object, "status", "addresses")
	for _, a := range addrs {
		if m, ok := a.(map[string]any); ok {
			if v, ok := m["value"].(string); ok && v != "" {
				return "http://" + v
			}
		}
	}
	return ""
}

var _ = reflect.DeepEqual
