package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// inventoryLists counts the inventory queries a reader is asked: Lists
// selected by the managed-by label.
type inventoryLists struct {
	client.Reader
	mu sync.Mutex
	n  int
}

func (c *inventoryLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	if lo.LabelSelector != nil {
		if _, ok := lo.LabelSelector.RequiresExactMatch(naming.LabelManagedBy); ok {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
	}
	return c.Reader.List(ctx, list, opts...)
}

func (c *inventoryLists) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestRecheckWithTheSameObjectsDoesNotPrune: the prune (an inventory of
// every kind a plane can generate, about 20 uncached LISTs) runs once per
// desired object set in a process, not at every recheck; a change of the
// set prunes again, and what is no longer desired goes.
func TestRecheckWithTheSameObjectsDoesNotPrune(t *testing.T) {
	ctx, ns, _ := readyProxyRouter(t, "prune", nil)
	lists := &inventoryLists{Reader: k8s}
	// A second reconciler, as a new leader would be: its memory is empty.
	again := &controller.Reconciler{Client: k8s, Reader: lists, Mapper: reconc.Mapper, Registry: builtin.Registry(), Operator: reconc.Operator, GetStatus: statuses.get}
	inventories := func() int {
		before := lists.count()
		if _, err := again.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "prune"}}); err != nil {
			t.Fatal(err)
		}
		return lists.count() - before
	}
	if n := inventories(); n == 0 {
		t.Fatal("a new leader's first reconcile of an existing router listed no inventory: it must prune once")
	}
	for i := 0; i < 2; i++ {
		if n := inventories(); n != 0 {
			t.Errorf("recheck %d with the same desired objects listed the inventory %d times", i+1, n)
		}
	}

	// Two replicas add a PodDisruptionBudget, one takes it away: both are
	// new desired sets, so both prune (here and in the manager's reconciler).
	setReplicas := func(n int32) {
		eventually(t, fmt.Sprintf("replicas %d", n), func() error {
			r := getRouter(t, ctx, ns, "prune")
			if r.Spec.Proxy == nil {
				r.Spec.Proxy = &v1.ProxySpec{}
			}
			r.Spec.Proxy.Replicas = ptr.To(n)
			return k8s.Update(ctx, r)
		})
	}
	pdb := func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prune-router-proxy"}, &policyv1.PodDisruptionBudget{})
	}
	setReplicas(2)
	eventually(t, "the PodDisruptionBudget applied", pdb)
	if n := inventories(); n == 0 {
		t.Error("a new desired set (with a PodDisruptionBudget) did not prune")
	}
	setReplicas(1)
	if n := inventories(); n == 0 {
		t.Error("a new desired set (without the PodDisruptionBudget) did not prune")
	}
	if err := pdb(); !apierrors.IsNotFound(err) {
		t.Errorf("the PodDisruptionBudget of two replicas is still there with one: %v", err)
	}
}
