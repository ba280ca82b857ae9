package cli

import (
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

// TestEveryProblemAtOncePerPlane: a router with several independent
// problems gets all of them in one pass on each gateway plane, not one
// round each (the hint of one leading to the next).
func TestEveryProblemAtOncePerPlane(t *testing.T) {
	for _, tc := range []struct {
		plane, router string
		reasons       []string
	}{
		{"Gateway", `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: multi, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - {name: a, external: {provider: openai, model: gpt-5}, timeout: 30s}
    - {name: b, external: {provider: openai, model: gpt-5-mini}, timeout: 60s}
    - {name: c, external: {provider: openai, model: gpt-5-nano}}
  rules:
    - {name: mixed, match: {models: [m1]}, route: {backends: [a, b]}}
    - {name: fast, match: {models: [m2]}, route: {backends: [c]}, timeout: 10s}
    - {name: slow, match: {models: [m3]}, route: {backends: [c]}, timeout: 20s}
  defaultRoute: c
  policy:
    budgets:
      - {name: all, scope: router, windowSeconds: 3600, maxTokens: 100000}
`, []string{"spec.rules[0].timeout (BackendTimeoutsDiffer)", "spec.policy.budgets[0] (BudgetSpansTrafficPolicies)"}},
		{"AgentGateway", `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: models, namespace: team-a}
spec:
  dataPlane: AgentGateway
  agentGatewayRef: {name: agentgateway, routing: Model, sectionName: http, endpointPicker: epp, endpointPickerPort: 9002}
  defaultRouteStrategy: BackendNameMatch
  backends:
    - {name: qwen, displayName: shared, inferenceServiceRef: {name: qwen3}}
    - {name: gemma, displayName: shared, inferenceServiceRef: {name: gemma}}
    - {name: star, displayName: "any*", inferenceServiceRef: {name: gemma}}
`, []string{"spec.agentGatewayRef.endpointPicker (PickerSharedAcrossInferenceServices)", "spec.backends[1].displayName (DuplicateModelID)", "spec.backends[2].displayName (ModelIDNotExpressible)"}},
	} {
		t.Run(tc.plane, func(t *testing.T) {
			r := run(t, "", "validate", "-f", write(t, "r.yaml", tc.router))
			assert.Equal(t, ExitInvalid, r.code, r.stderr)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if strings.HasPrefix(l, "warning:") {
					continue
				}
				parts := strings.SplitN(l, ": ", 4) // file, object, field, message (reason)
				require.Len(t, parts, 4, l)
				got = append(got, parts[2]+" "+parts[3][strings.LastIndex(parts[3], "("):])
			}
			assert.ElementsMatch(t, tc.reasons, got)
		})
	}
}
