package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const routingTestHead = `apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: t}
spec:
  router: team-a/chat
`

// TestCaseDataPlaneTypoIsAnError: a case-level dataPlanes typo is invalid
// input with its field path, as at test level, not zero cases and PASS.
func TestCaseDataPlaneTypoIsAnError(t *testing.T) {
	in := write(t, "in.yaml", validRouter+"---\n"+inferenceService)
	tests := write(t, "t.yaml", routingTestHead+`  cases:
    - name: typo
      dataPlanes: [Envoy]
      request: {model: m}
      expect: {backend: local}
`)
	r := run(t, "", "test", "-f", in, "--tests", tests)
	assert.Equal(t, ExitInvalidInput, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `RoutingTest/t: spec.cases[0].dataPlanes[0]: data plane "Envoy" is not one this run tests`)
	assert.NotContains(t, r.stdout, "PASS")
}

// TestNoCaseRanIsNotAPass: a run in which every case was skipped fails.
func TestNoCaseRanIsNotAPass(t *testing.T) {
	in := write(t, "in.yaml", validRouter+"---\n"+inferenceService)
	tests := write(t, "t.yaml", routingTestHead+`  cases:
    - name: only on the gateway
      dataPlanes: [Gateway]
      request: {model: m}
      expect: {backend: local}
`)
	r := run(t, "", "test", "-f", in, "--tests", tests)
	assert.Equal(t, ExitTestFailed, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "FAIL: no case ran on any data plane (1 skipped)")
}
