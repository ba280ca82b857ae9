package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/ir"
)

// TestChecksFollowWhatTheTableReads: the compiler checks agentGatewayRef
// and the backends' endpoint pickers on a plane whose table reads them,
// whatever else the table says (here a plane that reads them without
// requiring agentGatewayRef), and not on one whose table ignores them. It
// never recognises a plane by another row (formerly: the Required row of
// agentGatewayRef stood for "this is AgentGateway").
func TestChecksFollowWhatTheTableReads(t *testing.T) {
	in := vtInputs(t, vtChatHead+`  agentGatewayRef: {name: gw, endpointPicker: qwen3-epp}
  defaultRoute: local-qwen
`)
	compile := func(table capability.Table) []string {
		_, diags := Compile(in.Routers[0].Router, in, Options{DataPlane: ir.DataPlaneAgentGateway,
			Planes: func(ir.DataPlane) capability.Table { return table }})
		return vtKeys(diags)
	}
	reads := compile(capability.Table{}) // every field Supported: read
	assert.Contains(t, reads, "spec.agentGatewayRef.endpointPickerPort EndpointPickerIncomplete")
	assert.Contains(t, reads, "spec.backends[0].endpointPicker EndpointPickerRequired")

	ignores := compile(capability.Table{Rows: []capability.Row{
		{Path: "spec.agentGatewayRef", Verdict: capability.Ignored, Message: "not read here"},
		{Path: "spec.backends[*].endpointPicker", Verdict: capability.Ignored, Message: "not read here"},
	}})
	require.Contains(t, ignores, "spec.agentGatewayRef FieldIgnored")
	assert.NotContains(t, ignores, "spec.agentGatewayRef.endpointPickerPort EndpointPickerIncomplete")
	assert.NotContains(t, ignores, "spec.backends[0].endpointPicker EndpointPickerRequired")
}
