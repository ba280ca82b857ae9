package targets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// cluster answers Get and List from a fixed set of objects.
type cluster struct{ objs []*unstructured.Unstructured }

func (c *cluster) Get(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	for _, o := range c.objs {
		if o.GetKind() == gvk.Kind && o.GetNamespace() == ns && o.GetName() == name {
			return o.DeepCopy(), nil
		}
	}
	return nil, nil
}

func (c *cluster) List(_ context.Context, gvk schema.GroupVersionKind, ns string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, o := range c.objs {
		if o.GetKind() == gvk.Kind && (ns == "" || o.GetNamespace() == ns) {
			out = append(out, *o)
		}
	}
	return out, nil
}

func (c *cluster) Owned(context.Context, *v1.ModelRouter, []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (c *cluster) Fetch(context.Context, string) ([]byte, error) { return nil, nil }

const (
	gateway = `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw, namespace: infra},
  spec: {listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]}}`
	conflicted = `status: {ancestors: [{ancestorRef: {name: gw}, conditions: [{type: Accepted, status: "False", reason: Conflicted, message: an older policy wins}]}]}`
)

// TestForeignConflictComesFirst: when a router's own policy is Conflicted
// (PolicyConflicted, read back from its status) and the plane's neighbour
// check finds a foreign object in the way, both gateway planes report the
// foreign finding first, with its reason, and the own conflict after it;
// the two planes used to rank them in opposite orders and drop one.
func TestForeignConflictComesFirst(t *testing.T) {
	jwt := &ir.Auth{JWT: &ir.JWT{Issuer: "x", HeaderKey: "x-team"}}
	cases := []struct {
		name    string
		plane   targets.Cluster
		router  *ir.Router
		desired []string
		foreign []string
		reason  string
	}{{
		name:   "gateway",
		plane:  aigateway.New(),
		router: &ir.Router{Name: "chat", Namespace: "team", Gateway: &ir.GatewayRef{Name: "gw", Namespace: "infra"}, Policy: ir.Policy{Auth: jwt}},
		desired: []string{
			`{apiVersion: aigateway.envoyproxy.io/v1beta1, kind: AIGatewayRoute, metadata: {name: chat-0, namespace: team},
			  status: {conditions: [{type: Accepted, status: "True", reason: Accepted}]}}`,
			`{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: SecurityPolicy, metadata: {name: chat, namespace: team}, ` + conflicted + `}`,
		},
		foreign: []string{`{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: other, namespace: elsewhere},
		  spec: {parentRefs: [{name: gw, namespace: infra}]}}`},
		reason: aigateway.ReasonGatewaySharedWithAuth,
	}, {
		name:   "agentgateway",
		plane:  agentgateway.New(),
		router: &ir.Router{Name: "chat", Namespace: "team", AgentGateway: &ir.AgentGateway{Name: "gw", Namespace: "infra"}, Policy: ir.Policy{Auth: jwt}},
		desired: []string{
			`{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: chat-agentgateway, namespace: team},
			  status: {parents: [{parentRef: {name: gw}, conditions: [{type: Accepted, status: "True", reason: Accepted}]}]}}`,
			`{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: chat-agentgateway-auth, namespace: team},
			  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: chat-agentgateway}],
			    traffic: {jwtAuthentication: {mode: Strict}}}, ` + conflicted + `}`,
		},
		foreign: []string{`{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayPolicy, metadata: {name: platform, namespace: infra},
		  spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], strategy: {inheritance: Override},
		    traffic: {jwtAuthentication: {mode: Permissive}}}}`},
		reason: agentgateway.ReasonOverridingPolicy,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			desired := testenv.Objects(t, tc.desired...)
			c := &cluster{objs: append(append(testenv.Objects(t, gateway), desired...), testenv.Objects(t, tc.foreign...)...)}
			own := targets.Acceptance(context.Background(), c, desired)
			require.Equal(t, targets.ReasonPolicyConflicted, own.Reason, "the scenario has a conflicted policy of the router's own")

			obs, err := tc.plane.Observe(context.Background(), c, targets.Applied{Router: tc.router, Desired: desired, Summary: "s"})
			require.NoError(t, err)
			assert.Equal(t, tc.reason, obs.ConflictReason, "the foreign finding's reason")
			foreign, also, ok := strings.Cut(obs.Conflict, "; also: "+own.Message)
			assert.True(t, ok, "the own conflict follows the foreign finding: %s", obs.Conflict)
			assert.NotEmpty(t, foreign)
			assert.Empty(t, also)
		})
	}
}

// TestAddForeignConflict: nothing found keeps the read-back conflict; a
// finding alone is reported as is.
func TestAddForeignConflict(t *testing.T) {
	obs := targets.Observation{Conflict: "own", ConflictReason: targets.ReasonPolicyConflicted}
	obs.AddForeignConflict("", "")
	assert.Equal(t, targets.Observation{Conflict: "own", ConflictReason: targets.ReasonPolicyConflicted}, obs)

	obs = targets.Observation{}
	obs.AddForeignConflict("Shadowed", "foreign")
	assert.Equal(t, targets.Observation{Conflict: "foreign", ConflictReason: "Shadowed"}, obs)
}
