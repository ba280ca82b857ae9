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
	conflict, err := foreignPreRoutingPolicies(ctx, c, in.Router, in.Desired)
	if err != nil {
		return obs, fmt.Errorf("checking for conflicting policies: %w", err)
	}
	if conflict != "" {
		obs.Conflict, obs.ConflictReason = conflict, targets.ReasonConflictingPolicy
	}
	return obs, nil
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

// foreignPreRoutingPolicies finds AgentgatewayPolicies on the router's
// Gateway that this router did not generate and that also set a PreRouting
// transformation. agentgateway keeps the oldest one, so the router keeps its
// own policy and reports ConflictingPreRoutingPolicy until they go. A policy
// whose transformation is exactly this router's (another LLMKube router on
// the same Gateway) is no conflict: whichever agentgateway keeps, the model
// header is set the same way.
func foreignPreRoutingPolicies(ctx context.Context, c targets.ClusterReader, cr *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	if cr.AgentGateway == nil {
		return "", nil
	}
	ns := cr.AgentGateway.Namespace
	objKey := func(o *unstructured.Unstructured) string {
		return targets.Key(o.GroupVersionKind(), o.GetNamespace(), o.GetName())
	}
	ours := map[string]bool{}
	var ourTransform map[string]any
	for _, o := range desired {
		ours[objKey(o)] = true
		if o.GroupVersionKind() == agentgatewayPolicyGVK {
			ourTransform, _, _ = unstructured.NestedMap(o.Object, "spec", "traffic", "transformation")
		}
	}
	items, err := c.List(ctx, agentgatewayPolicyGVK, ns)
	if err != nil {
		return "", err
	}
	var foreign []string
	for i := range items {
		p := &items[i]
		p.SetGroupVersionKind(agentgatewayPolicyGVK)
		if ours[objKey(p)] || !p.GetDeletionTimestamp().IsZero() {
			continue
		}
		phase, _, _ := unstructured.NestedString(p.Object, "spec", "traffic", "phase")
		transform, hasTransform, _ := unstructured.NestedMap(p.Object, "spec", "traffic", "transformation")
		if phase != "PreRouting" || !hasTransform || !targetsGateway(p, cr.AgentGateway.Name) {
			continue
		}
		if ourTransform != nil && equality.Semantic.DeepEqual(transform, ourTransform) {
			continue
		}
		foreign = append(foreign, p.GetNamespace()+"/"+p.GetName())
	}
	if len(foreign) == 0 {
		return "", nil
	}
	sort.Strings(foreign)
	return fmt.Sprintf("Gateway %s/%s already carries another PreRouting transformation policy (%s); agentgateway keeps the oldest, so this router's model extraction may be shadowed. This router keeps its policy; remove the other one (rechecked every two minutes)",
		ns, cr.AgentGateway.Name, strings.Join(foreign, ", ")), nil
}

func targetsGateway(p *unstructured.Unstructured, gateway string) bool {
	refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
	for _, r := range refs {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if m["kind"] == "Gateway" && m["name"] == gateway {
			return true
		}
	}
	return false
}
