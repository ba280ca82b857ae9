package agentgateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
)

// TestBackendsAreFoundByWhatAgentgatewayReads: the model finds a backend's
// InferencePool by the pods its selector selects and an AgentgatewayModel
// by the model it matches, whatever the emitter named them: a pool and a
// model under names no naming rule gives still answer for the right spec
// backend.
func TestBackendsAreFoundByWhatAgentgatewayReads(t *testing.T) {
	objs := func(doc string) []*unstructured.Unstructured {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
		return []*unstructured.Unstructured{{Object: m}}
	}
	r := &ir.Router{Name: "chat", Namespace: "ns", DataPlane: ir.DataPlaneAgentGateway, AgentGateway: &ir.AgentGateway{Name: "gw", Namespace: "ns"},
		Backends: []ir.Backend{
			{Name: "qwen", ModelID: "qwen3", Local: &ir.LocalBackend{InferenceService: "qwen3", PodSelector: map[string]string{"inference.llmkube.dev/service": "qwen3"}}},
			{Name: "llama", ModelID: "llama-3", Local: &ir.LocalBackend{InferenceService: "llama", PodSelector: map[string]string{"inference.llmkube.dev/service": "llama"}}},
		}}
	pool := objs(`{apiVersion: inference.networking.k8s.io/v1, kind: InferencePool, metadata: {name: not-a-generated-name, namespace: ns},
  spec: {selector: {matchLabels: {inference.llmkube.dev/service: llama}}, targetPorts: [{number: 8000}], endpointPickerRef: {name: epp, port: {number: 9002}}}}`)
	route := objs(`{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: r, namespace: ns},
  spec: {parentRefs: [{name: gw}], rules: [{name: default, backendRefs: [{group: inference.networking.k8s.io, kind: InferencePool, name: not-a-generated-name}]}]}}`)
	model := objs(`{apiVersion: agentgateway.dev/v1alpha1, kind: AgentgatewayModel, metadata: {name: m1, namespace: ns}, spec: {match: {model: qwen3}}}`)
	got := backendObjects(r, append(append(pool, route...), model...))
	assert.Equal(t, map[string]string{"llama": "InferencePool/not-a-generated-name", "qwen": "AgentgatewayModel/m1"}, got)

	served, err := serveRouters([]simulate.Compiled{{Key: "ns/chat", IR: r, Objects: append(pool, route...)}}, nil)
	require.NoError(t, err)
	s := served["ns/chat"]
	out := s.Serve(simulate.Request{Body: map[string]any{"model": "anything"}})
	require.Equal(t, "InferencePool/not-a-generated-name", out.Backend, "%v", out.Trace)
	router, backend := s.Name(out.Backend)
	assert.Equal(t, [2]string{"ns/chat", "llama"}, [2]string{router, backend})
	assert.Equal(t, out.Backend, s.BackendID("llama"))
}
