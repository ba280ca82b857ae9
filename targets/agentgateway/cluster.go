package agentgateway

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// The AgentGateway plane's controller side (targets.Cluster): the pool is
// ready once every object is applied, and a foreign PreRouting policy on the
// same Gateway is reported as a conflict.
var _ targets.Cluster = (*Target)(nil)

var agentgatewayPolicyGVK = schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}

// ReadyCondition implements targets.Cluster.
func (*Target) ReadyCondition() string { return v1.ReadyCondition(v1.DataPlaneAgentGateway) }

// ProbesBackends implements targets.Cluster: agentgateway does not report
// backend health to the controller.
func (*Target) ProbesBackends() bool { return false }

// ServiceName implements targets.Cluster: the Gateway is the entry point.
func (*Target) ServiceName(*ir.Router) string { return "" }

// Observe implements targets.Cluster.
func (*Target) Observe(ctx context.Context, c targets.ClusterReader, in targets.Applied) (targets.Observation, error) {
	obs := targets.Observation{Applied: true, Lingering: in.Lingering}
	g := in.Router.AgentGateway
	obs.Endpoint = targets.GatewayAddress(ctx, c, g.Namespace, g.Name)
	targets.ObserveGatewayPlane(ctx, c, targets.GatewayRef{Namespace: g.Namespace, Name: g.Name, SectionName: g.SectionName}, in, &obs,
		fmt.Sprintf("agentgateway accepted %d object(s): %s", len(in.Desired), in.Summary))
	if obs.Ready && g.Routing == ir.AgentGatewayRoutingModel {
		if waiting := unansweredModels(ctx, c, in.Desired); len(waiting) > 0 {
			obs.Message += fmt.Sprintf("; but no controller has written the status of %s: routing Model needs agentgateway installed with agentgatewayModels.enabled=true, without which the HTTPRoute shows Accepted and every request gets 404", strings.Join(waiting, ", "))
		}
	}
	reason, msg, err := (&Target{}).CheckForeign(ctx, c, in.Router, in.Desired)
	if err != nil {
		return obs, err
	}
	obs.AddForeignConflict(reason, msg)
	return obs, nil
}

var _ targets.Neighbours = (*Target)(nil)

// RefField implements targets.Neighbours.
func (*Target) RefField() string { return "agentGatewayRef" }

// CheckForeign implements targets.Neighbours: a foreign Override policy, a
// foreign AgentgatewayModel on the router's listener, or another PreRouting
// transformation on its Gateway, the weakest control first; the others
// found are named in the same message.
func (*Target) CheckForeign(ctx context.Context, c targets.ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) (string, string, error) {
	conflict, err := foreignPreRoutingPolicies(ctx, c, r, desired)
	if err != nil {
		return "", "", fmt.Errorf("checking for conflicting policies: %w", err)
	}
	override, err := foreignOverrides(ctx, c, r, desired)
	if err != nil {
		return "", "", fmt.Errorf("checking for overriding policies: %w", err)
	}
	models, err := foreignModelsOnListener(ctx, c, r, desired)
	if err != nil {
		return "", "", fmt.Errorf("checking for foreign AgentgatewayModels: %w", err)
	}
	switch {
	case override != "":
		// The weaker control first: an Override can lift the router's
		// authentication or allowlist.
		for _, also := range []string{models, conflict} {
			if also != "" {
				override += "; also: " + also
			}
		}
		return ReasonOverridingPolicy, override, nil
	case models != "":
		// Then the one that disables the router outright.
		if conflict != "" {
			models += "; also: " + conflict
		}
		return ReasonForeignModelOnListener, models, nil
	case conflict != "":
		return targets.ReasonConflictingPolicy, conflict, nil
	}
	return "", "", nil
}

var _ targets.UncheckedNeighbours = (*Target)(nil)

