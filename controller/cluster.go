package controller

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets"
)

// clusterReader is the controller's client narrowed to what a plane's
// controller side reads (targets.ClusterReader): Get and Owned uncached,
// List from the informer cache (Reconciler.Cache).
//
// One is made per reconcile, and Get remembers what it read for the rest of
// that reconcile: the planes' checks read the same Gateway two or three
// times (its listeners, its address, its labels), and the data plane's
// answer on each generated object was read (or returned by the apply)
// moments before (remember). A new reconcile reads everything afresh.
type clusterReader struct {
	r    *Reconciler
	mu   sync.Mutex
	seen map[string]*unstructured.Unstructured // nil: not found
}

func (r *Reconciler) clusterReader() *clusterReader {
	return &clusterReader{r: r, seen: map[string]*unstructured.Unstructured{}}
}

// remember records objects this reconcile has just read or applied, keyed
// as targets.Key.
func (c *clusterReader) remember(objs map[string]*unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, o := range objs {
		if o != nil {
			c.seen[k] = o
		}
	}
}

func (c *clusterReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	k := targets.Key(gvk, namespace, name)
	c.mu.Lock()
	o, ok := c.seen[k]
	c.mu.Unlock()
	if ok {
		if o == nil {
			return nil, nil
		}
		return o.DeepCopy(), nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.r.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		u = nil
	}
	c.mu.Lock()
	c.seen[k] = u
	c.mu.Unlock()
	if u == nil {
		return nil, nil
	}
	return u.DeepCopy(), nil
}

// List reads the manager's cache without copying (UnsafeDisableDeepCopy):
// the items share their maps with the cache and with every other reconcile
// running, so they are read only (targets.ClusterReader.List). Copying
// them made a reconcile linear in the routers on its Gateway in CPU: each
// AgentGateway router's policy, copied once per reconcile of every other
// router on the Gateway.
func (c *clusterReader) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(namespace)}
	reader := c.r.Cache
	if reader == nil {
		reader = c.r.Reader // uncached: the items are this call's own
	} else {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	if err := reader.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	for i := range list.Items {
		it := &list.Items[i]
		if it.GroupVersionKind() == gvk {
			continue // what the informers hold: kind set, nothing to write
		}
		if c.r.Cache != nil {
			*it = *it.DeepCopy() // never write into the cache's object
		}
		it.SetGroupVersionKind(gvk)
	}
	return list.Items, nil
}

func (c *clusterReader) Owned(ctx context.Context, router *v1.ModelRouter, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return inventory(ctx, c.r.Reader, c.r.Mapper, router, kinds, c.r.crossNamespace)
}

func (c *clusterReader) Fetch(ctx context.Context, url string) ([]byte, error) {
	get := c.r.GetStatus
	if get == nil {
		get = defaultGetStatus
	}
	return get(ctx, url)
}
