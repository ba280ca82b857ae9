package cli

import (
	"strings"
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
	assert.Contains(t, r.stdout, "FAIL: 0 passed, 0 failed, 1 skipped")
	assert.Contains(t, r.stderr, "no case ran on any data plane")
}

// TestOtherKindBesideATestIsAnError: a --tests file holding a RoutingTest
// and a document of another kind (a router put there, read by nothing) is
// an error naming the document, not skipped.
func TestOtherKindBesideATestIsAnError(t *testing.T) {
	in := write(t, "in.yaml", validRouter+"---\n"+inferenceService)
	tests := write(t, "t.yaml", routingTestHead+`  cases:
    - name: ok
      request: {model: m}
      expect: {backend: local}
---
`+strings.Replace(validRouter, "name: chat", "name: other", 1))
	r := run(t, "", "test", "-f", in, "--tests", tests)
	assert.Equal(t, ExitInvalidInput, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, tests+": a --tests file holds only RoutingTest documents, and document 2 (ModelRouter) would be read by nothing")
	assert.Empty(t, r.stdout)
}

// TestTestAndExplainShowWarnings: the compiler's warnings reach test and
// explain, and --warnings-as-errors makes them invalid input there too.
func TestTestAndExplainShowWarnings(t *testing.T) {
	in := write(t, "in.yaml", validRouter) // its InferenceService is missing: a warning
	tests := write(t, "t.yaml", routingTestHead+`  cases:
    - name: ok
      request: {model: m}
      expect: {backend: local}
`)
	for _, args := range [][]string{
		{"test", "-f", in, "--tests", tests},
		{"explain", "-f", in, "--model", "m"},
	} {
		r := run(t, "", args...)
		assert.Equal(t, ExitOK, r.code, "%v: %s%s", args, r.stdout, r.stderr)
		assert.Contains(t, r.stderr, "warning: "+in+": ModelRouter/chat: spec.backends[0].inferenceServiceRef", args)
		assert.Contains(t, r.stderr, "(InferenceServiceNotFound)", args)

		r = run(t, "", append(args, "--warnings-as-errors")...)
		assert.Equal(t, ExitInvalidInput, r.code, "%v: %s%s", args, r.stdout, r.stderr)
		assert.Empty(t, r.stdout, args)
		assert.Contains(t, r.stderr, "(InferenceServiceNotFound)", args)
		assert.NotContains(t, r.stderr, "warning:", args)
	}
}
