package aigateway

import (
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
	"github.com/llmkube/llmkube-compile/targets"
)

// Capabilities implements targets.Target: what the Gateway plane ignores,
// refuses and requires of the spec. The proxy's timeouts are read (they
// become Envoy's traffic policy).
func (*Target) Capabilities() planes.Table {
	return planes.Table{Rows: append(targets.ProxyWorkloadFields(ir.DataPlaneGateway, false),
		planes.Capability{Path: "spec.backends[*].balancing", Verdict: planes.Ignored,
			Message: "balancing applies to the Proxy data plane only and is ignored on Gateway"},
		planes.Capability{Path: "spec.backends[*].resolution", Value: "endpoint", Verdict: planes.Ignored,
			Message: "resolution: endpoint applies to the Proxy data plane only; the gateway addresses the InferenceService's Service"},
		planes.Capability{Path: "spec.backends[*].modelInfo", Verdict: planes.Ignored,
			Message: "modelInfo is published by the router-proxy's /v1/models and is ignored on Gateway"},
	)}
}
