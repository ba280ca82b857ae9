package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoutingTestExamplesProcess runs every shipped routing test,
// examples/tests/<name>.test.yaml against examples/<name>.yaml (or, without
// one, the routers in the test file itself), with the llmkube-compile
// binary as CI would: each must pass.
func TestRoutingTestExamplesProcess(t *testing.T) {
	files, err := filepath.Glob(repoPath(t, "examples", "tests", "*.test.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".test.yaml")
		t.Run(name, func(t *testing.T) {
			args := []string{"test", "-f", f, "--coverage"} // routers and tests in one file
			if input := repoPath(t, "examples", name+".yaml"); fileExists(input) {
				args = []string{"test", "-f", input, "--tests", f, "--coverage"}
			}
			code, out, stderr := cliRun(t, "", args...)
			assert.Equal(t, 0, code, "%s\n%s", out, stderr)
			assert.Contains(t, out, "PASS: ")
		})
	}
}

// TestRoutingTestProcess is what a new user meets: a test of the
// quickstart router that fails is explained, JUnit XML is written, a bad
// test file is refused with file, test, field path and reason (exit 3),
// coverage below --fail-under fails, and explain shows a decision.
func TestRoutingTestProcess(t *testing.T) {
	dir := t.TempDir()
	failing := quickstartTest(t, dir, "failing.yaml", "mine", `  cases:
    - name: pii goes to the cloud (wrong on purpose)
      request:
        model: qwen3-coder
        headers: {x-llmkube-classification: pii}
      expect: {backend: cloud-opus}
    - name: cloud model
      request: {model: claude-opus-4}
      expect: {backend: cloud-opus}
`)
	code, out, stderr := testQuickstart(t, "--tests", failing)
	assert.Equal(t, 1, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "FAIL mine/pii goes to the cloud (wrong on purpose) [Proxy]")
	assert.Contains(t, out, "backend local-qwen of team-a/chat answered, want cloud-opus of team-a/chat")
	assert.Contains(t, out, "rule \"pii-stays-local\"", "the failure shows what the router-proxy did")
	assert.Contains(t, out, "FAIL: 1 passed, 1 failed")

	code, out, stderr = testQuickstart(t, "--tests", failing, "-o", "junit")
	assert.Equal(t, 1, code, stderr)
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &suites), out)
	assert.Equal(t, 1, suites.Failures)
	assert.Contains(t, out, `<testsuite name="mine [Proxy]"`)

	bad := quickstartTest(t, dir, "bad.yaml", "bad", `  cases:
    - name: typo
      request: {model: qwen3-coder, hedaers: {a: b}}
      expect: {backend: no-such-backend, status: "200"}
`)
	code, out, stderr = testQuickstart(t, "--tests", bad)
	assert.Equal(t, 3, code, out+stderr)
	assert.Empty(t, out)
	assert.Contains(t, stderr, bad+": RoutingTest/bad: spec.cases[0].request.hedaers: unknown field \"hedaers\"")
	assert.Contains(t, stderr, "(UnknownField)")
	assert.Contains(t, stderr, "spec.cases[0].expect.status: must be an HTTP status code")

	unknown := writeFile(t, dir, "unknown.yaml", strings.Replace(string(must(os.ReadFile(failing))), "backend: cloud-opus}\n    - name: cloud", "backend: gpt-9}\n    - name: cloud", 1))
	code, _, stderr = testQuickstart(t, "--tests", unknown)
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, "spec.cases[0].expect.backend: ModelRouter team-a/chat has no backend \"gpt-9\"")
	assert.Contains(t, stderr, "(UnknownBackend)")

	code, out, _ = testQuickstart(t, "--tests", repoPath(t, "examples", "tests", "quickstart.test.yaml"), "--fail-under", "100")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "never exercised: rules code")

	// JUnit keeps the coverage (properties) and --fail-under writes its
	// failure into the XML, so a CI job reading only the XML sees it.
	code, out, _ = testQuickstart(t, "--tests", repoPath(t, "examples", "tests", "quickstart.test.yaml"), "--coverage", "--fail-under", "100", "-o", "junit")
	assert.Equal(t, 1, code, out)
	var xmlOut struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name       string `xml:"name,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(out), &xmlOut), out)
	assert.Equal(t, 1, xmlOut.Failures, "the coverage failure counts")
	cov := xmlOut.Suites[len(xmlOut.Suites)-1]
	require.Equal(t, "coverage", cov.Name)
	props := map[string]string{}
	for _, p := range cov.Properties {
		props[p.Name] = p.Value
	}
	assert.Contains(t, props["coverage.team-a/chat.missedRules"], "code")
	assert.NotEmpty(t, props["coverage.team-a/chat.percent"])
	for _, k := range []string{"missedTeams", "missedAllowlists"} {
		assert.Contains(t, props, "coverage.team-a/chat."+k)
	}
	require.Len(t, cov.Cases, 1)
	assert.NotNil(t, cov.Cases[0].Failure)
	code, out, _ = testQuickstart(t, "--tests", repoPath(t, "examples", "tests", "quickstart.test.yaml"), "--fail-under", "100", "-o", "json")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `"coverageFailures": [`)

	code, _, stderr = testQuickstart(t, "-o", "yaml")
	assert.Equal(t, 2, code, stderr)

	code, out, stderr = cliRun(t, "", "explain", "-f", repoPath(t, "examples", "quickstart.yaml"), "--model", "qwen3-coder", "-H", "x-llmkube-classification: pii", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "== Proxy")
	assert.Contains(t, out, "=> status 200, backend local-qwen of team-a/chat, rule \"pii-stays-local\"")
	assert.Contains(t, out, "classification: pii, from header", "the Proxy trace shows the classification")
	assert.Contains(t, out, "rule \"pii-stays-local\" matches and serves", "and the rules, in order")
	code, out, stderr = cliRun(t, "", "explain", "-f", repoPath(t, "examples", "quickstart.yaml"), "--model", "claude-opus-4", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "rule \"pii-stays-local\" does not match\n   rule \"vision-to-cloud\" matches and serves")
	// A rule the caller's allowlist leaves no backend refuses: the trace says
	// so, not that it serves.
	code, out, stderr = cliRun(t, "", "explain", "-f", repoPath(t, "examples", "allowlist-serving.yaml"), "--model", "llama-3", "-H", "x-llmkube-classification: phi", "--claims", "team=billing", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "rule \"phi-pii-stays-local\" matches, but the caller's allowlist names the model of none of its backends: refused")
	assert.NotContains(t, out, "matches and serves")
	assert.Contains(t, out, "=> status 403")

	// The content classifier runs in explain on the Proxy plane: an
	// unlabelled card number is classified and served locally.
	classifier := repoPath(t, "examples", "content-classifier.yaml")
	code, out, stderr = cliRun(t, "", "explain", "-f", classifier, "--model", "qwen3-32b", "--prompt", "Charge 4539 1488 0343 6467 today", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "classification: pii, from detector (detectors: payment-card)")
	assert.Contains(t, out, "=> status 200, backend local-qwen of support/support-chat, rule \"sensitive-local-only\"")
	code, out, stderr = cliRun(t, "", "explain", "-f", classifier, "--model", "qwen3-32b", "--prompt", "Where is order 4111111111111112?", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "classification:")
	assert.Contains(t, out, "backend cloud-gpt of support/support-chat")

	// --api: the prompt in the protocol's shape, on its path; the
	// router-proxy classifies it and says what the backend was sent.
	code, out, stderr = cliRun(t, "", "explain", "-f", classifier, "--model", "qwen3-32b", "--api", "messages", "--prompt", "My SSN is 536-22-8410", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "=> status 200, backend local-qwen of support/support-chat, rule \"sensitive-local-only\"")
	assert.Contains(t, out, "POST /v1/messages reached backend local-qwen as /v1/chat/completions")
	code, out, stderr = cliRun(t, "", "explain", "-f", classifier, "--model", "qwen3-32b", "--api", "responses", "--prompt", "My SSN is 536-22-8410", "--data-plane", "Proxy")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "POST /v1/responses reached backend local-qwen as /v1/chat/completions")
	code, _, stderr = cliRun(t, "", "explain", "-f", classifier, "--model", "qwen3-32b", "--api", "anthropic")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--api must be chat, messages or responses")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// testQuickstart runs `llmkube-compile test -f examples/quickstart.yaml`
// with args.
func testQuickstart(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliRun(t, "", append([]string{"test", "-f", repoPath(t, "examples", "quickstart.yaml")}, args...)...)
}

// quickstartTest writes dir/file: a RoutingTest named name of the
// quickstart router (team-a/chat), its spec going on with rest.
func quickstartTest(t *testing.T, dir, file, name, rest string) string {
	t.Helper()
	return writeFile(t, dir, file, "apiVersion: routing.llmkube.dev/v1alpha1\nkind: RoutingTest\nmetadata: {name: "+name+"}\nspec:\n  router: team-a/chat\n"+rest)
}

// TestRoutingTestRefusesWhatItWouldIgnore: a case-level data plane that no
// run tests, a --tests file that holds no RoutingTest, and the compiler's
// warnings are each said, not skipped (issue 50); --warnings-as-errors
// makes the warnings fail the run as it does for render.
func TestRoutingTestRefusesWhatItWouldIgnore(t *testing.T) {
	dir := t.TempDir()
	typo := quickstartTest(t, dir, "typo.yaml", "typo", `  cases:
    - name: on a plane that does not exist
      dataPlanes: [Envoy]
      request: {model: claude-opus-4}
      expect: {backend: cloud-opus}
`)
	code, out, stderr := testQuickstart(t, "--tests", typo)
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "spec.cases[0].dataPlanes[0]")
	assert.Contains(t, stderr, "(UnknownDataPlane)")
	assert.NotContains(t, out, "PASS")

	testsDir := filepath.Join(dir, "tests")
	require.NoError(t, os.Mkdir(testsDir, 0o755))
	writeFile(t, testsDir, "misspelt.yaml", `apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTests
metadata: {name: misspelt}
spec: {router: team-a/chat, cases: [{name: x, request: {model: m}, expect: {status: 200}}]}
`)
	code, out, stderr = testQuickstart(t, "--tests", testsDir)
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "misspelt.yaml")
	assert.Contains(t, stderr, `has no kind "RoutingTests"`)
	assert.Contains(t, stderr, "(UnknownKind)")
	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	writeFile(t, other, "configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	code, out, stderr = testQuickstart(t, "--tests", other)
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "kinds found: ConfigMap")
	assert.Contains(t, stderr, "(NoRoutingTest)")

	// A run in which every case was skipped tested nothing: it fails.
	skipped := quickstartTest(t, dir, "skipped.yaml", "skipped", `  dataPlanes: [Gateway]
  cases:
    - {name: x, request: {model: claude-opus-4}, expect: {backend: cloud-opus}}
`)
	code, out, stderr = testQuickstart(t, "--tests", skipped)
	assert.Equal(t, 1, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "FAIL: 0 passed, 0 failed, 1 skipped")
	assert.Contains(t, stderr, "nothing was tested")
	// Our group with another kind, in the inputs, is a misspelt test.
	code, _, stderr = testQuickstart(t, "-f", filepath.Join(testsDir, "misspelt.yaml"))
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "(UnknownKind)")

	// A router with a warning (hybrid mode, no rule for phi).
	warned := writeFile(t, dir, "warned.yaml", `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: warned, namespace: ns}
