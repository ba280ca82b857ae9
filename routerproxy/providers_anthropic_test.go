package routerproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testAnthropicKey = "sk-ant-api03-proxy-test-key-0123456789"

func anthropicBackend(name, url string) proxyapi.Backend {
	b := cloudBackend(name, url, "anthropic", "claude-sonnet-4-20250514", proxyapi.Credential{Purpose: "apiKey", Env: "LLMKUBE_" + strings.ToUpper(name) + "_ANTHROPIC_API_KEY"})
	b.Cost = &proxyapi.Cost{PromptUSD: "3", CompletionUSD: "15"}
	return b
}

// cloudBackend is an external backend of provider, serving model, whose
// credentials come from creds.
func cloudBackend(name, url, provider, model string, creds ...proxyapi.Credential) proxyapi.Backend {
	b := backend(name, url)
	b.Kind, b.Tier, b.Provider, b.Model = proxyapi.KindExternal, "cloud", provider, model
	b.Credentials = creds
	return b
}

func withEnv(m map[string]string) func(*Options) {
	return func(o *Options) { o.Getenv = func(k string) string { return m[k] } }
}

// toolCallOf decodes a tool call of a chat.completion message or of a
// chunk's delta (Index: which call a delta continues).
type toolCallOf struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// completionOf decodes a chat.completion answer.
type completionOf struct {
	Object  string `json:"object"`
	Choices []struct {
		Message struct {
			Content   *string      `json:"content"`
			ToolCalls []toolCallOf `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage engine.Usage `json:"usage"`
}

func decodeCompletion(t *testing.T, body string) completionOf {
	t.Helper()
	var c completionOf
	require.NoError(t, json.Unmarshal([]byte(body), &c), body)
	require.Equal(t, "chat.completion", c.Object, body)
	require.Len(t, c.Choices, 1, body)
	return c
}

// streamed reassembles an OpenAI stream the way a client does.
type streamed struct {
	Content, Finish string
	Calls           map[int]*struct{ ID, Name, Args string }
	Usage           *engine.Usage
	Done            bool
}

func decodeStream(t *testing.T, body string) streamed {
	t.Helper()
	s := streamed{Calls: map[int]*struct{ ID, Name, Args string }{}}
	for _, ev := range strings.Split(body, "\n\n") {
		ev = strings.TrimSpace(ev)
		if ev == "" || strings.HasPrefix(ev, ":") {
			continue
		}
		d, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, ev)
		if d == "[DONE]" {
			s.Done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content   string       `json:"content"`
					ToolCalls []toolCallOf `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *engine.Usage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(d), &c), d)
		if c.Object != "" { // the pass-through stub omits it
			require.Equal(t, "chat.completion.chunk", c.Object)
		}
		if c.Usage != nil {
			s.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			s.Content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				k := s.Calls[tc.Index]
				if k == nil {
					k = &struct{ ID, Name, Args string }{}
					s.Calls[tc.Index] = k
				}
				if tc.ID != "" {
					k.ID, k.Name = tc.ID, tc.Function.Name
				}
				k.Args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				s.Finish = *ch.FinishReason
			}
		}
	}
	return s
}

// assertToolCall checks that the stream called one tool, name with the
// JSON arguments args, and ended for it.
func (s streamed) assertToolCall(t *testing.T, name, args string) {
	t.Helper()
	require.Contains(t, s.Calls, 0)
	assert.Equal(t, name, s.Calls[0].Name)
	assert.JSONEq(t, args, s.Calls[0].Args)
	assert.Equal(t, "tool_calls", s.Finish)
	assert.True(t, s.Done)
}

