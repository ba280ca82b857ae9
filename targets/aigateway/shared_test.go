package aigateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
	"github.com/llmkube/llmkube-compile/simulate/envoyai"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// These tests put the output of every router of an input on one Gateway and
// run requests through the executable model of Envoy Gateway and the AI
// Gateway (simulate/envoyai): a router is never alone on a shared Gateway.

// compileEach compiles every router of an input on its own (frontend and
// target, no cross-router check: what two CLI runs, or two namespaces'
// controllers racing, would apply) and returns all objects, router by
// router in input order (the creation order the Gateway sees).
func compileEach(t *testing.T, data string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, r := range frontEach(t, data) {
		res, tdiags := aigateway.New().Compile(r)
		require.False(t, tdiags.HasErrors(), "target refused %s: %v", r.Name, tdiags.Err())
		out = append(out, res.Objects...)
	}
	return out
}

// frontEach decodes data and compiles each of its routers for the Gateway
// plane through the compiler (not the target), which must accept them.
func frontEach(t *testing.T, data string) []*ir.Router {
	t.Helper()
	in := &compiler.Inputs{}
	d := in.Decode("input.yaml", []byte(data))
	require.False(t, d.HasErrors(), "%v", d.Err())
	var rs []*ir.Router
	for _, rt := range in.Routers {
		r, diags := compiler.Compile(rt.Router, in, compiler.Options{DataPlane: ir.DataPlaneGateway})
		require.False(t, diags.HasErrors(), "frontend refused %s: %v", rt.Router.Name, diags.Err())
		rs = append(rs, r)
	}
	return rs
}

func gatewayModel(t *testing.T, objs []*unstructured.Unstructured) *envoyai.Model {
	t.Helper()
	m, err := envoyai.New(envoyai.Gateway{Namespace: "envoy-gateway-system", Name: "ai-gateway"}, objs)
	require.NoError(t, err)
	return m
}

func chat(model string) map[string]any { return map[string]any{"model": model} }

const issuerA = "https://a.example/realms/lab"
const issuerB = "https://b.example/realms/lab"

// sharedGateway is the gatewayRef of the routers that share a Gateway.
const sharedGateway = "name: ai-gateway, namespace: envoy-gateway-system"

// routerDoc is a router on the shared Gateway with one exact-model rule.
func routerDoc(name, model, auth string) string {
	return "\n---\n" + aigateway.GatewayRouterDoc(name, sharedGateway) + `    - {name: local, inferenceServiceRef: {name: qwen3}}
  rules:
    - name: only
      failClosed: true
      match: {models: [` + model + `]}
      route: {backends: [local]}
` + auth
}

const isvc = aigateway.QwenISVC

func jwtAuth(issuer, allow string) string {
	return `  policy:
    auth:
      jwt:
        provider: corp
        issuer: ` + issuer + `
        jwksURI: ` + issuer + `/certs
        teamClaim: team
` + allow
}

// Item 1: router alpha (no auth) and beta (JWT) on one Gateway. With
// alpha created first, its path-only route-not-found rule is what Envoy
// picks before the model is known, so jwt_authn runs alpha's requirement
// (none); the ext_proc then routes to beta. Beta's authorization refuses
// what beta's own provider did not verify.
func TestSharedGatewayNoTokenNeverReachesAuthenticatedRouter(t *testing.T) {
	m := gatewayModel(t, compileEach(t, isvc+routerDoc("alpha", "open-model", "")+routerDoc("beta", "gold-model", jwtAuth(issuerA, ""))))
	// No token, beta's model.
	o := m.Serve(simulate.Request{Body: chat("gold-model")})
	assert.NotEqual(t, http.StatusOK, o.Status, "%s\n%s", o, strings.Join(o.Trace, "\n"))
	assert.Equal(t, http.StatusForbidden, o.Status, strings.Join(o.Trace, "\n"))
	// A client naming alpha's model in the header the AI Gateway routes on.
	o = m.Serve(simulate.Request{Body: chat("gold-model"), Headers: http.Header{"X-Ai-Eg-Model": {"open-model"}}})
	assert.NotEqual(t, http.StatusOK, o.Status, "%s\n%s", o, strings.Join(o.Trace, "\n"))
	// Alpha's own callers still get through.
	o = m.Serve(simulate.Request{Body: chat("open-model")})
	assert.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "ml/alpha", o.Router)
}

