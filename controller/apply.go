package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
)

// LabelRouterNamespace marks an object generated for a router in another
// namespace (agentgateway's model-extraction policy lives in the Gateway's
// namespace and cannot carry an owner reference). Together with
// naming.LabelRouter and naming.LabelManagedBy it is the inventory of
// cross-namespace objects, cleaned up through the router's finalizer.
const LabelRouterNamespace = naming.LabelRouterNamespace

// key names one object.
func key(gvk schema.GroupVersionKind, ns, name string) string { return targets.Key(gvk, ns, name) }

func objKey(u *unstructured.Unstructured) string {
	return key(u.GroupVersionKind(), u.GetNamespace(), u.GetName())
}

// describe names an object for messages: "Service ns/name".
func describe(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// prunedCache remembers, per router uid, the desired object set whose prune
// last succeeded in this process: a reconcile whose desired set is the same
// has nothing to prune (everything the router controls was either desired
// then or deleted then), so it skips the inventory, about 20 uncached LISTs
// and most of a recheck's cost. A router seen without its finalizer has
// never had anything applied (the finalizer is set first), so its first
// reconcile has nothing to prune either (freshRouter).
//
// The memory never spans two leaders: a replica that loses the leader Lease
// exits (controller-runtime's manager returns from Start), and a new leader
// starts with an empty cache, so it prunes each router once. What makes an
// entry stale is forgotten: a failed apply, a name taken by a foreign object
// (which skips the prune), the router's deletion.
type prunedCache struct {
	mu sync.Mutex
	m  map[types.UID]string
}

// freshRouter is prunedCache's entry for a router with nothing applied yet.
const freshRouter = "\x00fresh"

// upToDate reports whether the prune of keys can be skipped.
func (c *prunedCache) upToDate(uid types.UID, keys string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	got, ok := c.m[uid]
	return ok && (got == keys || got == freshRouter)
}

func (c *prunedCache) set(uid types.UID, keys string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]string{}
	}
	c.m[uid] = keys
}

func (c *prunedCache) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uid)
}

// desiredKeys is a desired object set as prunedCache compares it.
func desiredKeys(desired map[string]bool) string {
	keys := make([]string, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n")
}

// appliedRecord is what the last successful apply of one object produced:
// the hash of the desired object, and the hash of what the server returned
// (liveHash).
type appliedRecord struct {
	hash string
	live string
}

// appliedCache remembers, per router uid and object, the hash applied and the
// resourceVersion that came back. It is an optimisation only: an empty cache
// (after a restart) re-applies everything once, which the server stores as a
// no-op.
type appliedCache struct {
	mu sync.Mutex
	m  map[string]appliedRecord
}

func (c *appliedCache) get(k string) (appliedRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *appliedCache) set(k string, r appliedRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]appliedRecord{}
	}
	c.m[k] = r
}

