package aigateway

import (
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
	"github.com/llmkube/llmkube-compile/targets"
)

// Fields implements targets.Fields: what the Gateway plane does not read.
// The proxy's timeouts are read (they become Envoy's traffic policy).
func (*Target) Fields() []planes.FieldRule {
	return append(targets.ProxyWorkloadFields(ir.DataPlaneGateway, false),
		planes.FieldRule{Path: "spec.backends[*].balancing", Why: "balancing applies to the Proxy data plane only and is ignored on Gateway"},
		planes.FieldRule{Path: "spec.backends[*].resolution", Value: "endpoint", Why: "resolution: endpoint applies to the Proxy data plane only; the gateway addresses the InferenceService's Service"},
		planes.FieldRule{Path: "spec.backends[*].modelInfo", Why: "modelInfo is published by the router-proxy's /v1/models and is ignored on Gateway"},
	)
}
