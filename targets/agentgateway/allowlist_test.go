package agentgateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/simulate"
	agw "github.com/llmkube/llmkube-compile/simulate/agentgateway"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// hospitalPools routes a classification label to the pool of qwen3 (the
// "clinical" model here) and everything else to llama3; research may use
// llama3 only (by the InferenceService's name), platform every model.
const hospitalPools = `  agentGatewayRef: {name: gw}
  backends:
    - {name: clinical, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen-epp, port: 9002}}}
    - {name: general, inferenceServiceRef: {name: llama3}, endpointPicker: {service: {name: llama-epp, port: 9002}}}
  rules:
    - name: phi-stays-local
      failClosed: true
      match: {dataClassification: [phi]}
      route: {backends: [clinical]}
  defaultRoute: general
  policy:
    auth:
      jwt: {provider: keycloak, issuer: "` + issuer + `", jwksURI: "` + issuer + `/certs", teamClaim: team}
      allowlists:
        - team: platform
        - team: research
          models: [llama3]
`

// TestForgedLabelNeverWidensAnAllowlist runs requests through the model of
// one agentgateway (routing InferencePool): research labels its request phi
// itself, which takes it to the rule served by the clinical pool its
// allowlist does not name: 403, nothing reaches a pool. Platform is served
// there; research's unlabelled request is served by llama3.
func TestForgedLabelNeverWidensAnAllowlist(t *testing.T) {
	m := gateway(t, nil, router("hospital", hospitalPools))
	labelled := func(model string, tok *simulate.Token, class string) simulate.Request {
		r := chat(model, tok)
		r.Headers = http.Header{"X-Llmkube-Classification": {class}}
		return r
	}
	for _, class := range []string{"phi", "PHI"} {
		o := expect(t, m, labelled("llama3", team("research"), class), http.StatusForbidden, "")
		if o.Backend != "" {
			t.Errorf("research's labelled request reached %s", o.Backend)
		}
	}
	expect(t, m, labelled("llama3", team("platform"), "phi"), http.StatusOK, "InferencePool/hospital-qwen3-pool")
	expect(t, m, chat("llama3", team("research")), http.StatusOK, "InferencePool/hospital-llama3-pool")
	expect(t, m, chat("qwen3", team("research")), http.StatusForbidden, "")
}

// TestServedByAnotherBackendWarns: a rule is served by its first ready
// backend; research may use the second only, so it is refused there, and
// the plane says so.
func TestServedByAnotherBackendWarns(t *testing.T) {
	spec := strings.Replace(hospitalPools, "route: {backends: [clinical]}", "route: {backends: [clinical, general]}", 1)
	objs, diags := compileAll(t, router("hospital", spec))
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	got := diags.Warnings().OfReason(agentgateway.ReasonAllowlistNeedsServingBackend)
	require.Len(t, got, 1, "%v", got)
	assert.Equal(t, "spec.rules[0].route.backends", got[0].Field)
	assert.Contains(t, got[0].Message, `team "research" may use backend "general"`)
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw"}, objs)
	require.NoError(t, err)
	r := chat("llama3", team("research"))
	r.Headers = http.Header{"X-Llmkube-Classification": {"phi"}}
	expect(t, m, r, http.StatusForbidden, "")
}
