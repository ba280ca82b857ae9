package aigateway

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
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
	return obs, nil
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