// Item 1: two routers with JWT from different issuers whose providers share
// a name. A token of issuer A that alpha's provider verified must not pass
// beta's allowlist: beta reads claims only from its own provider.
func TestSharedGatewayClaimsReadOnlyFromOwnIssuer(t *testing.T) {
	allow := "      allowlists:\n        - team: platform\n"
	m := gatewayModel(t, compileEach(t, isvc+routerDoc("alpha", "open-model", jwtAuth(issuerA, ""))+routerDoc("beta", "gold-model", jwtAuth(issuerB, allow))))
	tokA := &simulate.Token{Issuer: issuerA, Claims: map[string]any{"team": "platform"}}
	o := m.Serve(simulate.Request{Body: chat("gold-model"), Token: tokA})
	assert.Equal(t, http.StatusForbidden, o.Status, "%s\n%s", o, strings.Join(o.Trace, "\n"))
}

// Item 1, offline: the pipeline refuses the combination outright.
func TestSharedGatewayWithAuthIsRefused(t *testing.T) {
	rs := frontEach(t, isvc+routerDoc("alpha", "open-model", "")+routerDoc("beta", "gold-model", jwtAuth(issuerA, "")))
	out := aigateway.New().CheckTogether(rs)
	require.Len(t, out, 2)
	assert.Contains(t, out[0].Err().Error(), "GatewaySharedWithAuth")
	assert.Contains(t, out[1].Err().Error(), "GatewaySharedWithAuth")
	assert.Contains(t, out[1].Err().Error(), "ml/alpha")
}

var tenants = isvc + "\n---\n" + aigateway.GatewayRouterDoc("tenants", sharedGateway) + `    - {name: qwen, inferenceServiceRef: {name: qwen3}}
    - {name: qwen-gold, inferenceServiceRef: {name: qwen3}}
    - name: claude
      external: {provider: anthropic, model: claude-opus-4-7, credentialsSecretRef: {name: anthropic}}
    - name: gpt
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
    - name: lab
      external: {provider: litellm, model: qwen3, url: "https://lab.example.com/v1"}
  rules:
    - name: platform-team
      failClosed: true
      match:
        headers: {x-llmkube-team: platform}
      route: {backends: [qwen-gold]}
    - name: claude
      match: {models: [claude]}
      route: {backends: [claude]}
    - name: gpt
      match: {models: [gpt]}
      route: {backends: [gpt]}
    - name: lab
      match: {models: [lab]}
      route: {backends: [lab]}
  defaultRoute: qwen
  policy:
    budgets:
      - {name: per-team, scope: team, windowSeconds: 3600, maxTokens: 100000}
    auth:
      jwt:
        provider: keycloak
        issuer: https://issuer.example/realms/lab
        jwksURI: https://issuer.example/realms/lab/certs
        teamClaim: team
`

// Item 2: the client's own team header never reaches routing or budgets.
func TestVerifiedTeamHeaderCannotBeForged(t *testing.T) {
	m := gatewayModel(t, compileEach(t, tenants))
	iss := "https://issuer.example/realms/lab"
	// A token without the team claim plus a forged header: not the gold rule.
	o := m.Serve(simulate.Request{Body: chat("qwen3"), Token: &simulate.Token{Issuer: iss}, Headers: http.Header{"X-Llmkube-Team": {"platform"}}})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.NotEqual(t, "platform-team", o.Rule, strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Upstream.Values("X-Llmkube-Team"))
	// Team blue forging platform: charged to blue, routed as blue.
	o = m.Serve(simulate.Request{Body: chat("qwen3"), Token: &simulate.Token{Issuer: iss, Claims: map[string]any{"team": "blue"}}, Headers: http.Header{"X-Llmkube-Team": {"platform"}}})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	require.Len(t, o.Charges, 1)
	assert.Equal(t, "blue", o.Charges[0].Key, strings.Join(o.Trace, "\n"))
	assert.Equal(t, "per-team", o.Charges[0].Budget)
	assert.NotEqual(t, "platform-team", o.Rule)
	assert.Equal(t, []string{"blue"}, o.Upstream.Values("X-Llmkube-Team"))
	// The verified platform team is routed to gold.
	o = m.Serve(simulate.Request{Body: chat("qwen3"), Token: &simulate.Token{Issuer: iss, Claims: map[string]any{"team": "platform"}}})
	assert.Equal(t, "platform-team", o.Rule, strings.Join(o.Trace, "\n"))
}

