package controller

import (
	"cmp"
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
)

// dataPlaneWatches are the watches on what a gateway's controller answers
// with: the status it writes on the generated CRD-backed objects (routes,
// pools, policies, models), and the Gateways routers attach to. A router
// waiting for that answer (Pending: AwaitingDataPlane, GatewayNotFound)
// then waits for the event instead of being polled every 15 s, which does
// not scale: one worker sustains the poll for about 75 unsettled routers.
//
// The kinds are CRD-backed, so they may not be served when the controller
// starts: a kind is watched once its CRD is (at start, and on every CRD
// event), and stays watched (a CRD removed later makes the informer retry
// in the background; the poll is not restored, and a router on a plane
// whose CRDs are gone reports CRDsNotInstalled anyway).
type dataPlaneWatches struct {
	mu      sync.Mutex
	ctrl    crcontroller.Controller
	cache   cache.Cache
	watched map[schema.GroupVersionKind]bool
}

// watchServed starts a watch on every kind of kinds whose CRD is served and
// that is not watched yet.
func (r *Reconciler) watchServed(ctx context.Context) {
	w := &r.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctrl == nil {
		return
	}
	for _, k := range r.answerKinds() {
		if w.watched[k] || !r.served(k) {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(k)
		var src source.Source
		if k == targets.GatewayGVK {
			src = source.Kind(w.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(r.routersOnGateway))
		} else {
			src = source.Kind(w.cache, client.Object(obj), handler.EnqueueRequestsFromMapFunc(r.routerOf), answered)
		}
		if err := w.ctrl.Watch(src); err != nil {
			logf.FromContext(ctx).Error(err, "watching a data plane's kind; routers waiting for it are polled", "kind", k.String())
			continue
		}
		if w.watched == nil {
			w.watched = map[schema.GroupVersionKind]bool{}
		}
		w.watched[k] = true
	}
}

// answerKinds are the kinds dataPlaneWatches watches: every CRD-backed kind
// a target of the build generates, and Gateways.
func (r *Reconciler) answerKinds() []schema.GroupVersionKind {
	out := []schema.GroupVersionKind{targets.GatewayGVK}
	for _, k := range r.Registry.AllKinds() {
		if !builtinGroups[k.Group] {
			out = append(out, k)
		}
	}
	return out
}

func (r *Reconciler) served(gvk schema.GroupVersionKind) bool {
	_, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// watching reports whether every kind given is watched.
func (w *dataPlaneWatches) watching(kinds ...schema.GroupVersionKind) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		if !w.watched[k] {
			return false
		}
	}
	return true
}

// answered passes the events a gateway's controller makes on a generated
// object: an update that leaves its generation (a status or metadata
// change), and its deletion (re-applied). Creates and spec changes are the
// controller's own applies (or drift the recheck repairs).
var answered = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() == e.ObjectNew.GetGeneration() },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// routerOf maps a generated object to the router that controls it: its
// controller reference, or (objects in other namespaces, which carry none)
// its router labels.
func (r *Reconciler) routerOf(ctx context.Context, obj client.Object) []reconcile.Request {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.Kind == "ModelRouter" && ref.APIVersion == v1.GroupVersion.String() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
		}
		return nil
	}
	l := obj.GetLabels()
	ns, name := l[LabelRouterNamespace], l[naming.LabelRouter]
	if l[naming.LabelManagedBy] != naming.ManagedBy || ns == "" || name == "" {
		return nil
	}
	// The label holds the router's name, shortened when it is too long for
	// a label value.
	var list v1.ModelRouterList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, mr := range list.Items {
		if naming.LabelValue(mr.Name) == name {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
		}
	}
	return out
}

// routersOnGateway maps a Gateway to the routers that attach to it.
func (r *Reconciler) routersOnGateway(ctx context.Context, gw client.Object) []reconcile.Request {
	var list v1.ModelRouterList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, mr := range list.Items {
		if attachesTo(&mr, gw.GetNamespace(), gw.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
		}
	}
	return out
}

// attachesTo reports whether a router's gatewayRef or agentGatewayRef names
// the Gateway namespace/name (an empty namespace is the router's).
func attachesTo(mr *v1.ModelRouter, namespace, name string) bool {
	if g := mr.Spec.GatewayRef; g != nil && g.Name == name && cmp.Or(g.Namespace, mr.Namespace) == namespace {
		return true
	}
	g := mr.Spec.AgentGatewayRef
	return g != nil && g.Name == name && cmp.Or(g.Namespace, mr.Namespace) == namespace
}

// awaitsEvent reports whether a Pending router waits for something the
// watches deliver: the data plane's answer on its generated objects
// (AwaitingDataPlane), or its Gateway (GatewayNotFound). Other Pending
// reasons (a listener that does not admit the route's namespace, which
// turns on the Namespace's labels) are polled.
func (r *Reconciler) awaitsEvent(o *outcome) bool {
	switch o.obs.Reason {
	case targets.ReasonGatewayNotFound:
		return r.watches.watching(targets.GatewayGVK)
	case targets.ReasonAwaitingDataPlane:
		var kinds []schema.GroupVersionKind
		for _, d := range o.desired {
			if k := d.GroupVersionKind(); !builtinGroups[k.Group] {
				kinds = append(kinds, k)
			}
		}
		return r.watches.watching(kinds...)
	}
	return false
}
