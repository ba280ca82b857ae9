package envoyai

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
)

// PlaneModel is the Gateway plane's request-path model: one Envoy AI
// Gateway per gatewayRef, holding every router attached to it and the
// foreign objects.
func PlaneModel() simulate.PlaneModel {
	return simulate.PlaneModel{DataPlane: ir.DataPlaneGateway, Serve: serveRouters}
}

func serveRouters(routers []simulate.Compiled, foreign []*unstructured.Unstructured) (map[string]simulate.Served, error) {
	type gwKey struct{ ns, name string }
	gateways := map[gwKey][]simulate.Compiled{}
	var gws []gwKey
	for _, c := range routers {
		if c.IR.Gateway == nil {
			continue
		}
		g := gwKey{c.IR.Gateway.Namespace, c.IR.Gateway.Name}
		if gateways[g] == nil {
			gws = append(gws, g)
		}
		gateways[g] = append(gateways[g], c)
	}
	out := map[string]simulate.Served{}
	for _, g := range gws {
		objs := append([]*unstructured.Unstructured(nil), foreign...)
		ids := map[string][2]string{}
		for _, c := range gateways[g] {
			objs = append(objs, c.Objects...)
			for _, b := range c.IR.Backends {
				ids[c.IR.Namespace+"/"+naming.GatewayBackendName(c.IR.Name, b.Name)] = [2]string{c.Key, b.Name}
			}
		}
		m, err := New(Gateway{Namespace: g.ns, Name: g.name}, objs)
		if err != nil {
			return nil, err
		}
		for _, c := range gateways[g] {
			r := c.IR
			out[c.Key] = simulate.Served{
				Serve:     m.Serve,
				BackendID: func(b string) string { return r.Namespace + "/" + naming.GatewayBackendName(r.Name, b) },
				Name: func(id string) (string, string) {
					if v, ok := ids[id]; ok {
						return v[0], v[1]
					}
					return "", id
				},
				Rule: ruleName,
				Host: simulate.DefaultHost(r.Gateway.Hostnames),
			}
		}
	}
	return out, nil
}

// ruleName maps the gateway's rule label to the ModelRouter's vocabulary:
// the generated rules (llmkube.*) are the default route's, and a rule split
// over several AIGatewayRoutes (<rule>.part-<n>) is its spec rule.
func ruleName(rule string) string {
	switch {
	case rule == "" || rule == simulate.DefaultRule:
		return rule
	case strings.HasPrefix(rule, "llmkube."):
		return simulate.DefaultRule
	}
	if i := strings.Index(rule, ".part-"); i > 0 {
		return rule[:i]
	}
	return rule
}
