package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// writeStatus computes status from what the reconcile did and writes it when
// anything but lastUpdated changed.
func (r *Reconciler) writeStatus(ctx context.Context, router *v1.ModelRouter, out *outcome) error {
	st := router.Status.DeepCopy()
	r.computeStatus(ctx, router, out, st)
	prev := router.Status.DeepCopy()
	last := prev.LastUpdated
	prev.LastUpdated, st.LastUpdated = nil, nil
	// Write when something changed, and otherwise refresh lastUpdated at
	// most once per recheck interval: no write storm, no stale timestamp.
	fresh := last != nil && time.Since(last.Time) < r.recheckInterval()
	if equality.Semantic.DeepEqual(prev, st) && fresh {
		return nil
	}
	r.emitTransitions(router, &router.Status, st)
	now := metav1.Now()
	st.LastUpdated = &now
	orig := router.DeepCopy()
	router.Status = *st
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, router, client.MergeFrom(orig)))
}

// emitTransitions records an event when a readiness condition or Degraded
// changes status or reason: Normal when it turns True (Degraded: False),
// Warning otherwise.
func (r *Reconciler) emitTransitions(router *v1.ModelRouter, before, after *v1.ModelRouterStatus) {
	if r.Recorder == nil {
		return
	}
	for _, c := range after.Conditions {
		if c.Type == v1.ConditionValidated || c.Type == v1.ConditionBackendsReady {
			continue // validation problems are events of their own (emitWarnings)
		}
		old := meta.FindStatusCondition(before.Conditions, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		good := c.Status == metav1.ConditionTrue
		if c.Type == v1.ConditionDegraded {
			good = c.Status == metav1.ConditionFalse
		}
		kind := corev1.EventTypeWarning
		if good {
			kind = corev1.EventTypeNormal
		}
		r.Recorder.Eventf(router, nil, kind, c.Reason, "Reconcile", "%s=%s: %s", c.Type, c.Status, truncate(c.Message, 1000))
	}
}

func (r *Reconciler) computeStatus(ctx context.Context, router *v1.ModelRouter, out *outcome, st *v1.ModelRouterStatus) {
	gen := router.Generation
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: truncate(msg, 32000), ObservedGeneration: gen})
	}
	plane, cluster := out.plane, out.cluster
	planeCond := v1.ReadyCondition(v1.DataPlane(plane)) // a plane this build lacks still reports
	if cluster != nil {
		planeCond = cluster.ReadyCondition()
	}
	// Every other plane's condition and status fields go; what a plane left
	// serving (a refused switch keeps the last valid objects) it says itself.
	for p, c := range r.Registry.Clusters() {
		if p != plane {
			meta.RemoveStatusCondition(&st.Conditions, c.ReadyCondition())
			c.ClearStatus(st, out.lingering[p])
		}
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
		if cluster != nil {
			cluster.SetStatus(st, targets.Observation{Lingering: out.lingering[plane]})
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
	obs := out.obs
	probes := cluster.ProbesBackends()
	probed := obs.Health != nil
	for i := range cr.Backends {
		b := &cr.Backends[i]
		bs := v1.BackendStatus{Name: b.Name, Tier: v1.Tier(b.Tier), Address: b.Upstream.URL}
		switch p, ok := prevBackends[b.Name]; {
		case hasBackend(obs.Health, b.Name):
			ps := obs.Health[b.Name]
			bs.Healthy = ps.Healthy && !ps.Quarantined
			bs.Message = ps.Message
			if ps.Quarantined && bs.Message == "" {
				bs.Message = "quarantined after a failure"
			}
			if !ps.LastProbeTime.IsZero() {
				t := metav1.NewTime(ps.LastProbeTime)
				bs.LastProbeTime = &t
			}
		case ok && p.LastProbeTime != nil && p.Address == bs.Address && probes:
			// The plane did not answer: keep what it last reported.
			bs.Healthy, bs.Message, bs.LastProbeTime = p.Healthy, p.Message, p.LastProbeTime
		case b.Local != nil:
			bs.Healthy, bs.Message = localReadiness(b.Local)
		default:
			bs.Message = "not probed yet: the router-proxy has not reported this backend"
			if !probes {
				bs.Message = fmt.Sprintf("%s: external provider; the %s data plane does not report its health", ReasonHealthUnknown, plane)
			} else {
				unknown = append(unknown, b.Name)
			}
		}
		if !bs.Healthy && !contains(unknown, b.Name) && (b.Local != nil || probes) {
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

	// A rule is active when a candidate can serve it: healthy, or of unknown
	// health (an external provider on a gateway plane, or not probed yet).
	canServe := map[string]bool{}
	for _, bs := range st.Backends {
		canServe[bs.Name] = bs.Healthy || !contains(unhealthy, bs.Name)
	}
	active := int32(0)
	for _, rule := range cr.Rules {
		if slices.ContainsFunc(rule.Candidates, func(n string) bool { return canServe[n] }) {
			active++
		}
	}
	st.ActiveRules = active

	// Budgets: the proxy's numbers, or the last ones it reported.
	budgetNames := map[string]bool{}
	for _, b := range cr.Policy.Budgets {
		budgetNames[b.Name] = true
	}
	if obs.Budgets != nil {
		st.BudgetUtilization = nil
		for _, b := range obs.Budgets {
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
	planeReady := obs.Ready
	status := metav1.ConditionFalse
	if planeReady {
		status = metav1.ConditionTrue
	}
	set(planeCond, status, obs.Reason, obs.Message)
	conflictReason := cmp.Or(obs.ConflictReason, targets.ReasonConflictingPolicy)
	if obs.Conflict != "" {
		set(planeCond, metav1.ConditionFalse, conflictReason, obs.Conflict)
	}
	cluster.SetStatus(st, obs)
	st.Endpoint = obs.Endpoint

	// Degraded and phase.
	var degradedReason, degradedMsg string
	switch {
	case len(out.taken) > 0:
		degradedReason = targets.ReasonObjectNameTaken
		for _, t := range out.taken {
			if t.proxyName {
				degradedReason = ReasonRouterProxyNameTaken
			}
		}
		degradedMsg = takenMessage(out.taken)
	case obs.Conflict != "":
		degradedReason, degradedMsg = conflictReason, obs.Conflict
	case obs.Degraded != "":
		degradedReason, degradedMsg = obs.DegradedReason, obs.Degraded
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
	case !planeReady && obs.Phase != "":
		st.Phase = obs.Phase // Pending until the data plane answers; Failed when it refused
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

func hasBackend(h map[string]targets.BackendHealth, name string) bool {
	_, ok := h[name]
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