// Unchecked implements targets.UncheckedNeighbours: the foreign
// AgentgatewayPolicies in the Gateway's namespace that would be findings of
// CheckForeign (an Override of a field the router's route policy sets,
// another PreRouting transformation) and select Gateways by label
// (spec.targetSelectors), when c does not hold the router's Gateway: without
// its labels, whether they attach to it cannot be judged, and CheckForeign
// takes them not to.
func (*Target) Unchecked(ctx context.Context, c targets.ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	g := r.AgentGateway
	if g == nil {
		return "", nil
	}
	gw, err := c.Get(ctx, targets.GatewayGVK, g.Namespace, g.Name)
	if err != nil || gw != nil {
		return "", err
	}
	ours, mine, _ := routePolicyFields(desired)
	var ourTransform map[string]any
	for _, o := range desired {
		if o.GroupVersionKind() == agentgatewayPolicyGVK {
			if phase, _, _ := unstructured.NestedString(o.Object, "spec", "traffic", "phase"); phase == "PreRouting" {
				ourTransform, _ = targets.Field(o.Object, "spec", "traffic", "transformation").(map[string]any)
			}
		}
	}
	items, err := c.List(ctx, agentgatewayPolicyGVK, g.Namespace)
	if err != nil {
		return "", err
	}
	var found []string
	for i := range items {
		p := &items[i] // read only: the cache's own (ClusterReader.List)
		if ours[targets.Key(agentgatewayPolicyGVK, p.GetNamespace(), p.GetName())] || !p.GetDeletionTimestamp().IsZero() || !selectsKind(p, "Gateway") {
			continue
		}
		phase, _, _ := unstructured.NestedString(p.Object, "spec", "traffic", "phase")
		transform, _ := targets.Field(p.Object, "spec", "traffic", "transformation").(map[string]any)
		otherPreRouting := phase == "PreRouting" && transform != nil && (ourTransform == nil || !sameJSON(transform, ourTransform))
		if otherPreRouting || len(overriddenFields(p, mine)) > 0 {
			found = append(found, p.GetNamespace()+"/"+p.GetName())
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	sort.Strings(found)
	return fmt.Sprintf("AgentgatewayPolicy %s selects Gateways by label (spec.targetSelectors), and Gateway %s/%s is not among the inputs: whether it attaches to this router's Gateway (and overrides the router's auth policy or replaces its model extraction) could not be checked. Give the Gateway beside the router (kubectl get gateway -n %s %s -o yaml)",
		strings.Join(found, ", "), g.Namespace, g.Name, g.Namespace, g.Name), nil
}

// selectsKind reports whether a policy selects objects of kind by label
// (spec.targetSelectors).
func selectsKind(p *unstructured.Unstructured, kind string) bool {
	sels, _ := targets.Field(p.Object, "spec", "targetSelectors").([]any)
	for _, s := range sels {
		if m, ok := s.(map[string]any); ok && m["kind"] == kind {
			return true
		}
	}
	return false
}

// SetStatus implements targets.Cluster.
func (*Target) SetStatus(st *v1.ModelRouterStatus, obs targets.Observation) {
	if !obs.Applied {
		if st.AgentGateway != nil {
			st.AgentGateway.PoolReady = false
		}
		return
	}
	st.AgentGateway = &v1.AgentGatewayStatus{PoolReady: obs.Ready}
	if obs.Ready {
		st.AgentGateway.Endpoint = obs.Endpoint
	}
}

// ClearStatus implements targets.Cluster.
func (*Target) ClearStatus(st *v1.ModelRouterStatus, _ targets.Lingering) { st.AgentGateway = nil }

// Lingering implements targets.Cluster: nothing of agentgateway's is
// reported once the router has moved away.
func (*Target) Lingering(context.Context, targets.ClusterReader, *v1.ModelRouter) targets.Lingering {
	return targets.Lingering{}
}

// unansweredModels are the desired AgentgatewayModels whose status.parents
// nobody wrote: agentgateway's controller answers for them only when
// installed with agentgatewayModels.enabled=true, while it accepts the
// HTTPRoute either way.
func unansweredModels(ctx context.Context, c targets.ClusterReader, desired []*unstructured.Unstructured) []string {
	var out []string
	for _, d := range desired {
		if d.GroupVersionKind() != AgentgatewayModelGVK {
			continue
		}
		live, err := c.Get(ctx, d.GroupVersionKind(), d.GetNamespace(), d.GetName())
		if err != nil || live == nil {
			continue // not applied yet: the acceptance check reports it
		}
		if parents, _, _ := unstructured.NestedSlice(live.Object, "status", "parents"); len(parents) == 0 {
			out = append(out, "AgentgatewayModel "+d.GetNamespace()+"/"+d.GetName())
		}
	}
	return out
}

// ReasonOverridingPolicy: a foreign PostRouting AgentgatewayPolicy with
// strategy.inheritance Override on the router's Gateway, listener or route
// sets a field the router's own policy sets (jwtAuthentication,
// authorization, transformation), so agentgateway drops the router's.
const ReasonOverridingPolicy = "OverridingPolicy"

// overridable are the traffic fields of the router's own route policy that a
// less specific Override policy takes away (store/binds.rs route_policies:
// the first Override of a field locks it; for authorization, no later
// authorization is merged).
var overridable = []string{"jwtAuthentication", "authorization", "transformation"}

// foreignOverrides finds AgentgatewayPolicies this router did not generate
// that attach (PostRouting) to its Gateway, to its listener, or to its
// HTTPRoute, carry strategy.inheritance Override, and set a field the
// router's route policy sets. agentgateway merges route policies from the
// Gateway down to the rule and an Override locks the field: the router's
// Strict JWT, its allowlist, its verified team header, the removal of the
// caller's token or the served model name (upstreamModelPolicies) would be
// dropped.
// The router cannot defend against it; the message says which policy and
// which fields. (In routing Model the allowlist is on each
// AgentgatewayModel, which no route policy merges with; the JWT and the team
// header are still exposed.)
func foreignOverrides(ctx context.Context, c targets.ClusterReader, cr *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	g := cr.AgentGateway
	if g == nil {
		return "", nil
	}
	ours, mine, route := routePolicyFields(desired)
	if len(mine) == 0 {
		return "", nil
	}
	namespaces := []string{g.Namespace}
	if cr.Namespace != g.Namespace && route != nil {
		namespaces = append(namespaces, cr.Namespace)
	}
	gwTarget, err := gatewayTarget(ctx, c, g)
	if err != nil {
		return "", err
	}
	// attached: the policy targets the router's Gateway or listener (in
	// the Gateway's namespace) or its HTTPRoute (in the router's).
	attached := func(p *unstructured.Unstructured) bool {
		if p.GetNamespace() == g.Namespace && attaches(p, gwTarget) {
			return true
		}
		return route != nil && p.GetNamespace() == cr.Namespace &&
			attaches(p, target{kind: "HTTPRoute", name: route.GetName(), labels: route.GetLabels()})
	}
	var found []string
	for _, ns := range namespaces {
		items, err := c.List(ctx, agentgatewayPolicyGVK, ns)
		if err != nil {
			return "", err
		}
		for i := range items {
			p := &items[i] // read only: the cache's own (ClusterReader.List)
			if ours[targets.Key(agentgatewayPolicyGVK, p.GetNamespace(), p.GetName())] || !p.GetDeletionTimestamp().IsZero() {
				continue
			}
			if fields := overriddenFields(p, mine); len(fields) > 0 && attached(p) {
				found = append(found, fmt.Sprintf("%s/%s (%s)", p.GetNamespace(), p.GetName(), strings.Join(fields, ", ")))
			}
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	sort.Strings(found)
	return fmt.Sprintf("AgentgatewayPolicy %s sets strategy.inheritance Override on this router's Gateway, listener or route; agentgateway then drops this router's own setting of those fields (its Strict JWT, allowlist, verified team header, the removal of the caller's token, or the rewrite of the request's model to the name a pool serves), so the router's auth policy may not be enforced and a pool may be sent a model name it does not serve. This is a prerequisite the router cannot defend: remove the Override or scope it to other routes",
		strings.Join(found, ", ")), nil
}

// routePolicyFields reads the router's desired objects: the keys of all of
// them, the overridable fields its route policies (not PreRouting) set, and
// its HTTPRoute (nil when it generates none).
func routePolicyFields(desired []*unstructured.Unstructured) (ours, mine map[string]bool, route *unstructured.Unstructured) {
	ours, mine = map[string]bool{}, map[string]bool{}
	for _, o := range desired {
		ours[targets.Key(o.GroupVersionKind(), o.GetNamespace(), o.GetName())] = true
		switch o.GroupVersionKind() {
		case HTTPRouteGVK:
			route = o
		case agentgatewayPolicyGVK:
			if phase, _, _ := unstructured.NestedString(o.Object, "spec", "traffic", "phase"); phase == "PreRouting" {
				continue
			}
			for _, f := range overridable {
				if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "traffic", f); ok {
					mine[f] = true
				}
			}
		}
	}
	return ours, mine, route
}

// overriddenFields are the fields of mine that policy p, a route policy
// (not PreRouting) with strategy.inheritance Override, also sets: the
// router's own setting of them is dropped where p attaches.
func overriddenFields(p *unstructured.Unstructured, mine map[string]bool) []string {
	if inh, _, _ := unstructured.NestedString(p.Object, "spec", "strategy", "inheritance"); inh != "Override" {
		return nil
	}
	if phase, _, _ := unstructured.NestedString(p.Object, "spec", "traffic", "phase"); phase == "PreRouting" {
		return nil
	}
	var fields []string
	for _, f := range overridable {
		if _, ok, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "traffic", f); ok && mine[f] {
			fields = append(fields, f)
		}
	}
	return fields
}

// foreignPreRoutingPolicies finds AgentgatewayPolicies on the router's
// Gateway, or on the listener its route attaches to, that this router did
// not generate and that also set a PreRouting transformation. agentgateway
// runs exactly one PreRouting transformation per request: a listener's
// before the Gateway's, and between several at one level whichever its
// HashSet yields first, which can differ between replicas and restarts
// (store/binds.rs gateway_policies). So the router keeps its own policy and
// reports ConflictingPreRoutingPolicy until the others go. A policy whose
// transformation is exactly this router's (another LLMKube router on the
// same Gateway) is no conflict: whichever runs, the model header is set the
// same way.
func foreignPreRoutingPolicies(ctx context.Context, c targets.ClusterReader, cr *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	if cr.AgentGateway == nil {
		return "", nil
	}
	ns := cr.AgentGateway.Namespace
	ours := map[string]bool{}
	var ourTransform map[string]any
	for _, o := range desired {
		ours[targets.Key(o.GroupVersionKind(), o.GetNamespace(), o.GetName())] = true
		if o.GroupVersionKind() == agentgatewayPolicyGVK {
			if phase, _, _ := unstructured.NestedString(o.Object, "spec", "traffic", "phase"); phase == "PreRouting" {
				ourTransform, _ = targets.Field(o.Object, "spec", "traffic", "transformation").(map[string]any)
			}
		}
	}
	items, err := c.List(ctx, agentgatewayPolicyGVK, ns)
	if err != nil {
		return "", err
	}
	gwTarget, err := gatewayTarget(ctx, c, cr.AgentGateway)
	if err != nil {
		return "", err
	}
	var foreign []string
	for i := range items {
		p := &items[i] // read only: the cache's own (ClusterReader.List)
		if ours[targets.Key(agentgatewayPolicyGVK, p.GetNamespace(), p.GetName())] || !p.GetDeletionTimestamp().IsZero() {
			continue
		}
		// Every router on the Gateway has a PreRouting policy here, so this
		// runs for each of them in every reconcile: read in place, no copy.
		phase, _, _ := unstructured.NestedString(p.Object, "spec", "traffic", "phase")
		transform, _ := targets.Field(p.Object, "spec", "traffic", "transformation").(map[string]any)
		if phase != "PreRouting" || transform == nil || !attaches(p, gwTarget) {
			continue
		}
		if ourTransform != nil && sameJSON(transform, ourTransform) {
			continue
		}
		foreign = append(foreign, p.GetNamespace()+"/"+p.GetName())
	}
	if len(foreign) == 0 {
		return "", nil
	}
	sort.Strings(foreign)
	return fmt.Sprintf("Gateway %s/%s already carries another PreRouting transformation policy (%s); agentgateway runs exactly one PreRouting transformation per request (a listener's before the Gateway's, otherwise in an order that can differ between replicas and restarts), so this router's model extraction may not run. This router keeps its policy; remove the other one",
		ns, cr.AgentGateway.Name, strings.Join(foreign, ", ")), nil
}

// ReasonForeignModelOnListener: in routing Model, an AgentgatewayModel this
// router did not generate attaches directly to the router's Gateway
// listener (parentRefs kind Gateway). agentgateway then refuses the
// router's own models (Accepted=False NoMatchingParent) and its HTTPRoute
// (ResolvedRefs=False ModelRoutingConflict): every request to the router
// gets 404, while the foreign model answers.
const ReasonForeignModelOnListener = "ForeignModelOnListener"

// foreignModelsOnListener finds, for a router in routing Model, the
// AgentgatewayModels of any namespace that it did not generate and whose
// spec.parentRefs name its Gateway (kind Gateway, the default) on its
// listener: a ref without sectionName takes every listener, and a router
// without sectionName meets a ref on any listener. Models attached through
// an HTTPRoute parent are another route's and do not disable this one.
func foreignModelsOnListener(ctx context.Context, c targets.ClusterReader, cr *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	g := cr.AgentGateway
	if g == nil || g.Routing != ir.AgentGatewayRoutingModel {
		return "", nil
	}
	ours := map[string]bool{}
	for _, o := range desired {
		ours[targets.Key(o.GroupVersionKind(), o.GetNamespace(), o.GetName())] = true
	}
	items, err := c.List(ctx, AgentgatewayModelGVK, "")
	if err != nil {
		return "", err
	}
	var found []string
	for i := range items {
		m := &items[i]
		if ours[targets.Key(AgentgatewayModelGVK, m.GetNamespace(), m.GetName())] || !m.GetDeletionTimestamp().IsZero() {
			continue
		}
		refs, _ := targets.Field(m.Object, "spec", "parentRefs").([]any)
		for _, r := range refs {
			ref, ok := r.(map[string]any)
			if !ok {
				continue
			}
			group, _ := ref["group"].(string)
			kind, _ := ref["kind"].(string)
			name, _ := ref["name"].(string)
			ns, _ := ref["namespace"].(string)
			section, _ := ref["sectionName"].(string)
			if (group != "" && group != targets.GatewayGVK.Group) || (kind != "" && kind != "Gateway") || name != g.Name {
				continue
			}
			if ns == "" {
				ns = m.GetNamespace()
			}
			if ns != g.Namespace || (section != "" && g.SectionName != "" && section != g.SectionName) {
				continue
			}
			found = append(found, m.GetNamespace()+"/"+m.GetName())
			break
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	sort.Strings(found)
	listener := "Gateway " + g.Namespace + "/" + g.Name
	if g.SectionName != "" {
		listener += " listener " + g.SectionName
	}
	return fmt.Sprintf("AgentgatewayModel %s attaches directly to %s, which this router's routing Model uses; agentgateway then refuses this router's models (NoMatchingParent) and its HTTPRoute (ModelRoutingConflict), so every request to the router gets 404. Attach that model to an HTTPRoute or to another listener, or give this router its own listener (sectionName)",
		strings.Join(found, ", "), listener), nil
}

// target is an object a policy may attach to: its kind, name and labels,
// and for a Gateway the listener the router attaches to ("" the whole
// Gateway: any listener's policy takes its traffic).
type target struct {
	kind, name, section string
	labels              map[string]string
}

// attaches reports whether the policy attaches to the target, in either of
// the two forms its CRD allows (exactly one per policy): spec.targetRefs,
// by name, or spec.targetSelectors, by matchLabels against the target's
// labels. A ref or selector naming another listener of the Gateway does not
// attach; one naming a port is taken to attach (the listener's port is not
// compared: reporting a policy that does not apply is the safe mistake).
func attaches(p *unstructured.Unstructured, t target) bool {
	sectionOK := func(m map[string]any) bool {
		s, _ := m["sectionName"].(string)
		return s == "" || t.section == "" || s == t.section
	}
	refs, _ := targets.Field(p.Object, "spec", "targetRefs").([]any)
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok && m["kind"] == t.kind && m["name"] == t.name && sectionOK(m) {
			return true
		}
	}
	sels, _ := targets.Field(p.Object, "spec", "targetSelectors").([]any)
	for _, r := range sels {
		m, ok := r.(map[string]any)
		if !ok || m["kind"] != t.kind || !sectionOK(m) {
			continue
		}
		want, _, _ := unstructured.NestedStringMap(m, "matchLabels")
		match := true
		for k, v := range want {
			if got, ok := t.labels[k]; !ok || got != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// sameJSON reports whether two values as unstructured holds them are equal:
// maps and slices by their elements, the rest (strings, numbers, bools,
// nil) by ==, so, like equality.Semantic.DeepEqual, int64(1) is not
// float64(1). It compares every router's transformation on the Gateway in
// every reconcile, without the generic deep-equal's reflection and
// allocations; values of other types (an object built in code) are
// compared by it.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && sameMap(a, b)
	case []any:
		b, ok := b.([]any)
		return ok && sameSlice(a, b)
	case string, int64, float64, bool, nil:
		return a == b
	}
	return equality.Semantic.DeepEqual(a, b)
}

func sameMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !sameJSON(v, w) {
			return false
		}
	}
	return true
}

func sameSlice(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameJSON(a[i], b[i]) {
			return false
		}
	}
	return true
}

// gatewayTarget is the router's Gateway (or listener) as a policy target,
// with the labels the cluster holds.
func gatewayTarget(ctx context.Context, c targets.ClusterReader, g *ir.AgentGateway) (target, error) {
	t := target{kind: "Gateway", name: g.Name, section: g.SectionName}
	gw, err := c.Get(ctx, targets.GatewayGVK, g.Namespace, g.Name)
	if err != nil {
		return t, err
	}
	if gw != nil {
		t.labels = gw.GetLabels()
	}
	return t, nil
}
