package controller

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// informerLike answers List from fixed objects the way the manager's cache
// does: deep copies, unless the caller passes UnsafeDisableDeepCopy, and
// then the objects themselves.
type informerLike struct {
	client.Reader
	objs []*unstructured.Unstructured
}

func (f *informerLike) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	var out []runtime.Object
	for _, obj := range f.objs {
		if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
			continue
		}
		if o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
			out = append(out, obj)
		} else {
			out = append(out, obj.DeepCopy())
		}
	}
	return meta.SetList(list, out)
}

// TestNeighbourListReadsTheCacheInPlace: the neighbour checks' List hands
// out the cache's objects, not copies (one copy of every policy on a
// Gateway per reconcile was most of the controller's CPU with many
// AgentGateway routers on one Gateway), and never writes into them: an
// object without its kind comes back with it on a copy of its own.
func TestNeighbourListReadsTheCacheInPlace(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}
	withKind := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "agentgateway.dev/v1alpha1", "kind": "AgentgatewayPolicy",
		"metadata": map[string]any{"name": "a", "namespace": "gw"}}}
	noKind := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "b", "namespace": "gw"}}}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "agentgateway.dev/v1alpha1", "kind": "AgentgatewayPolicy",
		"metadata": map[string]any{"name": "c", "namespace": "elsewhere"}}}
	r := &Reconciler{Cache: &informerLike{objs: []*unstructured.Unstructured{withKind, noKind, other}}}
	items, err := r.clusterReader().List(context.Background(), gvk, "gw")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("listed %d objects in namespace gw, want 2", len(items))
	}
	same := func(a, b map[string]any) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(items[0].Object, withKind.Object) {
		t.Error("the cache's object was copied")
	}
	if items[1].GroupVersionKind() != gvk {
		t.Errorf("an object listed without its kind came back as %v, want %v", items[1].GroupVersionKind(), gvk)
	}
	if same(items[1].Object, noKind.Object) || noKind.GetKind() != "" {
		t.Errorf("setting the kind wrote into the cache's object: %v", noKind.Object)
	}
}
