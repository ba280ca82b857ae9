package builtin

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/capability"
)

// TestEveryPlaneHasAModel: each plane the API accepts has one request-path
// model in this build, registered once.
func TestEveryPlaneHasAModel(t *testing.T) {
	seen := map[string]int{}
	for _, m := range Models() {
		seen[string(m.DataPlane)]++
		assert.NotNil(t, m.Serve, "%s", m.DataPlane)
	}
	for _, dp := range capability.Planes() {
		assert.Equal(t, 1, seen[string(dp)], "%s", dp)
		_, ok := Get(dp)
		assert.True(t, ok, "%s", dp)
	}
	assert.Len(t, seen, len(capability.Planes()))
}
