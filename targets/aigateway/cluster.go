package aigateway

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// The Gateway plane's controller side (targets.Cluster): the route is ready
// once every object is applied; status.gateway reports the Gateway's address
// and whether a SecurityPolicy (JWT, allowlists) is in force.
var _ targets.Cluster = (*Target)(nil)

// ReadyCondition implements targets.Cluster.
func (*Target) ReadyCondition() string { return v1.ReadyCondition(v1.DataPlaneGateway) }

// ProbesBackends implements targets.Cluster: Envoy does not report backend
// health to the controller.
func (*Target) ProbesBackends() bool { return false }

// ServiceName implements targets.Cluster: the Gateway is the entry point.
func (*Target) ServiceName(*ir.Router) string { return "" }

// Observe implements targets.Cluster.
func (*Target) Observe(ctx context.Context, c targets.ClusterReader, in targets.Applied) (targets.Observation, error) {
	obs := targets.Observation{Applied: true, Lingering: in.Lingering, AuthGenerated: in.Generates(gvkSP.Kind)}
	g := in.Router.Gateway
	obs.Endpoint = targets.GatewayAddress(ctx, c, g.Namespace, g.Name)
	targets.ObserveGatewayPlane(ctx, c, targets.GatewayRef{Namespace: g.Namespace, Name: g.Name}, in, &obs,
		fmt.Sprintf("the gateway accepted %d object(s): %s", len(in.Desired), in.Summary))
	if hasAuth(in.Router) && obs.Conflict == "" {
		if others := foreignRoutes(ctx, c, in); len(others) > 0 {
			obs.Conflict = fmt.Sprintf("Gateway %s/%s also serves %s; Envoy checks a token on the route it picks before the model is known, so while they share it this router's callers may be refused (the authorization still refuses whatever this router's own provider did not verify). Give the router a Gateway of its own",
				g.Namespace, g.Name, strings.Join(others, ", "))
			obs.ConflictReason = ReasonGatewaySharedWithAuth
		}
	}
	return obs, nil
}

// ReasonGatewaySharedWithAuth is the Degraded reason of a router with
// policy.auth whose Gateway also serves routes that are not its own (the
// pipeline refuses two ModelRouters; this is everything else).
const ReasonGatewaySharedWithAuth = "GatewaySharedWithAuth"

var gvkHTTPRoute = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// foreignRoutes are the HTTPRoutes of any namespace attached to the
// router's Gateway that are not generated from its own AIGatewayRoutes
// (the AI Gateway names them after the AIGatewayRoute). An error reading
// them reports nothing: status is best effort here.
func foreignRoutes(ctx context.Context, c targets.ClusterReader, in targets.Applied) []string {
	g := in.Router.Gateway
	own := map[string]bool{}
	for _, d := range in.Desired {
		if d.GetKind() == gvkRoute.Kind {
			own[d.GetNamespace()+"/"+d.GetName()] = true
		}
	}
	routes, err := c.List(ctx, gvkHTTPRoute, "")
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("reading HTTPRoutes for a shared Gateway", "error", err.Error())
		return nil
	}
	var out []string
	for _, rt := range routes {
		key := rt.GetNamespace() + "/" + rt.GetName()
		if own[key] {
			continue
		}
		parents, _, _ := unstructured.NestedSlice(rt.Object, "spec", "parentRefs")
		for _, p := range parents {
			pm, _ := p.(map[string]any)
			ns, _ := pm["namespace"].(string)
			if ns == "" {
				ns = rt.GetNamespace()
			}
			kind, _ := pm["kind"].(string)
			if pm["name"] == g.Name && ns == g.Namespace && (kind == "" || kind == "Gateway") {
				out = append(out, "HTTPRoute "+key)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// SetStatus implements targets.Cluster. authEnabled is read back from the
// cluster, not from the spec: a failed apply, or a taken name (which skips
// pruning), can leave a SecurityPolicy enforcing that the spec no longer
// asks for.
func (*Target) SetStatus(st *v1.ModelRouterStatus, obs targets.Observation) {
	l := obs.Lingering
	if !obs.Applied {
		if l.Known && (st.Gateway != nil || l.Auth) {
			if st.Gateway == nil {
				st.Gateway = &v1.GatewayStatus{}
			}
			st.Gateway.AuthEnabled = l.Auth
		}
		if st.Gateway != nil {
			st.Gateway.RouteReady = false
		}
		return
	}
	auth := l.Auth
	if !l.Known {
		auth = obs.AuthGenerated // applied and, unless a name was taken, pruned
	}
	st.Gateway = &v1.GatewayStatus{RouteReady: obs.Ready, Endpoint: obs.Endpoint, AuthEnabled: auth}
}

// ClearStatus implements targets.Cluster. A refused switch away from
// Gateway leaves its objects serving: while a SecurityPolicy of this router
// is in place, say so.
func (*Target) ClearStatus(st *v1.ModelRouterStatus, l targets.Lingering) {
	st.Gateway = nil
	if l.Known && l.Auth {
		st.Gateway = &v1.GatewayStatus{AuthEnabled: true}
	}
}

// Lingering implements targets.Cluster: whether a SecurityPolicy this
// router controls exists.
func (*Target) Lingering(ctx context.Context, c targets.ClusterReader, router *v1.ModelRouter) targets.Lingering {
	inv, err := c.Owned(ctx, router, []schema.GroupVersionKind{gvkSP})
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("reading SecurityPolicies for status", "error", err.Error())
		return targets.Lingering{}
	}
	return targets.Lingering{Known: true, Auth: len(inv) > 0}
}
