package targets

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
)

// Neighbours is implemented by a plane whose routers share a data plane
// object (a Gateway, a listener) with objects other teams own. CheckForeign
// reads those objects through c and says whether one of them disables the
// router or lets something past it: reason "" when none does. The
// controller runs it against the cluster (Observe), the CLI against the
// foreign objects given beside the routers (MemoryReader), so both say the
// same. desired are the router's own objects, to tell them apart.
type Neighbours interface {
	CheckForeign(ctx context.Context, c ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) (reason, message string, err error)
	// RefField is the spec field that attaches a router to the shared
	// object ("gatewayRef"), where the CLI reports a neighbour's conflict.
	RefField() string
}

// UncheckedNeighbours is implemented by a plane whose neighbour check needs
// an object the CLI may not have been given (the shared Gateway, whose
// labels a foreign policy's selector matches). Unchecked names the foreign
// objects CheckForeign could not judge from what c holds and says what to
// give it; "" when it judged them all. The CLI warns with it; in a cluster
// the object is read, or is missing for a reason the controller reports.
type UncheckedNeighbours interface {
	Unchecked(ctx context.Context, c ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) (string, error)
}

// MemoryReader is a ClusterReader over a fixed set of objects (the CLI's
// foreign objects). Objects match by group and kind, whatever the version.
type MemoryReader []*unstructured.Unstructured

var _ ClusterReader = MemoryReader(nil)

// Get implements ClusterReader.
func (m MemoryReader) Get(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	for _, o := range m {
		if o.GroupVersionKind().GroupKind() == gvk.GroupKind() && o.GetNamespace() == namespace && o.GetName() == name {
			return o, nil
		}
	}
	return nil, nil
}

// List implements ClusterReader ("" namespace: every namespace).
func (m MemoryReader) List(_ context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, o := range m {
		if o.GroupVersionKind().GroupKind() == gvk.GroupKind() && (namespace == "" || o.GetNamespace() == namespace) {
			out = append(out, *o)
		}
	}
	return out, nil
}

// Owned implements ClusterReader: foreign objects belong to no router.
func (MemoryReader) Owned(context.Context, *v1.ModelRouter, []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

// Fetch implements ClusterReader: there is no cluster to fetch from.
func (MemoryReader) Fetch(_ context.Context, url string) ([]byte, error) {
	return nil, fmt.Errorf("no cluster to fetch %s from", url)
}

// Field is the value at path in obj, read in place (nil when absent): the
// neighbour checks read other routers' objects as the cache holds them
// (ClusterReader.List), where a copy per object per reconcile was most of
// the controller's CPU with many routers on one Gateway. Read only.
func Field(obj map[string]any, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	return v
}
