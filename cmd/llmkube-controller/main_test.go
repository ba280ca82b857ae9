package main

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// TestCacheDropsManagedFields holds the manager's cache to what the
// controller reads: every object's managedFields were 36 MB of a 116 MB live
// heap at 5,000 routers (docs/measurements/2026-12-controller-at-scale-rounds.md, fix 12), and nothing reads them
// from the cache. Typed objects (the routers, Deployments) and the metadata
// of generated CRD-backed kinds go through the same transform.
func TestCacheDropsManagedFields(t *testing.T) {
	opts := managerOptions(&options{}, runtime.NewScheme())
	transform := opts.Cache.DefaultTransform
	if transform == nil {
		t.Fatal("the manager's cache keeps every object as the API server sent it: no DefaultTransform")
	}
	fields := []metav1.ManagedFieldsEntry{{Manager: "llmkube-controller", Operation: metav1.ManagedFieldsOperationApply}}
	for _, obj := range []interface {
		runtime.Object
		metav1.Object
	}{
		&v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"k": "v"}, ManagedFields: fields}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", ManagedFields: fields}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "m", ManagedFields: fields}},
	} {
		out, err := transform(obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		m := out.(metav1.Object)
		if len(m.GetManagedFields()) != 0 {
			t.Errorf("%T %s: the cache keeps managedFields %v", obj, m.GetName(), m.GetManagedFields())
		}
		if m.GetName() == "" {
			t.Errorf("%T: the transform dropped more than managedFields", obj)
		}
	}
}
