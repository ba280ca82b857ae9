package agentgateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/simulate"
	agw "github.com/llmkube/llmkube-compile/simulate/agentgateway"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// The tests in this file put every router of an input, plus foreign
// objects, on one modelled agentgateway (simulate/agentgateway) and send
// requests through it: the defects they guard against are where objects
// meet on a shared Gateway.

const issuer = "https://issuer.example/realms/lab"

const sharedISVCs = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3, namespace: ns}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama3, namespace: ns}
spec: {runtime: vllm}
`

// router is one ModelRouter document in namespace ns.
func router(name, spec string) string {
	return "---\napiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: " + name + ", namespace: ns}\nspec:\n  dataPlane: AgentGateway\n" + spec
}

// compileAll runs the pipeline (every router, cross-router checks) over
// the documents.
func compileAll(t *testing.T, docs ...string) ([]*unstructured.Unstructured, diag.List) {
	t.Helper()
	in := &compiler.Inputs{}
	d := in.Decode("t.yaml", []byte(sharedISVCs+strings.Join(docs, "\n")))
	require.False(t, d.HasErrors(), "%v", d.Err())
	reg := targets.NewRegistry(agentgateway.New())
	return pipeline.Run(in, reg, pipeline.Options{Compile: compiler.Options{Planes: reg.Capabilities()}})
}

// gatewayOverride is a foreign AgentgatewayPolicy named name on Gateway
// ns/gw with inheritance Override (a platform policy the routes' own cannot
// replace), whose spec.traffic is traffic (YAML, indented four spaces).
func gatewayOverride(t *testing.T, name, traffic string) []*unstructured.Unstructured {
	return testenv.Objects(t, `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: `+name+`, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  strategy: {inheritance: Override}
  traffic:
`+traffic)
}

// gateway compiles the routers, which must be accepted, and models Gateway
// ns/gw (listener http) with them and the foreign objects.
func gateway(t *testing.T, extra []*unstructured.Unstructured, routers ...string) *agw.Model {
	t.Helper()
	objs, diags := compileAll(t, routers...)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw"}, append(objs, extra...))
	require.NoError(t, err)
	return m
}

func team(name string) *simulate.Token {
	return &simulate.Token{Issuer: issuer, Claims: map[string]any{"team": name}}
}

func chat(model string, tok *simulate.Token) simulate.Request {
	return simulate.Request{Body: map[string]any{"model": model}, Token: tok}
}

func expect(t *testing.T, m *agw.Model, r simulate.Request, status int, backend string) simulate.Outcome {
	t.Helper()
	o := m.Serve(r)
	assert.Equal(t, status, o.Status, "%s %s: %s\n%s", r.Method, r.Path, o, strings.Join(o.Trace, "\n"))
	if backend != "" {
		assert.Equal(t, backend, o.Backend, "%s\n%s", o, strings.Join(o.Trace, "\n"))
	}
	return o
}

const auth = `  policy:
    auth:
      jwt: {provider: keycloak, issuer: "` + issuer + `", jwksURI: "` + issuer + `/certs", teamClaim: team}
      allowlists:
        - team: platform
        - team: research
          models: [qwen3-32b]
`

const modelMode = `  agentGatewayRef: {name: gw, routing: Model, sectionName: http}
  defaultRouteStrategy: BackendNameMatch
  backends:
    - {name: qwen, displayName: qwen3-32b, inferenceServiceRef: {name: qwen3}}
    - {name: llama, inferenceServiceRef: {name: llama3}}
`

const poolMode = `  agentGatewayRef: {name: gw}
  backends:
    - {name: qwen, displayName: qwen3-32b, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen-epp, port: 9002}}}
    - {name: llama, inferenceServiceRef: {name: llama3}, endpointPicker: {service: {name: llama-epp, port: 9002}}}
  defaultRouteStrategy: BackendNameMatch
