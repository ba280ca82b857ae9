package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

var gatewayGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}

// objName names an object across kinds and namespaces: "Kind ns/name".
func objName(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// deleteRouters deletes routers ns/name and waits until the finalizer has
// removed every object generated for them (no garbage collector runs in
// envtest, so owner references alone would leave them) and they are gone.
func deleteRouters(t *testing.T, ctx context.Context, c client.Client, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := c.Delete(ctx, &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "routers and their objects deleted", func() error {
		for _, name := range names {
			if left := liveInventory(t, ctx, c, ns, name); len(left) > 0 {
				return fmt.Errorf("%s left %v", name, sortedKeys(left))
			}
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &v1.ModelRouter{}); !isNotFound(err) {
				return fmt.Errorf("router %s still there (%v)", name, err)
			}
		}
		return nil
	})
}

// liveInventory lists, across every kind any built target can generate,
// the objects labelled for router ns/name: in its namespace, and in other
// namespaces when they carry the router-namespace label.
func liveInventory(t *testing.T, ctx context.Context, c client.Reader, ns, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, k := range builtin.Registry().AllKinds() {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(k.GroupVersion().WithKind(k.Kind + "List"))
		if err := c.List(ctx, l, client.MatchingLabels{"inference.llmkube.dev/model-router": name, "app.kubernetes.io/managed-by": "llmkube-compile"}); err != nil {
			t.Fatalf("listing %s: %v", k.Kind, err)
		}
		for i := range l.Items {
			it := &l.Items[i]
			it.SetGroupVersionKind(k)
			if it.GetNamespace() != ns && it.GetLabels()["inference.llmkube.dev/model-router-namespace"] != ns {
				continue
			}
			out[objName(it)] = it
		}
	}
	return out
}

// liveControlledBy reads every object of want from the API server and
// checks that the router of that uid controls it (its controller owner
// reference); it returns them as they are live.
func liveControlledBy(ctx context.Context, t *testing.T, want map[string]*unstructured.Unstructured, uid types.UID) map[string]*unstructured.Unstructured {
	t.Helper()
	live := map[string]*unstructured.Unstructured{}
	for k, w := range want {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(w.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(w), o); err != nil {
			t.Fatal(err)
		}
		if ref := metav1.GetControllerOf(o); ref == nil || ref.UID != uid {
			t.Errorf("%s: controller reference %v, want the router (uid %s)", k, ref, uid)
		}
		live[k] = o
	}
	return live
}

// convergedIn waits until the router's live inventory (read through k8s),
// across every kind of every data plane, is exactly what render prints for
// its current spec, and every rendered field (metadata labels, spec, data)
// holds the rendered value on the live object (the API server may add
// defaults). It returns the render.
func convergedIn(t *testing.T, k8s client.Client, ns, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	ctx := ctxT(t)
	var want map[string]*unstructured.Unstructured
	eventually(t, "every kind's inventory equals render", func() error {
		want = map[string]*unstructured.Unstructured{}
		for _, o := range renderedIn(t, k8s, ns, name) {
			if o.GetNamespace() == "" {
				o.SetNamespace(ns)
			}
			want[objName(o)] = o
		}
		live := liveInventory(t, ctx, k8s, ns, name)
		if got, w := sortedKeys(live), sortedKeys(want); strings.Join(got, ",") != strings.Join(w, ",") {
			return fmt.Errorf("inventory %v\nrender    %v", got, w)
		}
		for k, w := range want {
			l := live[k]
			for _, f := range []string{"spec", "data"} {
				wv, ok := w.Object[f]
				if !ok {
					continue
				}
				if err := subset(f, wv, l.Object[f]); err != nil {
					return fmt.Errorf("%s: %v", k, err)
				}
			}
			if err := subset("metadata.labels", anyMap(w.GetLabels()), anyMap(l.GetLabels())); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		return nil
	})
	return want
}

func anyMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// subset reports where got lacks a value of want: maps may have extra keys
// on the live side (server defaults), lists must have the same length.
func subset(path string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, live has %T", path, got)
		}
		for k, wv := range w {
			if err := subset(path+"."+k, wv, g[k]); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %d items, live has %v", path, len(w), got)
		}
		for i := range w {
			if err := subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
				return err
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) && !reflect.DeepEqual(want, got) {
			return fmt.Errorf("%s: want %v, live has %v", path, want, got)
		}
	}
	return nil
}

