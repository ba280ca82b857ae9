package compiler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/platform"
)

func compileYAML(t *testing.T, doc string, opts Options) (*ir.Router, *Inputs) {
	t.Helper()
	in := &Inputs{}
	d := in.Decode("t.yaml", []byte(doc))
	require.False(t, d.HasErrors(), "%v", d.Err())
	require.Len(t, in.Routers, 1)
	r, diags := Compile(in.Routers[0].Router, in, opts)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	return r, in
}

const lowerInput = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ns, uid: 1234-abcd}
spec:
  backends:
    - name: local-vllm
      inferenceServiceRef: {name: vllm-svc}
      capabilities: [tools]
      timeout: 10m
    - name: local-llama
      inferenceServiceRef: {name: llama-svc}
      capabilities: [tools, vision]
    - name: args-vllm
      inferenceServiceRef: {name: args-svc}
    - name: cloud
      displayName: claude
      external: {provider: anthropic, model: claude-opus, credentialsSecretRef: {name: creds}}
    - name: aws
      external: {provider: bedrock, model: anthropic.claude, url: "https://bedrock-runtime.eu-west-1.amazonaws.com", credentialsSecretRef: {name: aws}}
  rules:
    - name: vision
      match: {requiredCapabilities: [vision], headers: {X-Team: a}, dataClassification: [Public]}
      route: {backends: [local-vllm, local-llama]}
      timeout: 5s
  defaultRoute: local-vllm
  proxy: {responseHeaderTimeout: 90s}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: vllm-svc, namespace: ns}
spec: {runtime: vllm, vllmConfig: {maxModelLen: 8192}, endpoint: {port: 8000}}
status:
  conditions:
    - {type: Ready, status: "False", reason: Loading, message: loading, lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama-svc, namespace: ns}
spec: {runtime: llamacpp, contextSize: 16384, parallelSlots: 4}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: args-svc, namespace: ns}
spec: {runtime: vllm, vllmConfig: {maxModelLen: 4096}, extraArgs: ["--max-model-len=65536"]}
`

func TestLowerResolvesBackends(t *testing.T) {
	r, _ := compileYAML(t, lowerInput, Options{})
	assert.Equal(t, "1234-abcd", r.UID)
	assert.Equal(t, ir.DataPlaneProxy, r.DataPlane)

	vllm, _ := r.Backend("local-vllm")
	assert.Equal(t, ir.TierLocal, vllm.Tier)
	assert.Equal(t, "http://vllm-svc.ns.svc.cluster.local:8000", vllm.Upstream.URL)
	assert.False(t, vllm.Local.Ready, "Ready=False condition")
	assert.True(t, vllm.Local.Found)
	assert.EqualValues(t, 8192, vllm.ModelInfo.ContextLength)
	assert.Equal(t, 90*time.Second, vllm.Timeout, "capped at responseHeaderTimeout")
	assert.Equal(t, []string{"text"}, vllm.ModelInfo.InputModalities)

	llama, _ := r.Backend("local-llama")
	assert.EqualValues(t, 4096, llama.ModelInfo.ContextLength, "contextSize / parallelSlots")
	assert.Equal(t, []string{"text", "image"}, llama.ModelInfo.InputModalities, "vision capability")
	assert.True(t, llama.Local.Ready)

	args, _ := r.Backend("args-vllm")
	assert.EqualValues(t, 65536, args.ModelInfo.ContextLength, "--max-model-len wins")

	cloud, _ := r.Backend("cloud")
	assert.Equal(t, ir.TierCloud, cloud.Tier, "external defaults to cloud")
	assert.Equal(t, "claude", cloud.ModelID)
	assert.Equal(t, "https://api.anthropic.com", cloud.Upstream.URL)
	assert.EqualValues(t, 443, cloud.Upstream.Port)
	require.Len(t, cloud.External.Credentials, 1)
	assert.Equal(t, "LLMKUBE_CLOUD_ANTHROPIC_API_KEY", cloud.External.Credentials[0].Env)
	assert.Equal(t, "ANTHROPIC_API_KEY", cloud.External.Credentials[0].Key)

	aws, _ := r.Backend("aws")
	assert.Equal(t, "bedrock-runtime.eu-west-1.amazonaws.com", aws.Upstream.Host)
	assert.Len(t, aws.External.Credentials, 4)
}

func TestLowerRules(t *testing.T) {
	r, _ := compileYAML(t, lowerInput, Options{})
	require.Len(t, r.Rules, 1)
	rule := r.Rules[0]
	assert.Equal(t, []string{"local-vllm", "local-llama"}, rule.Backends)
	assert.Equal(t, []string{"local-llama"}, rule.Candidates, "requiredCapabilities filters candidates")
	assert.Equal(t, []ir.HeaderMatch{{Name: "x-team", Value: "a"}}, rule.Match.Headers)
	assert.Equal(t, []string{"public"}, rule.Match.DataClassification)
	assert.Equal(t, ir.StrategyPrimaryFallback, rule.Strategy)
	assert.Equal(t, ir.PoolActivationWait, rule.PoolActivation)
	assert.Equal(t, 5*time.Second, rule.Timeout)
	vllm, _ := r.Backend("local-vllm")
	assert.Equal(t, 5*time.Second, r.HeaderTimeout(&rule, vllm), "rule timeout wins")
	assert.Equal(t, 90*time.Second, r.HeaderTimeout(nil, vllm), "backend timeout (capped)")
	cloud, _ := r.Backend("cloud")
	assert.Equal(t, 90*time.Second, r.HeaderTimeout(nil, cloud), "proxy default")
}

func TestLowerDefaults(t *testing.T) {
	r, _ := compileYAML(t, lowerInput, Options{Operator: platform.Settings{ProxyImage: "registry.local/proxy:1"}})
	assert.Equal(t, "registry.local/proxy:1", r.Proxy.Image)
	assert.EqualValues(t, 1, r.Proxy.Replicas)
	assert.EqualValues(t, 3, r.Proxy.RevisionHistoryLimit)
	assert.Equal(t, "chat-router-proxy", r.Proxy.ServiceName)
	assert.Equal(t, 300*time.Second, r.Timeouts.StreamIdle)
	assert.Equal(t, 15*time.Second, r.Timeouts.Quarantine)
	assert.Zero(t, r.Timeouts.Drain)
	assert.Equal(t, "x-llmkube-classification", r.Policy.Classification.HeaderKey)
	assert.Equal(t, []string{"pii", "phi"}, r.Policy.Classification.Sensitive)
	assert.Equal(t, ir.AuditSinkStdout, r.Policy.Audit.Sink)
	assert.Equal(t, "/var/log/mlx-router/audit.log", r.Policy.Audit.FilePath)
	assert.EqualValues(t, 8080, r.Exposure.Port)
	assert.Equal(t, "ClusterIP", string(r.Exposure.Type))
	assert.Equal(t, ir.DefaultStatic, r.Default.Strategy)
}

func TestCompileDoesNotModifyInput(t *testing.T) {
	_, in := compileYAML(t, lowerInput, Options{})
	spec := in.Routers[0].Router.Spec
	assert.Nil(t, spec.Proxy.Replicas)
	assert.Empty(t, spec.Backends[3].Tier)
	assert.Nil(t, spec.Policy)
}

func TestDataPlaneOverride(t *testing.T) {
	r, _ := compileYAML(t, lowerInput, Options{DataPlane: ir.DataPlaneProxy})
	assert.Equal(t, ir.DataPlaneProxy, r.DataPlane)
}

func TestNormalizeCIDR(t *testing.T) {
	assert.Equal(t, "10.0.0.0/8", normalizeCIDR("10.1.2.3/8"))
	assert.Equal(t, "192.168.1.1/32", normalizeCIDR("192.168.1.1"))
	assert.Equal(t, "2001:db8::1/128", normalizeCIDR("2001:db8::1"))
	assert.Equal(t, "10.0.0.1/32", normalizeCIDR("::ffff:10.0.0.1"), "IPv4-mapped addresses match IPv4 peers")
	assert.Equal(t, "10.0.0.0/8", normalizeCIDR("::ffff:10.0.0.0/104"))
}

// TestLowerUpstreamModel: each backend's upstream model name, the one fact
// all three planes send (docs/router-proxy.md, "Upstream requests").
func TestLowerUpstreamModel(t *testing.T) {
	r, _ := compileYAML(t, `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ns}
