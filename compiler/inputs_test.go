package compiler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/diag"
)

func TestDecodeStrictReportsEveryUnknownFieldWithItsPath(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("r.yaml", []byte(chatDoc(`
  backendz: []
  backends:
    - name: a
      inferenceServiceRef: {name: x}
      capabilites: [tools]
  rules:
    - name: r
      route: {backends: [a], stratgy: weighted}
`)))
	require.True(t, diags.HasErrors())
	got := diags.ReasonsByField()
	assert.Equal(t, "UnknownField", got["spec.backendz"])
	assert.Equal(t, "UnknownField", got["spec.backends[0].capabilites"])
	assert.Equal(t, "UnknownField", got["spec.rules[0].route.stratgy"])
	for _, d := range diags {
		assert.Equal(t, "r.yaml", d.File)
		assert.Equal(t, "ModelRouter/chat", d.Object)
	}
	require.Len(t, in.Routers, 1, "the router is kept, so the whole checklist still runs on it")
	msgs := map[string]string{}
	for _, d := range diags {
		msgs[d.Field] = d.Message
	}
	assert.Contains(t, msgs["spec.backendz"], "did you mean backends?")
	assert.Contains(t, msgs["spec.backends[0].capabilites"], "did you mean capabilities?")
	assert.Contains(t, msgs["spec.rules[0].route.stratgy"], "did you mean strategy?")
}

func TestDecodeDuplicateKeyAndWrongType(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("r.yaml", []byte(chatDoc(`
  backends:
    - name: a
      weight: heavy
`)))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "InvalidType", diags[0].Reason)
	assert.Equal(t, "spec.backends[0].weight", diags[0].Field)

	diags = (&Inputs{}).Decode("r.yaml", []byte(chatDoc(`
  backends:
    - {name: a, weight: 1}
    - {name: b, weight: 2}
    - {name: c, weight: "3"}
`)))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "spec.backends[2].weight", diags[0].Field, "the index of the offending item is restored")

	diags = (&Inputs{}).Decode("r.yaml", []byte("apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: a}\nmetadata: {name: b}\n"))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "InvalidYAML", diags[0].Reason)
}

func TestDecodeMultiDocumentListJSONAndOtherKinds(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("all.yaml", []byte(`---
apiVersion: v1
kind: List
items:
  - apiVersion: inference.llmkube.dev/v1alpha1
    kind: ModelRouter
    metadata: {name: one, namespace: ns}
    spec: {backends: [{name: a, inferenceServiceRef: {name: x}}]}
  - apiVersion: inference.llmkube.dev/v1alpha1
    kind: InferenceService
    metadata: {name: x, namespace: ns}
    spec: {runtime: vllm, image: ignored-by-the-view, replicas: 2}
---
{"apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "ModelPool", "metadata": {"name": "p", "namespace": "ns"},
 "spec": {"members": [{"inferenceServiceRef": {"name": "x"}}], "gpu": 1}}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
---
# only a comment
`))
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	require.Len(t, in.Routers, 1)
	require.Len(t, in.InferenceServices, 1)
	require.Len(t, in.Pools, 1)
	require.Empty(t, diags)
	diags = in.Ignored()
	require.Len(t, diags, 1)
	assert.Equal(t, "IgnoredObject", diags[0].Reason)
	assert.Equal(t, diag.Warning, diags[0].Severity)

	s, ok := in.InferenceService("ns", "x")
	require.True(t, ok)
	assert.Equal(t, "vllm", s.Spec.Runtime)
	assert.Len(t, in.ModelPools("ns"), 1)
	assert.Empty(t, in.ModelPools("other"))
}

func TestDecodeRefusesDuplicateRouterAndOtherVersions(t *testing.T) {
	r := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: a}\nspec: {backends: [{name: b, inferenceServiceRef: {name: x}}]}\n"
	in := &Inputs{}
	require.False(t, in.Decode("one.yaml", []byte(r)).HasErrors())
	diags := in.Decode("two.yaml", []byte(r))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "DuplicateObject", diags[0].Reason)
	assert.Contains(t, diags[0].Message, "one.yaml")

	diags = (&Inputs{}).Decode("v2.yaml", []byte("apiVersion: inference.llmkube.dev/v1beta1\nkind: ModelRouter\nmetadata: {name: a}\n"))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "UnsupportedVersion", diags[0].Reason)

	diags = (&Inputs{}).Decode("x.yaml", []byte("just: [a, mapping\n"))
	require.True(t, diags.HasErrors())
}

func TestDuplicateReferencesAreRefused(t *testing.T) {
	in := &Inputs{}
	isvc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: {name: qwen, namespace: ml}\nspec: {runtime: vllm}\n"
	pool := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelPool\nmetadata: {name: p, namespace: ml}\nspec: {members: [{inferenceServiceRef: {name: qwen}}]}\n"
	require.False(t, in.Decode("a.yaml", []byte(isvc+"---\n"+pool)).HasErrors())
	diags := in.Decode("b.yaml", []byte(isvc+"---\n"+pool))
	got := map[string]string{}
	for _, d := range diags.Errors() {
		got[d.Object] = d.Reason + " " + d.Field
		assert.Contains(t, d.Message, "also defined in a.yaml")
	}
	assert.Equal(t, map[string]string{"InferenceService/qwen": "DuplicateObject metadata.name", "ModelPool/p": "DuplicateObject metadata.name"}, got)
	assert.Len(t, in.InferenceServices, 1, "the first definition is the one used")
	assert.Len(t, in.Pools, 1)
}

func TestMetadataValidatedAsTheAPIServerDoes(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("r.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: Bad_Name, namespace: Team.A}
spec:
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
  defaultRoute: a
`))
	assert.Equal(t, map[string]string{"metadata.name": "InvalidName", "metadata.namespace": "InvalidName"}, diags.ReasonsByField())
}

func TestNamespaceFlagFillsAndConflicts(t *testing.T) {
	in := &Inputs{Namespace: "ml"}
	diags := in.Decode("r.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: other}
spec:
  backends: [{name: a, inferenceServiceRef: {name: qwen}}]
  defaultRoute: a
`))
	assert.Equal(t, map[string]string{"metadata.namespace": "NamespaceMismatch"}, diags.ReasonsByField())
	assert.Contains(t, diags[0].Message, `"other"`)
	assert.Contains(t, diags[0].Message, `"ml"`)
	require.Len(t, in.InferenceServices, 1)
	_, found := in.InferenceService("ml", "qwen")
	assert.True(t, found, "an object without a namespace takes -n's")
}

func TestHelmTemplateGetsAHint(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("chart.yaml", []byte("apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata:\n  name: {{ .Release.Name }}\n"))
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags[0].Message, "Helm template")
}

func TestIgnoredObjectsAreSummarisedPerFile(t *testing.T) {
	in := &Inputs{}
	doc := "apiVersion: v1\nkind: Secret\nmetadata: {name: s%d}\n---\n"
	var all string
	for i := range 5 {
		all += fmt.Sprintf(doc, i)
	}
	all += "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
	require.Empty(t, in.Decode("samples.yaml", []byte(all)))
	require.Empty(t, in.Decode("more.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: other}\n")))
	diags := in.Ignored()
	require.Len(t, diags, 1, "one line for the whole input")
	assert.Equal(t, "IgnoredObject", diags[0].Reason)
	assert.Contains(t, diags[0].Message, "7 object(s)")
	assert.Contains(t, diags[0].Message, "Deployment (1), Secret (6) (in 2 files)")
}
