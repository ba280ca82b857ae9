// Package targetstest holds what the planes' tests share: a cluster that
// hands out its objects in place, as the controller's informer cache does,
// and the measure of a check that must read them there.
package targetstest

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets"
)

// InPlace answers List the way the controller's informer cache does
// (targets.ClusterReader.List): the items share their maps with Objs, so a
// check that writes into what it reads changes them. Get, Owned and Fetch
// find nothing.
type InPlace struct{ Objs []unstructured.Unstructured }

var _ targets.ClusterReader = (*InPlace)(nil)

// List returns the objects of gvk's kind in ns ("": every namespace).
func (c *InPlace) List(_ context.Context, gvk schema.GroupVersionKind, ns string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, o := range c.Objs {
		if o.GetKind() == gvk.Kind && (ns == "" || o.GetNamespace() == ns) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Get finds nothing.
func (c *InPlace) Get(context.Context, schema.GroupVersionKind, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}

// Owned finds nothing.
func (c *InPlace) Owned(context.Context, *v1.ModelRouter, []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

// Fetch finds nothing.
func (c *InPlace) Fetch(context.Context, string) ([]byte, error) { return nil, nil }

// AllocsPerObject runs check over a cluster of fleet(20) objects and one of
// fleet(220), and returns the allocations the larger costs per object more
// than the smaller: what the check spends on each object it reads. It fails
// t when check changed an object it read.
func AllocsPerObject(t *testing.T, fleet func(n int) []unstructured.Unstructured, check func(*InPlace)) float64 {
	t.Helper()
	small, large := &InPlace{Objs: fleet(20)}, &InPlace{Objs: fleet(220)}
	before := make([]*unstructured.Unstructured, len(large.Objs))
	for i := range large.Objs {
		before[i] = large.Objs[i].DeepCopy()
	}
	per := (testing.AllocsPerRun(20, func() { check(large) }) - testing.AllocsPerRun(20, func() { check(small) })) /
		float64(len(large.Objs)-len(small.Objs))
	for i := range large.Objs {
		if !equality.Semantic.DeepEqual(before[i].Object, large.Objs[i].Object) {
			t.Fatalf("the check changed %s: %v", large.Objs[i].GetName(), large.Objs[i].Object)
		}
	}
	return per
}
