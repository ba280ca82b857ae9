package agentgateway

import (
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/stretchr/testify/assert"
)

// TestMergeRefusesANonMap: map_merge fails on anything but two maps (a
// JSON array body), as upstream's must_map does; a body transformation
// then fails and agentgateway sends an empty body.
func TestMergeRefusesANonMap(t *testing.T) {
	arr := parseJSON([]byte(`["model", "x"]`))
	m := parseJSON([]byte(`{"model": "x"}`))
	assert.True(t, types.IsError(mergeMaps(arr, m)))
	assert.True(t, types.IsError(mergeMaps(m, arr)))
	out := mergeMaps(m, parseJSON([]byte(`{"model": "y", "n": 1}`)))
	assert.Equal(t, types.String(`{"model":"y","n":1}`), toJSON(out), "the argument wins")
	assert.True(t, types.IsError(parseJSON([]byte(`{"a":1} trailing`))), "serde_json refuses trailing data")
}