spec:
  backends:
    - {name: local, tier: local, external: {provider: litellm, model: qwen, url: "http://qwen.models.svc:8000"}}
  rules:
    - {name: pii, failClosed: true, match: {dataClassification: [pii]}, route: {backends: [local]}}
  defaultRoute: local
  policy:
    classification: {mode: hybrid}
---
apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: warned}
spec:
  router: ns/warned
  dataPlanes: [Proxy]
  cases:
    - {name: served, request: {model: qwen}, expect: {backend: local}}
`)
	code, out, stderr = cliRun(t, "", "test", "-f", warned)
	assert.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "(DetectorClassUnrouted)", "test shows the compiler's warnings")
	code, out, stderr = cliRun(t, "", "test", "-f", warned, "--warnings-as-errors")
	assert.Equal(t, 3, code, "%s\n%s", out, stderr)
	assert.Contains(t, stderr, "(DetectorClassUnrouted)")
	code, _, stderr = cliRun(t, "", "explain", "-f", warned, "--model", "qwen", "--warnings-as-errors")
	assert.NotEqual(t, 0, code, stderr)
}

// TestWeightedCasesAreDeterministic: a case on a weighted rule asserts the
// set it draws from (backend: [a, b]) and passes on every run and plane,
// with no DIFF; asserting one backend of the split fails on every run and
// plane, saying why, instead of passing by chance (issue 50, item 1).
func TestWeightedCasesAreDeterministic(t *testing.T) {
	dir := t.TempDir()
	set := writeFile(t, dir, "set.yaml", weightedRouter)
	one := writeFile(t, dir, "one.yaml", strings.Replace(weightedRouter, "backend: [a, b], rule: split", "backend: a, rule: split", 1))
	for range 10 {
		code, out, stderr := cliRun(t, "", "test", "-f", set)
		require.Equal(t, 0, code, "%s\n%s", out, stderr)
		assert.NotContains(t, out, "DIFF")
		code, out, stderr = cliRun(t, "", "test", "-f", one)
		require.Equal(t, 1, code, "%s\n%s", out, stderr)
		assert.Contains(t, out, `rule "split" is weighted over a, b: which one serves is chance`)
		assert.Contains(t, out, "FAIL: 2 passed, 2 failed")
	}
}

const weightedRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: ab, namespace: ns}
spec:
  gatewayRef: {name: gw}
  backends:
    - {name: a, tier: local, external: {provider: litellm, model: qwen, url: "http://a.models.svc:8000"}}
    - {name: b, tier: local, external: {provider: litellm, model: qwen, url: "http://b.models.svc:8000"}}
  rules:
    - name: split
      match: {models: [qwen]}
      route: {strategy: weighted, backends: [a, b]}
  defaultRoute: a
---
apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: ab}
spec:
  router: ns/ab
  dataPlanes: [Proxy, Gateway]
  cases:
    - {name: one of the split, request: {model: qwen}, expect: {backend: [a, b], rule: split}}
    - {name: b down, down: [b], request: {model: qwen}, expect: {backend: a, rule: split}}
`

