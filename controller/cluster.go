package controller

import (
	"context"

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
type clusterReader struct{ r *Reconciler }

func (r *Reconciler) clusterReader() targets.ClusterReader { return clusterReader{r} }

func (c clusterReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.r.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

func (c clusterReader) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	reader := c.r.Cache
	if reader == nil {
		reader = c.r.Reader
	}
	if err := reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		list.Items[i].SetGroupVersionKind(gvk)
	}
	return list.Items, nil
}

func (c clusterReader) Owned(ctx context.Context, router *v1.ModelRouter, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return inventory(ctx, c.r.Reader, c.r.Mapper, router, kinds, c.r.crossNamespace)
}

func (c clusterReader) Fetch(ctx context.Context, url string) ([]byte, error) {
	get := c.r.GetStatus
	if get == nil {
		get = defaultGetStatus
	}
	return get(ctx, url)
}
