package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/llmkube-compile/ir"
)

var agentgatewayPolicyGVK = schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}

// foreignPreRoutingPolicies finds AgentgatewayPolicies on the router's
// Gateway that this router did not generate and that also set a PreRouting
// transformation. agentgateway keeps the oldest one, so the router keeps its
// own policy and reports ConflictingPreRoutingPolicy until they go. A policy
// whose transformation is exactly this router's (another LLMKube router on
// the same Gateway) is no conflict: whichever agentgateway keeps, the model
// header is set the same way.
func foreignPreRoutingPolicies(ctx context.Context, c client.Reader, cr *ir.Router, desired []*unstructured.Unstructured) (string, error) {
	if cr.AgentGateway == nil {
		return "", nil
	}
	ns := cr.AgentGateway.Namespace
	if ns == "" {
		ns = cr.Namespace
	}
	ours := map[string]bool{}
	var ourTransform map[string]any
	for _, o := range desired {
		ours[objKey(o)] = true
		if o.GroupVersionKind() == agentgatewayPolicyGVK {
			ourTransform, _, _ = unstructured.NestedMap(o.Object, "spec", "traffic", "transformation")
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(agentgatewayPolicyGVK.GroupVersion().WithKind("AgentgatewayPolicyList"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return "", err
	}
	var foreign []string
	for i := range list.Items {
		p := &list.Items[i]
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