// TestAgentGatewayListenerAndDown: a router on an agentgateway listener
// (agentGatewayRef.sectionName) is answered on it, as on the other planes
// (it was 404 "no route matches"), and a backend down means there what it
// means on the router-proxy: its InferenceService not ready, so the
// controller routes the rule to the next ready backend (issue 50, items 2, 3).
func TestAgentGatewayListenerAndDown(t *testing.T) {
	f := writeFile(t, t.TempDir(), "agw.yaml", agentGatewayListenerRouter)
	code, out, stderr := cliRun(t, "", "test", "-f", f, "-v")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "ok   agw/code [AgentGateway]: 200 from qwen (rule code)")
	assert.Contains(t, out, "ok   agw/qwen down [AgentGateway]: 200 from llama (rule code)")
	assert.Contains(t, out, "ok   agw/qwen down [Proxy]: 200 from llama (rule code)")
	assert.NotContains(t, out, "DIFF")
}

// readyQwenAndLlama are two Ready InferenceServices in namespace ml,
// qwen3 and llama, for the routers below.
const readyQwenAndLlama = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3, namespace: ml}
spec: {modelRef: qwen3, runtime: vllm, endpoint: {port: 8000}}
status: {phase: Ready, readyReplicas: 1, desiredReplicas: 1}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama, namespace: ml}
spec: {modelRef: llama, runtime: vllm, endpoint: {port: 8000}}
status: {phase: Ready, readyReplicas: 1, desiredReplicas: 1}
---
`

const agentGatewayListenerRouter = readyQwenAndLlama + `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: AgentGateway
  agentGatewayRef:
    name: agw
    sectionName: llm
    endpointPicker: qwen3-epp
    endpointPickerPort: 9002
  backends:
    - {name: qwen, displayName: qwen3, inferenceServiceRef: {name: qwen3}}
    - {name: llama, displayName: llama, inferenceServiceRef: {name: llama}, endpointPicker: {service: {name: llama-epp, port: 9002}}}
  rules:
    - {name: code, match: {models: [qwen3]}, route: {backends: [qwen, llama]}}
  defaultRoute: llama