`

// Item 1 of issue 28: in Model routing the allowlist must be decided on the
// model agentgateway's model router resolves, which it takes from a
// Vertex/Gemini/Bedrock path before the body.
func TestModelModeAllowlistDecidesOnTheResolvedModel(t *testing.T) {
	m := gateway(t, nil, router("models", modelMode+auth))
	expect(t, m, chat("qwen3-32b", team("research")), http.StatusOK, "AgentgatewayModel/models-qwen-model")
	expect(t, m, chat("llama", team("research")), http.StatusForbidden, "")
	expect(t, m, chat("llama", team("platform")), http.StatusOK, "AgentgatewayModel/models-llama-model")
	expect(t, m, chat("qwen3-32b", team("intruder")), http.StatusForbidden, "")
	expect(t, m, chat("qwen3-32b", nil), http.StatusUnauthorized, "")

	for _, path := range []string{
		"/v1/projects/p/locations/l/publishers/x/models/llama:rawPredict",
		"/v1beta/models/llama:generateContent",
		"/model/llama/converse",
	} {
		r := chat("qwen3-32b", team("research")) // the body names an allowed model
		r.Path = path
		expect(t, m, r, http.StatusForbidden, "")
		r.Token = team("platform")
		expect(t, m, r, http.StatusOK, "AgentgatewayModel/models-llama-model")
	}
}

// Item 5 of issue 28: GET /v1/models has no body; an allowlist read from
// the body would deny it.
func TestModelModeModelListWithAllowlist(t *testing.T) {
	m := gateway(t, nil, router("models", modelMode+auth))
	o := expect(t, m, simulate.Request{Method: http.MethodGet, Path: "/v1/models", Token: team("research")}, http.StatusOK, "model-list")
	assert.Contains(t, strings.Join(o.Trace, "\n"), `[qwen3-32b]`, "research lists only its model")
}

const allowInternal = `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: allow-internal, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  traffic:
    authorization:
      action: Allow
      policy: {matchExpressions: ['request.headers["x-internal"] == "true"']}
`

// Item 2 of issue 28: a foreign Allow on the Gateway is OR-merged with the
// route's authorization; it must not let an unlisted team or model through.
func TestForeignAllowCannotWidenTheAllowlist(t *testing.T) {
	internal := func(r simulate.Request) simulate.Request {
		r.Headers = http.Header{"X-Internal": {"true"}}
		return r
	}
	for _, mode := range []struct{ name, spec, qwen, llama string }{
		{"InferencePool", poolMode, "InferencePool/chat-qwen3-pool", "InferencePool/chat-llama3-pool"},
		{"Model", modelMode, "AgentgatewayModel/chat-qwen-model", "AgentgatewayModel/chat-llama-model"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			m := gateway(t, testenv.Objects(t, allowInternal), router("chat", mode.spec+auth))
			// Unlisted team, unlisted model: still refused.
			expect(t, m, internal(chat("qwen3-32b", team("intruder"))), http.StatusForbidden, "")
			expect(t, m, internal(chat("llama", team("research"))), http.StatusForbidden, "")
			// Listed: served when the foreign Allow matches too.
			expect(t, m, internal(chat("qwen3-32b", team("research"))), http.StatusOK, mode.qwen)
			expect(t, m, internal(chat("llama", team("platform"))), http.StatusOK, mode.llama)
		})
	}
}

// The trade-off of Require in InferencePool routing: a foreign Allow that a
// listed team's request does not meet denies it (agentgateway denies when
// Allow rules exist and none matches). Documented in agentgateway.md.
func TestForeignAllowThatDoesNotMatchDeniesListedTeams(t *testing.T) {
	m := gateway(t, testenv.Objects(t, allowInternal), router("chat", poolMode+auth))
	expect(t, m, chat("qwen3-32b", team("research")), http.StatusForbidden, "")
	m = gateway(t, nil, router("chat", poolMode+auth))
	expect(t, m, chat("qwen3-32b", team("research")), http.StatusOK, "InferencePool/chat-qwen3-pool")
}

// An Override Authorization on the Gateway drops every route authorization
// after it: in InferencePool routing the router cannot defend against it
// (a documented prerequisite, reported by the controller as
// OverridingPolicy); in Model routing the per-model authorization still
// holds.
func TestOverrideAuthorizationOnTheGateway(t *testing.T) {
	overrideAllowAll := gatewayOverride(t, "allow-all", `    authorization:
      action: Allow
      policy: {matchExpressions: ["true"]}
