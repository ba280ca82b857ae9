package main

import (
	"context"
	"strings"
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
)

// player plays, with -dataplane played, what a cluster runs beside the
// controller and envtest does not: the Deployment controller (a generated
// Deployment reports every replica ready for its generation) and the
// gateway controllers (Envoy Gateway, Envoy AI Gateway, agentgateway, the
// Inference Extension accept every generated route, pool and policy, in the
// status shapes of controller/gatewaysim_test.go). It follows watches and
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

// playedKinds are the kinds whose status the played gateway controllers
// write, with where they write it.
var playedKinds = []struct {
	gvk   schema.GroupVersionKind
	field string // parents, ancestors, or conditions (AIGatewayRoute)
}{
	{schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, "parents"},
	{schema.GroupVersionKind{Group: "inference.networking.k8s.io", Version: "v1", Kind: "InferencePool"}, "parents"},
	{schema.GroupVersionKind{Group: "aigateway.envoyproxy.io", Version: "v1beta1", Kind: "AIGatewayRoute"}, "conditions"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "BackendTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "SecurityPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "gateway.envoyproxy.io", Version: "v1alpha1", Kind: "ClientTrafficPolicy"}, "ancestors"},
	{schema.GroupVersionKind{Group: "agentgateway.dev", Version: "v1alpha1", Kind: "AgentgatewayPolicy"}, "ancestors"},
}

func fieldOf(gvk schema.GroupVersionKind) string {
	for _, k := range playedKinds {
		if k.gvk == gvk {
			return k.field
		}
	}
	return ""
}

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
	for _, k := range playedKinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		if err := watch(u, k.gvk); err != nil {
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
	field := fieldOf(it.gvk)
	gen := u.GetGeneration()
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(typ, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": msg, "observedGeneration": gen, "lastTransitionTime": now}
	}
	conds := []any{cond("Accepted", "Accepted", "accepted"), cond("ResolvedRefs", "ResolvedRefs", "resolved")}
	if field == "conditions" {
		conds = []any{cond("Accepted", "Accepted", "AIGatewayRoute reconciled")}
	}
	if answered(u, field, gen) {
		return
	}
	u = u.DeepCopy()
	if field == "conditions" {
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	} else {
		entry := map[string]any{"controllerName": "example.test/played-gateway-controller", "conditions": conds}
		ref := parentOf(u)
		if field == "parents" {
			entry["parentRef"] = ref
		} else {
			entry["ancestorRef"] = ref
		}
		_ = unstructured.SetNestedSlice(u.Object, []any{entry}, "status", field)
	}
	if p.c.Status().Update(ctx, u) == nil {
		p.writes.Add(1)
	}
}

// answered: the status already accepts generation gen.
func answered(u *unstructured.Unstructured, field string, gen int64) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if field != "conditions" {
		entries, _, _ := unstructured.NestedSlice(u.Object, "status", field)
		if len(entries) != 1 {
			return false
		}
		m, _ := entries[0].(map[string]any)
		conds, _, _ = unstructured.NestedSlice(m, "conditions")
	}
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Accepted" && m["status"] == "True" {
			g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			return g == gen
		}
	}
	return false
}

// parentOf is the Gateway an object attaches to (its first parentRef or
// targetRef), as a status parent or ancestor reference.
func parentOf(obj *unstructured.Unstructured) map[string]any {
	for _, path := range [][]string{{"spec", "parentRefs"}, {"spec", "targetRefs"}} {
		refs, _, _ := unstructured.NestedSlice(obj.Object, path...)
		if len(refs) > 0 {
			m, _ := refs[0].(map[string]any)
			out := map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": m["name"]}
			if ns, ok := m["namespace"].(string); ok {
				out["namespace"] = ns
			}
			if kind, ok := m["kind"].(string); ok && !strings.EqualFold(kind, "Gateway") {
				out["kind"], out["group"] = kind, m["group"]
			}
			return out
		}
	}
	return map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "unknown"}
}
