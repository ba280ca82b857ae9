package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

func router(name, serviceName string) string {
	s := `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: ` + name + `, namespace: ns}
spec:
  backends:
    - name: local
      inferenceServiceRef: {name: qwen}
  defaultRoute: local
`
	if serviceName != "" {
		s += "  proxy: {serviceName: " + serviceName + "}\n"
	}
	return s
}

func TestTwoRoutersWithSameBackendNamesDoNotCollide(t *testing.T) {
	in := &compiler.Inputs{}
	require.False(t, in.Decode("a.yaml", []byte(router("a", "")+"---\n"+router("b", ""))).HasErrors())
	objs, diags := Run(in, builtin.Registry(), Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Len(t, objs, 8)
}

func TestNameCollisionAcrossRoutersIsRefused(t *testing.T) {
	in := &compiler.Inputs{}
	// Router b's serviceName takes router a's generated Service name.
	require.False(t, in.Decode("a.yaml", []byte(router("a", "")+"---\n"+router("b", "a-router-proxy"))).HasErrors())
	objs, diags := Run(in, builtin.Registry(), Options{})
	assert.Nil(t, objs, "output is all or nothing")
	require.True(t, diags.HasErrors())
	found := false
	for _, d := range diags.Errors() {
		if d.Reason == "NameCollision" {
			found = true
			assert.Equal(t, "ModelRouter/b", d.Object)
			assert.Contains(t, d.Message, "Service ns/a-router-proxy")
		}
	}
	assert.True(t, found, "%v", diags)
}
