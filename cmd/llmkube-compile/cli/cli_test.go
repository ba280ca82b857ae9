package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const validRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata:
  name: chat
  namespace: team-a
spec:
  backends:
    - name: local
      inferenceServiceRef: {name: qwen}
  defaultRoute: local
`

const inferenceService = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen
  namespace: team-a
spec:
  runtime: vllm
`

func TestRenderPrintsYAMLAndWarnsOnMissingReference(t *testing.T) {
	f := write(t, "r.yaml", validRouter)
	r := run(t, "", "render", "-f", f)
	require.Equal(t, ExitOK, r.code, r.stderr)
	for _, kind := range []string{"kind: ConfigMap", "kind: Deployment", "kind: Service"} {
		assert.Contains(t, r.stdout, kind)
	}
	assert.Contains(t, r.stdout, "name: chat-router-proxy-admin")
	// The InferenceService is absent: a warning, documented conventions, exit 0.
	assert.Contains(t, r.stderr, "warning: "+f+": ModelRouter/chat: spec.backends[0].inferenceServiceRef.name:")
	assert.Contains(t, r.stderr, "(InferenceServiceNotFound)")
	assert.Contains(t, r.stdout, "http://qwen.team-a.svc.cluster.local:8080")
}

// TestValidWithReferenceExits0Quietly: a valid router whose
// InferenceService is given renders and validates with no warning;
// validate prints nothing.
func TestValidWithReferenceExits0Quietly(t *testing.T) {
	f := write(t, "r.yaml", validRouter+"---\n"+inferenceService)
	for _, cmd := range []string{"render", "validate"} {
		r := run(t, "", cmd, "-f", f)
		require.Equal(t, ExitOK, r.code, "%s: %s", cmd, r.stderr)
		assert.Empty(t, r.stderr, cmd)
		if cmd == "validate" {
			assert.Empty(t, r.stdout, cmd)
		}
	}
}

func TestRenderReadsStdinAndSeveralFiles(t *testing.T) {
	isvc := write(t, "isvc.yaml", inferenceService)
	r := run(t, validRouter, "render", "-f", "-", "-f", isvc)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Contains(t, r.stdout, "kind: Deployment")
}

