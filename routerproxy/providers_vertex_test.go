package routerproxy

import (
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testGemini = "gemini-2.0-flash-001"

func vertexBackend(name, url string) proxyapi.Backend {
	return cloudBackend(name, url, "vertex_ai", testGemini, proxyapi.Credential{Purpose: "googleServiceAccountJSON", Env: "LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON"})
}

func TestProviderVertexThroughProxy(t *testing.T) {
	fake := providertest.NewVertex(t, "proj-1", "us-central1", testGemini)
	b := vertexBackend("gem", fake.URL+"/v1/projects/proj-1/locations/us-central1/publishers/google/models")
	h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": fake.ServiceAccountJSON}))

	body := h.okChat(t, `{"model":"gem","messages":[{"role":"user","content":"Why is the sky blue?"}]}`)
	c := decodeCompletion(t, body)
	assert.Equal(t, "The sky appears blue because of Rayleigh scattering.", *c.Choices[0].Message.Content)
	ent := h.last(t)
	assert.Equal(t, int64(16), ent.TotalTokens)
	assert.False(t, ent.TokensEstimated)

	body = h.okChat(t, `{"model":"gem","stream":true,"messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"get_current_weather"}}]}`)
	s := decodeStream(t, body)
	s.assertToolCall(t, "get_current_weather", `{"location":"Boston"}`)
	ent = h.last(t)
	assert.Equal(t, int64(28), ent.PromptTokens)
	assert.Equal(t, int64(7), ent.CompletionTokens)
	assert.Equal(t, int64(1), fake.TokenRequests.Load())

	body = h.okChat(t, `{"model":"gem","stream":true,"messages":[{"role":"user","content":"Why?"}]}`)
	s = decodeStream(t, body)
	assert.Equal(t, "The sky appears blue due to Rayleigh scattering.", s.Content)
	require.NotNil(t, s.Usage)
	assert.Equal(t, int64(15), s.Usage.TotalTokens)
}

// A token endpoint failure fails over like a network error.
func TestProviderVertexTokenFailure(t *testing.T) {
	fake := providertest.NewVertex(t, "proj-1", "global", testGemini)
	fake.FailTokens.Store(true)
	local := newStub(t, "local", nil)
	cfg := config(vertexBackend("gem", fake.URL+"/v1/projects/proj-1/locations/global"), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "gem", "local")}
	h := start(t, cfg, withEnv(map[string]string{"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": fake.ServiceAccountJSON}))
	body := h.okChat(t, `{"model":"gem","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, "local", servedBy(t, body))
	assert.Empty(t, fake.Requests())
}
