package providers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const antKey = "sk-ant-api03-SECRETSECRETSECRET"

func anthropicBackend(t *testing.T) (*providertest.Anthropic, Provider) {
	fake := providertest.NewAnthropic(t, antKey)
	b := external("claude", "anthropic", fake.URL, "claude-sonnet-4-20250514", proxyapi.Credential{Purpose: "apiKey", Env: "LLMKUBE_CLAUDE_ANTHROPIC_API_KEY"})
	return fake, newProvider(t, b, map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": antKey})
}

// A request using every translated field becomes exactly this Messages body.
func TestAnthropicRequestMapping(t *testing.T) {
	fake, p := anthropicBackend(t)
	resp, body := call(t, p, "/v1/chat/completions", `{
	  "model": "claude", "max_completion_tokens": 300, "temperature": 0.2, "top_p": 0.9, "stop": "END", "user": "u-42",
	  "parallel_tool_calls": false, "stream_options": {"include_usage": true},
	  "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
	  "tools": [
	    {"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}},
	    {"type": "function", "function": {"name": "ping"}}
	  ],
	  "messages": [
	    {"role": "system", "content": "Be brief."},
	    {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
	    {"role": "user", "content": [
	      {"type": "text", "text": "What is in these images, and the weather?"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
	      {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg", "detail": "high"}}
	    ]},
	    {"role": "assistant", "content": "Checking.", "tool_calls": [
	      {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
	      {"id": "toolu_2", "type": "function", "function": {"name": "ping", "arguments": ""}}
	    ]},
	    {"role": "tool", "tool_call_id": "toolu_1", "content": "18C"},
	    {"role": "tool", "tool_call_id": "toolu_2", "content": [{"type": "text", "text": "pong"}]},
	    {"role": "user", "content": "Thanks"}
	  ]}`)
	require.Equal(t, 200, resp.StatusCode, body)
	got := fake.Last()
	assert.Equal(t, "POST", got.Method)
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, antKey, got.Header.Get("X-Api-Key"))
	assert.Equal(t, "2023-06-01", got.Header.Get("Anthropic-Version"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Empty(t, got.Header.Get("Authorization"))
	assert.JSONEq(t, `{
	  "model": "claude-sonnet-4-20250514", "max_tokens": 300, "temperature": 0.2, "top_p": 0.9,
	  "stop_sequences": ["END"], "metadata": {"user_id": "u-42"},
	  "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}],
	  "tools": [
	    {"name": "get_weather", "description": "Weather now", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}},
	    {"name": "ping", "input_schema": {"type": "object", "properties": {}}}
	  ],
	  "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
	  "messages": [
	    {"role": "user", "content": [
	      {"type": "text", "text": "What is in these images, and the weather?"},
	      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
	      {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}
	    ]},
	    {"role": "assistant", "content": [
	      {"type": "text", "text": "Checking."},
	      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Paris"}},
	      {"type": "tool_use", "id": "toolu_2", "name": "ping", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
	      {"type": "tool_result", "tool_use_id": "toolu_2", "content": "pong"},
	      {"type": "text", "text": "Thanks"}
	    ]}
	  ]}`, string(got.Body))
}

func TestAnthropicDefaultsAndToolChoice(t *testing.T) {
	fake, p := anthropicBackend(t)
	tools := `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	for _, tc := range []struct{ in, want string }{
		{`"stop":["a","b"],"max_tokens":10`, `"max_tokens":10,"stop_sequences":["a","b"]`},
		{`"temperature":0`, `"max_tokens":4096,"temperature":0`},
		{tools, `"max_tokens":4096,"tools":[{"name":"f","input_schema":{"type":"object"}}]`},
		{tools + `,"tool_choice":"auto"`, `"max_tokens":4096,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"}`},
		{tools + `,"tool_choice":"none"`, `"max_tokens":4096,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"}`},
		{tools + `,"tool_choice":"required"`, `"max_tokens":4096,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}`},
		{tools + `,"parallel_tool_calls":false`, `"max_tokens":4096,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`},
		{`"tool_choice":"required"`, `"max_tokens":4096`},
	} {
		chatOK(t, p, `{"model":"m","messages":[{"role":"user","content":"hi"}],`+tc.in+`}`)
		assert.JSONEq(t, `{"model":"claude-sonnet-4-20250514","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],`+tc.want+`}`, string(fake.Last().Body), tc.in)
	}
}

func TestAnthropicResponse(t *testing.T) {
	fake, p := anthropicBackend(t)
	resp := assertAnswers(t, fake, p,
		`{"model":"m","messages":[{"role":"user","content":"Hello, Claude"}]}`,
		`{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4-20250514",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"Hi! My name is Claude."},"finish_reason":"stop","logprobs":null}],
	  "usage":{"prompt_tokens":2095,"completion_tokens":503,"total_tokens":2598}}`,
		`{"model":"m","messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
		`{"id":"msg_01Aq9w938a90dw8q","object":"chat.completion","created":1700000000,"model":"claude-sonnet-4-20250514",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"I'll check the current weather in San Francisco for you.",
	    "tool_calls":[{"id":"toolu_01A09q90qw90lq917835lq9","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"San Francisco, CA\",\"unit\":\"celsius\"}"}}]},
	    "finish_reason":"tool_calls","logprobs":null}],
	  "usage":{"prompt_tokens":400,"completion_tokens":92,"total_tokens":492,"prompt_tokens_details":{"cached_tokens":16}}}`)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

func TestAnthropicStream(t *testing.T) {
	fake, p := anthropicBackend(t)
	resp, body := chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hello"}]}`)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, true, fake.Last().JSON()["stream"])
	assert.Equal(t, "text/event-stream", fake.Last().Header.Get("Accept"))
	// The exact chunk sequence, ping kept as an SSE comment.
	want := []string{
		`{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","object":"chat.completion.chunk","created":1700000000,"model":"claude-opus-4-20250514","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}`,
		`{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","object":"chat.completion.chunk","created":1700000000,"model":"claude-opus-4-20250514","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null,"logprobs":null}]}`,
		`{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","object":"chat.completion.chunk","created":1700000000,"model":"claude-opus-4-20250514","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null,"logprobs":null}]}`,
		`{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","object":"chat.completion.chunk","created":1700000000,"model":"claude-opus-4-20250514","choices":[{"index":0,"delta":{},"finish_reason":"stop","logprobs":null}]}`,
		`{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","object":"chat.completion.chunk","created":1700000000,"model":"claude-opus-4-20250514","choices":[],"usage":{"prompt_tokens":25,"completion_tokens":15,"total_tokens":40}}`,
		`[DONE]`,
	}
	assert.Equal(t, want, sseData(t, body))
	assert.Contains(t, body, ": ping\n\n")
}