---
apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: agw}
spec:
  router: ml/chat
  cases:
    - {name: code, request: {model: qwen3}, expect: {backend: qwen, rule: code}}
    - {name: default, request: {model: other}, expect: {backend: llama}}
    - {name: qwen down, down: [qwen], request: {model: qwen3}, expect: {backend: llama, rule: code}}
`

// TestHeaderAssertionsByValue: forwarded as a map asserts each header's
// value at the backend, on every plane (content-type included, as clients
// send it), and callerTokenForwarded: false that the caller's own token did
// not reach a provider whatever key the provider gets (issue 50, item 8);
// a case's token names the router's audience (mcpServer.resourceURL here)
// unless it names another (issue 61).
func TestHeaderAssertionsByValue(t *testing.T) {
	dir := t.TempDir()
	values := writeFile(t, dir, "values.yaml", headerValuesTest)
	code, out, stderr := cliRun(t, "", "test", "-f", repoPath(t, "examples", "shared-gateway.yaml"), "--tests", values)
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	wrong := writeFile(t, dir, "wrong.yaml", strings.Replace(headerValuesTest, "x-llmkube-team: blue", "x-llmkube-team: platform", 1))
	code, out, _ = cliRun(t, "", "test", "-f", repoPath(t, "examples", "shared-gateway.yaml"), "--tests", wrong)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `header x-llmkube-team reaches the backend as ["blue"], want "platform"`)

	token := writeFile(t, dir, "token.yaml", `apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: token}
