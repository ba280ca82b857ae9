package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestWrongKindInTestsIsAnError: a document of another kind in a --tests
// directory is an error naming the file and document, not skipped; a
// misspelt kind of the routing.llmkube.dev group is one in the inputs too.
func TestWrongKindInTestsIsAnError(t *testing.T) {
	in := write(t, "in.yaml", validRouter+"---\n"+inferenceService)
	good := routingTestHead + `  cases:
    - name: ok
      request: {model: m}
      expect: {backend: local}
`
	dir := filepath.Dir(write(t, "a.test.yaml", good))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.test.yaml"), []byte(strings.Replace(good, "kind: RoutingTest", "kind: RoutingTests", 1)), 0o644))
	r := run(t, "", "test", "-f", in, "--tests", dir)
	assert.Equal(t, ExitInvalidInput, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, filepath.Join(dir, "b.test.yaml")+`: document 1: kind: kind "RoutingTests" (apiVersion "routing.llmkube.dev/v1alpha1") is not RoutingTest`)

	both := write(t, "both.yaml", validRouter+"---\n"+inferenceService+"---\n"+strings.Replace(good, "kind: RoutingTest", "kind: RoutngTest", 1))
	r = run(t, "", "test", "-f", both)
	assert.Equal(t, ExitInvalidInput, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `document 3: kind: kind "RoutngTest" is not a kind of routing.llmkube.dev/v1alpha1`)
}

// TestCoverageInJUnitAndJSON: --coverage -o junit keeps the coverage as
// properties, and --fail-under writes a failing test case into the XML (and
// the routers below it into the JSON), not only the exit code.
func TestCoverageInJUnitAndJSON(t *testing.T) {
	router := strings.Replace(validRouter, "  defaultRoute: local\n", "    - {name: other, inferenceServiceRef: {name: qwen}}\n  defaultRoute: local\n", 1)
	in := write(t, "in.yaml", router+"---\n"+inferenceService)
	tests := write(t, "t.yaml", routingTestHead+`  dataPlanes: [Proxy]
  cases:
    - name: ok
      request: {model: m}
      expect: {backend: local}
`)
	r := run(t, "", "test", "-f", in, "--tests", tests, "--coverage", "-o", "junit")
	assert.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `<property name="coverage.team-a/chat.percent" value="66.7"></property>`)
	assert.Contains(t, r.stdout, `<property name="coverage.team-a/chat.neverExercised" value="backends other"></property>`)
	assert.Contains(t, r.stdout, `<testcase name="coverage of team-a/chat" classname="coverage"></testcase>`)

	r = run(t, "", "test", "-f", in, "--tests", tests, "--fail-under", "80", "-o", "junit")
	assert.Equal(t, ExitTestFailed, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `<testsuites tests="2" failures="1" skipped="0">`)
	assert.Contains(t, r.stdout, `<failure message="coverage of team-a/chat is 67%, below --fail-under 80%">never exercised: backends other</failure>`)

	r = run(t, "", "test", "-f", in, "--tests", tests, "--fail-under", "80", "-o", "json")
	assert.Equal(t, ExitTestFailed, r.code)
	var rep struct {
		FailUnder float64  `json:"failUnder"`
		Below     []string `json:"belowFailUnder"`
		Coverage  []struct {
			Router         string
			MissedBackends []string
		} `json:"coverage"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.Equal(t, 80.0, rep.FailUnder)
	assert.Equal(t, []string{"team-a/chat"}, rep.Below)
	require.Len(t, rep.Coverage, 1)
	assert.Equal(t, []string{"other"}, rep.Coverage[0].MissedBackends)
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
