package routingtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/ir"
)

const limitedRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - {name: primary, external: {provider: openai, model: gpt-5}}
    - {name: mini, external: {provider: openai, model: gpt-5-mini}}
  rules:
    - name: chat
      match: {models: [chat]}
      route: {strategy: primary-fallback, backends: [primary, mini]}
  defaultRoute: primary
`

// TestRateLimitedOnEveryPlane: rateLimited: [x] is x's provider answering
// every attempt 429 with Retry-After, and each plane does what it really
// does: the router-proxy holds x and the fallback answers, or answers 429
// with Retry-After when every backend is limited; Envoy's retry does not
// trigger on a 429, so the Gateway relays the primary's 429, never a
// false pass.
func TestRateLimitedOnEveryPlane(t *testing.T) {
	planes := planesFor(t, limitedRouter, ir.DataPlaneProxy, ir.DataPlaneGateway)
	files := decodeTests(t, testsOf("limited", "ml/chat", `    - name: primary rate limited, the fallback answers
      request: {model: chat}
      rateLimited: [primary]
      expect: {backend: mini, rule: chat, attempts: [primary, mini]}
    - name: every backend rate limited
      request: {model: chat}
      rateLimited: [primary, mini]
      expect: {status: 429}
    - name: the fallback rate limited is never tried
      request: {model: chat}
      rateLimited: [mini]
      expect: {backend: primary}
`))
	require.False(t, Check(files, planes, "").HasErrors())
	rep := Run(files, planes, "")
	got := verdicts(rep, func(r CaseResult) string { return r.Skipped })
	assert.Equal(t, "pass", got["primary rate limited, the fallback answers/Proxy"])
	assert.Contains(t, got["primary rate limited, the fallback answers/Gateway"], "429")
	assert.Equal(t, "pass", got["every backend rate limited/Proxy"])
	assert.Equal(t, "pass", got["every backend rate limited/Gateway"])
	assert.Equal(t, "pass", got["the fallback rate limited is never tried/Proxy"])
	assert.Equal(t, "pass", got["the fallback rate limited is never tried/Gateway"])
	require.Len(t, rep.Disagreements, 1, "%+v", rep.Disagreements)

	for _, r := range rep.Results {
		if r.Case == "every backend rate limited" && r.Plane == "Proxy" {
			assert.Equal(t, "upstream_rate_limited", r.Got.Error)
			assert.Equal(t, []string{"primary", "mini"}, r.Got.Attempts)
		}
	}
}

// TestRateLimitedNamesABackend: rateLimited names backends of the router,
// and never one that is down too.
func TestRateLimitedNamesABackend(t *testing.T) {
	planes := planesFor(t, limitedRouter, ir.DataPlaneProxy)
	files, diags := Decode("t.yaml", []byte(testsOf("limited", "ml/chat", `    - name: both
      request: {model: chat}
      down: [primary]
      rateLimited: [primary]
      expect: {status: 429}
`)))
	require.Len(t, diags, 1)
	assert.Equal(t, "spec.cases[0].rateLimited[0]", diags[0].Field)
	assert.Empty(t, files)
	files = decodeTests(t, testsOf("limited", "ml/chat", `    - name: unknown
      request: {model: chat}
      rateLimited: [nope]
      expect: {status: 429}
`))
	d := Check(files, planes, "")
	require.True(t, d.HasErrors())
	assert.Equal(t, "spec.cases[0].rateLimited[0]", d[0].Field)
	assert.Equal(t, "UnknownBackend", d[0].Reason)
}
