package agentgateway

import (
	"slices"
	"sort"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// UpstreamModelBody is the body transformation that sends a pool the model
// name its runtime serves: the request's JSON with "model" replaced and
// every other field kept. json() parses the body (buffered, at most 2 MiB by
// default), merge() adds the argument's entries over the receiver's
// (crates/celx/src/general.rs map_merge: the argument wins) and toJson()
// writes it back. When the body is not a JSON object or is over the buffer
// limit, the expression fails and agentgateway sends an empty body
// (transformation_cel.rs: "If it fails, set an empty body"): the pod
// refuses it, and never sees the client's name. Such a request matches no
// rule anyway: the model-extraction policy reads the same json().
func UpstreamModelBody(served string) string {
	return "toJson(" + "json(request.body).merge({\"model\": " + CELString(served) + "}))"
}

// upstreamModelPolicies send every pool the name its runtime serves
// (routing InferencePool; docs/router-proxy.md, "Upstream requests"): an
// AgentgatewayPolicy per backend whose HTTPRoute rules can bring it
// requests under another name (a rule matching other models or any, a
// dataClassification rule a clinician's gpt-4.1 reaches it by, the default
// route, a published id other than the served name), targeting those rules
// (sectionName), with a body transformation that rewrites "model".
//
// It is a route-rule transformation, not PreRouting: agentgateway runs the
// route's request policies (apply_request_policies) before the backend call
// that asks the InferencePool's endpoint picker, so the picker and the pod
// both see the served name. agentgateway merges a transformation field by
// replacing: a rule's replaces the route's (store/binds.rs route_policies),
// so it also carries policy.auth's (authTransformation), which the route
// policy sets for the other rules. A foreign policy with inheritance
// Override that sets a transformation on the Gateway, listener or route
// locks the field and takes this rewrite away too; the controller reports
// it (CheckForeign, foreignOverrides).
func (e *emitter) upstreamModelPolicies() {
	serving := e.servingRules(func(s served) bool {
		b, _ := e.r.Backend(s.backend)
		return carriesOtherNames(s.models, b.UpstreamModel.Name)
	})
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		refs := serving[b.Name]
		if len(refs) == 0 {
			continue
		}
		spec := &TransformationSpec{}
		if auth := e.authTransformation(); auth != nil {
			spec = auth
		}
		spec.Body = UpstreamModelBody(b.UpstreamModel.Name)
		e.bodies = append(e.bodies, spec.Body)
		e.add(&AgentgatewayPolicy{
			ObjectMeta: e.meta(naming.AgentGatewayUpstreamModelPolicyName(e.r.Name, b.Name)),
			Spec: PolicySpec{
				TargetRefs: refs,
				Traffic:    &TrafficPolicy{Transformation: &Transformation{Request: spec}},
			},
		}, AgentgatewayPolicyGVK)
	}
}

// servingRules maps each backend to the HTTPRoute rules it serves
// (e.servedBy) that keep admits (nil: every one), as the targetRefs of a
// policy on them, sorted by section name.
func (e *emitter) servingRules(keep func(served) bool) map[string][]PolicyTargetRef {
	sections := map[string][]string{}
	for section, s := range e.servedBy {
		if keep == nil || keep(s) {
			sections[s.backend] = append(sections[s.backend], section)
		}
	}
	route := naming.AgentGatewayRouteName(e.r.Name)
	out := make(map[string][]PolicyTargetRef, len(sections))
	for backend, secs := range sections {
		sort.Strings(secs)
		for _, sec := range secs {
			out[backend] = append(out[backend], PolicyTargetRef{Group: gatewayAPIGroup, Kind: "HTTPRoute", Name: route, SectionName: sec})
		}
	}
	return out
}

// carriesOtherNames reports whether a rule admitting the exact model names
// models (nil: any) can bring its backend a request under a name other
// than served.
func carriesOtherNames(models []string, served string) bool {
	return models == nil || slices.ContainsFunc(models, func(m string) bool { return m != served })
}

// exactModels are the model names a rule's match admits, nil when it
// admits any (no models, or a glob among them).
func exactModels(m *ir.Match) []string {
	if len(m.Models) == 0 || slices.ContainsFunc(m.Models, wellknown.IsGlob) {
		return nil
	}
	return m.Models
}
