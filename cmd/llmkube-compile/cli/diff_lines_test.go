package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDiffAgainstNamesTheFilesLine: a YAML error in the second document of
// --against names the file's line, not the document's.
func TestDiffAgainstNamesTheFilesLine(t *testing.T) {
	in := write(t, "r.yaml", validRouter+"---\n"+inferenceService)
	against := write(t, "against.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b\n")
	r := run(t, "", "diff", "-f", in, "--against", against)
	assert.Equal(t, ExitDiffInvalid, r.code)
	assert.Contains(t, r.stderr, "line 7:", r.stderr)
}
