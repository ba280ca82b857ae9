package planes

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/ir"
)

// TestKnownFromCRD: the planes come from the CRD's enum.
func TestKnownFromCRD(t *testing.T) {
	assert.ElementsMatch(t, []ir.DataPlane{ir.DataPlaneProxy, ir.DataPlaneGateway, ir.DataPlaneAgentGateway}, Known())
}
