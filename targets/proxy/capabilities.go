package proxy

import (
	"github.com/llmkube/llmkube-compile/planes"
	"github.com/llmkube/llmkube-compile/targets"
)

// ReasonOTLPEndpointMissing: sink otlp without the operator's collector.
const ReasonOTLPEndpointMissing = "OTLPEndpointMissing"

// Capabilities implements targets.Target: the router-proxy reads every
// field of the spec (the API was written for it), so its table has no row.
func (*Target) Capabilities() planes.Table {
	return planes.Table{Emits: []string{ReasonOTLPEndpointMissing, targets.ReasonInternalError}}
}
