package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

// cliRun runs the built llmkube-compile binary as a user would, with stdin,
// and returns its exit code, stdout and stderr.
func cliRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t, "llmkube-compile"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("running llmkube-compile: %v", err)
	return 0, "", ""
}

// TestCLIProcess drives the llmkube-compile binary through what a GitOps
// pipeline does: render a directory recursively into a namespace, validate
// positional files, diff against the rendered manifests on stdin with
// kubectl diff's exit codes, and fail on warnings when asked to.
func TestCLIProcess(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "refs")
	require.NoError(t, os.Mkdir(sub, 0o700))
	router := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat}\nspec:\n  backends: [{name: llama, inferenceServiceRef: {name: llama-3.1-8b}}]\n  defaultRoute: llama\n"
	isvc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: {name: llama-3.1-8b}\nspec: {runtime: llamacpp}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "router.yaml"), []byte(router), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "isvc.yaml"), []byte(isvc), 0o600))

	code, rendered, stderr := cliRun(t, "", "render", "-R", "-n", "ml", "-f", dir)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, rendered, `"url": "http://llama-3-1-8b.ml.svc.cluster.local:8080"`, "the operator's Service name for a dotted InferenceService")

	code, _, stderr = cliRun(t, "", "validate", "-n", "ml", filepath.Join(dir, "router.yaml"), filepath.Join(sub, "isvc.yaml"))
	assert.Equal(t, 0, code, stderr)

	code, out, stderr := cliRun(t, rendered, "diff", "-R", "-n", "ml", "-f", dir, "--against", "-")
	assert.Equal(t, 0, code, stderr+out)
	code, out, _ = cliRun(t, rendered, "diff", "-R", "-n", "other", "-f", dir, "--against", "-")
	assert.Equal(t, 1, code, "a difference")
	assert.Contains(t, out, "+++ b/Deployment.apps other/chat-router-proxy")
	code, _, _ = cliRun(t, "{not yaml", "diff", "-R", "-n", "ml", "-f", dir, "--against", "-")
	assert.Equal(t, 3, code, "an unparsable --against")

	code, out, stderr = cliRun(t, "", "render", "--warnings-as-errors", "-n", "ml", "-f", filepath.Join(dir, "router.yaml"))
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "InferenceServiceNotFound")

	code, _, stderr = cliRun(t, "", "validate", "--bogus")
	assert.Equal(t, 2, code, stderr)
	code, out, _ = cliRun(t, "", "completion", "zsh")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "compdef")
}

// TestCLINeighbourChecks: `validate` with other teams' gateway objects on
// the command line refuses what the controller would report on the router
// (targets.Neighbours, one implementation): a JWT router beside another
// team's AIGatewayRoute on a common host of its Gateway (a lockout), and a
// foreign Override policy selecting the agentgateway Gateway by label. The
// same router with hostnames disjoint from the foreign route's, or the
// policy's selector missing the Gateway's labels, is valid.
func TestCLINeighbourChecks(t *testing.T) {
	dir := t.TempDir()
	isvc := writeFile(t, dir, "isvc.yaml", "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: {name: qwen3, namespace: ml}\nspec: {runtime: vllm}\n")
	router := func(hosts string) string {
		return `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: secure, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: ai-gateway, namespace: gw` + hosts + `}
  backends: [{name: q, inferenceServiceRef: {name: qwen3}}]
  defaultRoute: q
  policy:
    auth:
      jwt: {provider: corp, issuer: "https://issuer.example", jwksURI: "https://issuer.example/certs", teamClaim: team}
`
	}
	theirs := writeFile(t, dir, "theirs.yaml", `apiVersion: aigateway.envoyproxy.io/v1beta1
kind: AIGatewayRoute
metadata: {name: chatbot, namespace: other}
spec:
  parentRefs: [{name: ai-gateway, namespace: gw}]
  hostnames: [chat.example.com]
  rules: [{backendRefs: [{name: openai}]}]
`)
	code, _, stderr := cliRun(t, "", "validate", "-f", writeFile(t, dir, "open.yaml", router("")), "-f", isvc, "-f", theirs)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "spec.gatewayRef")
	assert.Contains(t, stderr, "AIGatewayRoute other/chatbot")
	assert.Contains(t, stderr, "(GatewaySharedWithAuth)")
	code, _, stderr = cliRun(t, "", "validate", "-f", writeFile(t, dir, "same.yaml", router(`, hostnames: ["*.example.com"]`)), "-f", isvc, "-f", theirs)
	assert.Equal(t, 1, code, "a wildcard over their host: %s", stderr)
	code, _, stderr = cliRun(t, "", "validate", "-f", writeFile(t, dir, "apart.yaml", router(`, hostnames: [models.example.com]`)), "-f", isvc, "-f", theirs)
	assert.Equal(t, 0, code, "disjoint hostnames: %s", stderr)
	assert.NotContains(t, stderr, "IgnoredObject", "the foreign route is read, not ignored")

	agw := writeFile(t, dir, "agw.yaml", `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: pool, namespace: ml}
spec:
  dataPlane: AgentGateway
  agentGatewayRef: {name: agw, namespace: ml, endpointPicker: epp, endpointPickerPort: 9002}
  backends: [{name: q, inferenceServiceRef: {name: qwen3}}]
  defaultRoute: q
  policy:
    auth:
      jwt: {provider: corp, issuer: "https://issuer.example", jwksURI: "https://issuer.example/certs", teamClaim: team}
      allowlists: [{team: platform}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: agw, namespace: ml, labels: {tier: shared}}
spec: {gatewayClassName: agentgateway, listeners: [{name: http, port: 80, protocol: HTTP}]}
`)
	override := func(labels string) string {
		return writeFile(t, dir, "override-"+labels+".yaml", `apiVersion: agentgateway.dev/v1alpha1
kind: AgentgatewayPolicy
metadata: {name: open-all, namespace: ml}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {tier: `+labels+`}}]
  strategy: {inheritance: Override}
  traffic:
    authorization: {action: Allow, policy: {matchExpressions: ["true"]}}
`)
	}
	code, _, stderr = cliRun(t, "", "validate", "-f", agw, "-f", isvc, "-f", override("shared"))
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "spec.agentGatewayRef")
	assert.Contains(t, stderr, "(OverridingPolicy)")
	code, _, stderr = cliRun(t, "", "validate", "-f", agw, "-f", isvc, "-f", override("private"))
	assert.Equal(t, 0, code, "a selector the Gateway's labels miss: %s", stderr)
}

// writeFile writes body to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// repoPath is the path of elem in the repository.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(append([]string{root}, elem...)...)
}
