package aigateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// cacheLike hands out its own objects from List, as the controller's
// informer cache does (ClusterReader.List: read only).
type cacheLike struct{ objs []unstructured.Unstructured }

func (c *cacheLike) Get(context.Context, schema.GroupVersionKind, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}

func (c *cacheLike) List(_ context.Context, gvk schema.GroupVersionKind, _ string) ([]unstructured.Unstructured, error) {
	if gvk.Kind == "HTTPRoute" {
		return c.objs, nil
	}
	return nil, nil
}

func (c *cacheLike) Owned(context.Context, *v1.ModelRouter, []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (c *cacheLike) Fetch(context.Context, string) ([]byte, error) { return nil, nil }

// TestForeignRoutesReadInPlace: the Gateway plane's neighbour check reads
// every route of the cluster, for every authenticated router, in every
// reconcile; like agentgateway's, it reads them where the cache holds them
// (no copy of their parentRefs and hostnames, a few bytes per route at
// most) and writes nothing into them.
func TestForeignRoutesReadInPlace(t *testing.T) {
	fleet := func(n int) *cacheLike {
		c := &cacheLike{}
		for i := range n {
			o := unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(`{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute,
  metadata: {name: r%05d, namespace: apps},
  spec: {parentRefs: [{name: other-gw, namespace: infra}, {name: third-gw, namespace: infra, sectionName: http}], hostnames: [a.example, b.example]}}`, i)), &o.Object))
			c.objs = append(c.objs, o)
		}
		return c
	}
	r := &ir.Router{Name: "chat", Namespace: "team", Gateway: &ir.GatewayRef{Name: "gw", Namespace: "infra"},
		Policy: ir.Policy{Auth: &ir.Auth{JWT: &ir.JWT{Issuer: "x", HeaderKey: "x-team"}}}}
	check := func(c *cacheLike) func() {
		return func() {
			reason, msg, err := (&Target{}).CheckForeign(context.Background(), c, r, nil)
			if err != nil || reason != "" {
				t.Fatalf("CheckForeign: %q %q %v, want no conflict", reason, msg, err)
			}
		}
	}
	small, large := fleet(20), fleet(220)
	before := make([]*unstructured.Unstructured, len(large.objs))
	for i := range large.objs {
		before[i] = large.objs[i].DeepCopy()
	}
	perRoute := (testing.AllocsPerRun(20, check(large)) - testing.AllocsPerRun(20, check(small))) / float64(len(large.objs)-len(small.objs))
	// Two kinds are listed (AIGatewayRoute, HTTPRoute), this cache answers
	// the second. Copying each route's parentRefs and naming it before
	// knowing it was attached was 7 allocations per route.
	if perRoute > 1 {
		t.Errorf("%.1f allocations per route in the cluster, want at most 1: the check copies what it reads", perRoute)
	}
	for i := range large.objs {
		if !equality.Semantic.DeepEqual(before[i].Object, large.objs[i].Object) {
			t.Fatalf("the check changed %s: %v", large.objs[i].GetName(), large.objs[i].Object)
		}
	}
}

var _ targets.ClusterReader = (*cacheLike)(nil)
