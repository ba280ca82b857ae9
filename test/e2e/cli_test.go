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