spec:
  backends:
    - {name: named, inferenceServiceRef: {name: named-svc}}
    - {name: named-eq, inferenceServiceRef: {name: named-eq-svc}}
    - {name: sglang, inferenceServiceRef: {name: sglang-svc}}
    - {name: vllm, inferenceServiceRef: {name: vllm-svc}}
    - {name: llama, inferenceServiceRef: {name: llama-svc}}
    - {name: absent, inferenceServiceRef: {name: absent-svc}}
    - {name: cloud, external: {provider: openai, model: gpt-4.1, credentialsSecretRef: {name: k}}}
  defaultRoute: named
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: named-svc, namespace: ns}
spec: {runtime: vllm, modelRef: medgemma, extraArgs: [--served-model-name, medgemma-27b, medgemma, --port, "8000"]}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: named-eq-svc, namespace: ns}
spec: {runtime: sglang, modelRef: qwen, extraArgs: [--served-model-name=qwen-chat]}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: sglang-svc, namespace: ns}
spec: {runtime: sglang, modelRef: qwen3-8b}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: vllm-svc, namespace: ns}
spec: {runtime: vllm, modelRef: llama-3-8b}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama-svc, namespace: ns}
spec: {modelRef: phi-4, extraArgs: [--served-model-name, ignored]}
`, Options{})
	want := map[string]ir.UpstreamModel{
		"named":    {Name: "medgemma-27b", Source: ir.UpstreamModelServedName},
		"named-eq": {Name: "qwen-chat", Source: ir.UpstreamModelServedName},
		"sglang":   {Name: "qwen3-8b", Source: ir.UpstreamModelModelRef},
		"vllm":     {Name: "llama-3-8b", Source: ir.UpstreamModelAssumed},
		"llama":    {Name: "phi-4", Source: ir.UpstreamModelAssumed},
		"absent":   {Name: "absent-svc", Source: ir.UpstreamModelAssumed},
		"cloud":    {Name: "gpt-4.1", Source: ir.UpstreamModelExternal},
	}
	for _, b := range r.Backends {
		assert.Equal(t, want[b.Name], b.UpstreamModel, b.Name)
	}
	assert.False(t, r.Backends[3].UpstreamModel.Known())
	assert.True(t, r.Backends[0].UpstreamModel.Known())
}
