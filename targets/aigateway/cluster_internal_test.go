package aigateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets/targetstest"
)

// TestForeignRoutesReadInPlace: the Gateway plane's neighbour check reads
// every route of the cluster, for every authenticated router, in every
// reconcile; like agentgateway's, it reads them where the cache holds them
// (no copy of their parentRefs and hostnames, a few bytes per route at
// most) and writes nothing into them.
func TestForeignRoutesReadInPlace(t *testing.T) {
	fleet := func(n int) []unstructured.Unstructured {
		var objs []unstructured.Unstructured
		for i := range n {
			o := unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(`{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute,
  metadata: {name: r%05d, namespace: apps},
  spec: {parentRefs: [{name: other-gw, namespace: infra}, {name: third-gw, namespace: infra, sectionName: http}], hostnames: [a.example, b.example]}}`, i)), &o.Object))
			objs = append(objs, o)
		}
		return objs
	}
	r := &ir.Router{Name: "chat", Namespace: "team", Gateway: &ir.GatewayRef{Name: "gw", Namespace: "infra"},
		Policy: ir.Policy{Auth: &ir.Auth{JWT: &ir.JWT{Issuer: "x", HeaderKey: "x-team"}}}}
	perRoute := targetstest.AllocsPerObject(t, fleet, func(c *targetstest.InPlace) {
		reason, msg, err := (&Target{}).CheckForeign(context.Background(), c, r, nil)
		if err != nil || reason != "" {
			t.Fatalf("CheckForeign: %q %q %v, want no conflict", reason, msg, err)
		}
	})
	// Two kinds are listed (AIGatewayRoute, HTTPRoute), the fleet is all
	// of the second. Copying each route's parentRefs and naming it before
	// knowing it was attached was 7 allocations per route.
	if perRoute > 1 {
		t.Errorf("%.1f allocations per route in the cluster, want at most 1: the check copies what it reads", perRoute)
	}
}