func TestRenderJSONIsAList(t *testing.T) {
	f := write(t, "r.yaml", validRouter)
	r := run(t, "", "render", "-f", f, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	assert.Equal(t, "List", list.Kind)
	assert.Len(t, list.Items, 4)
}

func TestRenderIsDeterministic(t *testing.T) {
	f := write(t, "r.yaml", validRouter+"---\n"+inferenceService)
	a := run(t, "", "render", "-f", f)
	b := run(t, "", "render", "-f", f)
	require.Equal(t, a.stdout, b.stdout)
}

func TestInvalidInputPrintsNothingAndExits1(t *testing.T) {
	bad := strings.Replace(validRouter, "inferenceServiceRef: {name: qwen}", "inferenceServiceRef: {name: qwen}\n      wieght: 2", 1)
	f := write(t, "bad.yaml", bad+"---\n"+inferenceService)
	for _, cmd := range []string{"render", "validate"} {
		r := run(t, "", cmd, "-f", f)
		assert.Equal(t, ExitInvalid, r.code, cmd)
		assert.Empty(t, r.stdout, cmd)
		assert.Equal(t, f+": ModelRouter/chat: spec.backends[0].wieght: unknown field; did you mean weight? (UnknownField)\n", r.stderr, cmd)
	}
}

// TestDecodeErrorsHideNothing: an unknown field and a mistyped value in one
// router, and a semantic error in another file, are all reported in one run.
func TestDecodeErrorsHideNothing(t *testing.T) {
	typo := strings.Replace(validRouter, "inferenceServiceRef: {name: qwen}", "inferenceServiceRef: {name: qwen}\n      weight: heavy\n      capabilties: [tools]", 1)
	typo = strings.Replace(typo, "defaultRoute: local", "defaultRoute: nowhere", 1)
	other := strings.Replace(validRouter, "name: chat", "name: other", 1)
	other = strings.Replace(other, "defaultRoute: local", "defaultRoute: missing", 1)
	r := run(t, "", "validate", "-f", write(t, "a.yaml", typo+"---\n"+inferenceService), "-f", write(t, "b.yaml", other))
	assert.Equal(t, ExitInvalid, r.code)
	for _, want := range []string{
		"ModelRouter/chat: spec.backends[0].weight: wrong type",
		"ModelRouter/chat: spec.backends[0].capabilties: unknown field; did you mean capabilities? (UnknownField)",
		"ModelRouter/chat: spec.defaultRoute:",
		"ModelRouter/other: spec.defaultRoute:",
	} {
		assert.Contains(t, r.stderr, want)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	f := write(t, "r.yaml", validRouter)
	cases := [][]string{
		{"render"},
		{"render", "-f", f, "-o", "xml"},
		{"render", "-f", f, "--data-plane", "Envoy"},
		{"render", "--bogus"},
		{"render", "-f", filepath.Join(t.TempDir(), "missing.yaml")},
		{"render", "-f", f, "extra-arg"},
		{"frobnicate"},
	}
	for _, args := range cases {
		r := run(t, "", args...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
		assert.Empty(t, r.stdout, "%v", args)
	}
}

func TestUnbuiltDataPlaneIsAClearError(t *testing.T) {
	f := write(t, "r.yaml", validRouter+"  agentGatewayRef:\n    name: gw\n    endpointPicker: epp\n    endpointPickerPort: 9002\n  gatewayRef:\n    name: gw\n")
	for _, dp := range []string{"Gateway", "AgentGateway"} {
		r := run(t, "", "render", "-f", f, "--data-plane", dp)
		if r.code == ExitOK {
			// The plane was built since this test was written: it must then produce objects.
			assert.NotEmpty(t, r.stdout, dp)
			continue
		}
		assert.Equal(t, ExitInvalid, r.code, dp)
		assert.Empty(t, r.stdout, dp)
		assert.Contains(t, r.stderr, "data plane "+dp+" is not implemented yet", dp)
	}
}

func TestNoRouterIsAnError(t *testing.T) {
	f := write(t, "isvc.yaml", inferenceService)
	r := run(t, "", "validate", "-f", f)
	assert.Equal(t, ExitInvalid, r.code)
	assert.Contains(t, r.stderr, "(NoModelRouter)")
}

func TestDiff(t *testing.T) {
	in := write(t, "r.yaml", validRouter+"---\n"+inferenceService)
	rendered := run(t, "", "render", "-f", in)
	require.Equal(t, ExitOK, rendered.code)
	same := write(t, "same.yaml", rendered.stdout)
	r := run(t, "", "diff", "-f", in, "--against", same)
	assert.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	assert.Empty(t, r.stdout)

	// diffRouter diffs router (a change of validRouter), with its
	// InferenceService, against the rendered manifests.
	diffRouter := func(router string) result {
		return run(t, "", "diff", "-f", write(t, "changed.yaml", router+"---\n"+inferenceService), "--against", same)
	}
	r = diffRouter(strings.Replace(validRouter, "name: chat", "name: chat\n  uid: 0d9c1e4a-1111-2222-3333-444455556666", 1))
	assert.Equal(t, ExitDiffFound, r.code)
	assert.Contains(t, r.stdout, "--- a/Deployment.apps team-a/chat-router-proxy\n+++ b/Deployment.apps team-a/chat-router-proxy\n@@ -10,6 +10,13 @@\n")
	assert.Contains(t, r.stdout, "\n+  ownerReferences:\n")
	assert.NotContains(t, r.stdout, "{", "a unified diff of YAML lines, not a struct dump")

	r = diffRouter(strings.Replace(validRouter, "name: chat\n", "name: talk\n", 1))
	assert.Equal(t, ExitDiffFound, r.code)
	assert.Contains(t, r.stdout, "--- a/Deployment.apps team-a/chat-router-proxy\n+++ /dev/null\n")
	assert.Contains(t, r.stdout, "--- /dev/null\n+++ b/Deployment.apps team-a/talk-router-proxy\n")

	// --against - reads the manifests from stdin.
	r = run(t, rendered.stdout, "diff", "-f", in, "--against", "-")
	assert.Equal(t, ExitDiffNone, r.code, r.stderr)

	// More than 1 when no diff can be made.
	bad := write(t, "bad.yaml", strings.Replace(validRouter, "defaultRoute: local", "defaultRoute: nowhere", 1))
	assert.Equal(t, ExitDiffInvalid, run(t, "", "diff", "-f", bad, "--against", same).code, "invalid input")
	assert.Equal(t, ExitDiffInvalid, run(t, "", "diff", "-f", in, "--against", filepath.Join(t.TempDir(), "none.yaml")).code, "unreadable --against")
	assert.Equal(t, ExitDiffInvalid, run(t, "", "diff", "-f", in, "--against", write(t, "junk.yaml", "{not: [yaml")).code, "unparsable --against")
	assert.Equal(t, ExitDiffUsage, run(t, "", "diff", "-f", in).code, "no --against")
}

// TestFilenameLikeKubectl: repeated -f, directories (sorted; -R for
// subdirectories), URLs, stdin and positional files.
func TestFilenameLikeKubectl(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a-router.yaml"), []byte(validRouter), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an input"), 0o600))
	sub := filepath.Join(dir, "refs")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "isvc.yml"), []byte(inferenceService), 0o600))

	r := run(t, "", "validate", "-f", dir)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stderr, "InferenceServiceNotFound", "without -R the subdirectory is not read")
	r = run(t, "", "validate", "-R", "-f", dir)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "InferenceServiceNotFound", "with -R it is")

	r = run(t, "", "validate", filepath.Join(dir, "a-router.yaml"), filepath.Join(sub, "isvc.yml"))
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr, "positional files are inputs")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/isvc.yaml" {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte(inferenceService))
	}))
	defer srv.Close()
	r = run(t, validRouter, "validate", "-f", "-", "-f", srv.URL+"/isvc.yaml")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	r = run(t, "", "validate", "-f", srv.URL+"/missing.yaml")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "404")

	// A URL that never answers fails within URLTimeout, naming the URL.
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-hang:
		case <-req.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	saved := URLTimeout
	URLTimeout = 200 * time.Millisecond
	defer func() { URLTimeout = saved }()
	r = run(t, "", "validate", "-f", slow.URL+"/hang.yaml")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, slow.URL+"/hang.yaml")

	missing := filepath.Join(dir, "missing.yaml")
	r = run(t, "", "validate", "-f", missing)
	assert.Equal(t, ExitUsage, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, missing), "the path is named once, not twice: %s", r.stderr)
}