// Item 3: the caller's JWT never reaches a third-party provider; the
// provider's key does, and local backends get no caller token either.
func TestCallerTokenNeverReachesProviders(t *testing.T) {
	m := gatewayModel(t, compileEach(t, tenants))
	tok := &simulate.Token{Issuer: "https://issuer.example/realms/lab", Claims: map[string]any{"team": "blue"}, Raw: "caller.jwt.value"}
	for _, tc := range []struct{ model, backend, auth, apiKey string }{
		{"claude", "ml/tenants-claude", "", "<anthropic>"},
		{"gpt", "ml/tenants-gpt", "Bearer <openai>", ""},
		{"lab", "ml/tenants-lab", "", ""},
		{"qwen3", "ml/tenants-qwen", "", ""},
	} {
		o := m.Serve(simulate.Request{Body: chat(tc.model), Token: tok, Headers: http.Header{"Cookie": {"session=1"}}})
		require.Equal(t, http.StatusOK, o.Status, "%s: %s", tc.model, strings.Join(o.Trace, "\n"))
		assert.Equal(t, tc.backend, o.Backend)
		for _, v := range o.Upstream.Values("Authorization") {
			assert.NotContains(t, v, tok.Raw, "%s: the caller's token reaches %s", tc.model, o.Backend)
		}
		assert.Equal(t, tc.auth, o.Upstream.Get("Authorization"), tc.model)
		assert.Equal(t, tc.apiKey, o.Upstream.Get("X-Api-Key"), tc.model)
		if tc.model != "qwen3" {
			assert.Empty(t, o.Upstream.Get("Cookie"), "%s: the caller's cookie reaches a provider", tc.model)
		}
	}
}

// Item 5: a request no rule matches gets the AI Gateway's route-not-found
// 404 (docs/targets/gateway.md states the difference from the router-proxy's
// 503); it reaches no backend.
func TestUnmatchedRequestReachesNoBackend(t *testing.T) {
	m := gatewayModel(t, compileEach(t, isvc+routerDoc("alpha", "open-model", "")))
	o := m.Serve(simulate.Request{Body: chat("unknown-model")})
	assert.Equal(t, http.StatusNotFound, o.Status, strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Backend)
	assert.Contains(t, strings.Join(o.Trace, "\n"), `rule "route-not-found" answers 404`)
}

// A foreign Envoy Gateway policy attaches by spec.targetSelectors (labels:
// matchLabels and matchExpressions) and by the deprecated singular
// targetRef as well as by targetRefs; the model applies it in each form
// and ignores a selector the target's labels do not satisfy. The AI
// Gateway copies an AIGatewayRoute's labels onto its HTTPRoute, so a
// selector on the router's label selects the router's route.
func TestForeignPolicyAttachmentForms(t *testing.T) {
	objs := compileEach(t, isvc+routerDoc("alpha", "open-model", ""))
	const gateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai-gateway, namespace: envoy-gateway-system, labels: {tier: shared}}
spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}`
	denyAll := func(ns, targets string) string {
		return `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: deny-all, namespace: ` + ns + `}
spec:
  ` + targets + `
  authorization: {defaultAction: Deny}`
	}
	const egns, ml = "envoy-gateway-system", "ml"
	for _, c := range []struct {
		name, policy string
		want         int
	}{
		{"none", "", http.StatusOK},
		{"Gateway by targetRefs", denyAll(egns, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai-gateway}]"), http.StatusForbidden},
		{"Gateway by the deprecated targetRef", denyAll(egns, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: ai-gateway}"), http.StatusForbidden},
		{"Gateway by matchLabels", denyAll(egns, "targetSelectors: [{kind: Gateway, matchLabels: {tier: shared}}]"), http.StatusForbidden},
		{"Gateway by matchExpressions", denyAll(egns, "targetSelectors: [{kind: Gateway, matchExpressions: [{key: tier, operator: In, values: [shared, edge]}]}]"), http.StatusForbidden},
		{"Gateway by a label it lacks", denyAll(egns, "targetSelectors: [{kind: Gateway, matchLabels: {tier: private}}]"), http.StatusOK},
		{"Gateway selected from another namespace", denyAll(ml, "targetSelectors: [{kind: Gateway, matchLabels: {tier: shared}}]"), http.StatusOK},
		{"HTTPRoute by the router's label", denyAll(ml, "targetSelectors: [{kind: HTTPRoute, matchLabels: {inference.llmkube.dev/model-router: alpha}}]"), http.StatusForbidden},
		{"HTTPRoute by another router's label", denyAll(ml, "targetSelectors: [{kind: HTTPRoute, matchLabels: {inference.llmkube.dev/model-router: beta}}]"), http.StatusOK},
	} {
		all := append([]*unstructured.Unstructured(nil), objs...)
		docs := []string{gateway}
		if c.policy != "" {
			docs = append(docs, c.policy)
		}
		all = append(all, testenv.Objects(t, docs...)...)
		out := gatewayModel(t, all).Serve(simulate.Request{Body: chat("open-model")})
		assert.Equal(t, c.want, out.Status, "%s: %s\n%s", c.name, out, strings.Join(out.Trace, "\n"))
	}
}

// hostRouter is routerDoc with gatewayRef.hostnames and a catch-all
// default route (the widest match there is).
func hostRouter(name, hosts, auth string) string {
	return "\n---\n" + aigateway.GatewayRouterDoc(name, sharedGateway+hosts) + `    - {name: local, inferenceServiceRef: {name: qwen3}}
  defaultRoute: local
