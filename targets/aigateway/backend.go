package aigateway

import (
	"fmt"
	"net"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// servedBackend is a backend the Backend step emitted, with the API schema
// its AIServiceBackend speaks to it.
type servedBackend struct {
	b      *ir.Backend
	name   string // the Backend's, and the AIServiceBackend's
	schema VersionedAPISchema
}

// backends emits an Envoy Gateway Backend per router backend: where the
// gateway sends its requests (the Service, or the provider's host with
// TLS). A backend the gateway cannot address is refused and handed on to
// no one.
func (e *emitter) backends() []servedBackend {
	var out []servedBackend
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		name := naming.GatewayBackendName(e.r.Name, b.Name)
		spec, schemaName, prefix, ok := e.backendSpec(i, b)
		if !ok {
			continue
		}
		e.add(&egv1a1.Backend{ObjectMeta: e.meta(name), Spec: spec}, gvkBackend)
		out = append(out, servedBackend{b: b, name: name, schema: VersionedAPISchema{Name: schemaName, Prefix: prefix}})
	}
	return out
}

func (e *emitter) backendSpec(i int, b *ir.Backend) (spec egv1a1.BackendSpec, schemaName, prefix string, ok bool) {
	if b.Local != nil {
		host := fmt.Sprintf("%s.%s.svc.cluster.local", b.Local.ServiceName, e.r.Namespace)
		spec.Endpoints = []egv1a1.BackendEndpoint{{FQDN: &egv1a1.FQDNEndpoint{Hostname: host, Port: b.Local.Port}}}
		// vLLM, llama.cpp and the other runtimes serve the OpenAI API under /v1.
		return spec, "OpenAI", "/v1", true
	}
	x := b.External
	up := b.Upstream
	p := diag.Backend(i).Child("external")
	if up.Host == "" {
		e.diags.ErrorAt(p.Child("url"), ReasonProviderHostUnknown,
			"provider %s has no fixed endpoint (the router-proxy derives it at run time), but the gateway needs the upstream host when the Backend is created; set url (for Bedrock https://bedrock-runtime.<region>.amazonaws.com)", x.Provider)
		return spec, "", "", false
	}
	switch x.Provider {
	case ir.ProviderOpenAI, ir.ProviderLiteLLM:
		schemaName = "OpenAI"
		// An OpenAI base URL names the API root ("/v1" by convention).
		prefix = up.Path
		if prefix == "" {
			prefix = "/v1"
		}
	case ir.ProviderAnthropic:
		schemaName = "Anthropic"
	case ir.ProviderBedrock:
		schemaName = "AWSBedrock"
	case ir.ProviderVertexAI:
		schemaName = "GCPVertexAI"
	}
	if schemaName != "OpenAI" && up.Path != "" {
		e.diags.ErrorAt(p.Child("url"), ReasonURLPathUnsupported,
			"the gateway's %s schema addresses the provider's API at its published paths and cannot prefix them with %q; remove the path from url", schemaName, up.Path)
		return spec, "", "", false
	}
	ep := egv1a1.BackendEndpoint{}
	if ip := net.ParseIP(up.Host); ip != nil {
		ep.IP = &egv1a1.IPEndpoint{Address: up.Host, Port: up.Port}
	} else {
		ep.FQDN = &egv1a1.FQDNEndpoint{Hostname: up.Host, Port: up.Port}
	}
	spec.Endpoints = []egv1a1.BackendEndpoint{ep}
	if up.Scheme == "https" {
		system := gwapiv1.WellKnownCACertificatesSystem
		spec.TLS = &egv1a1.BackendTLSSettings{WellKnownCACertificates: &system}
		if ep.FQDN != nil {
			sni := gwapiv1.PreciseHostname(up.Host)
			spec.TLS.SNI = &sni
		}
	}
	return spec, schemaName, prefix, true
}
