package envoyai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/ir"
)

// TestBackendsAreFoundByWhatTheGatewaySends: the model finds the
// AIServiceBackend of each spec backend by where the AI Gateway sends its
// requests (the referenced Backend's endpoint), the model it rewrites them
// to and the Secret it signs them with, whatever the emitter named the
// objects: two backends of one provider host told apart by their model and
// by their Secret, and a local backend by its Service's DNS name.
func TestBackendsAreFoundByWhatTheGatewaySends(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, doc := range []string{
		`{kind: Backend, metadata: {name: x1, namespace: ns}, spec: {endpoints: [{fqdn: {hostname: api.openai.com, port: 443}}]}}`,
		`{kind: Backend, metadata: {name: x2, namespace: ns}, spec: {endpoints: [{fqdn: {hostname: api.openai.com, port: 443}}]}}`,
		`{kind: Backend, metadata: {name: x3, namespace: ns}, spec: {endpoints: [{fqdn: {hostname: api.openai.com, port: 443}}]}}`,
		`{kind: Backend, metadata: {name: x4, namespace: ns}, spec: {endpoints: [{fqdn: {hostname: qwen3.ns.svc.cluster.local, port: 8080}}]}}`,
		`{kind: AIServiceBackend, metadata: {name: a1, namespace: ns}, spec: {backendRef: {name: x1}}}`,
		`{kind: AIServiceBackend, metadata: {name: a2, namespace: ns}, spec: {backendRef: {name: x2}}}`,
		`{kind: AIServiceBackend, metadata: {name: a3, namespace: ns}, spec: {backendRef: {name: x3}}}`,
		`{kind: AIServiceBackend, metadata: {name: a4, namespace: ns}, spec: {backendRef: {name: x4}}}`,
		`{kind: BackendSecurityPolicy, metadata: {name: p1, namespace: ns}, spec: {targetRefs: [{name: a1}], apiKey: {secretRef: {name: team-a}}}}`,
		`{kind: BackendSecurityPolicy, metadata: {name: p2, namespace: ns}, spec: {targetRefs: [{name: a2}], apiKey: {secretRef: {name: team-b}}}}`,
		`{kind: BackendSecurityPolicy, metadata: {name: p3, namespace: ns}, spec: {targetRefs: [{name: a3}], apiKey: {secretRef: {name: team-a}}}}`,
		`{kind: AIGatewayRoute, metadata: {name: r, namespace: ns}, spec: {rules: [{backendRefs: [
		  {name: a1, modelNameOverride: gpt-4.1}, {name: a2, modelNameOverride: gpt-4.1},
		  {name: a3, modelNameOverride: gpt-4o}, {name: a4, modelNameOverride: Qwen/Qwen3-8B}]}]}}`,
	} {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	openai := func(name, model, secret string) ir.Backend {
		return ir.Backend{Name: name, Upstream: ir.Upstream{Host: "api.openai.com", Port: 443},
			UpstreamModel: ir.UpstreamModel{Name: model}, External: &ir.ExternalBackend{CredentialsSecret: secret}}
	}
	r := &ir.Router{Name: "chat", Namespace: "ns", Backends: []ir.Backend{
		{Name: "local", Upstream: ir.Upstream{Host: "qwen3.ns.svc.cluster.local", Port: 8080}, UpstreamModel: ir.UpstreamModel{Name: "Qwen/Qwen3-8B"}, Local: &ir.LocalBackend{}},
		openai("gpt4o-a", "gpt-4o", "team-a"),
		openai("gpt-b", "gpt-4.1", "team-b"),
		openai("gpt-a", "gpt-4.1", "team-a"),
	}}
	assert.Equal(t, map[string]string{"local": "ns/a4", "gpt4o-a": "ns/a3", "gpt-b": "ns/a2", "gpt-a": "ns/a1"}, backendObjects(r, objs))
}
