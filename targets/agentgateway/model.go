package agentgateway

import (
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// customFormats are the API formats an LLMKube InferenceService serves
// through agentgateway's Custom provider: OpenAI chat completions, which every
// LLMKube runtime speaks.
var customFormats = []CustomFormat{{Type: "Completions"}}

// modelRouting compiles routing: Model. The frontend has refused rules,
// defaultRoute, external backends, resolution: endpoint and per-backend
// pickers, and required hostnames or sectionName.
func (e *emitter) modelRouting() {
	route := naming.AgentGatewayRouteName(e.r.Name)
	// With the router-wide picker set, each model is served through an
	// InferencePool and the picker chooses its pod; without it, through the
	// InferenceService's Service (no Inference Extension needed).
	usePools := e.g.EndpointPicker != nil
	pools := map[string]string{}
	if usePools {
		var services []string
		for i := range e.r.Backends {
			if l := e.r.Backends[i].Local; l != nil && !contains(services, l.InferenceService) {
				services = append(services, l.InferenceService)
			}
		}
		if len(services) > 1 {
			e.diags.ErrorAt(diag.Spec("agentGatewayRef", "endpointPicker"), ReasonPickerSharedAcrossInferenceServices,
				"the default picker %s:%d would serve several InferenceServices (%s), but an Endpoint Picker binds to exactly one InferencePool, and routing Model takes no per-backend pickers; remove endpointPicker (models are then served through their Services) or use routing InferencePool",
				e.g.EndpointPicker.Name, e.g.EndpointPicker.Port, strings.Join(services, ", "))
			// Go on without pools: the models' own problems come in
			// this pass too, not the next one (no output is made).
			usePools = false
		}
	}
	published := map[string]int{}
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		at := diag.Backend(i).Child("name")
		if b.ModelID != b.Name {
			at = diag.Backend(i).Child("displayName")
		}
		if strings.Contains(b.ModelID, "*") {
			e.diags.ErrorAt(at, ReasonModelIDNotExpressible,
				"model id %q contains '*', which agentgateway's model match reads as a wildcard; publish an id without '*'", b.ModelID)
		}
		if j, dup := published[b.ModelID]; dup {
			e.diags.ErrorAt(at, ReasonDuplicateModelID,
				"backend %q publishes model id %q, as backend %q does; agentgateway's model router needs one model per id, so give one of them another displayName",
				b.Name, b.ModelID, e.r.Backends[j].Name)
			continue
		}
		published[b.ModelID] = i
		if b.Local == nil {
			continue // refused by the frontend
		}
		ref := BackendRef{Name: b.Local.ServiceName, Port: b.Local.Port}
		if usePools {
			ref = BackendRef{Group: inferenceGroup, Kind: "InferencePool", Name: e.pool(b, i, pools)}
		}
		m := e.meta(naming.AgentGatewayModelName(e.r.Name, b.Name))
		spec := ModelSpec{
			ParentRefs: []ParentRef{{Group: gatewayAPIGroup, Kind: "HTTPRoute", Name: route}},
			Match:      &ModelMatch{Model: b.ModelID},
			Provider:   "Custom",
			Custom:     &CustomTarget{BackendRef: ref, Formats: customFormats},
		}
		if authz := e.modelAuthorization(b.ModelID); authz != nil {
			spec.Policies = &ModelPolicies{Authorization: authz}
		}
		// The client asks for the published id; the runtime is sent the
		// name it serves (docs/router-proxy.md, "Upstream requests").
		if served := b.UpstreamModel.Name; served != b.ModelID {
			if spec.Policies == nil {
				spec.Policies = &ModelPolicies{}
			}
			spec.Policies.Transformations = []FieldTransformation{{Field: "model", Expression: CELString(served)}}
		}
		if msg, ok := targets.AssumedUpstreamModel(ir.DataPlaneAgentGateway, b); ok {
			e.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), targets.ReasonUpstreamModelAssumed, "%s", msg)
		}
		e.add(&AgentgatewayModel{ObjectMeta: m, Spec: spec}, AgentgatewayModelGVK)
	}
	// The catch-all route: every path on the listener (hostnames or
	// sectionName scope it) goes to agentgateway's model router, which picks
	// the AgentgatewayModel whose match.model is the body's model.
	prefix, path := gwv1.PathMatchPathPrefix, "/"
	group, kind := gwv1.Group(GroupVersion.Group), gwv1.Kind("AgentgatewayModel")
	weight := int32(1)
	e.route([]gwv1.HTTPRouteRule{{
		Name:    sectionName("models"),
		Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
		BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
			BackendObjectReference: gwv1.BackendObjectReference{Group: &group, Kind: &kind, Name: "*"},
			Weight:                 &weight,
		}}},
	}})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
