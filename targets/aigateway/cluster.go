package aigateway

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/internal/naming"
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
	accepted := fmt.Sprintf("the gateway accepted %d object(s): %s", len(in.Desired), in.Summary)
	if other, mine := sharedClientPolicy(ctx, c, in); other != "" {
		// Another router's ClientTrafficPolicy removes the same header on
		// the Gateway and is in force: ours being Conflicted loses nothing.
		in.Desired = slices.DeleteFunc(slices.Clone(in.Desired), func(d *unstructured.Unstructured) bool { return d == mine })
		accepted += "; the client's team header is removed by " + other + " (routers with policy.auth on one Gateway share it)"
	}
	targets.ObserveGatewayPlane(ctx, c, targets.GatewayRef{Namespace: g.Namespace, Name: g.Name}, in, &obs, accepted)
	reason, msg, err := (&Target{}).CheckForeign(ctx, c, in.Router, in.Desired)
	if err != nil {
		return obs, err
	}
	obs.AddForeignConflict(reason, msg)
	return obs, nil
}

// sharedClientPolicy finds, when the router generates a
// ClientTrafficPolicy, another ModelRouter's one on the same Gateway that
// Envoy Gateway accepted and that removes the same header. Envoy Gateway
// keeps one ClientTrafficPolicy per Gateway (the oldest) and marks the
// others Conflicted, so of several authenticated routers sharing a Gateway
// on disjoint hostnames (the pipeline requires one team header for them),
// one's policy does the work for all. It returns that policy's name and
// the router's own desired policy.
func sharedClientPolicy(ctx context.Context, c targets.ClusterReader, in targets.Applied) (string, *unstructured.Unstructured) {
	var mine *unstructured.Unstructured
	for _, d := range in.Desired {
		if d.GetKind() == gvkCTP.Kind {
			mine = d
		}
	}
	if mine == nil {
		return "", nil
	}
	want, _, _ := unstructured.NestedStringSlice(mine.Object, "spec", "headers", "earlyRequestHeaders", "remove")
	ctps, err := c.List(ctx, gvkCTP, mine.GetNamespace())
	if err != nil {
		return "", nil
	}
	for i := range ctps {
		p := &ctps[i] // read only: the cache's own (ClusterReader.List)
		if router, _ := targets.Field(p.Object, "metadata", "labels", naming.LabelRouter).(string); p.GetName() == mine.GetName() || router == "" || !targetsSameGateway(p, mine) {
			continue
		}
		removes, _ := targets.Field(p.Object, "spec", "headers", "earlyRequestHeaders", "remove").([]any)
		if !containsAll(removes, want) {
			continue
		}
		if v := targets.Acceptance(ctx, c, []*unstructured.Unstructured{p}); v.Reason == "" {
			return "ClientTrafficPolicy " + p.GetNamespace() + "/" + p.GetName(), mine
		}
	}
	return "", nil
}

// targetsSameGateway: both policies target the same whole Gateway (one
// targetRef each, as clientPolicy emits; the namespace is the caller's).
func targetsSameGateway(a, b *unstructured.Unstructured) bool {
	gateway := func(p *unstructured.Unstructured) string {
		refs, _ := targets.Field(p.Object, "spec", "targetRefs").([]any)
		if len(refs) != 1 {
			return ""
		}
		m, _ := refs[0].(map[string]any)
		if m["kind"] != "Gateway" || m["sectionName"] != nil {
			return ""
		}
		name, _ := m["name"].(string)
		return name
	}
	g := gateway(a)
	return g != "" && g == gateway(b)
}

func containsAll(have []any, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h any) bool { s, _ := h.(string); return strings.EqualFold(s, w) }) {
			return false
		}
	}
	return true
}

var _ targets.Neighbours = (*Target)(nil)

// RefField implements targets.Neighbours.
func (*Target) RefField() string { return "gatewayRef" }

// CheckForeign implements targets.Neighbours: a router with policy.auth
// beside a route it does not own on a common host of its Gateway (an
// HTTPRoute, or another team's AIGatewayRoute) would lock callers out, its
// own or the other route's, depending on which route-not-found rule Envoy
// ranks first (see sharedWithAuth). Nothing gets past the router's
// authorization either way; the check names the routes.
func (*Target) CheckForeign(ctx context.Context, c targets.ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) (string, string, error) {
	if !hasAuth(r) {
		return "", "", nil
	}
	others, err := foreignRoutes(ctx, c, r, desired)
	if err != nil || len(others) == 0 {
		return "", "", err
	}
	g := r.Gateway
	return ReasonGatewaySharedWithAuth, fmt.Sprintf("Gateway %s/%s also serves %s on a hostname this router takes; Envoy checks a token on the route it picks before the model is known, so this router's valid callers may get 403 or the other route's callers 401, depending on which route ranks first (the authorization still refuses whatever this router's own provider did not verify). Give the router gatewayRef.hostnames disjoint from the other routes', or a Gateway of its own",
		g.Namespace, g.Name, strings.Join(others, ", ")), nil
}

var gvkHTTPRoute = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}

// foreignRoutes are the routes of any namespace attached to the router's
// Gateway, on a hostname that overlaps the router's, that are not its own:
// HTTPRoutes, and AIGatewayRoutes (named as such; the HTTPRoute the AI
// Gateway generates from one has its name). The router's own are its
// desired AIGatewayRoutes and the HTTPRoutes generated from them.
func foreignRoutes(ctx context.Context, c targets.ClusterReader, r *ir.Router, desired []*unstructured.Unstructured) ([]string, error) {
	own := map[string]bool{}
	for _, d := range desired {
		if d.GetKind() == gvkRoute.Kind {
			own[d.GetNamespace()+"/"+d.GetName()] = true
		}
	}
	found := map[string]string{} // namespace/name -> "Kind namespace/name"
	for _, gvk := range []schema.GroupVersionKind{gvkRoute, gvkHTTPRoute} {
		routes, err := c.List(ctx, gvk, "")
		if err != nil {
			return nil, fmt.Errorf("reading %ss on the Gateway: %w", gvk.Kind, err)
		}
		for i := range routes {
			// Every route on the Gateway, for every router of it in every
			// reconcile: read in place, no copy.
			rt := &routes[i] // read only: the cache's own (ClusterReader.List)
			if !attachedTo(rt, r.Gateway) {
				continue
			}
			key := rt.GetNamespace() + "/" + rt.GetName()
			if own[key] || found[key] != "" {
				continue
			}
			var hosts []string
			hs, _ := targets.Field(rt.Object, "spec", "hostnames").([]any)
			for _, h := range hs {
				if h, ok := h.(string); ok {
					hosts = append(hosts, h)
				}
			}
			if _, _, overlap := targets.HostnamesOverlap(r.Gateway.Hostnames, hosts); overlap {
				found[key] = gvk.Kind + " " + key
			}
		}
	}
	out := make([]string, 0, len(found))
	for _, v := range found {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, nil
}

// attachedTo reports whether a route names the Gateway among its parents.
func attachedTo(rt *unstructured.Unstructured, g *ir.GatewayRef) bool {
	parents, _ := targets.Field(rt.Object, "spec", "parentRefs").([]any)
	for _, p := range parents {
		pm, _ := p.(map[string]any)
		ns, _ := pm["namespace"].(string)
		if ns == "" {
			ns = rt.GetNamespace()
		}
		kind, _ := pm["kind"].(string)
		if pm["name"] == g.Name && ns == g.Namespace && (kind == "" || kind == "Gateway") {
			return true
		}
	}
	return false
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