`)
	m := gateway(t, overrideAllowAll, router("chat", poolMode+auth))
	expect(t, m, chat("llama", team("research")), http.StatusOK, "InferencePool/chat-llama3-pool")
	m = gateway(t, overrideAllowAll, router("chat", modelMode+auth))
	expect(t, m, chat("llama", team("research")), http.StatusForbidden, "")
}

// Item 4 of issue 28: with sectionName the body-reading extraction policy
// targets the router's listener only; on the Gateway it would run on every
// listener and take another team's routing header away.
func TestPreRoutingExtractionStaysOnItsListener(t *testing.T) {
	const theirRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: uploads, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: other}]
  rules:
  - matches: [{headers: [{name: X-Gateway-Base-Model-Name, type: Exact, value: bulk}]}]
    backendRefs: [{name: uploads, port: 80}]
`
	objs, diags := compileAll(t, router("chat", `  agentGatewayRef: {name: gw, sectionName: http}
  backends:
    - {name: qwen, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen-epp, port: 9002}}}
  defaultRoute: qwen
`))
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw", Listeners: []agw.Listener{{Name: "http"}, {Name: "other", Hostname: "uploads.example"}}},
		append(objs, testenv.Objects(t, theirRoute)...))
	require.NoError(t, err)
	up := simulate.Request{Host: "uploads.example", Path: "/upload", Headers: http.Header{"X-Gateway-Base-Model-Name": {"bulk"}}}
	expect(t, m, up, http.StatusOK, "Service/uploads")
	expect(t, m, chat("qwen3", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
}

const chatRouter = `  agentGatewayRef: {name: gw%s}
  backends:
    - {name: qwen, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen-epp, port: 9002}}}
  defaultRoute: qwen
`

const modelsRouter = `  agentGatewayRef: {name: gw%s}
  backends:
    - {name: llama, inferenceServiceRef: {name: llama3}, endpointPicker: {service: {name: llama-epp, port: 9002}}}
  defaultRouteStrategy: BackendNameMatch
`

func scoped(spec, ref string) string { return strings.Replace(spec, "%s", ref, 1) }

// Item 3 of issue 28: two routers on one listener interleave; agentgateway
// breaks the tie between chat's `.+` default and models' exact model by
// namespace/name, so chat takes models' model. The pipeline (and so the
// controller, which runs the same check across the cluster) refuses both.
func TestRoutersSharingAListenerAreRefused(t *testing.T) {
	// What agentgateway would do with both (the model, without the check).
	chatObjs, d := compileAll(t, router("chat", scoped(chatRouter, "")))
	require.False(t, d.HasErrors())
	modelsObjs, d := compileAll(t, router("models", scoped(modelsRouter, "")))
	require.False(t, d.HasErrors())
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw"}, append(chatObjs, modelsObjs...))
	require.NoError(t, err)
	o := expect(t, m, chat("llama", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
	assert.Equal(t, "ns/chat", o.Router, "chat's default sorts before models' exact model")

	_, diags := compileAll(t, router("chat", scoped(chatRouter, "")), router("models", scoped(modelsRouter, "")))
	assert.ElementsMatch(t, []string{"spec.agentGatewayRef GatewayRoutesOverlap", "spec.agentGatewayRef GatewayRoutesOverlap"}, reasons(diags, diag.Error))
	assert.Contains(t, diags.Err().Error(), "ModelRouter ns/models")
	assert.Contains(t, diags.Err().Error(), `rule "default" (X-LLMKube-Model-Present = true)`, "the message names the header the default rule matches")

	// Model routing's catch-all meets everything on its listener and host.
	_, diags = compileAll(t, router("chat", scoped(chatRouter, ", sectionName: http")), router("models", modelMode))
	assert.Contains(t, reasons(diags, diag.Error), "spec.agentGatewayRef GatewayRoutesOverlap")
}

func TestRoutersSeparatedByListenerHostnameOrModel(t *testing.T) {
	for name, pair := range map[string][2]string{
		"listeners": {", sectionName: http", ", sectionName: https"},
		"hostnames": {", hostnames: [chat.example]", ", hostnames: [\"*.models.example\"]"},
	} {
		t.Run(name, func(t *testing.T) {
			objs, diags := compileAll(t, router("chat", scoped(chatRouter, pair[0])), router("models", scoped(modelsRouter, pair[1])))
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			if name != "hostnames" {
				return
			}
			m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw"}, objs)
			require.NoError(t, err)
			r := chat("llama", nil)
			r.Host = "a.models.example"
			o := expect(t, m, r, http.StatusOK, "InferencePool/models-llama3-pool")
			assert.Equal(t, "ns/models", o.Router)
			r.Host = "chat.example"
			expect(t, m, r, http.StatusOK, "InferencePool/chat-qwen3-pool")
		})
	}
	// Disjoint models on one listener: no default route, different models.
	other := strings.Replace(scoped(modelsRouter, ""), "llama-epp", "other-epp", 1)
	_, diags := compileAll(t, router("models", scoped(modelsRouter, "")), router("more", strings.Replace(other, "name: llama,", "name: llama2, displayName: llama-2,", 1)))
	assert.False(t, diags.HasErrors(), "%v", diags.Err())
}

// Item 5 of issue 28: a model id with bytes outside visible ASCII never
// matches a regular expression in agentgateway; the default route must
// still take it.
func TestDefaultRouteTakesNonASCIIModels(t *testing.T) {
	m := gateway(t, nil, router("chat", scoped(chatRouter, "")))
	expect(t, m, chat("qwen3-café", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
	expect(t, m, chat("qwen3", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
	expect(t, m, simulate.Request{Body: map[string]any{"messages": []any{}}}, http.StatusNotFound, "")
	r := simulate.Request{Method: http.MethodGet, Path: "/v1/models", Headers: http.Header{agentgateway.ModelPresentHeader: {"true"}, agentgateway.ModelHeader: {"x"}}}
	expect(t, m, r, http.StatusNotFound, "") // the client cannot forge the headers
}

// Item 5 of issue 28: a fail-closed rule with no ready backend answers 503,
// as the reference promises, not agentgateway's 500 for a rule without
// backends; the other rules still serve.
func TestFailClosedWithoutReadyBackendIs503(t *testing.T) {
	notReady := "---\napiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: {name: secure, namespace: ns}\nspec: {runtime: vllm}\nstatus: {phase: Failed}\n"
	objs, diags := compileAll(t, notReady, router("records", `  agentGatewayRef: {name: gw}
  backends:
    - {name: secure, inferenceServiceRef: {name: secure}, endpointPicker: {service: {name: secure-epp, port: 9002}}}
    - {name: qwen, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen-epp, port: 9002}}}
  rules:
    - name: regulated
      failClosed: true
      match: {models: [secure]}
      route: {backends: [secure]}
  defaultRoute: qwen
`))
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	m, err := agw.New(agw.Gateway{Namespace: "ns", Name: "gw"}, objs)
	require.NoError(t, err)
	o := expect(t, m, chat("secure", nil), http.StatusServiceUnavailable, "")
	assert.Equal(t, "rule-regulated", o.Rule)
	expect(t, m, chat("qwen3", nil), http.StatusOK, "InferencePool/records-qwen3-pool")
}

// Issue 61: the caller's token reaches no backend of either routing mode,
// whatever a Gateway policy leaves of the router's jwtAuthentication: a
// foreign Permissive jwtAuthentication with inheritance Override lets the
// token through unverified (agentgateway removes only a token it verified),
// and the router's transformation still removes it before the pool.
func TestCallerTokenReachesNoBackend(t *testing.T) {
	permissiveOverride := gatewayOverride(t, "permissive", `    jwtAuthentication:
      mode: Permissive
      providers: [{issuer: "https://other.example", jwks: {remote: {url: "https://other.example/certs"}}}]
`)
	for _, mode := range []struct{ name, spec, backend string }{
		{"InferencePool", poolMode, "InferencePool/chat-qwen3-pool"},
		{"Model", modelMode, "AgentgatewayModel/chat-qwen-model"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			// Without allowlists: under the override nothing else refuses the
			// unverified request, which is where the token would leak.
			jwtOnly := `  policy:
    auth:
      jwt: {provider: keycloak, issuer: "` + issuer + `", jwksURI: "` + issuer + `/certs", teamClaim: team}
`
			for name, extra := range map[string][]*unstructured.Unstructured{"alone": nil, "under a foreign Permissive override": permissiveOverride} {
				m := gateway(t, extra, router("chat", mode.spec+jwtOnly))
				o := expect(t, m, chat("qwen3-32b", team("platform")), http.StatusOK, mode.backend)
				assert.Empty(t, o.Upstream.Values("Authorization"), "%s: the caller's token reached %s\n%s", name, o.Backend, strings.Join(o.Trace, "\n"))
			}
		})
	}
}

// Issue 61: policy.auth.jwt.audiences reach agentgateway's provider; a
// token for another audience, or none, is refused with 401.
func TestAudiencesAreEnforced(t *testing.T) {
	const withAudiences = `  policy:
    auth:
      jwt: {provider: keycloak, issuer: "` + issuer + `", jwksURI: "` + issuer + `/certs", teamClaim: team, audiences: [https://models.example.com, llm-router]}
`
	aud := func(a any) *simulate.Token {
		tok := team("platform")
		if a != nil {
			tok.Claims["aud"] = a
		}
		return tok
	}
	m := gateway(t, nil, router("chat", poolMode+withAudiences))
	expect(t, m, chat("qwen3-32b", aud("https://other.example/mcp")), http.StatusUnauthorized, "")
	expect(t, m, chat("qwen3-32b", aud(nil)), http.StatusUnauthorized, "")
	expect(t, m, chat("qwen3-32b", aud("llm-router")), http.StatusOK, "InferencePool/chat-qwen3-pool")
	expect(t, m, chat("qwen3-32b", aud([]any{"x", "https://models.example.com"})), http.StatusOK, "InferencePool/chat-qwen3-pool")
	m = gateway(t, nil, router("chat", poolMode+auth))
	expect(t, m, chat("qwen3-32b", aud("https://other.example/mcp")), http.StatusOK, "InferencePool/chat-qwen3-pool")
}

// A pool is sent the name its runtime serves on the rules that bring it
// other names (the BackendNameMatch rule of a published id other than the
// served name): the rule's body transformation rewrites the model. A
// foreign AgentgatewayPolicy with inheritance Override that sets a
// transformation on the Gateway locks the field, and the pool is sent the
// client's name again: a documented prerequisite the router cannot defend,
// reported by the controller as OverridingPolicy.
func TestServedModelNameAndAForeignOverride(t *testing.T) {
	o := expect(t, gateway(t, nil, router("chat", poolMode)), chat("qwen3-32b", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
	assert.Equal(t, "qwen3", o.UpstreamModel, "qwen's runtime serves qwen3 (its InferenceService's name), not the published qwen3-32b")
	o = expect(t, gateway(t, nil, router("chat", poolMode)), chat("llama", nil), http.StatusOK, "InferencePool/chat-llama3-pool")
	assert.Equal(t, "llama3", o.UpstreamModel, "llama is published under its backend name; its runtime serves llama3")

	overrideTransform := gatewayOverride(t, "theirs", `    transformation:
      request:
        set: [{name: x-tenant, value: '"platform"'}]
`)
	o = expect(t, gateway(t, overrideTransform, router("chat", poolMode)), chat("qwen3-32b", nil), http.StatusOK, "InferencePool/chat-qwen3-pool")
	assert.Equal(t, "qwen3-32b", o.UpstreamModel, "the Override locks the transformation: the router's rewrite does not run")
}

// The served-model rewrite beside another router and a foreign policy on
// one Gateway, with a client forging the team header (issue 61): the
// rewritten rule's own transformation replaces the route's, so it must
// still set the verified team, remove the caller's token and keep the
// allowlist; the other router's requests are not rewritten by ours.
func TestServedModelRewriteBesideAnotherRouterWithAForgedTeam(t *testing.T) {
	const foreignAllow = `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: theirs, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  traffic:
    transformation:
      request:
        set: [{name: x-tenant, value: '"acme"'}]
`
	secured := router("chat", strings.Replace(poolMode, "{name: gw}", "{name: gw, hostnames: [chat.example]}", 1)+auth)
	open := router("models", `  agentGatewayRef: {name: gw, hostnames: [models.example]}
  backends:
    - {name: llama, inferenceServiceRef: {name: llama3}, endpointPicker: {service: {name: other-epp, port: 9002}}}
  defaultRouteStrategy: BackendNameMatch
`)
	m := gateway(t, testenv.Objects(t, foreignAllow), secured, open)
	forged := func(model, tm, host string) simulate.Request {
		r := chat(model, team(tm))
		r.Host = host
		r.Headers = http.Header{"X-Llmkube-Team": {"platform"}}
		return r
	}
	// research may use qwen3-32b: served by its pool under the name the
	// runtime serves, with the verified team and no token.
	o := expect(t, m, forged("qwen3-32b", "research", "chat.example"), http.StatusOK, "InferencePool/chat-qwen3-pool")
	assert.Equal(t, "qwen3", o.UpstreamModel)
	assert.Equal(t, []string{"research"}, o.Upstream.Values("X-Llmkube-Team"), "the forged team header must be replaced by the verified one\n%s", strings.Join(o.Trace, "\n"))
	assert.Empty(t, o.Upstream.Values("Authorization"), "the caller's token reached the pool")
	// research may not use llama, whatever team header it sends.
	expect(t, m, forged("llama", "research", "chat.example"), http.StatusForbidden, "")
	// The other router on the Gateway: its pool is sent its own name, by its
	// own rule, and the chat router's policies do not reach it.
	o = expect(t, m, forged("llama", "research", "models.example"), http.StatusOK, "InferencePool/models-llama3-pool")
	assert.Equal(t, "models", strings.TrimPrefix(o.Router, "ns/"))
	assert.Equal(t, "llama3", o.UpstreamModel)
}