spec:
  router: ml/agents
  dataPlanes: [Proxy]
  cases:
    - name: the provider gets its own key, never the caller's token or the team header
      request: {model: gpt-5, token: {claims: {team: platform}}}
      expect: {backend: gpt, notForwarded: [x-llmkube-team], callerTokenForwarded: false}
    - name: an in-cluster model gets the verified team
      request: {model: qwen3-32b, token: {claims: {team: research}}}
      expect: {backend: qwen, forwarded: {x-llmkube-team: research}}
    - name: a token minted for another service is refused on the HTTP API (issue 61)
      request: {model: qwen3-32b, token: {claims: {team: research, aud: "https://other.example/mcp"}}}
      expect: {status: 401, error: invalid_token, wwwAuthenticate: 'error="invalid_token"'}
    - name: so is one naming no audience
      request: {model: qwen3-32b, token: {claims: {team: research, aud: null}}}
      expect: {status: 401, error: invalid_token}
`)
	code, out, stderr = cliRun(t, "", "test", "-f", repoPath(t, "testdata", "mcp-server", "input.yaml"), "--tests", token)
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
}

const headerValuesTest = `apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: values}
spec:
  router: ml/tenants
  dataPlanes: [Proxy, Gateway]
  cases:
    - name: the backend receives the verified team and content-type
      request:
        model: qwen3
        headers: {x-llmkube-team: platform}
        token: {claims: {team: blue}}
      expect: {backend: qwen, forwarded: {x-llmkube-team: blue, content-type: application/json}}
`

// TestHintsLeadToARouterThatCompiles: on Gateway and AgentGateway, doing
// what an error's hint says gives a router that compiles, not the next
// error (issue 50, item 9: BackendTimeoutsDiffer then
// BudgetSpansTrafficPolicies; agentGatewayRef.endpointPicker then
// PickerSharedAcrossInferenceServices).
func TestHintsLeadToARouterThatCompiles(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := cliRun(t, "", "validate", "-f", writeFile(t, dir, "gw.yaml", hintGatewayRouter))
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "set the rule's timeout to 2m0s")
	followed := strings.Replace(hintGatewayRouter, "route: {backends: [qwen, llama]}}", "route: {backends: [qwen, llama]}, timeout: 2m0s}", 1)
	code, _, stderr = cliRun(t, "", "validate", "-f", writeFile(t, dir, "gw-followed.yaml", followed))
	assert.Equal(t, 0, code, stderr)

	code, _, stderr = cliRun(t, "", "validate", "-f", writeFile(t, dir, "agw.yaml", hintAgentGatewayRouter))
	require.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "(EndpointPickerRequired)")
	assert.NotContains(t, stderr, "or spec.agentGatewayRef.endpointPicker and endpointPickerPort", "a hint that leads to PickerSharedAcrossInferenceServices")
	followed = strings.NewReplacer(
		"{name: qwen, inferenceServiceRef: {name: qwen3}}", "{name: qwen, inferenceServiceRef: {name: qwen3}, endpointPicker: {service: {name: qwen3-epp, port: 9002}}}",
		"{name: llama, inferenceServiceRef: {name: llama}}", "{name: llama, inferenceServiceRef: {name: llama}, endpointPicker: {service: {name: llama-epp, port: 9002}}}",
	).Replace(hintAgentGatewayRouter)
	code, _, stderr = cliRun(t, "", "validate", "-f", writeFile(t, dir, "agw-followed.yaml", followed))
	assert.Equal(t, 0, code, stderr)
}

const hintGatewayRouter = readyQwenAndLlama + `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - {name: qwen, inferenceServiceRef: {name: qwen3}, timeout: 30s}
    - {name: llama, inferenceServiceRef: {name: llama}}
  rules:
    - {name: code, match: {models: [qwen3]}, route: {backends: [qwen, llama]}}
  defaultRoute: llama
  policy:
    budgets: [{name: all, scope: router, maxTokens: 1000000}]
