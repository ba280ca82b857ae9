// The router-proxy's /v1/messages against a client nobody here wrote: the
// official Anthropic TypeScript SDK (@anthropic-ai/sdk, pinned by
// test/mcp-js/package-lock.json; make mcp-js installs it), run with Node 22
// as a process against the real binary.
package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

// newLocalChat is an OpenAI-compatible in-cluster model (vLLM's answers):
// it calls the offered tool until it sees the tool's result, then answers.
func newLocalChat(t *testing.T) *stub {
	return newModelStub(t, "/v1/chat/completions", func(w http.ResponseWriter, body string) {
		if strings.Contains(body, `"stream":true`) {
			// A streamed tool call, as vLLM streams it.
			providertest.SSE(w,
				`{"id":"chatcmpl-3","model":"qwen","choices":[{"index":0,"delta":{"role":"assistant","content":"Checking."}}]}`,
				`{"id":"chatcmpl-3","model":"qwen","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_local_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}`,
				`{"id":"chatcmpl-3","model":"qwen","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]}`,
				`{"id":"chatcmpl-3","model":"qwen","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`{"id":"chatcmpl-3","model":"qwen","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`,
				`[DONE]`)
			return
		}
		if strings.Contains(body, `"tools"`) && !strings.Contains(body, `"role":"tool"`) {
			providertest.JSON(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_local_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}`)
			return
		}
		providertest.JSON(w, `{"id":"chatcmpl-2","object":"chat.completion","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":"from local"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":3,"total_tokens":33}}`)
	})
}

// TestAnthropicSDK: the SDK's plain, streamed and tool-use calls are served
// by the Anthropic backend (passed through); a tool result carrying an SSN
// stays on the local model (translated, the tool_use id kept); count_tokens
// is answered; a call without the router's token is 401 and a call over the
// team's budget 429, each an error the SDK types.
func TestAnthropicSDK(t *testing.T) {
	const key = "sk-ant-api03-process-test-key-0123456789"
	fake := providertest.NewAnthropic(t, key)
	local := newLocalChat(t)
	auth, is := issuerAuth(t)
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 30 * time.Second}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{
			{Name: "claude", ModelID: "claude", Kind: proxyapi.KindExternal, Tier: "cloud", Provider: "anthropic", Model: "claude-sonnet-4-20250514", URL: fake.URL, Weight: 1,
				Credentials: []proxyapi.Credential{{Purpose: "apiKey", Env: "LLMKUBE_CLAUDE_ANTHROPIC_API_KEY"}}},
			{Name: "local-qwen", ModelID: "qwen", Kind: proxyapi.KindLocal, Tier: "local", URL: local.URL, Weight: 1, HealthCheck: probeEvery(time.Hour)},
		},
		Rules: []proxyapi.Rule{{Name: "sensitive", Strategy: proxyapi.StrategyPrimaryFallback, FailClosed: true, Backends: []string{"local-qwen"},
			Match: proxyapi.Match{DataClassification: []string{"pii"}}, PoolActivation: "Wait"},
			{Name: "in-cluster", Strategy: proxyapi.StrategyPrimaryFallback, Backends: []string{"local-qwen"}, Match: proxyapi.Match{Models: []string{"qwen"}}, PoolActivation: "Wait"}},
		Default: proxyapi.DefaultRoute{Strategy: proxyapi.DefaultStatic, Backend: "claude"},
		Policy: proxyapi.Policy{
			Classification: proxyapi.Classification{Mode: proxyapi.ClassificationDetector, Sensitive: []string{"pii"}},
			Auth:           auth,
			Budgets:        []proxyapi.Budget{{Name: "team-tokens", Scope: "team", HeaderKey: "x-llmkube-team", MaxTokens: 4000, Window: proxyapi.Duration{Duration: time.Hour}}},
		},
	}
	auditPath := fileAudit(t, cfg)
	p := startProxyEnv(t, cfg, []string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY=" + key})
	token := is.Token(t, "platform")

	out := runScript(t, "anthropic.mjs", "http://"+p.listen, token, "claude", "qwen")

	type sdkError struct {
		Status int
		Type   string
	}
	type block struct {
		Type, Text, ID, Name string
		Input                map[string]any
	}
	type message struct {
		Type       string
		Model      string
		Content    []block
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
		Error *sdkError
	}
	var got struct {
		Plain  message
		Stream struct {
			Events  []string
			Message message
			Error   *sdkError
		}
		Tools struct {
			First, Second message
			Error         *sdkError
		}
		Sensitive message
		Local     struct {
			Tools  struct{ First, Second message }
			Stream struct {
				Events  []string
				Message message
			}
			Error *sdkError
		}
		CountTokens struct {
			InputTokens int64 `json:"input_tokens"`
			Error       *sdkError
		}
		NoToken    message
		OverBudget struct {
			Spent string
			Error *sdkError
		}
	}
	decodeJSON(t, out, &got)

	// Passed through to Anthropic.
	require.Nil(t, got.Plain.Error, "%s", out)
	assert.Equal(t, "Hi! My name is Claude.", got.Plain.Content[0].Text)
	assert.Equal(t, int64(2095), got.Plain.Usage.InputTokens)
	require.Nil(t, got.Stream.Error, "%s", out)
	assert.Equal(t, "Hello!", got.Stream.Message.Content[0].Text)
	assert.Equal(t, "message_stop", got.Stream.Events[len(got.Stream.Events)-1])
	require.Nil(t, got.Tools.Error, "%s", out)
	assert.Equal(t, "tool_use", got.Tools.First.StopReason)
	assert.Equal(t, "toolu_01A09q90qw90lq917835lq9", got.Tools.First.Content[1].ID)
	second := fake.Requests()[3]
	assert.Contains(t, string(second.Body), `"tool_use_id":"toolu_01A09q90qw90lq917835lq9"`, "the tool result went back with its id")
	assert.Equal(t, key, second.Header.Get("X-Api-Key"))
	assert.Empty(t, second.Header.Get("Authorization"), "the caller's token never leaves for the provider")

	// The SSN in a tool result: served by the local model, translated.
	require.Nil(t, got.Sensitive.Error, "%s", out)
	assert.Equal(t, "from local", got.Sensitive.Content[0].Text)
	assert.Equal(t, "qwen", got.Sensitive.Model)
	assert.Contains(t, strings.Join(local.bodies(), "\n"), `{"role":"tool","content":"Customer SSN 536-22-8410","tool_call_id":"toolu_01"}`)
	for _, r := range fake.Requests() {
		assert.NotContains(t, string(r.Body), "536-22-8410", "the SSN never reached the cloud")
	}

	// Translated for the in-cluster model, as the SDK reads it: a tool
	// round trip (the call's id back in the tool message) and a stream
	// with a tool call.
	require.Nil(t, got.Local.Error, "%s", out)
	assert.Equal(t, "tool_use", got.Local.Tools.First.StopReason)
	assert.Equal(t, block{Type: "tool_use", ID: "call_local_1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}, got.Local.Tools.First.Content[0])
	assert.Equal(t, "from local", got.Local.Tools.Second.Content[0].Text)
	assert.Contains(t, strings.Join(local.bodies(), "\n"), `{"role":"tool","content":"18C and sunny","tool_call_id":"call_local_1"}`)
	assert.Equal(t, "Checking.", got.Local.Stream.Message.Content[0].Text)
	assert.Equal(t, block{Type: "tool_use", ID: "call_local_2", Name: "get_weather", Input: map[string]any{"city": "Oslo"}}, got.Local.Stream.Message.Content[1])
	assert.Equal(t, "tool_use", got.Local.Stream.Message.StopReason)
	assert.Equal(t, int64(8), got.Local.Stream.Message.Usage.OutputTokens)
	assert.Equal(t, "message_stop", got.Local.Stream.Events[len(got.Local.Stream.Events)-1])

	assert.Nil(t, got.CountTokens.Error, "%s", out)
	assert.Positive(t, got.CountTokens.InputTokens)
	require.NotNil(t, got.NoToken.Error, "%s", out)
	assert.Equal(t, sdkError{401, "authentication_error"}, *got.NoToken.Error)
	require.NotNil(t, got.OverBudget.Error, "%s", out)
	assert.Equal(t, sdkError{429, "rate_limit_error"}, *got.OverBudget.Error)

	// The audit file is written as each request ends: wait for the last.
	var sensitive, overBudget int
	require.Eventually(t, func() bool {
		sensitive, overBudget = 0, 0
		for _, e := range auditSoFar(t, auditPath) {
			if e.Path != "/v1/messages" {
				continue
			}
			if e.Rule == "sensitive" && e.Backend == "local-qwen" && len(e.Detectors) == 1 && e.Detectors[0] == "us-ssn" {
				sensitive++
			}
			if e.Outcome == proxyapi.OutcomeBudgetExceeded && e.Status == http.StatusTooManyRequests {
				overBudget++
			}
		}
		return sensitive == 1 && overBudget == 1
	}, 20*time.Second, 50*time.Millisecond, "audit: %d sensitive on local-qwen (us-ssn), %d over budget", sensitive, overBudget)
}
