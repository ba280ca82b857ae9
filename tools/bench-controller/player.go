package main

import (
	"context"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/test/gatewayplayer"
)

// player plays, with -dataplane played, what a cluster runs beside the
// controller and envtest does not: the Deployment controller (a generated
// Deployment reports every replica ready for its generation) and the
// gateway controllers (Envoy Gateway, Envoy AI Gateway, agentgateway, the
// Inference Extension accept every generated route, pool and policy, in the
// status shapes of test/gatewayplayer). It follows watches and
// writes each answer once per generation, so at steady state it makes no
// request; its writes are counted and reported apart from the controller's.
type player struct {
	c      client.Client
	cache  cache.Cache
	queue  workqueue.TypedInterface[playItem]
	writes atomic.Int64
}

type playItem struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

func newPlayer(c client.Client, ca cache.Cache) *player {
	return &player{c: c, cache: ca, queue: workqueue.NewTyped[playItem]()}
}

func (p *player) start(ctx context.Context) error {
	watch := func(obj client.Object, gvk schema.GroupVersionKind) error {
		inf, err := p.cache.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		enqueue := func(o any) {
			if m, ok := o.(metav1.Object); ok && m.GetLabels()[naming.LabelManagedBy] == naming.ManagedBy {
				p.queue.Add(playItem{gvk, m.GetNamespace(), m.GetName()})
			}
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
		return err
	}
	if err := watch(&appsv1.Deployment{}, deploymentGVK); err != nil {
		return err
	}
	for _, k := range gatewayplayer.Kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.GVK)
		if err := watch(u, k.GVK); err != nil {
			return err
		}
	}
	for range 4 {
		go func() {
			for {
				it, shutdown := p.queue.Get()
				if shutdown {
					return
				}
				p.answer(ctx, it)
				p.queue.Done(it)
			}
		}()
	}
	go func() { <-ctx.Done(); p.queue.ShutDown() }()
	return nil
}

func (p *player) answer(ctx context.Context, it playItem) {
	key := types.NamespacedName{Namespace: it.namespace, Name: it.name}
	if it.gvk == deploymentGVK {
		d := &appsv1.Deployment{}
		if err := p.cache.Get(ctx, key, d); err != nil {
			return
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		s := d.Status
		if s.ObservedGeneration == d.Generation && s.ReadyReplicas == want && s.Replicas == want {
			return
		}
		d = d.DeepCopy()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want, ReadyReplicas: want, AvailableReplicas: want, UpdatedReplicas: want}
		if p.c.Status().Update(ctx, d) == nil {
			p.writes.Add(1)
		}
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(it.gvk)
	if err := p.cache.Get(ctx, key, u); err != nil {
		return
	}
	field := gatewayplayer.FieldOf(it.gvk)
	conds := gatewayplayer.Conditions(gatewayplayer.Accept, field, u.GetGeneration(), time.Now())
	if gatewayplayer.Same(u, field, conds) {
		return
	}
	u = u.DeepCopy()
	gatewayplayer.SetStatus(u, field, conds)
	if p.c.Status().Update(ctx, u) == nil {
		p.writes.Add(1)
	}
}
