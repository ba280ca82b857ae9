package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

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
// anything but lastUpdated changed. lastUpdated is the time of the last
// status reconciliation that wrote status: a controller at steady state
// writes nothing (Kubernetes' own SLO for controllers), so it is not a
// heartbeat. The controller's liveness is its leader Lease and its
// reconcile metrics (docs/controller.md#conditions).
func (r *Reconciler) writeStatus(ctx context.Context, router *v1.ModelRouter, out *outcome) error {
	st := router.Status.DeepCopy()
	r.computeStatus(router, out, st)
	if equality.Semantic.DeepEqual(withoutTimestamps(&router.Status), withoutTimestamps(st)) && router.Status.LastUpdated != nil {
		return nil
	}
	r.emitTransitions(router, &router.Status, st)
	now := metav1.Now()
	st.LastUpdated = &now
	return r.patchStatus(ctx, router, *st)
}

// withoutTimestamps is status as compared for a write: without
// lastUpdated, and with each backend's lastProbeTime reduced to whether it
// is set. The router-proxy probes every few seconds; carrying each probe's
// time into status would write every router at every recheck. A probe that
// changes anything else (health, message, address) is written with its
// time.
func withoutTimestamps(st *v1.ModelRouterStatus) *v1.ModelRouterStatus {
	c := st.DeepCopy()
	c.LastUpdated = nil
	for i := range c.Backends {
		if c.Backends[i].LastProbeTime != nil {
			c.Backends[i].LastProbeTime = &metav1.Time{}
		}
	}
	return c
}

// patchStatus writes st as the router's status: a merge patch from the
// router as read, refused (Conflict) when the router has changed since. The
// router comes from the manager's cache, which can lag behind the status
// this controller wrote a moment ago (a Deployment event right after a
// reconcile): a patch computed from that stale copy carries only the
// fields that differ from it, so the server would keep the newer write's
// other fields (measured: phase Provisioning beside Available=True for a
// whole recheck interval). With the precondition the reconcile is simply
// run again on a fresh copy.
func (r *Reconciler) patchStatus(ctx context.Context, router *v1.ModelRouter, st v1.ModelRouterStatus) error {
	orig := router.DeepCopy()
	router.Status = st
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, router, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
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

// computeStatus writes st from what the reconcile did, as a list of steps
// (cluster-api style): each sets one condition or field from the outcome and
// what the steps before it found. A refused spec, or a plane that got
// nothing applied, ends the list early: the objects of the last valid
// generation stay and say what they can.
func (r *Reconciler) computeStatus(router *v1.ModelRouter, out *outcome, st *v1.ModelRouterStatus) {
	s := newStatusScope(router.Generation, out, st)
	r.clearOtherPlanes(s)
	if !setValidatedCondition(s) {
		return
	}
	if !setNotAppliedCondition(s) {
		return
	}
	setBackendsReadyCondition(s)
	setActiveRules(s)
	setBudgets(s)
	setDataPlaneReadyCondition(s)
	setMCPServingCondition(s)
	setDegradedCondition(s)
	setPhase(s)
}

// statusScope is what the status steps share: the status being written, the
// reconcile's outcome, and what an earlier step found that a later one reads.
type statusScope struct {
	st  *v1.ModelRouterStatus
	out *outcome
	gen int64
	// planeCond is the condition type of the router's plane (reported even
	// for a plane this build lacks).
	planeCond string
	// Set by setBackendsReadyCondition: backends known not to be ready, and
	// backends the plane has not probed yet.
	unhealthy, unknown []string
	// Set by setDegradedCondition.
	degraded bool
}

func newStatusScope(gen int64, out *outcome, st *v1.ModelRouterStatus) *statusScope {
	s := &statusScope{st: st, out: out, gen: gen, planeCond: v1.ReadyCondition(v1.DataPlane(out.plane))}
	if out.cluster != nil {
		s.planeCond = out.cluster.ReadyCondition()
	}
	return s
}

// set writes one condition at the router's generation.
func (s *statusScope) set(t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.st.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: truncate(msg, 32000), ObservedGeneration: s.gen})
}

// clearOtherPlanes removes every other plane's condition and status fields;
// what a plane left serving (a refused switch keeps the last valid objects)
// it says itself.
func (r *Reconciler) clearOtherPlanes(s *statusScope) {
	for p, c := range r.Registry.Clusters() {
		if p != s.out.plane {
			meta.RemoveStatusCondition(&s.st.Conditions, c.ReadyCondition())
			c.ClearStatus(s.st, s.out.lingering[p])
		}
	}
}

