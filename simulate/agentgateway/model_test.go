package agentgateway_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/simulate"
	agw "github.com/llmkube/llmkube-compile/simulate/agentgateway"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

func model(t *testing.T, docs string) *agw.Model {
	t.Helper()
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw", Listeners: []agw.Listener{{Name: "http"}, {Name: "other", Hostname: "other.example"}}}, testenv.Objects(t, docs))
	require.NoError(t, err)
	return m
}

func route(name, rules string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ` + name + `, namespace: ns, labels: {inference.llmkube.dev/model-router: ` + name + `}}
spec:
  parentRefs: [{name: gw}]
  rules:
` + rules
}

const pool = `apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: %s, namespace: ns}
spec: {}`

func pools(names ...string) string {
	var out []string
	for _, n := range names {
		out = append(out, strings.Replace(pool, "%s", n, 1))
	}
	return strings.Join(out, "\n---\n")
}

func req(headers ...string) simulate.Request {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	return simulate.Request{Headers: h, Body: map[string]any{"model": "m"}}
}

// Across routes, a match with more headers wins; between equals the route
// key namespace/name.<rule> decides, not the order of the objects.
func TestRoutePrecedence(t *testing.T) {
	m := model(t, route("zeta", `  - name: any
    matches: [{headers: [{name: x-model, type: RegularExpression, value: .+}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: z}]
`)+"\n---\n"+route("alpha", `  - name: exact
    matches: [{headers: [{name: x-model, type: Exact, value: a}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: a}]
`)+"\n---\n"+route("beta", `  - name: two
    matches: [{headers: [{name: x-model, type: Exact, value: b}, {name: x-tier, type: Exact, value: gold}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: b}]
`)+"\n---\n"+pools("a", "b", "z"))
	o := m.Serve(req("x-model", "a"))
	assert.Equal(t, "InferencePool/a", o.Backend, "alpha sorts before zeta: %v", o.Trace)
	assert.Equal(t, "ns/alpha", o.Router)
	o = m.Serve(req("x-model", "b", "x-tier", "gold"))
	assert.Equal(t, "InferencePool/b", o.Backend, "two headers outrank one")
	o = m.Serve(req("x-model", "c"))
	assert.Equal(t, "InferencePool/z", o.Backend)
	o = m.Serve(req("x-model", "caf\xc3\xa9"))
	assert.Equal(t, http.StatusNotFound, o.Status, "a regex never matches a value outside visible ASCII")
	o = m.Serve(req())
	assert.Equal(t, http.StatusNotFound, o.Status)
}

func TestRuleWithoutBackendIs500(t *testing.T) {
	m := model(t, route("r", `  - name: closed
    matches: [{headers: [{name: x-model, type: Exact, value: a}]}]
`))
	assert.Equal(t, http.StatusInternalServerError, m.Serve(req("x-model", "a")).Status)
}

const allowlist = `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: mine, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  traffic:
    authorization: {action: %s, policy: {matchExpressions: ['request.headers["x-team"] == "a"']}}`

const gatewayAllow = `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: theirs, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  %s
  traffic:
    authorization: {action: Allow, policy: {matchExpressions: ['request.headers["x-internal"] == "true"']}}`

func TestAuthorizationMerging(t *testing.T) {
	r := route("r", `  - backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: p}]
`) + "\n---\n" + pools("p")
	for _, c := range []struct {
		action, strategy string
		headers          []string
		want             int
	}{
		{"Allow", "", []string{"x-team", "b", "x-internal", "true"}, 200}, // OR-merged: widened
		{"Require", "", []string{"x-team", "b", "x-internal", "true"}, 403},
		{"Require", "", []string{"x-team", "a", "x-internal", "true"}, 200},
		{"Require", "", []string{"x-team", "a"}, 403}, // the foreign Allow must match too
		{"Require", "strategy: {inheritance: Override}", []string{"x-team", "b", "x-internal", "true"}, 200},
	} {
		m := model(t, r+"\n---\n"+strings.Replace(allowlist, "%s", c.action, 1)+"\n---\n"+strings.Replace(gatewayAllow, "%s", c.strategy, 1))
		o := m.Serve(req(c.headers...))
		assert.Equal(t, c.want, o.Status, "%s %s %v: %v", c.action, c.strategy, c.headers, o.Trace)
	}
}

const preRouting = `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: %s, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw%s}]
  traffic:
    phase: PreRouting
    transformation:
      request:
        set: [{name: x-model, value: '%s'}]`

func pre(name, section, value string) string {
	s := strings.Replace(preRouting, "%s", name, 1)
	if section != "" {
		section = ", sectionName: " + section
	}
	s = strings.Replace(s, "%s", section, 1)
	return strings.Replace(s, "%s", value, 1)
}

func TestPreRoutingListenerBeatsGateway(t *testing.T) {
	r := route("r", `  - matches: [{headers: [{name: x-model, type: Exact, value: from-listener}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: p}]
`) + "\n---\n" + pools("p")
	m := model(t, r+"\n---\n"+pre("a-gateway", "", `"from-gateway"`)+"\n---\n"+pre("z-listener", "http", `"from-listener"`))
	assert.Equal(t, http.StatusOK, m.Serve(req()).Status)
	assert.Empty(t, m.Ambiguities("http"))
	m = model(t, r+"\n---\n"+pre("a", "", `"x"`)+"\n---\n"+pre("b", "", `"y"`))
	assert.Equal(t, []string{"ns/a", "ns/b"}, m.Ambiguities("http"), "two at one level: HashSet order")
	m = model(t, r+"\n---\n"+pre("body", "", `json(request.body).model`))
	o := m.Serve(req("x-model", "from-listener"))
	assert.Equal(t, http.StatusNotFound, o.Status, "the client's header is replaced by the body's model")
}

func TestExtractModelFromPath(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/projects/p/locations/l/publishers/google/models/gemini:rawPredict": "gemini",
		"/v1beta/models/gemini-2.5-flash:generateContent":                       "gemini-2.5-flash",
		"/v1beta/models/tunedModels%2Fabc:generateContent":                      "tunedModels/abc",
		"/v1beta/models/a%2F..%2Fb:generateContent":                             "",
		"/model/anthropic.claude/converse-stream":                               "anthropic.claude",
		"/v1/chat/completions":                                                  "",
	} {
		assert.Equal(t, want, agw.ExtractModelFromPath(path), path)
	}
	// agentgateway's own cases (crates/llm/src/lib.rs model_path tests at
	// 75b4e6c), as the model of a Bedrock path: the safe ones are the model,
	// the unsafe ones leave the path without one.
	for _, model := range []string{"gemini-2.5-flash", "gemini@001", "claude-3-5-sonnet-20241022-v2:0", "models/gemini-2.5-flash",
		"tunedModels/abc", "publishers/google/models/gemini-2.5-flash", "arn:aws:bedrock:us-east-1:1234:application-inference-profile/my-profile"} {
		assert.Equal(t, model, agw.ExtractModelFromPath("/model/"+url.PathEscape(model)+"/converse"), model)
	}
	for _, model := range []string{" ", "..", ".", "gemini-2.5-flash/../../locations/global/endpoints/openapi/chat/completions", "gemini-2.5-flash/..",
		"/gemini-2.5-flash", "gemini-2.5-flash/", "gemini//flash", "gemini-2.5-flash%2F..", "gemini\\..\\..", "gemini 2.5 flash", "gemini\n",
		"gemini-2.5-flash?alt=sse", "gemini-2.5-flash#frag", "gemini-2.5-flash<x", "a>b", `a"b`, "a`b", "a{b}", "a|b", "a^b", "a\u00a0b", "a\u0085b"} {
		assert.Empty(t, agw.ExtractModelFromPath("/model/"+url.PathEscape(model)+"/converse"), "%q", model)
	}
}

// A route attached to one listener (sectionName) is not on another.
func TestServeOnListener(t *testing.T) {
	r := strings.Replace(route("r", `  - backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: p}]