func TestAnthropicStreamTools(t *testing.T) {
	_, p := anthropicBackend(t)
	_, body := chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Weather in SF?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`)
	a := assemble(t, body)
	assert.Equal(t, "assistant", a.Role)
	assert.Equal(t, "Okay, let's check the weather for San Francisco, CA:", a.Content)
	assertOneCall(t, a, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"location": "San Francisco, CA", "unit": "fahrenheit"}`)
	assert.Equal(t, "tool_calls", a.Finish)
	assert.Equal(t, &usage{PromptTokens: 472, CompletionTokens: 89, TotalTokens: 561}, a.Usage)
	assert.True(t, a.Done)
}

func TestAnthropicStreamError(t *testing.T) {
	fake, p := anthropicBackend(t)
	fake.SetMode(providertest.StreamError)
	s := brokenStream(t, p, "Hello", "anthropic stream error: overloaded_error")
	assert.Contains(t, s, `data: {"error":{"message":"anthropic: Overloaded","type":"server_error","param":null,"code":"overloaded_error"}}`)
	assert.Contains(t, s, `"usage":{"prompt_tokens":25,"completion_tokens":1,"total_tokens":26}`, "usage so far still reaches the budgets")
	assert.NotContains(t, s, "[DONE]")
}

func TestAnthropicErrors(t *testing.T) {
	fake, p := anthropicBackend(t)
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		mode   providertest.Mode
		status int
		typ    string
		code   string
	}{
		{providertest.BadRequest, 400, "invalid_request_error", "invalid_request_error"},
		{providertest.RateLimited, 429, "rate_limit_error", "rate_limit_error"},
	} {
		fake.SetMode(tc.mode)
		resp, body := call(t, p, "/v1/chat/completions", chat)
		assert.Equal(t, tc.status, resp.StatusCode, body)
		typ, code, msg := providertest.OpenAIError(t, body)
		assert.Equal(t, tc.typ, typ)
		assert.Equal(t, tc.code, code)
		assert.True(t, strings.HasPrefix(msg, "anthropic: "), msg)
	}
	resp, _ := call(t, p, "/v1/chat/completions", chat)
	assert.Equal(t, "7", resp.Header.Get("Retry-After"))

	// 5xx (529 overloaded) is handed back as a 5xx so the proxy fails over.
	assertRefusal(t, fake, p, providertest.Overloaded, refusal{status: 529})

	// A wrong key: 401 authentication_error, and the message never carries a key.
	fake.SetMode(providertest.Auto)
	fake.Key = "other"
	resp, body := call(t, p, "/v1/chat/completions", chat)
	assert.Equal(t, 401, resp.StatusCode)
	typ, _, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "authentication_error", typ)
	assert.NotContains(t, body, antKey)
}

