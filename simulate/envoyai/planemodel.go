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
	out := map[string]simulate.Served{}
	for _, on := range simulate.ByGateway(routers, gatewayOf) {
		objs := append([]*unstructured.Unstructured(nil), foreign...)
		ids := simulate.Names{}
		for _, c := range on {
			objs = append(objs, c.Objects...)
			for _, b := range c.IR.Backends {
				ids[c.IR.Namespace+"/"+naming.GatewayBackendName(c.IR.Name, b.Name)] = [2]string{c.Key, b.Name}
			}
		}
		ns, name, _ := gatewayOf(on[0].IR)
		m, err := New(Gateway{Namespace: ns, Name: name}, objs)
		if err != nil {
			return nil, err
		}
		for _, c := range on {
			r := c.IR
			out[c.Key] = simulate.Served{
				Serve:     m.Serve,
				BackendID: func(b string) string { return r.Namespace + "/" + naming.GatewayBackendName(r.Name, b) },
				Name:      ids.Name,
				Rule:      ruleName,
				Host:      simulate.DefaultHost(r.Gateway.Hostnames),
			}
		}
	}
	return out, nil
}

func gatewayOf(r *ir.Router) (ns, name string, ok bool) {
	if r.Gateway == nil {
		return "", "", false
	}
	return r.Gateway.Namespace, r.Gateway.Name, true
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
