package agentgateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
)

// PlaneModel is the AgentGateway plane's request-path model: one
// agentgateway per agentGatewayRef, holding every router attached to it and
// the foreign objects. agentgateway fails over on readiness, not per
// request (DownIsNotReady).
func PlaneModel() simulate.PlaneModel {
	return simulate.PlaneModel{DataPlane: ir.DataPlaneAgentGateway, Serve: serveRouters, DownIsNotReady: true}
}

// serveRouters puts every router on its agentgateway Gateway's model. The
// Gateway has a listener without hostname, plus one per sectionName a
// router names; a request for a router with hostnames carries the first.
func serveRouters(routers []simulate.Compiled, foreign []*unstructured.Unstructured) (map[string]simulate.Served, error) {
	out := map[string]simulate.Served{}
	for _, on := range simulate.ByGateway(routers, gatewayOf) {
		ns, name, _ := gatewayOf(on[0].IR)
		gw := Gateway{Namespace: ns, Name: name, Listeners: []Listener{{Name: "http"}}}
		sections := map[string]bool{"http": true}
		objs := append([]*unstructured.Unstructured(nil), foreign...)
		ids := simulate.Names{}
		for _, c := range on {
			r := c.IR
			if s := r.AgentGateway.SectionName; s != "" && !sections[s] {
				sections[s] = true
				gw.Listeners = append(gw.Listeners, Listener{Name: s})
			}
			objs = append(objs, c.Objects...)
			for _, b := range r.Backends {
				ids["AgentgatewayModel/"+naming.AgentGatewayModelName(r.Name, b.Name)] = [2]string{c.Key, b.Name}
				if b.Local != nil {
					pool := "InferencePool/" + naming.AgentGatewayPoolName(r.Name, b.Local.InferenceService)
					if _, taken := ids[pool]; !taken { // backends sharing an InferenceService share its pool
						ids[pool] = [2]string{c.Key, b.Name}
					}
				}
			}
		}
		m, err := New(gw, objs)
		if err != nil {
			return nil, err
		}
		for _, c := range on {
			out[c.Key] = served(m, c.IR, ids)
		}
	}
	return out, nil
}

func gatewayOf(r *ir.Router) (ns, name string, ok bool) {
	if r.AgentGateway == nil {
		return "", "", false
	}
	return r.AgentGateway.Namespace, r.AgentGateway.Name, true
}

// served is how the Gateway's model serves router r.
func served(m *Model, r *ir.Router, ids simulate.Names) simulate.Served {
	// A router on a listener (sectionName) is reached on it: each
	// listener is its own port.
	section := r.AgentGateway.SectionName
	return simulate.Served{
		Serve: func(req simulate.Request) simulate.Outcome { return m.ServeOn(section, req) },
		BackendID: func(b string) string {
			// The outcome names a pool in InferencePool routing, a model
			// in Model routing.
			if be, ok := r.Backend(b); ok && be.Local != nil && r.AgentGateway.Routing != ir.AgentGatewayRoutingModel {
				return "InferencePool/" + naming.AgentGatewayPoolName(r.Name, be.Local.InferenceService)
			}
			return "AgentgatewayModel/" + naming.AgentGatewayModelName(r.Name, b)
		},
		Name: ids.Name,
		Rule: func(rule string) string {
			if name, ok := strings.CutPrefix(rule, "rule-"); ok {
				return name
			}
			if rule == "" {
				return ""
			}
			return simulate.DefaultRule // "default", and "model-<backend>" of BackendNameMatch
		},
		Host: simulate.DefaultHost(r.AgentGateway.Hostnames),
	}
}