const weatherTool = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}]`

func TestProviderAnthropicThroughProxy(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	cfg := config(anthropicBackend("claude", fake.URL))
	h := start(t, cfg, withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))
	require.True(t, h.srv.Engine().Backend("claude").Healthy(), h.srv.Engine().Backend("claude").StaticProblem())

	// Non-streaming, with the client's own credentials never forwarded.
	body := h.okChat(t, `{"model":"claude","messages":[{"role":"user","content":"Hello"}]}`, "Authorization", "Bearer client-token", "X-Api-Key", "client-key")
	c := decodeCompletion(t, body)
	assert.Equal(t, "Hi! My name is Claude.", *c.Choices[0].Message.Content)
	assert.Equal(t, "stop", c.Choices[0].FinishReason)
	assert.Equal(t, testAnthropicKey, fake.Last().Header.Get("X-Api-Key"))
	assert.Empty(t, fake.Last().Header.Get("Authorization"))
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeOK, ent.Outcome)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(2095), ent.PromptTokens)
	assert.Equal(t, int64(503), ent.CompletionTokens)
	// 2095 * $3/M + 503 * $15/M
	assert.Equal(t, "0.01383", strings.TrimRight(ent.CostUSD, "0"))

	// Non-streaming tool call.
	body = h.okChat(t, `{"model":"claude","messages":[{"role":"user","content":"Weather?"}],`+weatherTool+`}`)
	c = decodeCompletion(t, body)
	require.Len(t, c.Choices[0].Message.ToolCalls, 1)
	assert.Equal(t, "get_weather", c.Choices[0].Message.ToolCalls[0].Function.Name)
	assert.JSONEq(t, `{"location":"San Francisco, CA","unit":"celsius"}`, c.Choices[0].Message.ToolCalls[0].Function.Arguments)
	assert.Equal(t, "tool_calls", c.Choices[0].FinishReason)

	// Streaming with a tool call: chunks, final usage chunk, [DONE]; the
	// budget is charged from that usage.
	code, body, hdr := h.post(t, `{"model":"claude","stream":true,"messages":[{"role":"user","content":"Weather?"}],`+weatherTool+`}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "text/event-stream", hdr.Get("Content-Type"))
	s := decodeStream(t, body)
	assert.Equal(t, "Okay, let's check the weather for San Francisco, CA:", s.Content)
	require.Contains(t, s.Calls, 0)
	assert.Equal(t, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", s.Calls[0].ID)
	assert.JSONEq(t, `{"location": "San Francisco, CA", "unit": "fahrenheit"}`, s.Calls[0].Args)
	assert.Equal(t, "tool_calls", s.Finish)
	require.NotNil(t, s.Usage)
	assert.Equal(t, int64(561), s.Usage.TotalTokens)
	assert.True(t, s.Done)
	ent = h.last(t)
	assert.Equal(t, proxyapi.OutcomeOKStream, ent.Outcome)
	assert.Equal(t, int64(472), ent.PromptTokens)
	assert.Equal(t, int64(89), ent.CompletionTokens)
	assert.False(t, ent.TokensEstimated)

	// A provider 400 is an OpenAI-style 400.
	fake.SetMode(providertest.BadRequest)
	code, body, _ = h.post(t, `{"model":"claude","messages":[{"role":"user","content":"x"}]}`)
	assert.Equal(t, 400, code)
	typ, ecode, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "invalid_request_error", typ)
	assert.Equal(t, "invalid_request_error", ecode)
}

func TestProviderFailover(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	local := newStub(t, "local", nil)
	cfg := config(anthropicBackend("claude", fake.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "claude", "local")}
	h := start(t, cfg, withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))
	chatBody := `{"model":"x","messages":[{"role":"user","content":"hi"}]}`

	// 429: fail over, no quarantine: a hold until the provider's
	// Retry-After (7 s), during which claude is not sent to.
	fake.SetMode(providertest.RateLimited)
	body := h.okChat(t, chatBody)
	assert.Equal(t, "local", servedBy(t, body))
	eng := h.srv.Engine()
	assert.False(t, eng.Quarantined(eng.Backend("claude")))
	reason, _ := eng.Held(eng.Backend("claude"))
	assert.Equal(t, engine.HoldRateLimited, reason)
	ent := h.last(t)
	assert.Equal(t, 2, ent.Attempts)
	sent := len(fake.Requests())
	h.okChat(t, chatBody)
	assert.Equal(t, 1, h.last(t).Attempts, "held: straight to the fallback")
	assert.Len(t, fake.Requests(), sent, "nothing sent to the held provider")

	// 529 overloaded (5xx): fail over and quarantine.
	fake.SetMode(providertest.Overloaded)
	h = start(t, cfg, withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))
	body = h.okChat(t, chatBody)
	assert.Equal(t, "local", servedBy(t, body))
	assert.True(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("claude")))
}

func TestProviderRateLimitedLast(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	fake.SetMode(providertest.RateLimited)
	h := start(t, config(anthropicBackend("claude", fake.URL)), withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))
	code, body, _ := h.post(t, `{"model":"x","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, 429, code)
	typ, ecode, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "rate_limit_error", typ)
	assert.Equal(t, "upstream_rate_limited", ecode)
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