func (c *appliedCache) forget(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// liveHash hashes a live object as it stands apart from its status and the
// metadata every write moves (resourceVersion, managedFields, generation):
// a data plane's controller writing status on a generated route or policy
// leaves it unchanged, so the next reconcile does not apply the object again
// (a no-op apply is still a write request); any change to its spec, labels,
// annotations or owners does change it, and the object is applied again.
func liveHash(u *unstructured.Unstructured) (string, error) {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(c.Object, "metadata", "generation")
	return hashObject(c)
}

// hashObject hashes the desired object as it will be applied.
func hashObject(u *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(u.Object) // map keys are sorted: deterministic
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// controlledBy reports whether live is an object this router generated: a
// controller owner reference to its uid, or (for objects outside its
// namespace, which cannot carry one) the inventory labels naming it.
func controlledBy(live *unstructured.Unstructured, router *v1.ModelRouter) bool {
	if ref := metav1.GetControllerOfNoCopy(live); ref != nil {
		return ref.UID == router.UID
	}
	if live.GetNamespace() == router.Namespace {
		return false
	}
	l := live.GetLabels()
	return l[naming.LabelManagedBy] == naming.ManagedBy &&
		l[naming.LabelRouter] == naming.LabelValue(router.Name) &&
		l[LabelRouterNamespace] == naming.LabelValue(router.Namespace)
}

// missingKinds returns the kinds the API server does not serve.
func missingKinds(mapper meta.RESTMapper, kinds []schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	var missing []schema.GroupVersionKind
	for _, k := range kinds {
		if _, err := mapper.RESTMapping(k.GroupKind(), k.Version); err != nil {
			if meta.IsNoMatchError(err) {
				missing = append(missing, k)
				continue
			}
			return nil, err
		}
	}
	return missing, nil
}

// servedKinds filters kinds down to the ones the API server serves.
func servedKinds(mapper meta.RESTMapper, kinds []schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	missing, err := missingKinds(mapper, kinds)
	if err != nil {
		return nil, err
	}
	gone := map[schema.GroupVersionKind]bool{}
	for _, k := range missing {
		gone[k] = true
	}
	var out []schema.GroupVersionKind
	for _, k := range kinds {
		if !gone[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

// inventory lists every object of the given kinds that carries this router's
// inventory labels: in its namespace, and (cross-namespace objects, for the
// kinds cross says a target places in other namespaces) anywhere with the
// router-namespace label. Only objects the router controls are returned, so
// an object someone else labelled is never touched.
func inventory(ctx context.Context, c client.Reader, mapper meta.RESTMapper, router *v1.ModelRouter, kinds []schema.GroupVersionKind, cross func(schema.GroupVersionKind) bool) ([]*unstructured.Unstructured, error) {
	base := labels.Set{naming.LabelRouter: naming.LabelValue(router.Name), naming.LabelManagedBy: naming.ManagedBy}
	crossLabels := labels.Set{naming.LabelRouter: naming.LabelValue(router.Name), naming.LabelManagedBy: naming.ManagedBy, LabelRouterNamespace: naming.LabelValue(router.Namespace)}
	seen := map[string]bool{}
	var out []*unstructured.Unstructured
	for _, k := range kinds {
		m, err := mapper.RESTMapping(k.GroupKind(), k.Version)
		if err != nil {
			return nil, err
		}
		queries := []client.ListOption{client.InNamespace(router.Namespace), client.MatchingLabels(base)}
		lists := [][]client.ListOption{queries}
		if m.Scope.Name() == meta.RESTScopeNameNamespace && cross(k) {
			lists = append(lists, []client.ListOption{client.MatchingLabels(crossLabels)})
		}
		for _, opts := range lists {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(k.GroupVersion().WithKind(k.Kind + "List"))
			if err := c.List(ctx, list, opts...); err != nil {
				return nil, fmt.Errorf("listing %s: %w", k.Kind, err)
			}
			for i := range list.Items {
				it := &list.Items[i]
				it.SetGroupVersionKind(k)
				if seen[objKey(it)] || !controlledBy(it, router) {
					continue
				}
				seen[objKey(it)] = true
				out = append(out, it)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return objKey(out[i]) < objKey(out[j]) })
	return out, nil
}

// deleteObject deletes obj, guarded by its uid so a re-created object of the
// same name is never removed by mistake.
func deleteObject(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	uid := obj.GetUID()
	prop := metav1.DeletePropagationBackground
	err := c.Delete(ctx, obj, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &prop})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// nodePortsOf returns a Service's pinned node ports.
func nodePortsOf(u *unstructured.Unstructured) []int64 {
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	var out []int64
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if n, ok := m["nodePort"].(int64); ok && n > 0 {
				out = append(out, n)
			}
		}
	}
	return out
}

// withoutNodePorts returns a copy of a Service without pinned node ports.
func withoutNodePorts(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	ports, _, _ := unstructured.NestedSlice(c.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			delete(m, "nodePort")
		}
	}
	_ = unstructured.SetNestedSlice(c.Object, ports, "spec", "ports")
	return c
}

func isService(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Service").GroupKind()
}
