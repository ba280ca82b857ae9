package capability

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/ir"
)

// TestKnownFromCRD: the planes come from the CRD's enum.
func TestKnownFromCRD(t *testing.T) {
	assert.ElementsMatch(t, []ir.DataPlane{ir.DataPlaneProxy, ir.DataPlaneGateway, ir.DataPlaneAgentGateway}, Planes())
}

// TestReads: a field is read unless a row covering it ignores or refuses it
// outright; a row limited to a value or a spec leaves it read, and a
// Required row of an enclosing field says nothing of its children.
func TestReads(t *testing.T) {
	table := Table{Rows: []Row{
		{Path: "spec.gatewayRef", Verdict: Ignored},
		{Path: "spec.agentGatewayRef", Verdict: Required},
		{Path: "spec.backends[*].endpointPicker", Verdict: Refused, When: &FieldValue{Path: "spec.agentGatewayRef.routing", Value: "Model"}},
		{Path: "spec.rules[*].route.strategy", Value: "Shadow", Verdict: Refused},
	}}
	assert.False(t, table.Reads("spec.gatewayRef"))
	assert.False(t, table.Reads("spec.gatewayRef.name"), "inside an ignored field")
	assert.True(t, table.Reads("spec.agentGatewayRef"))
	assert.True(t, table.Reads("spec.agentGatewayRef.routing"))
	assert.True(t, table.Reads("spec.backends[*].endpointPicker"), "refused only in one routing mode")
	assert.True(t, table.Reads("spec.rules[*].route.strategy"), "refused only for one value")
	assert.True(t, Table{}.Reads("spec.agentGatewayRef"))
}