` + auth
}

// Two routers with policy.auth on one Gateway: refused while their
// gatewayRef.hostnames overlap (none, a wildcard over an exact name, the
// same name), accepted when disjoint; and on the Gateway's model, with
// disjoint hostnames, each router's callers are served on its own host and
// nobody crosses: a token of the other issuer, or none, is refused, and a
// Host neither claims reaches no route.
func TestAuthenticatedRoutersWithDisjointHostnames(t *testing.T) {
	hosts := func(h ...string) string {
		if len(h) == 0 {
			return ""
		}
		return `, hostnames: ["` + strings.Join(h, `", "`) + `"]`
	}
	other := jwtAuth(issuerB, "")
	for _, c := range []struct {
		name    string
		a, b    string
		refused bool
	}{
		{"no hostnames", hosts(), hosts(), true},
		{"one without", hosts("a.example.com"), hosts(), true},
		{"the same", hosts("a.example.com"), hosts("b.example.com", "a.example.com"), true},
		{"wildcard over exact", hosts("*.example.com"), hosts("b.example.com"), true},
		{"disjoint", hosts("a.example.com"), hosts("b.example.com"), false},
		{"disjoint wildcards", hosts("*.a.example.com"), hosts("*.b.example.com"), false},
	} {
		rs := frontEach(t, isvc+hostRouter("alpha", c.a, jwtAuth(issuerA, ""))+hostRouter("beta", c.b, other))
		for i, d := range aigateway.New().CheckTogether(rs) {
			if c.refused {
				require.True(t, d.HasErrors(), "%s: router %d", c.name, i)
				assert.Contains(t, d.Err().Error(), "GatewaySharedWithAuth", c.name)
				if c.b != hosts("b.example.com") {
					assert.Contains(t, d.Err().Error(), "GatewayRoutesOverlap", c.name)
				}
			} else {
				assert.False(t, d.HasErrors(), "%s: %v", c.name, d)
			}
		}
	}
	// Disjoint hostnames still share the Gateway's ClientTrafficPolicy,
	// which removes the team header on every host: a router without auth,
	// or one with another team header, beside an authenticated router is
	// refused.
	for name, beta := range map[string]string{
		"without auth":        "",
		"another team header": strings.Replace(jwtAuth(issuerB, ""), "teamClaim: team\n", "teamClaim: team\n        headerKey: x-tenant\n", 1),
	} {
		rs := frontEach(t, isvc+hostRouter("alpha", hosts("a.example.com"), jwtAuth(issuerA, ""))+hostRouter("beta", hosts("b.example.com"), beta))
		for i, d := range aigateway.New().CheckTogether(rs) {
			require.True(t, d.HasErrors(), "%s: router %d", name, i)
			assert.Contains(t, d.Err().Error(), "GatewaySharedWithAuth", name)
			assert.Contains(t, d.Err().Error(), "ClientTrafficPolicy", name)
		}
	}

	m := gatewayModel(t, compileEach(t, isvc+hostRouter("alpha", hosts("a.example.com"), jwtAuth(issuerA, ""))+hostRouter("beta", hosts("b.example.com"), jwtAuth(issuerB, ""))))
	tokA := &simulate.Token{Issuer: issuerA, Claims: map[string]any{"team": "x"}}
	tokB := &simulate.Token{Issuer: issuerB, Claims: map[string]any{"team": "x"}}
	for _, c := range []struct {
		host   string
		token  *simulate.Token
		status int
		router string
	}{
		{"a.example.com", tokA, http.StatusOK, "ml/alpha"},
		{"b.example.com", tokB, http.StatusOK, "ml/beta"},
		{"b.example.com:8080", tokB, http.StatusOK, "ml/beta"},
		{"a.example.com", tokB, http.StatusUnauthorized, ""},
		{"b.example.com", tokA, http.StatusUnauthorized, ""},
		{"a.example.com", nil, http.StatusUnauthorized, ""},
		{"c.example.com", tokA, http.StatusNotFound, ""},
	} {
		o := m.Serve(simulate.Request{Host: c.host, Token: c.token, Body: chat("any-model")})
		assert.Equal(t, c.status, o.Status, "%s: %s\n%s", c.host, o, strings.Join(o.Trace, "\n"))
		assert.Equal(t, c.router, o.Router, c.host)
	}
	// A client forging the team header on either host: one router's
	// ClientTrafficPolicy is in force for the whole Gateway and removes it,
	// so each backend sees only the verified claim.
	for host, tok := range map[string]*simulate.Token{"a.example.com": tokA, "b.example.com": tokB} {
		o := m.Serve(simulate.Request{Host: host, Token: tok, Body: chat("any-model"), Headers: http.Header{"X-Llmkube-Team": {"admin"}}})
		require.Equal(t, http.StatusOK, o.Status, "%s\n%s", host, strings.Join(o.Trace, "\n"))
		assert.Equal(t, []string{"x"}, o.Upstream.Values("x-llmkube-team"), "%s: the forged team never reaches the backend", host)
	}
}

// What GatewaySharedWithAuth prevents, on the model: an authenticated
// router and another team's AIGatewayRoute on one host (the objects applied
// anyway, as before the check). Which route-not-found rule Envoy ranks
// first decides whose JWT requirement runs: with theirs first, the router's
// own valid callers are refused; nothing reaches the router's backend
// without its own provider's token either way.
func TestForeignRouteOnCommonHostLocksOutButNeverBypasses(t *testing.T) {
	const theirs = `apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIGatewayRoute
