package compiler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hospitalSpec is a router whose fail-closed sensitive rule serves only the
// local clinical model, with allowlists for clinical and billing.
const hospitalSpec = `
  backends:
    - {name: local-medgemma, inferenceServiceRef: {name: medgemma}}
    - {name: cloud-gpt, displayName: gpt-4.1, external: {provider: openai, model: gpt-4.1}}
    - {name: cloud-mini, external: {provider: openai, model: gpt-4.1-mini}}
  rules:
    - name: phi-stays-local
      failClosed: true
      match: {dataClassification: [pii, phi]}
      route: {backends: [local-medgemma]}
    - name: platform-only
      match: {headers: {x-llmkube-team: platform}}
      route: {backends: [local-medgemma]}
    - name: minis
      match: {models: ["gpt-4.1*"]}
      route: {backends: [cloud-mini, cloud-gpt]}
  defaultRoute: cloud-gpt
  policy:
    auth:
      jwt: {provider: k, issuer: https://i.example, jwksURI: https://i.example/certs, teamClaim: team}
      allowlists:
        - {team: clinical, models: [gpt-4.1, medgemma-27b, gpt-4.1-mini]}
        - {team: billing, models: [gpt4.1]}
        - {team: finance, models: [gpt-4.1]}
        - {team: ops}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: medgemma}
spec: {modelRef: medgemma-27b}
`

// TestAllowlistWarnings: a rule a team reaches with a model it is allowed
// but serves only by backends outside its allowlist warns that the team will
// be refused there; one that serves it by some warns that the others never
// do; an allowlist entry naming no model of the router warns with the
// nearest name.
func TestAllowlistWarnings(t *testing.T) {
	in := &Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(chatDoc(hospitalSpec))).HasErrors())
	_, diags := Compile(in.Routers[0].Router, in, Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	byMsg := map[string][]string{}
	for _, d := range diags.Warnings() {
		byMsg[d.Reason] = append(byMsg[d.Reason], d.Field+": "+d.Message)
	}

	unknown := byMsg[ReasonAllowlistModelUnknown]
	require.Len(t, unknown, 1, "%v", unknown)
	assert.Contains(t, unknown[0], "spec.policy.auth.allowlists[1].models[0]")
	assert.Contains(t, unknown[0], `"gpt4.1"`)
	assert.Contains(t, unknown[0], "did you mean gpt-4.1?")

	refused := byMsg[ReasonAllowlistRuleRefusesTeam]
	// finance (gpt-4.1) on the sensitive rule: refused; on minis: served by
	// cloud-gpt only. billing's typo allows nothing the router serves: it is
	// refused on every rule it reaches and on the default route. clinical
	// and ops (every model) are never refused; nobody but platform reaches
	// platform-only.
	assertWarned := func(field, team, says string) {
		t.Helper()
		for _, m := range refused {
			if hasAll(m, field+":", `team "`+team+`"`, says) {
				return
			}
		}
		t.Errorf("no AllowlistRuleRefusesTeam at %s for %s saying %q in %v", field, team, says, refused)
	}
	assertWarned("spec.rules[0].route.backends", "finance", "will be refused 403 model_not_allowed")
	assertWarned("spec.rules[0].route.backends", "finance", "classified pii or phi (by a label the client adds, too)")
	assertWarned("spec.rules[2].route.backends", "finance", "only by cloud-gpt")
	assertWarned("spec.defaultRoute", "billing", "refused 403")
	assertWarned("spec.defaultRoute", "billing", "Add one of those names to the team's allowlist")
	for _, m := range refused {
		assert.NotContains(t, m, `team "clinical"`)
		assert.NotContains(t, m, `team "ops"`)
		assert.NotContains(t, m, "spec.rules[1]", "only platform reaches platform-only")
	}
}

// TestAllowlistHidesPublishedModel: an allowlist naming a backend's model
// by another name than the id the router publishes it under (a hospital's
// allowlist of gpt-4.1 and medgemma-27b over backends named cloud-gpt and
// local-medgemma) warns that /v1/models and tools/list show the team
// nothing of it, and which displayName would; a team allowed the published
// id, or every model, is not warned.
func TestAllowlistHidesPublishedModel(t *testing.T) {
	in := &Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(chatDoc(hospitalSpec))).HasErrors())
	_, diags := Compile(in.Routers[0].Router, in, Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	hidden := diags.Warnings().OfReason(ReasonAllowlistHidesPublishedModel)
	require.Len(t, hidden, 1, "only clinical names a backend by another name: %v", hidden)
	m := hidden[0].Field + ": " + hidden[0].Message
	assert.True(t, hasAll(m, "spec.policy.auth.allowlists[0].models:", `team "clinical"`,
		"local-medgemma (published as local-medgemma, allowed as medgemma-27b)",
		"cloud-mini (published as cloud-mini, allowed as gpt-4.1-mini)",
		"/v1/models does not show them",
		"set displayName: medgemma-27b on backend local-medgemma, displayName: gpt-4.1-mini on backend cloud-mini"), m)
	assert.NotContains(t, m, "cloud-gpt (published", "gpt-4.1 is cloud-gpt's published id")

	// A backend only another team's rule reaches is none of blue's
	// /v1/models, whatever its allowlist names.
	in = &Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(chatDoc(`
  backends:
    - {name: gold, inferenceServiceRef: {name: medgemma}}
    - {name: cloud-gpt, displayName: gpt-4.1, external: {provider: openai, model: gpt-4.1}}
  rules:
    - name: platform-only
      match: {headers: {x-llmkube-team: platform}}
      route: {backends: [gold]}
  defaultRoute: cloud-gpt
  policy:
    auth:
      jwt: {provider: k, issuer: https://i.example, jwksURI: https://i.example/certs, teamClaim: team}
      allowlists:
        - {team: blue, models: [gpt-4.1, medgemma-27b]}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: medgemma}
spec: {modelRef: medgemma-27b}
`))).HasErrors())
	_, diags = Compile(in.Routers[0].Router, in, Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	for _, d := range diags.Warnings() {
		assert.NotEqual(t, ReasonAllowlistHidesPublishedModel, d.Reason, d.Message)
	}
}

func hasAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