`), "parentRefs: [{name: gw}]", "parentRefs: [{name: gw, sectionName: http}]", 1) + "\n---\n" + pools("p")
	m := model(t, r)
	assert.Equal(t, http.StatusOK, m.ServeOn("http", req()).Status)
	assert.Equal(t, http.StatusNotFound, m.ServeOn("other", req()).Status)
	assert.Equal(t, http.StatusNotFound, m.ServeOn("missing", req()).Status)
	o := m.Serve(simulate.Request{Host: "other.example", Body: map[string]any{"model": "m"}})
	assert.Equal(t, http.StatusNotFound, o.Status, "other.example lands on listener other: %v", o.Trace)
}

// TestDownBackendFails: a backend the request reaches that is down fails
// it; agentgateway tries no other.
func TestDownBackendFails(t *testing.T) {
	m := model(t, route("r", `  - name: a
    matches: [{headers: [{name: x-model, type: Exact, value: a}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: a}]
`)+"\n---\n"+pools("a"))
	r := req("x-model", "a")
	r.Down = map[string]bool{"InferencePool/a": true}
	o := m.Serve(r)
	assert.Equal(t, http.StatusServiceUnavailable, o.Status, "%v", o.Trace)
	assert.Empty(t, o.Backend)
	assert.Equal(t, []string{"InferencePool/a"}, o.Attempts)
}

// TestRateLimitedBackendIsRelayed: a backend whose provider answers 429
// has it relayed to the client: agentgateway retries no status and fails
// over on readiness only.
func TestRateLimitedBackendIsRelayed(t *testing.T) {
	m := model(t, route("r", `  - name: a
    matches: [{headers: [{name: x-model, type: Exact, value: a}]}]
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: a}]
`)+"\n---\n"+pools("a"))
	r := req("x-model", "a")
	r.RateLimited = map[string]bool{"InferencePool/a": true}
	o := m.Serve(r)
	assert.Equal(t, http.StatusTooManyRequests, o.Status, "%v", o.Trace)
	assert.Equal(t, simulate.LimitedRetryAfter, o.Header.Get("Retry-After"))
	assert.Empty(t, o.Backend)
	assert.Equal(t, []string{"InferencePool/a"}, o.Attempts)
}

// A foreign AgentgatewayModel attached directly to the listener takes it
// (issue 51, measured at agentgateway 75b4e6c): the router's models behind
// its HTTPRoute get 404, the foreign model answers. On another listener it
// does not disturb the router.
func TestForeignModelOnListenerDisablesRoute(t *testing.T) {
	const models = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - backendRefs: [{group: agentgateway.dev, kind: AgentgatewayModel, name: "*"}]
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayModel
metadata: {name: mine, namespace: ns}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  match: {model: m}
---
apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayModel
metadata: {name: foreign, namespace: other}
spec:
  parentRefs: [{name: gw, namespace: ns, sectionName: LISTENER}]
  match: {model: f}`
	ask := func(m *agw.Model, model string) simulate.Outcome {
		return m.ServeOn("http", simulate.Request{Body: map[string]any{"model": model}})
	}
	onListener := model(t, strings.Replace(models, "LISTENER", "http", 1))
	o := ask(onListener, "m")
	assert.Equal(t, http.StatusNotFound, o.Status, "the router's model: %v", o.Trace)
	o = ask(onListener, "f")
	assert.Equal(t, http.StatusOK, o.Status, "the foreign model: %v", o.Trace)
	assert.Equal(t, "AgentgatewayModel/foreign", o.Backend)

	elsewhere := model(t, strings.Replace(models, "LISTENER", "other", 1))
	o = ask(elsewhere, "m")
	assert.Equal(t, http.StatusOK, o.Status, "a foreign model on another listener: %v", o.Trace)
	assert.Equal(t, "AgentgatewayModel/mine", o.Backend)
}

