package envoyai

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	for _, on := range simulate.ByGateway(routers) {
		objs := append([]*unstructured.Unstructured(nil), foreign...)
		ids := simulate.Names{}
		objectOf := map[string]map[string]string{} // router key -> backend -> AIServiceBackend
		for _, c := range on {
			objs = append(objs, c.Objects...)
			objectOf[c.Key] = backendObjects(c.IR, c.Objects)
			for b, id := range objectOf[c.Key] {
				ids[id] = [2]string{c.Key, b}
			}
		}
		ns, name, _ := on[0].IR.AttachedGateway()
		m, err := New(Gateway{Namespace: ns, Name: name}, objs)
		if err != nil {
			return nil, err
		}
		for _, c := range on {
			r, objectOf := c.IR, objectOf[c.Key]
			out[c.Key] = simulate.Served{
				Serve: m.Serve,
				BackendID: func(b string) string {
					if id, ok := objectOf[b]; ok {
						return id
					}
					return "backend/" + b // no AIServiceBackend serves it (refused)
				},
				Name: ids.Name,
				Rule: ruleName,
				Host: simulate.DefaultHost(r.Gateway.Hostnames),
			}
		}
	}
	return out, nil
}

// fingerprint is what Envoy AI Gateway sends a request to: the endpoint
// of the Backend an AIServiceBackend references, the model its route
// rewrites the body to (modelNameOverride) and the Secret its
// BackendSecurityPolicy signs with.
type fingerprint struct {
	host           string
	port           int64
	model, secrets string
}

// backendObjects finds, among a router's objects, the AIServiceBackend
// (namespace/name, as the model's outcome names it) each spec backend is
// served by, from what the AI Gateway reads and the spec, not from the
// emitter's names: the upstream host and port (an external provider's
// URL; a local backend's Service by its cluster DNS name), the name the
// backend serves (ir.Backend.UpstreamModel) and its credentials Secret.
// Backends alike in all of these are served alike; they are matched in
// the order the router lists them.
func backendObjects(r *ir.Router, objs []*unstructured.Unstructured) map[string]string {
	endpoints := map[string]fingerprint{} // Backend name -> endpoint
	overrides := map[string]string{}      // AIServiceBackend name -> modelNameOverride
	secrets := map[string]string{}        // AIServiceBackend name -> credential Secret
	type aisb struct{ id, name, backend string }
	var backends []aisb
	for _, o := range objs {
		switch o.GetKind() {
		case "Backend":
			eps, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			if len(eps) == 0 {
				continue
			}
			ep, _ := eps[0].(map[string]any)
			for _, kind := range []string{"fqdn", "ip"} {
				if e, ok := ep[kind].(map[string]any); ok {
					host, _ := e["hostname"].(string)
					if kind == "ip" {
						host, _ = e["address"].(string)
					}
					endpoints[o.GetName()] = fingerprint{host: host, port: number(e["port"])}
				}
			}
		case "AIServiceBackend":
			ref, _, _ := unstructured.NestedString(o.Object, "spec", "backendRef", "name")
			backends = append(backends, aisb{o.GetNamespace() + "/" + o.GetName(), o.GetName(), ref})
		case "AIGatewayRoute":
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			for _, rule := range rules {
				refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
				for _, ref := range refs {
					m := ref.(map[string]any)
					name, _ := m["name"].(string)
					model, _ := m["modelNameOverride"].(string)
					overrides[name] = model
				}
			}
		case "BackendSecurityPolicy":
			targets, _, _ := unstructured.NestedSlice(o.Object, "spec", "targetRefs")
			var secret string
			for _, key := range []string{"apiKey", "anthropicAPIKey"} {
				if s, ok, _ := unstructured.NestedString(o.Object, "spec", key, "secretRef", "name"); ok {
					secret = s
				}
			}
			for _, t := range targets {
				name, _ := t.(map[string]any)["name"].(string)
				secrets[name] = secret
			}
		}
	}
	out := map[string]string{}
	taken := map[string]bool{}
	for _, b := range r.Backends {
		want := fingerprint{host: b.Upstream.Host, port: int64(b.Upstream.Port), model: b.UpstreamModel.Name}
		if b.External != nil {
			want.secrets = b.External.CredentialsSecret
		}
		for _, a := range backends {
			got := endpoints[a.backend]
			got.model, got.secrets = overrides[a.name], secrets[a.name]
			if !taken[a.id] && got == want {
				out[b.Name], taken[a.id] = a.id, true
				break
			}
		}
	}
	return out
}

// number is a port as an unstructured object holds it: int64 from a typed
// object, float64 from decoded JSON or YAML.
func number(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
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
