package routingtest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// TestDecodeReportsEveryProblemWithItsPath: a bad test file gets what a bad
// router gets: every problem at once, with file, test and field path.
func TestDecodeReportsEveryProblemWithItsPath(t *testing.T) {
	files, diags := Decode("t.yaml", []byte(`apiVersion: routing.llmkube.dev/v1alpha2
kind: RoutingTest
metadata: {name: bad}
spec:
  router: chat
  extra: 1
  cases:
    - name: one
      request: {model: m, headers: {Authorization: Bearer x}}
      expect: {}
    - name: one
      request: {model: m, token: {invalid: "yes"}}
      expect: {status: 999, budgets: [{key: blue}], refused: X, backend: b}
`))
	assert.Empty(t, files)
	for _, d := range diags {
		assert.Equal(t, "t.yaml", d.File)
		assert.Equal(t, "RoutingTest/bad", d.Object)
	}
	assert.Equal(t, map[string]string{
		"apiVersion": "UnsupportedVersion",
		"spec.extra": "UnknownField",
		"spec.cases[0].request.headers[Authorization]": "UseToken",
		"spec.cases[0].expect":                         "RequiredField",
		"spec.cases[1].name":                           "DuplicateCase",
		"spec.cases[1].request.token.invalid":          "WrongType",
		"spec.cases[1].expect.status":                  "WrongType",
		"spec.cases[1].expect.budgets[0].name":         "RequiredField",
		"spec.cases[1].expect.refused":                 "ConflictingExpectation",
	}, diags.ReasonsByField())
}

func TestJudge(t *testing.T) {
	e := Expect{Backend: "a", Status: 200, Attempts: []string{"b", "a"}, NotForwarded: []string{"Authorization"}, Budgets: []Budget{{Name: "x", Key: "blue"}},
		set: map[string]bool{"status": true, "attempts": true, "budgets": true}}
	ok := Result{Status: 200, Router: "ns/r", Backend: "a", Attempts: []string{"b", "a"}, Budgets: []Budget{{Name: "x", Key: "blue"}}, Upstream: []string{"content-type"}}
	assert.Empty(t, judge(e, ok, "ns/r"))
	bad := ok
	bad.Router, bad.Upstream, bad.Budgets = "ns/other", []string{"authorization"}, []Budget{{Name: "x", Key: "platform"}}
	fails := judge(e, bad, "ns/r")
	require.Len(t, fails, 3)
	assert.Contains(t, fails[0], "backend a of ns/other answered, want a of ns/r")
	assert.Contains(t, fails[1], "budgets charged [x[platform]], want [x[blue]]")
	assert.Contains(t, fails[2], "header Authorization reaches the backend")
}

// TestPlanesDisagreeAreReported: one input, a case both planes serve
// differently (the router-proxy refuses a token without the team claim,
// the gateway admits it), is reported as a disagreement naming each plane.
func TestPlanesDisagreeAreReported(t *testing.T) {
	planes := planesFor(t, jwtRouter, ir.DataPlaneProxy, ir.DataPlaneGateway)
	files := decodeTests(t, jwtRouterTests+`    - name: token without a team
      request: {model: gpt-5, token: {claims: {}}}
      expect: {notForwarded: [authorization]}
`)
	require.False(t, Check(files, planes, "").HasErrors())
	rep := Run(files, planes, "")
	require.Len(t, rep.Disagreements, 1, "%+v", rep.Results)
	assert.Equal(t, "401", rep.Disagreements[0].ByPlane["Proxy"])
	assert.True(t, strings.HasPrefix(rep.Disagreements[0].ByPlane["Gateway"], "200 from a"), rep.Disagreements[0].ByPlane["Gateway"])
	assert.Equal(t, 0, rep.Failed())
}