// setValidatedCondition reports whether the spec (and the plane's own
// checks) accepted the router. When they refused it, nothing was applied or
// pruned: the phase is Failed and the list ends (false).
func setValidatedCondition(s *statusScope) bool {
	out := s.out
	if out.diags.HasErrors() {
		errs := out.diags.Errors().Sorted()
		s.set(v1.ConditionValidated, metav1.ConditionFalse, errs[0].Reason,
			fmt.Sprintf("%d error(s): %s", len(errs), diagLines(errs)))
		s.st.Phase = v1.PhaseFailed
		return false
	}
	valid := "the spec is valid"
	if out.summary != "" {
		valid += ": " + out.summary
	}
	if w := out.diags.Warnings(); len(w) > 0 {
		valid += fmt.Sprintf("; %d warning(s): %s", len(w), diagLines(w))
	}
	s.set(v1.ConditionValidated, metav1.ConditionTrue, ReasonSpecValid, valid)
	return true
}

// setNotAppliedCondition reports a valid router of which nothing was applied
// (its plane is not in this build, its CRDs are not installed, or the apply
// failed) on the plane's condition, with phase Failed, and ends the list
// (false). It returns true when every desired object was applied.
func setNotAppliedCondition(s *statusScope) bool {
	out := s.out
	var reason, msg string
	switch {
	case out.notBuilt != "":
		reason, msg = ReasonDataPlaneNotImplemented, out.notBuilt+"; nothing is generated for this router"
	case len(out.missing) > 0:
		reason, msg = ReasonCRDsNotInstalled, fmt.Sprintf("the %s data plane needs CRDs that are not installed: %s; nothing is generated until they are (rechecked when CRDs change)",
			out.plane, strings.Join(sortedKinds(out.missing), ", "))
	case len(out.outdated) > 0:
		reason, msg = ReasonCRDsOutdated, fmt.Sprintf("the installed %s data plane CRDs do not accept what this router writes: %s; nothing is applied until they do (rechecked when CRDs change; docs/compatibility.md)",
			out.plane, strings.Join(out.outdated, "; "))
	case out.applyErr != nil:
		reason, msg = ReasonApplyFailed, out.applyErr.Error()
	case !out.applied:
		reason, msg = ReasonApplyFailed, "not applied"
	default:
		return true
	}
	if s.planeCond != "" {
		s.set(s.planeCond, metav1.ConditionFalse, reason, msg)
	}
	s.st.Phase = v1.PhaseFailed
	if out.cluster != nil {
		out.cluster.SetStatus(s.st, targets.Observation{Lingering: out.lingering[out.plane]})
	}
	return false
}

// setBackendsReadyCondition writes status.backends (the plane's probes, what
// it last reported when it did not answer, or a local backend's
// InferenceService) and BackendsReady; it records which backends are not
// ready and which are not probed yet.
func setBackendsReadyCondition(s *statusScope) {
	st, cr, obs, cluster := s.st, s.out.router, s.out.obs, s.out.cluster
	prevBackends := map[string]v1.BackendStatus{}
	for _, b := range st.Backends {
		prevBackends[b.Name] = b
	}
	st.Backends = nil
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
				bs.Message = fmt.Sprintf("%s: external provider; the %s data plane does not report its health", ReasonHealthUnknown, s.out.plane)
			} else {
				s.unknown = append(s.unknown, b.Name)
			}
		}
		if !bs.Healthy && !contains(s.unknown, b.Name) && (b.Local != nil || probes) {
			s.unhealthy = append(s.unhealthy, b.Name)
		}
		st.Backends = append(st.Backends, bs)
	}
	switch {
	case len(s.unhealthy) > 0:
		s.set(v1.ConditionBackendsReady, metav1.ConditionFalse, ReasonBackendsNotReady,
			fmt.Sprintf("%d of %d backend(s) not ready: %s", len(s.unhealthy), len(cr.Backends), strings.Join(s.unhealthy, ", "))+heldNote(cr, obs.Health))
	case len(s.unknown) > 0:
		s.set(v1.ConditionBackendsReady, metav1.ConditionUnknown, ReasonAwaitingProbe,
			"waiting for the router-proxy's first probe of: "+strings.Join(s.unknown, ", "))
	case probed:
		s.set(v1.ConditionBackendsReady, metav1.ConditionTrue, ReasonBackendsHealthy, fmt.Sprintf("all %d backend(s) healthy (router-proxy probes)", len(cr.Backends))+heldNote(cr, obs.Health))
	default:
		s.set(v1.ConditionBackendsReady, metav1.ConditionTrue, ReasonBackendsResolved, fmt.Sprintf("all %d backend(s) resolved; local InferenceServices are Ready", len(cr.Backends)))
	}
}

// setActiveRules counts the rules a candidate can serve: healthy, or of
// unknown health (an external provider on a gateway plane, or not probed
// yet). It reads status.backends as setBackendsReadyCondition wrote them.
func setActiveRules(s *statusScope) {
	canServe := map[string]bool{}
	for _, bs := range s.st.Backends {
		canServe[bs.Name] = bs.Healthy || !contains(s.unhealthy, bs.Name)
	}
	active := int32(0)
	for _, rule := range s.out.router.Rules {
		if slices.ContainsFunc(rule.Candidates, func(n string) bool { return canServe[n] }) {
			active++
		}
	}
	s.st.ActiveRules = active
}