metadata: {name: other-team, namespace: other}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai-gateway, namespace: envoy-gateway-system}]
  rules:
    - name: theirs
      matches: [{headers: [{name: x-ai-eg-model, type: Exact, value: their-model}]}]
      backendRefs: [{name: their-backend}]
---
apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIServiceBackend
metadata: {name: their-backend, namespace: other}
spec:
  schema: {name: OpenAI, prefix: /v1}
  backendRef: {group: gateway.envoyproxy.io, kind: Backend, name: their-backend}`
	foreign := testenv.Objects(t, theirs)
	// Theirs created first: its route-not-found ranks first.
	m := gatewayModel(t, append(foreign, compileEach(t, isvc+routerDoc("gold", "gold-model", jwtAuth(issuerA, "")))...))
	valid := &simulate.Token{Issuer: issuerA, Claims: map[string]any{"team": "gold"}}
	o := m.Serve(simulate.Request{Body: chat("gold-model"), Token: valid})
	assert.Equal(t, http.StatusForbidden, o.Status, "the lockout: %s\n%s", o, strings.Join(o.Trace, "\n"))
	for _, req := range []simulate.Request{
		{Body: chat("gold-model")},
		{Body: chat("gold-model"), Headers: http.Header{"X-Ai-Eg-Model": {"their-model"}}},
	} {
		o := m.Serve(req)
		assert.NotEqual(t, http.StatusOK, o.Status, "%s\n%s", o, strings.Join(o.Trace, "\n"))
	}
	o = m.Serve(simulate.Request{Body: chat("their-model")})
	assert.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
}

// Issue 61: policy.auth.jwt.audiences reach the SecurityPolicy's provider;
// a token for another audience, or naming none, is refused before any
// backend: 403, Envoy's jwt_authn status for JwtAudienceNotAllowed
// (docs/targets/gateway.md).
func TestAudiencesAreEnforced(t *testing.T) {
	auth := strings.Replace(jwtAuth(issuerA, ""), "        jwksURI:", "        audiences: [https://models.example.com, llm-router]\n        jwksURI:", 1)
	m := gatewayModel(t, compileEach(t, isvc+routerDoc("alpha", "open-model", auth)))
	serve := func(aud any) simulate.Outcome {
		tok := &simulate.Token{Issuer: issuerA, Claims: map[string]any{"team": "blue"}}
		if aud != nil {
			tok.Claims["aud"] = aud
		}
		return m.Serve(simulate.Request{Body: chat("open-model"), Token: tok})
	}
	for _, c := range []struct {
		aud  any
		want int
	}{
		{"https://other.example/mcp", http.StatusForbidden},
		{nil, http.StatusForbidden},
		{"llm-router", http.StatusOK},
		{[]any{"x", "https://models.example.com"}, http.StatusOK},
	} {
		o := serve(c.aud)
		assert.Equal(t, c.want, o.Status, "aud %v: %s", c.aud, strings.Join(o.Trace, "\n"))
		if o.Status != http.StatusOK {
			assert.Empty(t, o.Backend, "aud %v: refused before any backend", c.aud)
		}
		if o.Status == http.StatusOK {
			assert.Empty(t, o.Upstream.Get("Authorization"), "the caller's token reaches the local backend")
		}
	}
}