// onGateway sets up a Gateway-plane test: a namespace for the router and
// one for its Gateway (ai-gateway, at address ip), with testdata case tc's
// objects applied; name and spec are tc's router, not yet created.
func onGateway(t *testing.T, ctx context.Context, tc, ip string) (ns, gwns, name string, spec map[string]any) {
	t.Helper()
	ns, gwns = env.NewNamespace(t), env.NewNamespace(t)
	createGateway(t, ctx, k8s, gwns, "ai-gateway", ip)
	objs, name, spec := testCase(t, tc, ns, gwns)
	applyAll(t, ctx, objs)
	return ns, gwns, name, spec
}

// readyOnGateway is onGateway with tc's router created and Ready.
func readyOnGateway(t *testing.T, ctx context.Context, tc, ip string) (ns, gwns, name string, spec map[string]any) {
	t.Helper()
	ns, gwns, name, spec = onGateway(t, ctx, tc, ip)
	createRouter(t, ns, name, specYAML(t, spec))
	waitPhase(t, ctx, ns, name, v1.PhaseReady)
	return ns, gwns, name, spec
}

// testCase reads testdata/<name>/input.yaml: its InferenceServices (and any
// other non-router objects) moved to ns, and its ModelRouter's spec, with
// gatewayRef.namespace pointing at gwns when set.
func testCase(t *testing.T, name, ns, gwns string) (objs []*unstructured.Unstructured, routerName string, spec map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", name, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	all := testenv.Objects(t, string(data))
	for _, o := range all {
		o.SetNamespace(ns)
		if o.GetKind() != "ModelRouter" {
			unstructured.RemoveNestedField(o.Object, "status")
			objs = append(objs, o)
			continue
		}
		routerName = o.GetName()
		spec, _, _ = unstructured.NestedMap(o.Object, "spec")
		if _, ok, _ := unstructured.NestedMap(spec, "gatewayRef"); ok && gwns != "" {
			_ = unstructured.SetNestedField(spec, gwns, "gatewayRef", "namespace")
		}
	}
	if spec == nil {
		t.Fatalf("testdata/%s has no ModelRouter", name)
	}
	return objs, routerName, spec
}

// specYAML renders a spec map for setRouterSpec and createRouter.
func specYAML(t *testing.T, spec map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// applyAll server-side applies objects (admin client, strict validation).
func applyAll(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := env.ApplyStrict(ctx, o.DeepCopy()); err != nil {
			t.Fatalf("applying %s: %v", testenv.Describe(o), err)
		}
	}
}

// createGateway creates a Gateway API Gateway and reports address in its
// status, as a gateway controller would (none runs in envtest).
func createGateway(t *testing.T, ctx context.Context, c client.Client, ns, name, address string) {
	t.Helper()
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(gatewayGVK)
	gw.SetNamespace(ns)
	gw.SetName(name)
	_ = unstructured.SetNestedField(gw.Object, "envoy-ai-gateway", "spec", "gatewayClassName")
	_ = unstructured.SetNestedSlice(gw.Object, []any{map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP",
		"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}}, "spec", "listeners")
	if err := c.Create(ctx, gw); err != nil {
		t.Fatalf("creating Gateway: %v", err)
	}
	eventually(t, "Gateway status address", func() error {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(gatewayGVK)
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, live); err != nil {
			return err
		}
		_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"type": "IPAddress", "value": address}}, "status", "addresses")
		return c.Status().Update(ctx, live)
	})
}
