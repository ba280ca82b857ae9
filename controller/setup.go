package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/internal/naming"
)

// builtinGroups are API groups every cluster serves; generated kinds in them
// are watched (drift and Deployment readiness trigger a reconcile). Kinds of
// CRD-backed groups may come and go, so they are rechecked periodically.
var builtinGroups = map[string]bool{"": true, "apps": true, "rbac.authorization.k8s.io": true, "policy": true, "autoscaling": true, "networking.k8s.io": true}

// SetupWithManager wires the reconciler into mgr, filling unset fields from it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if r.Cache == nil {
		r.Cache = mgr.GetCache()
	}
	if r.Mapper == nil {
		r.Mapper = mgr.GetRESTMapper()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(naming.ManagedBy)
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = DefaultMaxConcurrentReconciles
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("modelrouter").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers}).
		For(&v1.ModelRouter{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{})))
	generated := generatedObjectEvents(mgr.GetScheme(), mgr.GetRESTMapper())
	for _, k := range r.Registry.AllKinds() {
		if !builtinGroups[k.Group] {
			continue
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(k)
		b = b.Watches(m, generated, builder.OnlyMetadata)
	}
	if r.served(v1.GroupVersion.WithKind("InferenceService")) {
		b = b.Watches(&v1.InferenceService{}, handler.EnqueueRequestsFromMapFunc(r.routersReferencing))
	}
	if r.served(v1.GroupVersion.WithKind("ModelPool")) {
		b = b.Watches(&v1.ModelPool{}, handler.EnqueueRequestsFromMapFunc(r.routersInNamespace))
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	b = b.Watches(crd, handler.EnqueueRequestsFromMapFunc(r.routersWaitingForCRDs), builder.OnlyMetadata)
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	r.watches.mu.Lock()
	r.watches.ctrl, r.watches.cache = c, mgr.GetCache()
	r.watches.mu.Unlock()
	r.watchServed(context.Background())
	return nil
}

// routersReferencing maps an InferenceService to the routers of its
// namespace that name it: a readiness change recompiles them.
func (r *Reconciler) routersReferencing(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1.ModelRouterList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, mr := range list.Items {
		for _, b := range mr.Spec.Backends {
			if b.InferenceServiceRef != nil && b.InferenceServiceRef.Name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
				break
			}
		}
	}
	return out
}

func (r *Reconciler) routersInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1.ModelRouterList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, mr := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
	}
	return out
}

// routersWaitingForCRDs maps a CRD change to the routers whose data plane
// could not be generated for missing or outdated CRDs (or that are not
// Proxy routers).
func (r *Reconciler) routersWaitingForCRDs(ctx context.Context, _ client.Object) []reconcile.Request {
	// A data plane's CRD may have just been installed: watch its kinds.
	r.watchServed(ctx)
	var list v1.ModelRouterList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, mr := range list.Items {
		waiting := false
		for _, c := range mr.Status.Conditions {
			if c.Reason == ReasonCRDsNotInstalled || c.Reason == ReasonCRDsOutdated {
				waiting = true
			}
		}
		// Routers on another plane than the default (which needs no CRD) may be
		// waiting for one, or lose one.
		if waiting || (mr.Spec.DataPlane != "" && mr.Spec.DataPlane != compiler.DefaultDataPlane) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}})
		}
	}
	return out
}

// GeneratedObjectPriority is the work-queue priority of an event on an
// object the controller generated and owns (a Deployment turning ready, a
// Service deleted, and the echo of the controller's own apply): below a
// router's own events (a spec change, priority 0), above its rechecks
// (RecheckPriority). Every first apply of a router's objects comes back as
// such events, and at a spec change's priority they were queued ahead of
// it: at 5,000 routers, 379 of them when a Proxy router's spec changed,
// which waited 38 s for a worker (docs/measurements/2026-12-controller-at-scale-rounds.md, fix 13).
const GeneratedObjectPriority = -1

// generatedObjectEvents enqueues the router that controls an object (what
// Owns does), at GeneratedObjectPriority at most.
func generatedObjectEvents(scheme *runtime.Scheme, mapper meta.RESTMapper) handler.EventHandler {
	owner := handler.EnqueueRequestForOwner(scheme, mapper, &v1.ModelRouter{}, handler.OnlyControllerOwner())
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			owner.Create(ctx, e, capPriority(q, GeneratedObjectPriority))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			owner.Update(ctx, e, capPriority(q, GeneratedObjectPriority))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			owner.Delete(ctx, e, capPriority(q, GeneratedObjectPriority))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			owner.Generic(ctx, e, capPriority(q, GeneratedObjectPriority))
		},
	}
}

// capPriority is q with every add at priority p at most; q unchanged when
// it is not a priority queue.
func capPriority(q workqueue.TypedRateLimitingInterface[reconcile.Request], p int) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return cappedQueue{pq, p}
	}
	return q
}

type cappedQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	max int
}

func (q cappedQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil || *o.Priority > q.max {
		o.Priority = ptr.To(q.max)
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

func (q cappedQueue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

func (q cappedQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: d}, item)
}

func (q cappedQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}
