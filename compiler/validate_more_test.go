package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func warningsOf(t *testing.T, doc string) map[string]string {
	t.Helper()
	in := &Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	_, diags := Compile(in.Routers[0].Router, in, Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	out := map[string]string{}
	for _, d := range diags.Warnings() {
		out[d.Field] = d.Reason
	}
	return out
}

func TestRouterWithNoRouteWarns(t *testing.T) {
	w := warningsOf(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
`)
	assert.Equal(t, "NoRoute", w["spec.defaultRoute"])

	w = warningsOf(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  defaultRouteStrategy: BackendNameMatch
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
`)
	assert.NotContains(t, w, "spec.defaultRoute", "BackendNameMatch still routes by model name")
}

func TestBudgetFieldsForOtherScopesWarn(t *testing.T) {
	w := warningsOf(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
  defaultRoute: a
  policy:
    budgets:
      - {name: all, scope: router, maxTokens: 10, ruleName: nothing, headerKey: x-team}
`)
	assert.Equal(t, "FieldIgnored", w["spec.policy.budgets[0].ruleName"])
	assert.Equal(t, "FieldIgnored", w["spec.policy.budgets[0].headerKey"])
}

func TestNotReadyInferenceServiceWarns(t *testing.T) {
	w := warningsOf(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends: [{name: a, inferenceServiceRef: {name: q}}]
  defaultRoute: a
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: q}
status: {phase: Failed}
`)
	assert.Equal(t, "InferenceServiceNotReady", w["spec.backends[0].inferenceServiceRef.name"])
}