// TestWeightedRuleIsDeterministic: a weighted rule's pick is a draw on the
// router-proxy and a fixed pick in the Gateway model; a case asserts the set
// of backends that may answer, and gets the same verdict every run on every
// plane, with no disagreement. A single backend on such a rule fails every
// time, with the way to assert it.
func TestWeightedRuleIsDeterministic(t *testing.T) {
	planes := planesFor(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: ab, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - {name: a, external: {provider: openai, model: gpt-5}, weight: 3}
    - {name: b, external: {provider: openai, model: gpt-5-mini}, weight: 1}
    - {name: c, external: {provider: openai, model: gpt-5-nano}, weight: 0}
  rules:
    - name: split
      match: {models: [chat]}
      route: {strategy: weighted, backends: [a, b, c]}
  defaultRoute: a
`, ir.DataPlaneProxy, ir.DataPlaneGateway)
	files := decodeTests(t, testsOf("ab", "ml/ab", `    - name: set
      request: {model: chat}
      expect: {backend: [b, a], rule: split}
    - name: one
      request: {model: chat}
      expect: {backend: a}
    - name: b down
      request: {model: chat}
      down: [b]
      expect: {backend: a}
    - name: attempts on a draw
      request: {model: chat}
      down: [b]
      expect: {attempts: [b, a]}
    - name: rule only
      request: {model: chat}
      expect: {rule: split}
    - name: too few
      request: {model: chat}
      expect: {backend: [a, c]}
`))
	require.False(t, Check(files, planes, "").HasErrors())
	for run := 0; run < 10; run++ {
		rep := Run(files, planes, "")
		require.Empty(t, rep.Disagreements, "run %d", run)
		verdict := map[string]bool{}
		for _, r := range rep.Results {
			verdict[r.Case+"/"+r.Plane] = r.Passed
			switch r.Case {
			case "one":
				require.Len(t, r.Failures, 1)
				assert.Contains(t, r.Failures[0], `rule "split" is weighted over a, b: which one serves is chance`)
			case "attempts on a draw":
				assert.Equal(t, []string{`rule "split" is weighted: the order of attempts is a draw; assert the backend (a list when several may answer) instead`}, r.Failures)
			case "too few":
				assert.Equal(t, []string{`rule "split" draws from a, b; backend b may answer, want a or c`}, r.Failures)
			}
		}
		assert.Equal(t, map[string]bool{
			"set/Proxy": true, "set/Gateway": true, "one/Proxy": false, "one/Gateway": false,
			"b down/Proxy": true, "b down/Gateway": true, "attempts on a draw/Proxy": false, "attempts on a draw/Gateway": false,
			"rule only/Proxy": true, "rule only/Gateway": true, "too few/Proxy": false, "too few/Gateway": false,
		}, verdict, "run %d", run)
		cov := rep.Coverage[0]
		assert.Equal(t, []string{"c"}, cov.MissedBackends, "run %d: both backends of the draw are exercised, every run", run)
	}
}

// TestAgentGatewaySectionName: a router on a named listener of its
// agentgateway Gateway (agentGatewayRef.sectionName) is reached on that
// listener; its cases answer as on the router-proxy, not 404.
func TestAgentGatewaySectionName(t *testing.T) {
	src, err := os.ReadFile("../examples/agentgateway-tenants.yaml")
	require.NoError(t, err)
	withSection := strings.Replace(string(src), "    endpointPickerPort: 9002\n", "    endpointPickerPort: 9002\n    sectionName: llm\n", 1)
	require.NotEqual(t, string(src), withSection)
	planes := planesFor(t, withSection, ir.DataPlaneProxy, ir.DataPlaneAgentGateway)
	tests, err := os.ReadFile("../examples/tests/agentgateway-tenants.test.yaml")
	require.NoError(t, err)
	files := decodeTests(t, string(tests))
	require.False(t, Check(files, planes, "").HasErrors())
	rep := Run(files, planes, "")
	assert.Empty(t, rep.Disagreements)
	assert.Equal(t, 0, rep.Failed(), "%+v", rep.Results)
	ran := 0
	for _, r := range rep.Results {
		if r.Plane == string(ir.DataPlaneAgentGateway) && r.Skipped == "" {
			ran++
			assert.NotEqual(t, 404, r.Got.Status, r.Case)
		}
	}
	assert.Positive(t, ran)
}

const downRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama-70b, namespace: ml}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama-8b, namespace: ml}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: AgentGateway
  agentGatewayRef: {name: agw}
  backends:
    - {name: big, inferenceServiceRef: {name: llama-70b}, endpointPicker: {service: {name: epp-big, port: 9002}}}
    - {name: big-too, inferenceServiceRef: {name: llama-70b}}
    - {name: small, inferenceServiceRef: {name: llama-8b}, endpointPicker: {service: {name: epp-small, port: 9002}}}
    - {name: tiny, inferenceServiceRef: {name: llama-1b}, endpointPicker: {service: {name: epp-tiny, port: 9002}}}
  rules:
    - name: pii
      failClosed: true
      match: {headers: {x-llmkube-classification: pii}}
      route: {backends: [big, small]}
  defaultRoute: tiny
`

// TestDownOnAgentGateway: down means the same on every plane. agentgateway
// fails over by readiness, so on AgentGateway the backends down are
// InferenceServices not ready and the router is compiled again; the answer
// matches the router-proxy's. A case readiness cannot express (a backend up
// on the InferenceService of one down) is skipped with the reason.
func TestDownOnAgentGateway(t *testing.T) {
	planes := planesFor(t, downRouter, ir.DataPlaneProxy, ir.DataPlaneAgentGateway)
	files := decodeTests(t, testsOf("down", "ml/chat", `    - name: big down, small answers
      request: {model: any, headers: {x-llmkube-classification: pii}}
      down: [big, big-too]
      expect: {backend: small, rule: pii}
    - name: pii fails closed when all local models are down
      request: {model: any, headers: {x-llmkube-classification: pii}}
      down: [big, big-too, small]
      expect: {status: 503}
    - name: half an InferenceService down
      request: {model: any, headers: {x-llmkube-classification: pii}}
      down: [big]
      expect: {backend: small}
`))
	require.False(t, Check(files, planes, "").HasErrors())
	rep := Run(files, planes, "")
	assert.Empty(t, rep.Disagreements)
	got := verdicts(rep, func(r CaseResult) string { return r.Skipped })
	assert.Equal(t, map[string]string{
		"big down, small answers/Proxy":                                "pass",
		"big down, small answers/AgentGateway":                         "pass",
		"pii fails closed when all local models are down/Proxy":        "pass",
		"pii fails closed when all local models are down/AgentGateway": "pass",
		"half an InferenceService down/Proxy":                          "pass",
		"half an InferenceService down/AgentGateway":                   "skip: not expressible on AgentGateway: backend big-too is up but shares InferenceService llama-70b with a backend down, and readiness is per InferenceService (add big-too to down)",
	}, got)

	// The other way round: an InferenceService the input reports not ready
	// is down on the router-proxy too, not only on AgentGateway.
	planes = planesFor(t, strings.Replace(downRouter, "metadata: {name: llama-70b, namespace: ml}\nspec: {runtime: vllm}", "metadata: {name: llama-70b, namespace: ml}\nspec: {runtime: vllm}\nstatus: {phase: Failed}", 1),
		ir.DataPlaneProxy, ir.DataPlaneAgentGateway)
	pii := files[0].Cases[0].Request
	for _, p := range planes {
		r := p.Serve("ml/chat", pii, nil)
		assert.Equal(t, "small", r.Backend, "%s: %v", p.Name, r.Trace)
	}
}

// TestFailuresPointAtTheCase: a failing case is reported with the file and
// line of the case, in the text and in JUnit.
func TestFailuresPointAtTheCase(t *testing.T) {
	files := decodeTests(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: beside}
---
apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: t}
spec:
  router: ml/r
  cases:
    - name: first
      request: {model: m}
      expect: {status: 200}

    - name: second
      request: {model: m}
      expect: {status: 404}
`)
	require.Len(t, files, 1)
	assert.Equal(t, 11, files[0].Cases[0].Line)
	assert.Equal(t, 15, files[0].Cases[1].Line)

	rep := &Report{Results: []CaseResult{{File: "t.yaml", Line: 15, Test: "t", Case: "second", Plane: "Proxy", Failures: []string{"status 200, want 404"}}}}
	var text, junit strings.Builder
	rep.WriteText(&text, false, false)
	assert.Contains(t, text.String(), "FAIL t/second [Proxy] (t.yaml:15)")
	require.NoError(t, rep.WriteJUnit(&junit, false))
	assert.Contains(t, junit.String(), `<testcase name="second" classname="t.Proxy" file="t.yaml" line="15">`)
}

// TestErrorCodeAndChallenge: expect.error and expect.wwwAuthenticate are
// judged on the router-proxy, whose model is the proxy itself: the code of
// the refusal body and the Bearer challenge (with error="invalid_token" for
// a bad token, none on a 403). On the Gateway plane, whose model does not
// reproduce Envoy's refusal bodies, such a case is skipped with the reason,
// never passed; a wrong expectation fails.
func TestErrorCodeAndChallenge(t *testing.T) {
	planes := planesFor(t, jwtRouter+`      allowlists: [{team: blue, models: [gpt-5]}]
`, ir.DataPlaneProxy, ir.DataPlaneGateway)
	files := decodeTests(t, jwtRouterTests+`    - name: another model
      request: {model: gpt-4o, token: {claims: {team: blue}}}
      expect: {status: 403, error: model_not_allowed, wwwAuthenticate: ""}
    - name: no token
      request: {model: gpt-5}
      expect: {status: 401, wwwAuthenticate: 'Bearer realm="llmkube"'}
    - name: a bad token
      request: {model: gpt-5, token: {claims: {team: blue}, invalid: true}}
      expect: {status: 401, error: invalid_token, wwwAuthenticate: 'error="invalid_token"'}
    - name: wrong code
      dataPlanes: [Proxy]
      request: {model: gpt-4o, token: {claims: {team: blue}}}
      expect: {error: fail_closed}
`)
	rep := Run(files, planes, "")
	got := verdicts(rep, func(r CaseResult) string {
		assert.Contains(t, r.Skipped, "does not reproduce", r.Case)
		return ""
	})
	assert.Equal(t, map[string]string{
		"another model/Proxy": "pass", "another model/Gateway": "skip",
		"no token/Proxy": "pass", "no token/Gateway": "skip",
		"a bad token/Proxy": "pass", "a bad token/Gateway": "skip",
		"wrong code/Proxy": `fail: error code "model_not_allowed", want "fail_closed"`,
	}, got)
	assert.Equal(t, 1, rep.Failed())
}

// TestCoverageCountsTeamsAndAllowlistEntries: a team is covered when a
// case's verified caller is that team, an allowlist entry when such a
// caller asks for a model it lists (allowed or refused); an invalid token
// covers nothing. The text report names what no case exercised.
func TestCoverageCountsTeamsAndAllowlistEntries(t *testing.T) {
	planes := planesFor(t, jwtRouter+`      allowlists:
        - {team: blue, models: [gpt-5]}
        - {team: green}
        - {team: red, models: [gpt-5]}
`, ir.DataPlaneProxy)
	files := decodeTests(t, jwtRouterTests+`    - name: blue on a model not listed
      request: {model: o3, token: {claims: {team: blue}}}
      expect: {status: 403}
    - name: green, any model
      request: {model: o3, token: {claims: {team: green}}}
      expect: {status: 200}
    - name: red with a bad token
      request: {model: gpt-5, token: {claims: {team: red}, invalid: true}}
      expect: {status: 401}
`)
	rep := Run(files, planes, "")
	require.Len(t, rep.Coverage, 1)
	c := rep.Coverage[0]
	assert.Equal(t, []string{"blue", "green", "red"}, c.Teams)
	assert.Equal(t, []string{"red"}, c.MissedTeams)
	assert.Equal(t, []string{"blue: gpt-5", "red: gpt-5"}, c.MissedAllowlists, "a refused model covers the team, not the entry")
	assert.Equal(t, 0, rep.Failed())
	var out strings.Builder
	rep.WriteText(&out, false, true)
	assert.Contains(t, out.String(), "teams red; allowlist entries blue: gpt-5; red: gpt-5")
}

// jwtRouter is router ml/r on the Gateway plane with one backend, a, and
// JWT auth whose team claim is team; a test adds its allowlists.
const jwtRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: r, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
  defaultRoute: a
  policy:
    auth:
      jwt: {provider: p, issuer: https://i.example, jwksURI: https://i.example/k, teamClaim: team}
`

// jwtRouterTests is the head of a RoutingTest of jwtRouter; a test adds
// its cases.
var jwtRouterTests = testsOf("t", "ml/r", "")

// decodeTests decodes test files that must be valid.
func decodeTests(t *testing.T, yaml string) []*File {
	t.Helper()
	files, d := Decode("t.yaml", []byte(yaml))
	require.False(t, d.HasErrors(), "%v", d)
	return files
}

// testsOf is RoutingTest name of router (namespace/name), its cases the
// YAML list cases (indented four spaces).
func testsOf(name, router, cases string) string {
	return "apiVersion: routing.llmkube.dev/v1alpha1\nkind: RoutingTest\nmetadata: {name: " + name + "}\nspec:\n  router: " + router + "\n  cases:\n" + cases
}

// planesFor compiles one input for the given planes.
func planesFor(t *testing.T, input string, dps ...ir.DataPlane) []*Plane {
	t.Helper()
	in := &compiler.Inputs{}
	require.False(t, in.Decode("in.yaml", []byte(input)).HasErrors())
	planes, err := Planes(in, builtin.Registry(), pipeline.Options{}, dps, nil)
	require.NoError(t, err)
	return planes
}

// TestDecodeRequestHost: request.host is read, a Host header or a URL in
// host is an error with its field path.
func TestDecodeRequestHost(t *testing.T) {
	ok := testsOf("h", "chat", `    - name: ok
      request: {model: m, host: chat.example.com:8080}
      expect: {status: 200}
`)
	files, diags := Decode("t.yaml", []byte(ok+`    - name: header
      request: {model: m, headers: {Host: chat.example.com}}
      expect: {status: 200}
    - name: url
      request: {model: m, host: "https://chat.example.com/"}
      expect: {status: 200}
`))
	assert.Empty(t, files)
	assert.Equal(t, map[string]string{
		"spec.cases[1].request.headers[Host]": "UseHost",
		"spec.cases[2].request.host":          "InvalidHost",
	}, diags.ReasonsByField())
	files = decodeTests(t, ok)
	assert.Equal(t, "chat.example.com:8080", files[0].Cases[0].Request.Host)
}

// TestJudgeUpstreamModel: expect.upstreamModel is the model the backend
// was sent; an empty one is refused at decode.
func TestJudgeUpstreamModel(t *testing.T) {
	e := Expect{Backend: "a", Status: 200, UpstreamModel: "medgemma-27b", set: map[string]bool{"status": true}}
	got := Result{Status: 200, Router: "ns/r", Backend: "a", UpstreamModel: "medgemma-27b"}
	assert.Empty(t, judge(e, got, "ns/r"))
	got.UpstreamModel = "gpt-4.1"
	assert.Equal(t, []string{`the backend was sent model "gpt-4.1", want "medgemma-27b"`}, judge(e, got, "ns/r"))

	_, diags := Decode("t.yaml", []byte(testsOf("bad", "chat", `    - name: one
      request: {model: m}
      expect: {upstreamModel: ""}
`)))
	require.Len(t, diags, 1)
	assert.Equal(t, "spec.cases[0].expect.upstreamModel", diags[0].Field)
	assert.Equal(t, "RequiredField", diags[0].Reason)
}

// TestRequestAPI: request.api picks the protocol's path and a body it
// takes; the router-proxy serves it for real (a Messages request is
// translated for an OpenAI backend, a Responses request passed through to
// it), and a plane whose capability table refuses the protocol reports the
// case refused with the reason, never passed: an expectation of that
// refusal passes. An unknown api is a decode error at its field.
func TestRequestAPI(t *testing.T) {
	planes := planesFor(t, jwtRouter, ir.DataPlaneProxy, ir.DataPlaneGateway)
	files := decodeTests(t, jwtRouterTests+`    - name: messages
      request: {api: messages, model: gpt-5, token: {claims: {team: blue}}}
      expect: {backend: a}
    - name: responses
      request: {api: responses, model: gpt-5, token: {claims: {team: blue}}}
      expect: {backend: a}
    - name: messages refused
      dataPlanes: [Gateway]
      request: {api: messages, model: gpt-5}
      expect: {refused: MessagesAPIUnsupportedOnGateway}
`)
	rep := Run(files, planes, "")
	got := verdicts(rep, func(r CaseResult) string {
		assert.Contains(t, r.Skipped, "dataPlane Gateway cannot serve", r.Case)
		return strings.Join(r.Got.RefusedFor, ",")
	})
	for _, r := range rep.Results {
		if r.Plane == "Proxy" {
			want := map[string]string{"messages": "POST /v1/messages reached backend a as /v1/chat/completions", "responses": "POST /v1/responses reached backend a as /v1/responses"}[r.Case]
			assert.Contains(t, strings.Join(r.Got.Trace, "\n"), want, r.Case)
		}
	}
	assert.Equal(t, map[string]string{
		"messages/Proxy": "pass", "messages/Gateway": "skip: MessagesAPIUnsupportedOnGateway",
		"responses/Proxy": "pass", "responses/Gateway": "skip: ResponsesAPIUnsupportedOnGateway",
		"messages refused/Gateway": "pass",
	}, got)
	assert.Zero(t, rep.Failed())

	_, d := Decode("t.yaml", []byte(jwtRouterTests+`    - name: x
      request: {api: anthropic, model: gpt-5}
      expect: {status: 200}
    - name: messages error code
      request: {api: messages, model: gpt-5}
      expect: {status: 401, error: missing_token}
    - name: responses on the chat path
      request: {api: responses, path: /v1/chat/completions, model: gpt-5}
      expect: {status: 200}
    - name: count_tokens is a Messages path
      request: {api: messages, path: /v1/messages/count_tokens, model: gpt-5}
      expect: {status: 200}
`))
	assert.Equal(t, map[string]string{
		"spec.cases[0].request.api":  "UnknownAPI",
		"spec.cases[1].expect.error": "ConflictingExpectation",
		"spec.cases[2].request.path": "PathNotOfAPI",
	}, d.ReasonsByField())
}

// TestRequestAPIChatOnEveryPlane: api chat, as explain sends by default,
// is every plane's: no capability row refuses it (a field's row, which
// names no feature, included).
func TestRequestAPIChatOnEveryPlane(t *testing.T) {
	planes := planesFor(t, jwtRouter, ir.DataPlaneProxy, ir.DataPlaneGateway)
	for _, p := range planes {
		res := p.Serve("ml/r", Request{API: APIChat, Model: "gpt-5", Token: &Token{Claims: map[string]any{"team": "blue"}}}, nil)
		assert.Empty(t, res.Skipped, p.Name)
		assert.Equal(t, 200, res.Status, p.Name)
	}
}

// TestRequestAPIUsageCharged: whatever the client's protocol (Responses
// passed through to an OpenAI backend, Messages translated for it, chat),
// the routing test sees the team's budget charged.
func TestRequestAPIUsageCharged(t *testing.T) {
	planes := planesFor(t, jwtRouter+`    budgets:
      - {name: per-team, scope: team, windowSeconds: 3600, maxTokens: 100000}
`, ir.DataPlaneProxy)
	files := decodeTests(t, jwtRouterTests+`    - name: responses
      request: {api: responses, model: gpt-5, token: {claims: {team: blue}}}
      expect: {backend: a, budgets: [{name: per-team, key: blue}]}
    - name: messages
      request: {api: messages, model: gpt-5, token: {claims: {team: blue}}}
      expect: {backend: a, budgets: [{name: per-team, key: blue}]}
    - name: chat
      request: {model: gpt-5, token: {claims: {team: blue}}}
      expect: {backend: a, budgets: [{name: per-team, key: blue}]}
`)
	rep := Run(files, planes, "")
	require.Len(t, rep.Results, 3)
	for _, r := range rep.Results {
		assert.True(t, r.Passed, "%s: %v", r.Case, r.Failures)
	}
}

// verdicts maps each result of rep ("case/plane") to "pass", "fail: " and
// its failures, or "skip", followed by ": " and skip(r) when that says
// something.
func verdicts(rep *Report, skip func(r CaseResult) string) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		v := "pass"
		switch {
		case r.Skipped != "":
			v = "skip"
			if why := skip(r); why != "" {
				v += ": " + why
			}
		case !r.Passed:
			v = "fail: " + strings.Join(r.Failures, "; ")
		}
		out[r.Case+"/"+r.Plane] = v
	}
	return out
}
