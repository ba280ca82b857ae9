package proxy

import (
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// ReasonOTLPEndpointMissing: sink otlp without the operator's collector.
const ReasonOTLPEndpointMissing = "OTLPEndpointMissing"

// Capabilities implements targets.Target: the router-proxy reads every
// field of the spec (the API was written for it) but the references to the
// gateways the other planes attach routers to and the endpoint pickers of
// AgentGateway's InferencePools.
func (*Target) Capabilities() capability.Table {
	return capability.Table{Rows: []capability.Row{
		targets.GatewayRefRow(ir.DataPlaneProxy),
		targets.AgentGatewayRefRow(ir.DataPlaneProxy),
		targets.EndpointPickerRow(ir.DataPlaneProxy),
	}, Emits: []string{ReasonOTLPEndpointMissing, targets.ReasonInternalError}}
}
