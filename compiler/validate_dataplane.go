package compiler

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
)

// checkAgentGatewayRef checks agentGatewayRef where the plane reads it (no
// row of its table ignores or refuses it, capability.Table.Reads; a plane that
// requires it reports it missing by that row), and the backends'
// endpoint pickers where the plane reads those; on a plane that ignores
// them they are only warned about.
//
// External backends are refused only with routing: Model. The reference lists
// them among what Model routing refuses and says nothing of the kind for
// InferencePool routing (an InferencePool is generated per InferenceService;
// an external backend simply has none), so the frontend accepts them there and
// it is the AgentGateway target's job to express them or to refuse them with
// its own diagnostic.
func (v *validator) checkAgentGatewayRef() {
	g := v.s.AgentGatewayRef
	p := diag.Spec("agentGatewayRef")
	if g == nil || !v.plane.Reads("spec.agentGatewayRef") {
		return
	}
	switch {
	case g.EndpointPicker != "" && g.EndpointPickerPort == nil:
		v.diags.ErrorAt(p.Child("endpointPickerPort"), ReasonEndpointPickerIncomplete,
			"endpointPicker %q is set without endpointPickerPort; set both, or neither", g.EndpointPicker)
	case g.EndpointPicker == "" && g.EndpointPickerPort != nil:
		v.diags.ErrorAt(p.Child("endpointPicker"), ReasonEndpointPickerIncomplete,
			"endpointPickerPort is set without endpointPicker; set both, or neither")
	}
	if !v.modelRouting() {
		if v.plane.Reads("spec.backends[*].endpointPicker") {
			v.checkEndpointPickers()
		}
		return
	}
	// What routing: Model cannot express (rules, a defaultRoute, ...) the
	// plane's table refuses.
	if len(g.Hostnames) == 0 && g.SectionName == "" {
		v.diags.ErrorAt(diag.Spec("agentGatewayRef"), ReasonHostnamesOrSectionNameRequired,
			"routing Model generates a route that takes every path on its listeners; limit it with agentGatewayRef.hostnames or sectionName")
	}
}

// checkEndpointPickers checks InferencePool routing's pickers: an EPP binds to
// exactly one InferencePool, and one pool is generated per InferenceService,
// so every InferenceService needs exactly one picker that serves it alone.
// localServices are the distinct InferenceServices the router's local
// backends name.
func (v *validator) localServices() map[string]bool {
	out := map[string]bool{}
	for _, b := range v.s.Backends {
		if b.InferenceServiceRef != nil && b.External == nil {
			out[b.InferenceServiceRef.Name] = true
		}
	}
	return out
}

