package compiler

import (
	"strings"
	"testing"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warningsOf compiles the ModelRouter chat whose spec is spec (its lines
// after "spec:") and returns its warnings' reasons by field.
func warningsOf(t *testing.T, spec string) map[string]string {
	t.Helper()
	in := &Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(chatDoc(spec))).HasErrors())
	_, diags := Compile(in.Routers[0].Router, in, Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	return diags.Warnings().ReasonsByField()
}

// chatDoc is the document of the ModelRouter chat whose spec is spec (its
// lines after "spec:").
func chatDoc(spec string) string {
	return "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat}\nspec:" + spec
}

func TestRouterWithNoRouteWarns(t *testing.T) {
	w := warningsOf(t, `
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
`)
	assert.Equal(t, "NoRoute", w["spec.defaultRoute"])

	w = warningsOf(t, `
  defaultRouteStrategy: BackendNameMatch
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
`)
	assert.NotContains(t, w, "spec.defaultRoute", "BackendNameMatch still routes by model name")
}

func TestBudgetFieldsForOtherScopesWarn(t *testing.T) {
	w := warningsOf(t, `
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
	w := warningsOf(t, `
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

// TestAuthOnProxy: policy.auth is enforced by the router-proxy (no warning
// that it is not), and with JWT on a team budget keys on the verified header.
func TestAuthOnProxy(t *testing.T) {
	auth := &v1.AuthSpec{JWT: &v1.JWTSpec{Provider: "keycloak", Issuer: "https://idp", JWKSURI: "https://idp/certs", TeamClaim: "team"}}
	out, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Policy = &v1.RouterPolicy{Auth: auth.DeepCopy(), Budgets: []v1.BudgetSpec{{Name: "t", Scope: v1.ScopeTeam, MaxTokens: vtPtr(int64(10))}}}
	})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Empty(t, vtKeys(diags.Warnings()))
	require.NotNil(t, out.Policy.Auth)
	assert.Equal(t, "x-llmkube-team", out.Policy.Auth.JWT.HeaderKey)

	_, diags = vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Policy = &v1.RouterPolicy{Auth: auth.DeepCopy(), Budgets: []v1.BudgetSpec{{Name: "t", Scope: v1.ScopeTeam, HeaderKey: "x-tenant", MaxTokens: vtPtr(int64(10))}}}
	})
	assert.Equal(t, []string{"spec.policy.budgets[0].headerKey TeamBudgetHeaderUnverified"}, vtKeys(diags.Errors()))

	bad := auth.DeepCopy()
	bad.JWT.JWKSURI = "idp/certs"
	_, diags = vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) { r.Spec.Policy = &v1.RouterPolicy{Auth: bad} })
	assert.Equal(t, []string{"spec.policy.auth.jwt.jwksURI InvalidURL"}, vtKeys(diags.Errors()))
}

// TestJWKSURIPlainHTTP: the signing keys come over https, or in plain http
// only from a loopback or cluster-local host (InsecureJWKSURI otherwise).
func TestJWKSURIPlainHTTP(t *testing.T) {
	for uri, want := range map[string][]string{
		"http://idp.example.com/certs":                                {"spec.policy.auth.jwt.jwksURI InsecureJWKSURI"},
		"http://203.0.113.7/certs":                                    {"spec.policy.auth.jwt.jwksURI InsecureJWKSURI"},
		"https://idp.example.com/certs":                               {},
		"http://127.0.0.1:8080/certs":                                 {},
		"http://keycloak.auth.svc.cluster.local:8080/certs":           {},
		"http://keycloak/realms/agents/protocol/openid-connect/certs": {},
		"http://10.96.4.2/certs":                                      {},
	} {
		_, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
			r.Spec.Policy = &v1.RouterPolicy{Auth: &v1.AuthSpec{JWT: &v1.JWTSpec{Provider: "p", Issuer: "https://idp", JWKSURI: uri, TeamClaim: "team"}}}
		})
		got := vtKeys(diags.Errors())
		if got == nil {
			got = []string{}
		}
		assert.Equal(t, want, got, uri)
	}
}

// TestAudiences: audiences reach the IR as written; an empty, padded or
// repeated audience is refused.
func TestAudiences(t *testing.T) {
	jwt := func(auds ...string) *v1.RouterPolicy {
		return &v1.RouterPolicy{Auth: &v1.AuthSpec{JWT: &v1.JWTSpec{Provider: "p", Issuer: "https://idp", JWKSURI: "https://idp/certs", TeamClaim: "team", Audiences: auds}}}
	}
	out, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) { r.Spec.Policy = jwt("https://models.example.com", "router") })
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Equal(t, []string{"https://models.example.com", "router"}, out.Policy.Auth.JWT.Audiences)

	_, diags = vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) { r.Spec.Policy = jwt("a", " a", "", "a", strings.Repeat("x", 2049)) })
	assert.ElementsMatch(t, []string{
		"spec.policy.auth.jwt.audiences[1] InvalidFormat",
		"spec.policy.auth.jwt.audiences[2] TooShort",
		"spec.policy.auth.jwt.audiences[3] DuplicateAudience",
		"spec.policy.auth.jwt.audiences[4] TooLong",
	}, vtKeys(diags.Errors()))
}
