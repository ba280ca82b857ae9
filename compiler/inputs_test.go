package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/diag"
)

func reasons(l diag.List) map[string]string {
	out := map[string]string{}
	for _, d := range l {
		out[d.Field] = d.Reason
	}
	return out
}

func TestDecodeStrictReportsEveryUnknownFieldWithItsPath(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("r.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backendz: []
  backends:
    - name: a
      inferenceServiceRef: {name: x}
      capabilites: [tools]
  rules:
    - name: r
      route: {backends: [a], stratgy: weighted}
`))
	require.True(t, diags.HasErrors())
	got := reasons(diags)
	assert.Equal(t, "UnknownField", got["spec.backendz"])
	assert.Equal(t, "UnknownField", got["spec.backends[0].capabilites"])
	assert.Equal(t, "UnknownField", got["spec.rules[0].route.stratgy"])
	for _, d := range diags {
		assert.Equal(t, "r.yaml", d.File)
		assert.Equal(t, "ModelRouter/chat", d.Object)
	}
	assert.Empty(t, in.Routers, "a router with errors is not kept")
}

func TestDecodeDuplicateKeyAndWrongType(t *testing.T) {
	in := &Inputs{}
	diags := in.Decode("r.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends:
    - name: a
      weight: heavy
`))
	require.True(t, diags.HasErrors())
	assert.Equal(t, "InvalidType", diags[0].Reason)
	assert.Equal(t, "spec.backends[0].weight", diags[0].Field)

	diags = (&Inputs{}).Decode("r.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends:
    - {name: a, weight: 1}
    - {name: b, weight: 2}
    - {name: c, weight: "3"}
`))
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
