package aigateway

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const healthRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3, namespace: ml}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: eg}
  backends:
`

func healthWarnings(t *testing.T, backends string) ([]string, *unstructured.Unstructured) {
	t.Helper()
	_, res, diags := compileYAML(t, healthRouter+backends+"  defaultRoute: b\n")
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	var got []string
	for _, d := range diags.Warnings() {
		if d.Reason == "ActiveHealthCheckNotApplied" {
			got = append(got, d.Field)
		}
	}
	var btp *unstructured.Unstructured
	for _, o := range res.Objects {
		if o.GetKind() == "BackendTrafficPolicy" {
			btp = o
		}
	}
	return got, btp
}

// TestActiveHealthCheckNotAppliedOnlyWhenAsked: a credentialed provider is
// never probed by the gateway, but the warning is for a healthCheck the spec
// set; a provider without credentials is probed like a local backend.
func TestActiveHealthCheckNotAppliedOnlyWhenAsked(t *testing.T) {
	got, _ := healthWarnings(t, `    - name: b
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
`)
	assert.Empty(t, got, "no healthCheck was written")

	got, _ = healthWarnings(t, `    - name: b
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
      healthCheck: {intervalSeconds: 30}
`)
	assert.Equal(t, []string{"spec.backends[0].healthCheck"}, got)

	got, btp := healthWarnings(t, `    - name: b
      external: {provider: litellm, model: qwen, url: "http://10.0.0.7:4000"}
`)
	assert.Empty(t, got, "nothing keeps the gateway from probing a backend without credentials")
	require.NotNil(t, btp)
	path, _, _ := unstructured.NestedString(btp.Object, "spec", "healthCheck", "active", "http", "path")
	assert.Equal(t, "/health/liveliness", path)
}

// TestNoFallThroughIsOneWarningPerRouter: many rules without failClosed make
// one warning that names them, not one each.
func TestNoFallThroughIsOneWarningPerRouter(t *testing.T) {
	spec := healthRouter + "    - name: b\n      inferenceServiceRef: {name: qwen3}\n  rules:\n"
	for i := range 14 {
		spec += fmt.Sprintf("    - name: r%d\n      match: {models: [m%d]}\n      route: {backends: [b]}\n", i, i)
	}
	_, _, diags := compileYAML(t, spec+"  defaultRoute: b\n")
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	var got []string
	for _, d := range diags.Warnings() {
		if d.Reason == "NoFallThroughOnGateway" {
			got = append(got, d.Field+": "+d.Message)
		}
	}
	require.Len(t, got, 1)
	assert.Contains(t, got[0], `spec.rules: on the gateway a matched rule never falls through: when every backend of one of the 14 rules "r0", "r1",`)
	assert.Contains(t, got[0], `"r9" and 4 more is down`)
}