// A policy attaches by spec.targetSelectors as well as by targetRefs: a
// foreign Override authorization selecting the Gateway by label replaces
// the route's allowlist, as it does in agentgateway (an unlisted team gets
// 200), and one selecting the route by label merges like a route policy.
// A selector whose labels the target lacks, or naming another listener,
// does not attach.
func TestPolicyAttachedBySelector(t *testing.T) {
	r := route("r", `  - backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: p}]
`) + "\n---\n" + pools("p")
	mine := strings.Replace(allowlist, "%s", "Require", 1)
	const gateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns, labels: {tier: shared}}
spec: {gatewayClassName: agentgateway, listeners: [{name: http, port: 80, protocol: HTTP}]}`
	bySelector := func(kind, labels, section string) string {
		s := strings.Replace(gatewayAllow, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]",
			"targetSelectors: [{group: gateway.networking.k8s.io, kind: "+kind+", matchLabels: {"+labels+"}"+section+"}]", 1)
		return strings.Replace(s, "%s", "strategy: {inheritance: Override}", 1)
	}
	unlisted := []string{"x-team", "b", "x-internal", "true"}
	for _, c := range []struct {
		name, policy string
		want         int
	}{
		{"targetRefs", strings.Replace(gatewayAllow, "%s", "strategy: {inheritance: Override}", 1), 200},
		{"Gateway by label", bySelector("Gateway", "tier: shared", ""), 200},
		{"Gateway by label, this listener", bySelector("Gateway", "tier: shared", ", sectionName: http"), 200},
		{"Gateway by label, another listener", bySelector("Gateway", "tier: shared", ", sectionName: other"), 403},
		{"Gateway by a label it lacks", bySelector("Gateway", "tier: private", ""), 403},
	} {
		m := model(t, r+"\n---\n"+mine+"\n---\n"+gateway+"\n---\n"+c.policy)
		o := m.Serve(req(unlisted...))
		assert.Equal(t, c.want, o.Status, "%s: %v", c.name, o.Trace)
		assert.Equal(t, http.StatusOK, m.Serve(req("x-team", "a", "x-internal", "true")).Status, "%s: the listed team is served", c.name)
	}
	// On the route: a Deny selecting the route by label refuses the listed
	// team; one whose labels the route lacks does not attach.
	deny := func(labels string) string {
		s := strings.Replace(gatewayAllow, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]",
			"targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {"+labels+"}}]", 1)
		return strings.Replace(strings.Replace(s, "%s", "", 1), "action: Allow", "action: Deny", 1)
	}
	for labels, want := range map[string]int{"inference.llmkube.dev/model-router: r": 403, "team: x": 200} {
		m := model(t, r+"\n---\n"+mine+"\n---\n"+deny(labels))
		o := m.Serve(req("x-team", "a", "x-internal", "true"))
		assert.Equal(t, want, o.Status, "HTTPRoute selected by {%s}: %v", labels, o.Trace)
	}
}

// jwtAuthentication removes a token it verified (jwt.rs Jwt::apply) and
// checks a provider's audiences; a Permissive policy passes a token it did
// not verify on untouched.
func TestJWTRemovesTheTokenItVerified(t *testing.T) {
	policy := func(mode, audiences string) string {
		return `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: jwt, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  traffic:
    jwtAuthentication:
      mode: ` + mode + `
      providers: [{issuer: "https://idp", ` + audiences + `jwks: {remote: {url: "https://idp/certs"}}}]`
	}
	objs := func(p string) string {
		return route("r", `  - name: all
    backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: p}]