func TestUntranslatable(t *testing.T) {
	fake, p := anthropicBackend(t)
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/embeddings", `{"model":"m","input":"x"}`, "unsupported_endpoint"},
		{"/v1/completions", `{"model":"m","prompt":"x"}`, "unsupported_endpoint"},
		{"/v1/chat/completions", `{"model":"m","n":2,"messages":[{"role":"user","content":"x"}]}`, "unsupported_request"},
		{"/v1/chat/completions", `{"model":"m","functions":[{"name":"f"}],"messages":[{"role":"user","content":"x"}]}`, "unsupported_request"},
		{"/v1/chat/completions", `{"model":"m","messages":[]}`, "unsupported_request"},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]}`, "unsupported_request"},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "unsupported_request"},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}]}]}`, "unsupported_request"},
	} {
		resp, body := call(t, p, tc.path, tc.body)
		assert.Equal(t, 400, resp.StatusCode, body)
		_, code, _ := providertest.OpenAIError(t, body)
		assert.Equal(t, tc.want, code, tc.body)
	}
	assert.Empty(t, fake.Requests(), "nothing untranslatable reaches the provider")
}

func TestAnthropicFinishReasons(t *testing.T) {
	for in, want := range map[string]string{"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
		"model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter"} {
		assert.Equal(t, want, stopFinish(in), in)
	}
}

func TestAnthropicNeedsKey(t *testing.T) {
	p, err := New(external("c", "anthropic", "", "m"), env(nil), http.DefaultTransport)
	require.Error(t, err)
	req, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader("{}"))
	_, err = p.RoundTrip(req)
	require.Error(t, err)
}

func TestStreamErrorType(t *testing.T) {
	for in, want := range map[string]string{"rate_limit_error": "rate_limit_error", "throttlingException": "rate_limit_error", "RESOURCE_EXHAUSTED": "rate_limit_error",
		"invalid_request_error": "invalid_request_error", "validationException": "invalid_request_error", "INVALID_ARGUMENT": "invalid_request_error",
		"overloaded_error": "server_error", "UNAVAILABLE": "server_error", "modelStreamErrorException": "server_error"} {
		assert.Equal(t, want, streamErrorType(in), in)
	}
}