// setBudgets writes status.budgetUtilization: the plane's numbers, or the
// last ones it reported when it did not answer; budgets no longer in the
// spec go.
func setBudgets(s *statusScope) {
	st, obs := s.st, s.out.obs
	budgetNames := map[string]bool{}
	for _, b := range s.out.router.Policy.Budgets {
		budgetNames[b.Name] = true
	}
	if obs.Budgets != nil {
		st.BudgetUtilization = nil
		for _, b := range obs.Budgets {
			if budgetNames[b.Name] {
				st.BudgetUtilization = append(st.BudgetUtilization, v1.BudgetUtilization{Name: b.Name, TokensUsed: b.TokensUsed, USDUsed: b.USDUsed, Utilization: b.Utilization})
			}
		}
		return
	}
	var kept []v1.BudgetUtilization
	for _, b := range st.BudgetUtilization {
		if budgetNames[b.Name] {
			kept = append(kept, b)
		}
	}
	st.BudgetUtilization = kept
}

// setDataPlaneReadyCondition writes the plane's readiness condition from what
// it observed (False with the conflict's reason when another object may
// shadow the router), the plane's own status fields and the endpoint.
func setDataPlaneReadyCondition(s *statusScope) {
	obs := s.out.obs
	status := metav1.ConditionFalse
	if obs.Ready {
		status = metav1.ConditionTrue
	}
	s.set(s.planeCond, status, obs.Reason, obs.Message)
	if obs.Conflict != "" {
		s.set(s.planeCond, metav1.ConditionFalse, conflictReason(obs), obs.Conflict)
	}
	s.out.cluster.SetStatus(s.st, obs)
	s.st.Endpoint = obs.Endpoint
}

// setMCPServingCondition says whether the MCP endpoint is served: with the
// router-proxy serving (its readiness), where, and the audience tokens must
// name. Without spec.mcpServer.enabled the condition is removed.
func setMCPServingCondition(s *statusScope) {
	m := s.out.router.MCP
	if m == nil {
		meta.RemoveStatusCondition(&s.st.Conditions, v1.ConditionMCPServing)
		return
	}
	where := "/mcp on the router's Service"
	if s.st.Endpoint != "" {
		where = strings.TrimSuffix(s.st.Endpoint, "/") + "/mcp"
	}
	if !s.out.obs.Ready {
		s.set(v1.ConditionMCPServing, metav1.ConditionFalse, "RouterProxyNotReady", "the MCP endpoint ("+where+") is served once the router-proxy is ready: "+s.out.obs.Message)
		return
	}
	s.set(v1.ConditionMCPServing, metav1.ConditionTrue, "Serving", "the router-proxy serves MCP (Streamable HTTP) at "+where+" for the resource "+m.ResourceURL+"; bearer tokens must name it as their audience")
}

// conflictReason is the reason of the observed conflict.
func conflictReason(obs targets.Observation) string {
	return cmp.Or(obs.ConflictReason, targets.ReasonConflictingPolicy)
}

// setDegradedCondition reports, in this order, a desired name held by an
// object we do not control, a conflicting object, the plane's own handicap,
// or a serving plane with backends not ready.
func setDegradedCondition(s *statusScope) {
	out, obs := s.out, s.out.obs
	var reason, msg string
	switch {
	case len(out.taken) > 0:
		reason = targets.ReasonObjectNameTaken
		for _, t := range out.taken {
			if t.proxyName {
				reason = ReasonRouterProxyNameTaken
			}
		}
		msg = takenMessage(out.taken)
	case obs.Conflict != "":
		reason, msg = conflictReason(obs), obs.Conflict
	case obs.Degraded != "":
		reason, msg = obs.DegradedReason, obs.Degraded
	case obs.Ready && len(s.unhealthy) > 0:
		reason, msg = ReasonBackendsUnhealthy, "serving, but these backends are not ready: "+strings.Join(s.unhealthy, ", ")
	}
	s.degraded = reason != ""
	if s.degraded {
		s.set(v1.ConditionDegraded, metav1.ConditionTrue, reason, msg)
	} else {
		s.set(v1.ConditionDegraded, metav1.ConditionFalse, ReasonNotDegraded, "every object applied; no unhealthy backend")
	}
}

// setPhase derives the phase of an applied router from the steps before it.
func setPhase(s *statusScope) {
	st, out, obs := s.st, s.out, s.out.obs
	switch {
	case !obs.Ready && len(out.taken) > 0 && st.Endpoint == "":
		st.Phase = v1.PhaseFailed
	case !obs.Ready && obs.Phase != "":
		st.Phase = obs.Phase // Pending until the data plane answers; Failed when it refused
	case !obs.Ready:
		st.Phase = v1.PhaseProvisioning
	case s.degraded:
		st.Phase = v1.PhaseDegraded
	case len(s.unknown) > 0:
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