`

const hintAgentGatewayRouter = readyQwenAndLlama + `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: AgentGateway
  agentGatewayRef: {name: agw}
  backends:
    - {name: qwen, inferenceServiceRef: {name: qwen3}}
    - {name: llama, inferenceServiceRef: {name: llama}}
  rules:
    - {name: code, match: {models: [qwen3]}, route: {backends: [qwen, llama]}}
  defaultRoute: llama
`

// TestRoutingTestRunSelectsCases: --run runs only the cases whose
// test/case name matches, as go test -run; matching none is a usage error.
func TestRoutingTestRunSelectsCases(t *testing.T) {
	in, tests := repoPath(t, "examples", "content-classifier.yaml"), repoPath(t, "examples", "tests", "content-classifier.test.yaml")
	code, out, stderr := cliRun(t, "", "test", "-f", in, "--tests", tests, "--run", "card number", "-v")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "PASS: 1 passed")
	assert.Contains(t, out, "a card number in a tool call's arguments")
	code, _, stderr = cliRun(t, "", "test", "-f", in, "--tests", tests, "--run", "no such case")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "matches no case")
}

// TestJSONOutputOfValidateAndExplain: validate -o json prints every
// diagnostic with its field path and reason (exit 1 when invalid), explain
// -o json each plane's result (issue 50, item 10).
func TestJSONOutputOfValidateAndExplain(t *testing.T) {
	f := writeFile(t, t.TempDir(), "gw.yaml", hintGatewayRouter)
	code, out, stderr := cliRun(t, "", "validate", "-o", "json", "-f", f)
	assert.Equal(t, 1, code, stderr)
	var v struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity, Field, Reason, Message string
		} `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.False(t, v.Valid)
	var reasons []string
	for _, d := range v.Diagnostics {
		reasons = append(reasons, d.Severity+" "+d.Field+" "+d.Reason)
	}
	assert.Contains(t, reasons, "error spec.rules[0].timeout BackendTimeoutsDiffer")
	code, out, _ = cliRun(t, "", "validate", "-o", "json", "-f", repoPath(t, "examples", "quickstart.yaml"))
	assert.Equal(t, 0, code)
	assert.JSONEq(t, `{"valid": true, "diagnostics": []}`, out)

	code, out, stderr = cliRun(t, "", "explain", "-o", "json", "-f", repoPath(t, "examples", "content-classifier.yaml"), "--model", "qwen3-32b", "--prompt", "SSN 536-22-8410", "--data-plane", "Proxy")
	require.Equal(t, 0, code, stderr)
	var e struct {
		Router  string `json:"router"`
		Results []struct {
			DataPlane, Backend, Rule string
			Status                   int
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &e), out)
	require.Len(t, e.Results, 1)
	assert.Equal(t, "support/support-chat", e.Router)
	assert.Equal(t, "local-qwen", e.Results[0].Backend)
	assert.Equal(t, "sensitive-local-only", e.Results[0].Rule)
}

// TestExplainField: explain-field describes a ModelRouter field from the
// embedded CRD, as kubectl explain does, and names the fields there are
// when a path is wrong (issue 50: a field reference nobody has to read Go
// types for).
func TestExplainField(t *testing.T) {
	code, out, stderr := cliRun(t, "", "explain-field", "spec.policy.classification.mode")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "FIELD: spec.policy.classification.mode <string>")
	assert.Contains(t, out, "ENUM: header-only, detector, hybrid")
	assert.Contains(t, out, "DESCRIPTION:")
	code, out, _ = cliRun(t, "", "explain-field", "spec.backends[].weight")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "MINIMUM: 0")
	code, out, _ = cliRun(t, "", "explain-field", "spec.rules")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "FIELD: spec.rules <[]Object>")
	assert.Contains(t, out, "  failClosed <boolean>")
	code, _, stderr = cliRun(t, "", "explain-field", "spec.polcy")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `spec has no field "polcy"; its fields are`)
	assert.Contains(t, stderr, "policy")
}
