package agentgateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/targetstest"
)

// fakeCluster answers List from a fixed set of objects.
type fakeCluster struct{ objs []unstructured.Unstructured }

func (f *fakeCluster) Get(context.Context, schema.GroupVersionKind, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}

func (f *fakeCluster) List(_ context.Context, gvk schema.GroupVersionKind, ns string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, o := range f.objs {
		if o.GetKind() == gvk.Kind && o.GetNamespace() == ns {
			out = append(out, *o.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeCluster) Owned(context.Context, *v1.ModelRouter, []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (f *fakeCluster) Fetch(context.Context, string) ([]byte, error) { return nil, nil }

var _ targets.ClusterReader = (*fakeCluster)(nil)

func obj(t *testing.T, s string) unstructured.Unstructured {
	t.Helper()
	o := unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(s), &o.Object))
	return o
}

// desiredAuth is a router's own objects: its route and its auth policy.
func desiredAuth(t *testing.T) []*unstructured.Unstructured {
	route := obj(t, `{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: chat-agentgateway, namespace: team}}`)
	pol := obj(t, `
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: chat-agentgateway-auth, namespace: team}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: chat-agentgateway}]
  traffic:
    jwtAuthentication: {mode: Strict, providers: [{issuer: x, jwks: {remote: {url: y}}}]}
    authorization: {action: Require, policy: {matchExpressions: ["true"]}}
`)
	return []*unstructured.Unstructured{&route, &pol}
}

// Item 2 of issue 28: an Override policy on the Gateway, the router's
// listener or its route is reported (it drops the router's JWT or
// allowlist); one on another listener, without Override, or setting other
// fields is not.
func TestForeignOverrides(t *testing.T) {
	r := &ir.Router{Name: "chat", Namespace: "team", AgentGateway: &ir.AgentGateway{Name: "gw", Namespace: "infra", SectionName: "http"}}
	policy := func(ns, name, target, section, strategy, field string) unstructured.Unstructured {
		s := "apiVersion: agentgateway.dev/v1alpha1\nkind: AgentgatewayPolicy\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n" +
			"  targetRefs: [{group: gateway.networking.k8s.io, kind: " + target + ", name: " + map[string]string{"Gateway": "gw", "HTTPRoute": "chat-agentgateway"}[target]
		if section != "" {
			s += ", sectionName: " + section
		}
		s += "}]\n"
		if strategy != "" {
			s += "  strategy: {inheritance: " + strategy + "}\n"
		}
		s += "  traffic:\n    " + field + "\n"
		return obj(t, s)
	}
	authz := `authorization: {action: Allow, policy: {matchExpressions: ["true"]}}`
	for _, c := range []struct {
		name string
		pol  unstructured.Unstructured
		want bool
	}{
		{"gateway override authz", policy("infra", "open", "Gateway", "", "Override", authz), true},
		{"listener override jwt", policy("infra", "jwt", "Gateway", "http", "Override", `jwtAuthentication: {mode: Permissive, providers: [{issuer: z, jwks: {remote: {url: z}}}]}`), true},
		{"route override", policy("team", "mine-too", "HTTPRoute", "", "Override", authz), true},
		{"other listener", policy("infra", "other", "Gateway", "https", "Override", authz), false},
		{"no override", policy("infra", "plain", "Gateway", "", "", authz), false},
		{"other field", policy("infra", "timeouts", "Gateway", "", "Override", `timeouts: {request: 10s}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, err := foreignOverrides(context.Background(), &fakeCluster{objs: []unstructured.Unstructured{c.pol}}, r, desiredAuth(t))
			require.NoError(t, err)
			if c.want {
				assert.Contains(t, msg, c.pol.GetName())
			} else {
				assert.Empty(t, msg)
			}
		})
	}
}

// Item 4 of issue 28: a foreign PreRouting transformation on the router's
// listener conflicts as one on the Gateway does; one on another listener,
// when the router attaches to its own listener, does not.
func TestForeignPreRoutingOnListeners(t *testing.T) {
	pre := func(section string) unstructured.Unstructured {
		s := `{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: theirs, namespace: infra},
  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw` + section + `}],
  traffic: {phase: PreRouting, transformation: {request: {set: [{name: x, value: '"y"'}]}}}}}`
		return obj(t, s)
	}
	for _, c := range []struct {
		routerSection, policySection string
		want                         bool
	}{
		{"http", "", true},
		{"http", ", sectionName: http", true},
		{"http", ", sectionName: https", false},
		{"", ", sectionName: https", true},
	} {
		r := &ir.Router{Name: "chat", Namespace: "infra", AgentGateway: &ir.AgentGateway{Name: "gw", Namespace: "infra", SectionName: c.routerSection}}
		msg, err := foreignPreRoutingPolicies(context.Background(), &fakeCluster{objs: []unstructured.Unstructured{pre(c.policySection)}}, r, nil)
		require.NoError(t, err)
		assert.Equal(t, c.want, msg != "", "router on %q, policy %q", c.routerSection, c.policySection)
	}
}

// getter answers Get from a fixed set of objects.
type getter struct {
	fakeCluster
	objs map[string]*unstructured.Unstructured
}

func (g *getter) Get(_ context.Context, _ schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	return g.objs[ns+"/"+name], nil
}

// Item 5 of issue 28: routing Model without agentgatewayModels.enabled
// leaves the AgentgatewayModels without status; the controller says so.
func TestUnansweredModels(t *testing.T) {
	model := func(name, status string) *unstructured.Unstructured {
		o := obj(t, `{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayModel, metadata: {name: `+name+`, namespace: ns}`+status+`}`)
		return &o
	}
	answered := model("a", `, status: {parents: [{parentRef: {name: r}, controllerName: agentgateway.dev/agentgateway, conditions: []}]}`)
	silent := model("b", "")
	c := &getter{objs: map[string]*unstructured.Unstructured{"ns/a": answered, "ns/b": silent}}
	assert.Equal(t, []string{"AgentgatewayModel ns/b"}, unansweredModels(context.Background(), c, []*unstructured.Unstructured{model("a", ""), model("b", ""), model("c", "")}))
}

// TestNeighbourChecksReadInPlace: the neighbour checks run in every
// reconcile over every router's policy on the Gateway, so they read each
// policy where it is: a few allocations per policy (its key), not a copy
// of its transformation and targets (the one-Gateway bench's CPU grew
// faster than the routers from such copies). And they write nothing into
// what they read: the objects are the cache's, shared by every reconcile.
func TestNeighbourChecksReadInPlace(t *testing.T) {
	// n LLMKube routers' PreRouting policies on the Gateway (the same
	// transformation as the router's own: no conflict), and Override
	// policies that set fields the router does not.
	fleet := func(n int) []unstructured.Unstructured {
		var objs []unstructured.Unstructured
		for i := range n {
			name := fmt.Sprintf("r%05d", i)
			objs = append(objs,
				obj(t, `{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: `+name+`-model, namespace: gw},
  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}],
  traffic: {phase: PreRouting, transformation: {request: {set: [{name: x-model, value: 'json(request.body).model'}]}}}}}`),
				obj(t, `{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: `+name+`-rate, namespace: gw},
  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}], strategy: {inheritance: Override},
  traffic: {localRateLimit: [{requests: 10, unit: Seconds}]}}}`))
		}
		return objs
	}
	own := obj(t, `{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: mine-model, namespace: gw},
  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: agw}],
  traffic: {phase: PreRouting, transformation: {request: {set: [{name: x-model, value: 'json(request.body).model'}]}}}}}`)
	desired := append(desiredAuth(t), &own)
	r := &ir.Router{Name: "chat", Namespace: "team", AgentGateway: &ir.AgentGateway{Name: "agw", Namespace: "gw", Routing: ir.AgentGatewayRoutingModel}}
	perPolicy := targetstest.AllocsPerObject(t, fleet, func(c *targetstest.InPlace) {
		reason, msg, err := (&Target{}).CheckForeign(context.Background(), c, r, desired)
		if err != nil || reason != "" {
			t.Fatalf("CheckForeign: %q %q %v, want no conflict", reason, msg, err)
		}
	})
	// Two checks read each policy, and each builds its key (two
	// allocations) and reads its deletion time (one): 6. Copying its
	// transformation, its targets and comparing them by reflection was 13.
	if perPolicy > 8 {
		t.Errorf("%.1f allocations per policy on the Gateway, want at most 8: the check copies what it reads", perPolicy)
	}
}
