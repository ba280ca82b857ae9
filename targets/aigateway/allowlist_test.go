package aigateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/simulate"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
)

// hospital is a router whose classification rules send to the clinical
// model, alone or beside the general one; billing may use the general
// model only (llama-3, the InferenceService's modelRef), clinical both.
const hospital = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: medgemma, namespace: ml}
spec: {modelRef: medgemma-27b, runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: general, namespace: ml}
spec: {modelRef: llama-3, runtime: vllm}
---
` + "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: hospital, namespace: ml}\nspec:\n  dataPlane: Gateway\n  gatewayRef: {" + sharedGateway + "}\n  backends:\n" + `    - {name: local-medgemma, inferenceServiceRef: {name: medgemma}}
    - {name: local-general, inferenceServiceRef: {name: general}}
  rules:
    - name: phi-stays-local
      failClosed: true
      match: {dataClassification: [phi]}
      route: {backends: [local-medgemma]}
    - name: pii-local-pair
      failClosed: true
      match: {dataClassification: [pii]}
      route: {backends: [local-general, local-medgemma]}
  defaultRoute: local-general
  policy:
    auth:
      jwt: {provider: keycloak, issuer: https://issuer.example/realms/h, jwksURI: https://issuer.example/realms/h/certs, teamClaim: team}
      allowlists:
        - {team: clinical, models: [llama-3, medgemma]}
        - {team: billing, models: [llama-3]}
`

// TestForgedLabelNeverWidensAnAllowlist runs requests through the model of
// Envoy Gateway and the AI Gateway: billing, allowed llama-3, labels its
// request phi itself and so meets the rule whose only backend is the
// clinical model: 403, the request reaches no backend. A rule with one
// backend billing may use and one it may not refuses it too (the gateway
// may fail over to either). Clinical is served by the clinical model, and
// billing's unlabelled request by llama-3.
func TestForgedLabelNeverWidensAnAllowlist(t *testing.T) {
	m := gatewayModel(t, compileEach(t, hospital))
	iss := "https://issuer.example/realms/h"
	tok := func(team string) *simulate.Token {
		return &simulate.Token{Issuer: iss, Claims: map[string]any{"team": team}}
	}
	label := func(v string) http.Header { return http.Header{"X-Llmkube-Classification": {v}} }

	for _, class := range []string{"phi", "pii", "PHI", "public, phi"} {
		o := m.Serve(simulate.Request{Body: chat("llama-3"), Token: tok("billing"), Headers: label(class)})
		assert.Equal(t, http.StatusForbidden, o.Status, "billing labelled %q\n%s", class, strings.Join(o.Trace, "\n"))
		assert.Empty(t, o.Backend, "nothing reached a backend")
	}
	o := m.Serve(simulate.Request{Body: chat("llama-3"), Token: tok("clinical"), Headers: label("phi")})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "ml/hospital-local-medgemma", o.Backend, "the AIServiceBackend of local-medgemma")
	assert.Equal(t, "phi-stays-local", o.Rule)
	o = m.Serve(simulate.Request{Body: chat("llama-3"), Token: tok("clinical"), Headers: label("pii")})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "pii-local-pair", o.Rule)
	o = m.Serve(simulate.Request{Body: chat("llama-3"), Token: tok("billing")})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "ml/hospital-local-general", o.Backend)
	// Asking for the clinical model by name stays refused, as before.
	o = m.Serve(simulate.Request{Body: chat("medgemma"), Token: tok("billing")})
	assert.Equal(t, http.StatusForbidden, o.Status, strings.Join(o.Trace, "\n"))
}

// TestPartlyAllowedRuleWarns: billing may use one backend of pii-local-pair
// but not the other; the gateway refuses it there and says so.
func TestPartlyAllowedRuleWarns(t *testing.T) {
	r := frontEach(t, hospital)[0]
	_, diags := aigateway.New().Compile(r)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	got := diags.Warnings().OfReason(aigateway.ReasonAllowlistNeedsEveryBackend)
	require.Len(t, got, 1, "%v", got)
	assert.Equal(t, "spec.rules[1].route.backends", got[0].Field)
	assert.Contains(t, got[0].Message, `team "billing" may use local-general`)
}

// TestServingAllowlistBesideAnotherRouter: the hospital router, whose rules
// carry their own SecurityPolicies for the allowlist, on one Gateway beside
// another authenticated router (disjoint hostnames, another issuer). On the
// Gateway's model: billing forging both the phi label and the team header
// is refused on the hospital's host; the neighbour's token is refused
// there; the neighbour's callers, forging the same label and team, are
// served by their own router and backend, untouched by the hospital's
// per-rule policies; and the two routers' objects pass CheckTogether.
func TestServingAllowlistBesideAnotherRouter(t *testing.T) {
	withHost := strings.Replace(hospital, "gatewayRef: {"+sharedGateway+"}", "gatewayRef: {"+sharedGateway+`, hostnames: ["h.example.com"]}`, 1)
	require.NotEqual(t, hospital, withHost)
	both := isvc + "\n---\n" + withHost + hostRouter("beta", `, hostnames: ["b.example.com"]`, jwtAuth(issuerB, ""))
	for i, d := range aigateway.New().CheckTogether(frontEach(t, both)) {
		assert.False(t, d.HasErrors(), "router %d: %v", i, d)
	}
	m := gatewayModel(t, compileEach(t, both))
	iss := "https://issuer.example/realms/h"
	forged := http.Header{"X-Llmkube-Classification": {"phi"}, "X-Llmkube-Team": {"clinical"}}

	o := m.Serve(simulate.Request{Host: "h.example.com", Body: chat("llama-3"), Token: &simulate.Token{Issuer: iss, Claims: map[string]any{"team": "billing"}}, Headers: forged})
	assert.Equal(t, http.StatusForbidden, o.Status, "billing forging phi and clinical\n%s", strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Backend, "nothing reached a backend")

	o = m.Serve(simulate.Request{Host: "h.example.com", Body: chat("llama-3"), Token: &simulate.Token{Issuer: issuerB, Claims: map[string]any{"team": "clinical"}}, Headers: forged})
	assert.Equal(t, http.StatusUnauthorized, o.Status, "the neighbour's token on the hospital's host\n%s", strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Backend)

	o = m.Serve(simulate.Request{Host: "b.example.com", Body: chat("any-model"), Token: &simulate.Token{Issuer: issuerB, Claims: map[string]any{"team": "x"}}, Headers: forged})
	require.Equal(t, http.StatusOK, o.Status, "the neighbour's caller\n%s", strings.Join(o.Trace, "\n"))
	assert.Equal(t, "ml/beta", o.Router)
	assert.Equal(t, []string{"x"}, o.Upstream.Values("x-llmkube-team"), "the forged team never reaches the neighbour's backend")

	o = m.Serve(simulate.Request{Host: "h.example.com", Body: chat("llama-3"), Token: &simulate.Token{Issuer: iss, Claims: map[string]any{"team": "clinical"}}, Headers: http.Header{"X-Llmkube-Classification": {"phi"}}})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "ml/hospital-local-medgemma", o.Backend, "clinical's phi request stays on the clinical model")
}