func (v *validator) checkEndpointPickers() {
	pickers := v.res.pickers
	ownByService := map[string]pickerRef{} // InferenceService -> its first own picker
	serves := map[pickerRef]string{}       // picker -> the InferenceService it serves first
	var defaultShared []string             // InferenceServices the router default would also serve
	for i := range v.s.Backends {
		b := &v.s.Backends[i]
		if b.InferenceServiceRef == nil || b.External != nil {
			continue
		}
		p, isvc, ep := diag.Backend(i), b.InferenceServiceRef.Name, pickers[i]
		if ep.source == pickerNone {
			hint := "set endpointPicker.service on it (or on another backend of that InferenceService), or spec.agentGatewayRef.endpointPicker and endpointPickerPort"
			if n := len(v.localServices()); n > 1 {
				// The router default would serve several InferenceServices,
				// which one picker cannot (PickerSharedAcrossInferenceServices).
				hint = fmt.Sprintf("set endpointPicker.service on it (or on another backend of that InferenceService): the router's %d InferenceServices need a picker each, so spec.agentGatewayRef.endpointPicker alone would not do", n)
			}
			v.diags.ErrorAt(p.Child("endpointPicker"), ReasonEndpointPickerRequired,
				"backend %q on InferenceService %q has no endpoint picker; %s", b.Name, isvc, hint)
			continue
		}
		if ep.source == pickerOwn {
			if first, seen := ownByService[isvc]; !seen {
				ownByService[isvc] = ep.ref
			} else if first != ep.ref {
				v.diags.ErrorAt(p.Child("endpointPicker", "service"), ReasonConflictingEndpointPickers,
					"backend %q names picker %s but another backend on InferenceService %q names %s; one InferencePool is generated per InferenceService and takes one picker, so name the same one",
					b.Name, ep.ref, isvc, first)
			}
		}
		first, seen := serves[ep.ref]
		switch {
		case !seen:
			serves[ep.ref] = isvc
		case first == isvc:
		case ep.source == pickerOwn:
			v.diags.ErrorAt(p.Child("endpointPicker", "service"), ReasonPickerSharedAcrossInferenceServices,
				"picker %s already serves InferenceService %q and cannot also serve %q: an Endpoint Picker binds to exactly one InferencePool; give each InferenceService its own picker",
				ep.ref, first, isvc)
		case ep.source == pickerDefault:
			defaultShared = append(defaultShared, first, isvc)
		}
	}
	if len(defaultShared) > 0 {
		v.diags.ErrorAt(diag.Spec("agentGatewayRef", "endpointPicker"), ReasonPickerSharedAcrossInferenceServices,
			"the default picker %s would serve several InferenceServices (%s), but an Endpoint Picker binds to exactly one InferencePool; set spec.backends[].endpointPicker for each InferenceService",
			pickerRef{v.s.AgentGatewayRef.EndpointPicker, *v.s.AgentGatewayRef.EndpointPickerPort}, quoted(dedupe(defaultShared)))
	}
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (v *validator) checkEndpoint() {
	e := v.s.Endpoint
	p := diag.Spec("endpoint")
	if e.APIKeySecretRef != nil {
		v.diags.ErrorAt(p.Child("apiKeySecretRef"), ReasonUnsupportedOnModelRouter,
			"apiKeySecretRef is an InferenceService field and is not supported on ModelRouter; remove it")
	}
	if e.Gateway != nil {
		v.diags.ErrorAt(p.Child("gateway"), ReasonUnsupportedOnModelRouter,
			"endpoint.gateway is an InferenceService field and is not supported on ModelRouter; to serve this router through Envoy AI Gateway use spec.dataPlane: Gateway with spec.gatewayRef")
	}
	if e.ExternalTrafficPolicy != "" && e.Type != v1.EndpointTypeNodePort && e.Type != v1.EndpointTypeLoadBalancer {
		v.diags.ErrorAt(p.Child("externalTrafficPolicy"), ReasonRequiresNodePortOrLoadBalancer,
			"externalTrafficPolicy applies only to a NodePort or LoadBalancer Service, not %s; set endpoint.type or remove it", e.Type)
	}
	if e.NodePort != nil && e.Type != v1.EndpointTypeNodePort {
		v.diags.ErrorAt(p.Child("nodePort"), ReasonRequiresNodePort,
			"nodePort applies only to endpoint.type NodePort, not %s; set type: NodePort or remove it", e.Type)
	}
}

// proxyDurations are the router-proxy's duration fields and their bounds.
var proxyDurations = []struct {
	field string
	value func(*v1.ProxySpec) string
	rule  durationRule
}{
	{"responseHeaderTimeout", func(p *v1.ProxySpec) string { return p.ResponseHeaderTimeout }, timeoutRule},
	{"streamIdleTimeout", func(p *v1.ProxySpec) string { return p.StreamIdleTimeout }, disableableRule},
	{"quarantineDuration", func(p *v1.ProxySpec) string { return p.QuarantineDuration }, timeoutRule},
	{"rateLimitHold", func(p *v1.ProxySpec) string { return p.RateLimitHold }, durationRule{max: time.Hour}},
	{"quotaExhaustedHold", func(p *v1.ProxySpec) string { return p.QuotaExhaustedHold }, durationRule{max: 24 * time.Hour}},
	{"drainTimeout", func(p *v1.ProxySpec) string { return p.DrainTimeout }, durationRule{min: time.Second, max: time.Hour}},
}

func (v *validator) checkProxy() {
	p := v.s.Proxy
	for _, d := range proxyDurations {
		v.duration(diag.Spec("proxy", d.field), d.value(p), d.rule)
	}
	if admin := naming.ProxyAdminServiceName(v.r.Name); p.ServiceName != "" && p.ServiceName == admin {
		v.diags.ErrorAt(diag.Spec("proxy", "serviceName"), ReasonServiceNameConflict,
			"serviceName %q is the name of the router-proxy's admin Service; choose another name", p.ServiceName)
	}
	if pdb := p.PodDisruptionBudget; pdb != nil {
		// maxUnavailable has no default in the spec (lowering applies
		// DefaultMaxUnavailable), so a value here was written.
		if pdb.Enabled != nil && !*pdb.Enabled && pdb.MaxUnavailable != nil {
			v.diags.WarnAt(diag.Spec("proxy", "podDisruptionBudget", "maxUnavailable"), ReasonFieldIgnored,
				"maxUnavailable is ignored: podDisruptionBudget.enabled is false, so no PodDisruptionBudget is rendered")
		}
	}
	if v.plane.Supports(capability.SwapLeases) {
		// Swaps are serialized across replicas by one Lease per pool, named
		// after the pool: the name must be a valid object name.
		for i, b := range v.s.Backends {
			if pool := v.res.pool[b.Name]; pool != nil && len(wellknown.PoolLeaseName(pool.Name)) > validation.DNS1123SubdomainMaxLength {
				v.diags.ErrorAt(diag.Backend(i).Child("inferenceServiceRef"), ReasonPoolNameTooLong,
					"ModelPool %q: its swap Lease %q would be longer than %d characters; shorten the pool's name",
					pool.Name, wellknown.PoolLeaseName(pool.Name), validation.DNS1123SubdomainMaxLength)
			}
		}
	}
}

// checkMCPServer holds spec.mcpServer to what keeps its promises: only the
// router-proxy serves MCP (the gateway planes' MCP gateways aggregate MCP
// servers; none offers a router's models as tools under its policy), every
// call needs a verified bearer token (policy.auth.jwt: the closed default,
// no anonymous MCP), and the token's audience is the endpoint's own URL.
func (v *validator) checkMCPServer() {
	m := v.s.MCPServer
	if m == nil {
		return
	}
	path := diag.Spec("mcpServer")
	if m.ResourceURL != "" {
		if msg := mcpResourceURLProblem(m.ResourceURL); msg != "" {
			v.diags.ErrorAt(path.Child("resourceURL"), ReasonInvalidURL, "%s", msg)
		}
	}
	if !m.Enabled {
		return
	}
	if v.refuses("spec.mcpServer.enabled") {
		return
	}
	if v.s.Policy.Auth == nil || v.s.Policy.Auth.JWT == nil {
		v.diags.ErrorAt(path.Child("enabled"), ReasonMCPServerRequiresJWT,
			"an MCP endpoint needs OAuth 2.1 bearer tokens: set spec.policy.auth.jwt (%s); the router serves no anonymous MCP",
			strings.Join(requiredFields(reflect.TypeFor[v1.JWTSpec](), "spec.policy.auth.jwt"), ", "))
	}
	if m.ResourceURL == "" {
		v.diags.ErrorAt(path.Child("resourceURL"), ReasonRequired,
			"mcpServer.enabled needs resourceURL, the endpoint's URL as clients reach it (https://host/mcp): tokens must name it as their audience")
	}
}

// mcpResourceURLProblem says what is wrong with an MCP resource URL, or "".
func mcpResourceURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case len(s) > 2048:
		return "resourceURL is longer than 2048 bytes"
	case err != nil || !u.IsAbs() || u.Host == "":
		return fmt.Sprintf("resourceURL %q is not an absolute URL", s)
	case u.Scheme != "https" && !(u.Scheme == "http" && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1")):
		return fmt.Sprintf("resourceURL %q must be https (http only for localhost): bearer tokens travel to it", s)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "#"):
		return fmt.Sprintf("resourceURL %q must have no query or fragment (RFC 8707)", s)
	case u.User != nil:
		return fmt.Sprintf("resourceURL %q must not carry credentials", s)
	}
	return ""
}
