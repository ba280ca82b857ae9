package controller

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// TestSpecChangeGoesAheadOfGeneratedObjectEvents: events on the objects
// the controller generated (here the creates its own applies cause, for
// many routers) are queued below a router's spec change, and above its
// rechecks: the spec change is the next router a worker takes. At the
// same priority it waited behind all of them (the 5,000-router bench).
func TestSpecChangeGoesAheadOfGeneratedObjectEvents(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(v1.GroupVersion.WithKind("ModelRouter"), meta.RESTScopeNamespace)
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	ctx := context.Background()
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}

	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(RecheckPriority)}, req("rechecked"))
	generated := generatedObjectEvents(scheme, mapper)
	for i := range 50 {
		name := fmt.Sprintf("r%02d", i)
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-router-proxy", ResourceVersion: "1",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "ModelRouter", Name: name, UID: types.UID(name), Controller: ptr.To(true)}}}}
		generated.Create(ctx, event.CreateEvent{Object: d}, q)
	}
	// A spec change, as the ModelRouter watch (For) enqueues it.
	old := &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "changed", ResourceVersion: "1", Generation: 1}}
	changed := old.DeepCopy()
	changed.ResourceVersion, changed.Generation = "2", 2
	(&handler.EnqueueRequestForObject{}).Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: changed}, q)

	first, priority, _ := q.GetWithPriority()
	if first != req("changed") {
		t.Fatalf("a worker takes %v (priority %d) first, want the spec change", first, priority)
	}
	q.Done(first)
	for range 50 {
		it, p, _ := q.GetWithPriority()
		if p != GeneratedObjectPriority {
			t.Errorf("%v: priority %d, want GeneratedObjectPriority %d", it, p, GeneratedObjectPriority)
		}
		q.Done(it)
	}
	if last, _, _ := q.GetWithPriority(); last != req("rechecked") {
		t.Errorf("last %v, want the recheck after every event", last)
	}
}
