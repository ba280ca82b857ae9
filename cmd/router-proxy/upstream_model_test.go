package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

// vllmStub is providertest.VLLM serving served, recording every inference
// request; fail makes every request 500.
type vllmStub struct {
	*stub
	fail atomic.Bool
}

func newVLLMStub(t *testing.T, served string) *vllmStub {
	v := &vllmStub{}
	inference := func(r *http.Request) bool {
		return !v.fail.Load() && (r.Method != http.MethodGet || r.URL.Path != "/v1/models")
	}
	v.stub = newStub(t, inference, func(w http.ResponseWriter, r *http.Request, _ string) {
		if v.fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		providertest.VLLM(served, nil)(w, r)
	})
	return v
}

// models are the models of the inference requests the stub was sent, in
// order.
func (v *vllmStub) models() []string {
	var got []string
	for _, body := range v.bodies() {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		got = append(got, req.Model)
	}
	return got
}

// hospital renders cmd/router-proxy/testdata/upstream-model.yaml with the
// real compiler, its backends on vLLM-like stubs: local-medgemma serves
// the --served-model-name its InferenceService names, local-qwen a name
// only its /v1/models tells, cloud-gpt answers as OpenAI would (gpt-4.1).
func hospital(t *testing.T) (*proxyapi.Config, map[string]*vllmStub, []string, string) {
	cfg := renderConfig(t, "testdata/upstream-model.yaml")
	ups := map[string]*vllmStub{
		"local-medgemma": newVLLMStub(t, "medgemma-27b"),
		"local-qwen":     newVLLMStub(t, "/models/Qwen/Qwen3-8B"),
		"cloud-gpt":      newVLLMStub(t, "gpt-4.1"),
	}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		b.URL = ups[b.Name].URL
	}
	auditPath := fileAudit(t, cfg)
	return cfg, ups, credentialEnv(cfg), auditPath
}

// TestUpstreamModelAsAProcess drives the built router-proxy: a sensitive
// reroute (an unlabelled SSN under classification.mode: detector), a
// stream, the default route and a fallback to another model are each served
// 200 by a vLLM-like backend that refuses any name but its own; the client
// sees the model it asked for; the audit records both.
func TestUpstreamModelAsAProcess(t *testing.T) {
	cfg, ups, env, auditPath := hospital(t)
	cfg.MCP, cfg.Policy.Auth = nil, nil // the HTTP API alone; TestUpstreamModelMCPToolCall has both
	p := startProxyEnv(t, cfg, env)

	// Sensitive: routed to the local model, sent the name it serves.
	code, body := p.post(t, `{"model":"gpt-4.1","messages":[{"role":"user","content":"Patient SSN 536-22-8410, summarise the chart."}]}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "gpt-4.1", echoedModel(t, body), "the client sees the model it asked for")
	assert.Equal(t, []string{"medgemma-27b"}, ups["local-medgemma"].models())
	assert.Empty(t, ups["cloud-gpt"].models(), "the sensitive request never left")

	// The same, streamed: every chunk carries the client's model.
	code, body = p.post(t, `{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"Patient SSN 536-22-8410."}]}`)
	require.Equal(t, 200, code, body)
	sc := bufio.NewScanner(strings.NewReader(body))
	chunks := 0
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		chunks++
		var c struct{ Model string }
		decodeJSON(t, line, &c)
		assert.Equal(t, "gpt-4.1", c.Model, line)
	}
	assert.Equal(t, 4, chunks)

	// The default route: qwen's InferenceService does not name its served
	// model; the router-proxy reads it from the backend's /v1/models.
	code, body = p.post(t, `{"model":"triage-assistant","messages":[{"role":"user","content":"What are visiting hours?"}]}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "triage-assistant", echoedModel(t, body))
	assert.Equal(t, []string{"/models/Qwen/Qwen3-8B"}, ups["local-qwen"].models())

	// A fallback to another model: the cloud fails, the local model serves
	// under its own name.
	ups["cloud-gpt"].fail.Store(true)
	code, body = p.post(t, `{"model":"gpt-4.1","messages":[{"role":"user","content":"Draft a rota for the ward."}]}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "gpt-4.1", echoedModel(t, body))
	assert.Equal(t, []string{"medgemma-27b", "medgemma-27b", "medgemma-27b"}, ups["local-medgemma"].models())

	entries, _ := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 4)
	for i, want := range []struct{ rule, backend, model, upstream string }{
		{"phi-pii-stays-local", "local-medgemma", "gpt-4.1", "medgemma-27b"},
		{"phi-pii-stays-local", "local-medgemma", "gpt-4.1", "medgemma-27b"},
		{"", "local-qwen", "triage-assistant", "/models/Qwen/Qwen3-8B"},
		{"cloud-then-local", "local-medgemma", "gpt-4.1", "medgemma-27b"},
	} {
		e := entries[i]
		assert.Equal(t, 200, e.Status, "entry %d", i)
		assert.Equal(t, want.backend, e.Backend, "entry %d", i)
		assert.Equal(t, want.model, e.Model, "entry %d", i)
		assert.Equal(t, want.upstream, e.UpstreamModel, "entry %d", i)
		if want.rule != "" {
			assert.Equal(t, want.rule, e.Rule, "entry %d", i)
		}
	}
	assert.Equal(t, 2, entries[3].Attempts, "the fallback was tried after the cloud")
}

// TestUpstreamModelMCPToolCall: a tool call for the cloud model carrying
// an SSN is served by the local model under the name it serves, and the
// structured result names the backend that served, not the tool's model.
func TestUpstreamModelMCPToolCall(t *testing.T) {
	cfg, ups, env, auditPath := hospital(t)
	is := trustIssuer(t, cfg)
	p := startProxyEnv(t, cfg, env)
	cs := mcpSession(t, p, is.TokenFor(t, "clinicians", cfg.MCP.ResourceURL))

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gpt-4.1", Arguments: map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Patient SSN 536-22-8410, summarise the chart."}},
	}})
	require.NoError(t, err)
	require.False(t, res.IsError, callText(res))
	assert.Equal(t, "ok", callText(res))
	assert.JSONEq(t, `{"model":"local-medgemma","finish_reason":"stop","usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}`, mustJSON(t, res.StructuredContent))
	assert.Equal(t, []string{"medgemma-27b"}, ups["local-medgemma"].models())
	assert.Empty(t, ups["cloud-gpt"].models())

	entries, _ := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 1)
	assert.Equal(t, proxyapi.ViaMCP, entries[0].Via)
	assert.Equal(t, 200, entries[0].Status)
	assert.Equal(t, "gpt-4.1", entries[0].Model)
	assert.Equal(t, "medgemma-27b", entries[0].UpstreamModel)
}
