package agentgateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	for _, on := range simulate.ByGateway(routers) {
		ns, name, _ := on[0].IR.AttachedGateway()
		gw := Gateway{Namespace: ns, Name: name, Listeners: []Listener{{Name: "http"}}}
		sections := map[string]bool{"http": true}
		objs := append([]*unstructured.Unstructured(nil), foreign...)
		ids := simulate.Names{}
		objectOf := map[string]map[string]string{} // router key -> backend -> object id
		for _, c := range on {
			r := c.IR
			if s := r.AgentGateway.SectionName; s != "" && !sections[s] {
				sections[s] = true
				gw.Listeners = append(gw.Listeners, Listener{Name: s})
			}
			objs = append(objs, c.Objects...)
			objectOf[c.Key] = backendObjects(r, c.Objects)
			for b, id := range objectOf[c.Key] {
				if _, taken := ids[id]; !taken || firstBackend(r, b, ids[id][1]) {
					ids[id] = [2]string{c.Key, b}
				}
			}
		}
		m, err := New(gw, objs)
		if err != nil {
			return nil, err
		}
		for _, c := range on {
			out[c.Key] = served(m, c.IR, ids, objectOf[c.Key])
		}
	}
	return out, nil
}

// backendObjects finds, among a router's objects, what each of its
// backends is reached as, by agentgateway's own rules and the spec, not by
// the emitter's names: the InferencePool whose selector selects the pods of
// the backend's InferenceService (an InferencePool routes to the pods its
// selector matches; ir.LocalBackend.PodSelector is the label the LLMKube
// operator sets on them), and the AgentgatewayModel whose match.model
// (else its name) is the backend's published id (the model router serves a
// request by the model it names), which in routing Model is what a request
// reaches even when the model's backend is a pool. Backends sharing an
// InferenceService share its pool.
func backendObjects(r *ir.Router, objs []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		if o.GetKind() != "InferencePool" {
			continue
		}
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
		for _, b := range r.Backends {
			if b.Local != nil && len(sel) > 0 && selects(sel, b.Local.PodSelector) {
				out[b.Name] = "InferencePool/" + o.GetName()
			}
		}
	}
	for _, o := range objs {
		if o.GetKind() != "AgentgatewayModel" {
			continue
		}
		model, _, _ := unstructured.NestedString(o.Object, "spec", "match", "model")
		if model == "" {
			model = o.GetName()
		}
		for _, b := range r.Backends {
			if b.ModelID == model {
				out[b.Name] = "AgentgatewayModel/" + o.GetName()
			}
		}
	}
	return out
}

// selects reports whether a selector's matchLabels all hold on a pod's labels.
func selects(sel, pod map[string]string) bool {
	for k, v := range sel {
		if pod[k] != v {
			return false
		}
	}
	return true
}

// firstBackend reports whether backend a comes before b in the router's
// backends: a pool two backends share is named by the first.
func firstBackend(r *ir.Router, a, b string) bool {
	for _, be := range r.Backends {
		switch be.Name {
		case a:
			return true
		case b:
			return false
		}
	}
	return false
}

// served is how the Gateway's model serves router r, whose backends are
// reached as objectOf names them (backendObjects).
func served(m *Model, r *ir.Router, ids simulate.Names, objectOf map[string]string) simulate.Served {
	// A router on a listener (sectionName) is reached on it: each
	// listener is its own port.
	section := r.AgentGateway.SectionName
	return simulate.Served{
		Serve: func(req simulate.Request) simulate.Outcome { return m.ServeOn(section, req) },
		BackendID: func(b string) string {
			if id, ok := objectOf[b]; ok {
				return id
			}
			return "backend/" + b // no object reaches it (refused, or not ready)
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