func TestNamespaceFlag(t *testing.T) {
	noNS := strings.Replace(validRouter, "  namespace: team-a\n", "", 1)
	isvc := strings.Replace(inferenceService, "  namespace: team-a\n", "", 1)
	f := write(t, "r.yaml", noNS+"---\n"+isvc)
	r := run(t, "", "render", "-n", "ml", "-f", f)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr, "the reference without a namespace still matches its router")
	assert.Contains(t, r.stdout, "namespace: ml\n")
	r = run(t, "", "validate", "-n", "ml", "-f", write(t, "x.yaml", validRouter))
	assert.Equal(t, ExitInvalid, r.code)
	assert.Contains(t, r.stderr, "NamespaceMismatch")
}

func TestWarningsAsErrors(t *testing.T) {
	f := write(t, "r.yaml", validRouter) // its InferenceService is missing: a warning
	assert.Equal(t, ExitOK, run(t, "", "validate", "-f", f).code)
	r := run(t, "", "render", "--warnings-as-errors", "-f", f)
	assert.Equal(t, ExitInvalid, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "InferenceServiceNotFound")
	assert.NotContains(t, r.stderr, "warning:")
}

func TestCompletionAndHelp(t *testing.T) {
	r := run(t, "", "completion", "bash")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "bash completion")
	r = run(t, "", "__complete", "render", "--data-plane", "")
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "AgentGateway\nGateway\nProxy\n")
	r = run(t, "", "__complete", "render", "-o", "")
	assert.Contains(t, r.stdout, "yaml\njson\n")
	help := run(t, "", "validate", "--help").stdout
	assert.NotContains(t, help, "--proxy-image", "validate deploys nothing")
	assert.Contains(t, help, "--otlp-endpoint")
	assert.Contains(t, run(t, "", "render", "--help").stdout, "--proxy-image")
}

func TestVersionCommand(t *testing.T) {
	r := run(t, "", "version")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "llmkube-compile v"), r.stdout)
	r = run(t, "", "version", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"goVersion": "go`)
	r = run(t, "", "--version")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "llmkube-compile v"), r.stdout)
	assert.Equal(t, ExitUsage, run(t, "", "version", "-o", "xml").code)
}

func TestOTLPOperatorSetting(t *testing.T) {
	router := strings.Replace(validRouter, "  defaultRoute: local\n", "  defaultRoute: local\n  policy: {auditLog: {sink: otlp}}\n", 1)
	f := write(t, "r.yaml", router+"---\n"+inferenceService)
	r := run(t, "", "render", "-f", f)
	assert.Equal(t, ExitInvalid, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "spec.policy.auditLog.sink: sink otlp needs the operator's OTLP collector: set --otlp-endpoint")
	r = run(t, "", "render", "-f", f, "--otlp-endpoint", "http://otel.observability:4318", "--otlp-header", "x-tenant=a")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "value: http://otel.observability:4318")
	assert.Contains(t, r.stdout, "value: x-tenant=a")
	r = run(t, "", "render", "-f", f, "--otlp-endpoint", "otel:4318")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--otlp-endpoint")
}