`) + "\n---\n" + pools("p") + "\n---\n" + p
	}
	send := func(m *agw.Model, tok *simulate.Token) simulate.Outcome {
		r := req()
		r.Token = tok
		return m.Serve(r)
	}
	m := model(t, objs(policy("Strict", "")))
	o := send(m, &simulate.Token{Issuer: "https://idp"})
	require.Equal(t, http.StatusOK, o.Status, strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Upstream.Values("Authorization"), "a verified token is removed")

	m = model(t, objs(policy("Permissive", "")))
	o = send(m, &simulate.Token{Issuer: "https://other"})
	require.Equal(t, http.StatusOK, o.Status)
	assert.NotEmpty(t, o.Upstream.Values("Authorization"), "Permissive passes a token it did not verify on")

	m = model(t, objs(policy("Strict", "audiences: [router], ")))
	for aud, want := range map[any]int{"router": http.StatusOK, "other": http.StatusUnauthorized} {
		o = send(m, &simulate.Token{Issuer: "https://idp", Claims: map[string]any{"aud": aud}})
		assert.Equal(t, want, o.Status, "aud %v", aud)
	}
	o = send(m, &simulate.Token{Issuer: "https://idp"})
	assert.Equal(t, http.StatusUnauthorized, o.Status, "no aud")
}
