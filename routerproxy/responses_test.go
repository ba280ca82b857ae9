package routerproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// responseOf decodes a Response the way the openai SDK reads it.
type responseOf struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Status string `json:"status"`
	Model  string `json:"model"`
	Output []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Role      string `json:"role"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

func decodeResponse(t *testing.T, body string) responseOf {
	t.Helper()
	var r responseOf
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	require.Equal(t, "response", r.Object, body)
	return r
}

// responsesEvents decodes a Responses event stream: each event's name must
// be its payload's type, sequence numbers count up from 0, and no [DONE].
func responsesEvents(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range strings.Split(body, "\n\n") {
		ev = strings.TrimSpace(ev)
		if ev == "" {
			continue
		}
		name, rest, ok := strings.Cut(ev, "\n")
		require.True(t, ok, ev)
		name, ok = strings.CutPrefix(name, "event: ")
		require.True(t, ok, ev)
		data, ok := strings.CutPrefix(rest, "data: ")
		require.True(t, ok, ev)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &m), data)
		require.Equal(t, name, m["type"], ev)
		require.EqualValues(t, len(out), m["sequence_number"], ev)
		out = append(out, m)
	}
	return out
}

func eventTypes(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return out
}

// chatAnswer answers a chat completion: text, or a tool call when the
// request offers tools and has no tool result yet; streamed when asked.
func chatAnswer(w http.ResponseWriter, r *http.Request) {
	body := mustBody(r)
	tool := strings.Contains(body, `"tools"`) && !strings.Contains(body, `"role":"tool"`)
	if strings.Contains(body, `"stream":true`) {
		events := []string{
			`{"id":"c1","model":"vllm-served","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`,
			`{"id":"c1","choices":[{"index":0,"delta":{"content":"lo"}}]}`,
			`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		}
		if tool {
			events = []string{
				`{"id":"c1","model":"vllm-served","choices":[{"index":0,"delta":{"role":"assistant","content":"Checking."}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			}
		}
		if strings.Contains(body, `"include_usage":true`) {
			events = append(events, `{"id":"c1","choices":[],"usage":{"prompt_tokens":21,"completion_tokens":4,"total_tokens":25}}`)
		}
		providertest.SSE(w, append(events, "[DONE]")...)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if tool {
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"vllm-served","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}`)
		return
	}
	fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"vllm-served","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`)
}

const responsesTool = `"tools":[{"type":"function","name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`

// A Responses request to a chat completions backend (a local vLLM) is
// translated there and back: instructions, message items, function tools,
// a function-call round trip with its call id, usage for the budgets.
func TestResponsesTranslatedToChat(t *testing.T) {
	up := newStub(t, "vllm", chatAnswer)
	h := start(t, config(backend("local", up.URL)))

	// A plain call: input a string, instructions a system message.
	body := h.ok(t, "/v1/responses", `{"model":"local","instructions":"Be brief.","input":"Say hello","max_output_tokens":50,"temperature":0.2}`)
	got := up.Last()
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.JSONEq(t, `{"model":"local","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello"}],"max_tokens":50,"temperature":0.2}`, string(got.Body))
	r := decodeResponse(t, body)
	assert.Equal(t, "completed", r.Status)
	assert.True(t, strings.HasPrefix(r.ID, "resp_"), r.ID)
	require.Len(t, r.Output, 1)
	assert.Equal(t, "message", r.Output[0].Type)
	assert.Equal(t, "Hello", r.Output[0].Content[0].Text)
	assert.Equal(t, "output_text", r.Output[0].Content[0].Type)
	require.NotNil(t, r.Usage)
	assert.Equal(t, int64(12), r.Usage.InputTokens)
	ent := h.last(t)
	assert.Equal(t, "/v1/responses", ent.Path)
	assert.Equal(t, proxyapi.OutcomeOK, ent.Outcome)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(12), ent.PromptTokens)
	assert.Equal(t, int64(3), ent.CompletionTokens)

	// A function tool: the model calls it.
	body = h.ok(t, "/v1/responses", `{"model":"local","input":[{"role":"user","content":[{"type":"input_text","text":"Weather in Paris?"}]}],`+responsesTool+`,"tool_choice":{"type":"function","name":"get_weather"}}`)
	assert.JSONEq(t, `{"model":"local","messages":[{"role":"user","content":"Weather in Paris?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
		"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`, string(up.Last().Body))
	r = decodeResponse(t, body)
	require.Len(t, r.Output, 1)
	assert.Equal(t, "function_call", r.Output[0].Type)
	assert.Equal(t, "call_abc", r.Output[0].CallID)
	assert.Equal(t, "get_weather", r.Output[0].Name)
	assert.JSONEq(t, `{"city":"Paris"}`, r.Output[0].Arguments)

	// The round trip: the call and its output go back with the call id.
	body = h.ok(t, "/v1/responses", `{"model":"local","input":[
		{"role":"developer","content":"Use tools."},
		{"type":"message","role":"user","content":"Weather in Paris?"},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"function_call","id":"fc_1","call_id":"call_abc","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call_output","call_id":"call_abc","output":"18C and sunny"}],`+responsesTool+`}`)
	assert.JSONEq(t, `{"model":"local","messages":[
		{"role":"system","content":"Use tools."},
		{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","content":"18C and sunny","tool_call_id":"call_abc"}],
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`, string(up.Last().Body))
	assert.Equal(t, "Hello", decodeResponse(t, body).Output[0].Content[0].Text)
}

// A streamed Responses request to a chat backend: the chat chunks become
// the Responses event stream, usage requested upstream and charged.
func TestResponsesStreamTranslated(t *testing.T) {
	up := newStub(t, "vllm", chatAnswer)
	h := start(t, config(backend("local", up.URL)))

	code, body, hdr := h.do(t, "/v1/responses", `{"model":"local","input":"hi","stream":true}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "text/event-stream", hdr.Get("Content-Type"))
	assert.Contains(t, string(up.Last().Body), `"stream_options":{"include_usage":true}`)
	evs := responsesEvents(t, body)
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}, eventTypes(evs))
	assert.Equal(t, "Hel", evs[4]["delta"])
	assert.Equal(t, "Hello", evs[6]["text"])
	itemID := evs[2]["item"].(map[string]any)["id"]
	assert.Equal(t, itemID, evs[4]["item_id"])
	done := evs[len(evs)-1]["response"].(map[string]any)
	assert.Equal(t, "completed", done["status"])
	assert.EqualValues(t, 21, done["usage"].(map[string]any)["input_tokens"])
	assert.Equal(t, "Hello", done["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeOKStream, ent.Outcome)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(25), ent.TotalTokens)

	// Text, then a tool call streamed in pieces.
	body = h.ok(t, "/v1/responses", `{"model":"local","input":"Weather in Paris?","stream":true,`+responsesTool+`}`)
	evs = responsesEvents(t, body)
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}, eventTypes(evs))
	call := evs[12]["item"].(map[string]any)
	assert.Equal(t, "call_abc", call["call_id"])
	assert.Equal(t, "get_weather", call["name"])
	assert.Equal(t, `{"city":"Paris"}`, call["arguments"])
	assert.Equal(t, `{"city":"Paris"}`, evs[11]["arguments"])
	assert.EqualValues(t, 1, evs[8]["output_index"])
}

// The stateful features and the built-in tools are refused, in OpenAI's
// error shape, on a backend that does not keep state; nothing is sent.
func TestResponsesStatefulRefusedOnChatBackends(t *testing.T) {
	up := newStub(t, "vllm", chatAnswer)
	h := start(t, config(backend("local", up.URL)))
	for _, tc := range []struct{ body, want string }{
		{`{"model":"local","input":"x","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"model":"local","input":"x","store":true}`, "store: true"},
		{`{"model":"local","input":"x","conversation":"conv_1"}`, "conversation"},
		{`{"model":"local","input":"x","background":true}`, "background: true"},
		{`{"model":"local","input":"x","tools":[{"type":"web_search"}]}`, `built-in tool "web_search"`},
		{`{"model":"local","input":[{"type":"item_reference","id":"msg_1"}]}`, "item_reference"},
	} {
		code, body, _ := h.do(t, "/v1/responses", tc.body)
		require.Equal(t, http.StatusBadRequest, code, body)
		typ, c, msg := providertest.OpenAIError(t, body)
		assert.Equal(t, "invalid_request_error", typ)
		assert.Equal(t, "unsupported_request", c)
		assert.Contains(t, msg, tc.want)
	}
	assert.Zero(t, up.hits.Load())
	// store: false (what Codex sends) is what a chat backend does anyway.
	h.ok(t, "/v1/responses", `{"model":"local","input":"x","store":false}`)
}

// responsesAnswer is an OpenAI Responses upstream: a Response, or its event
// stream, with usage.
func responsesAnswer(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(mustBody(r), `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[],\"usage\":null}}\n\n")
		fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\n")
		fmt.Fprint(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":40,\"output_tokens\":2,\"total_tokens\":42}}}\n\n")
		return
	}
	providertest.JSON(w, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini","output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":36},"user":null,"metadata":{}}`)
}

// To an OpenAI backend the request passes through: /v1/responses, the
// body untouched but the model, the provider key; stateful features go
// with it (OpenAI keeps them); usage read from input/output tokens.
func TestResponsesPassThroughToOpenAI(t *testing.T) {
	up := newStub(t, "openai", responsesAnswer)
	b := cloudBackend("gpt", up.URL, "openai", "gpt-5-mini", proxyapi.Credential{Purpose: "apiKey", Env: "LLMKUBE_GPT_OPENAI_API_KEY"})
	b.Cost = &proxyapi.Cost{PromptUSD: "1", CompletionUSD: "10"}
	h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_GPT_OPENAI_API_KEY": "sk-openai"}))

	in := `{"model":"gpt","input":"hi","previous_response_id":"resp_0","store":true,"tools":[{"type":"web_search"}]}`
	body := h.ok(t, "/v1/responses", in, "Authorization", "Bearer client")
	got := up.Last()
	assert.Equal(t, "/v1/responses", got.Path)
	assert.Equal(t, "Bearer sk-openai", got.Header.Get("Authorization"))
	assert.Equal(t, strings.Replace(in, `"gpt"`, `"gpt-5-mini"`, 1), string(got.Body))
	assert.Equal(t, "Hi", decodeResponse(t, body).Output[0].Content[0].Text)
	ent := h.last(t)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(30), ent.PromptTokens)
	assert.Equal(t, int64(6), ent.CompletionTokens)
	assert.Equal(t, "0.00009", strings.TrimRight(ent.CostUSD, "0"), "30*1/1e6 + 6*10/1e6")

	// Streamed: no stream_options added (the Responses API has no
	// include_usage), the events relayed as they are, the usage of
	// response.completed charged.
	in = `{"model":"gpt","input":"hi","stream":true}`
	body = h.ok(t, "/v1/responses", in)
	assert.Equal(t, `{"model":"gpt-5-mini","input":"hi","stream":true}`, string(up.Last().Body))
	assert.Equal(t, []string{"response.created", "response.output_text.delta", "response.completed"}, eventTypes(responsesEvents(t, body)))
	ent = h.last(t)
	assert.Equal(t, proxyapi.OutcomeOKStream, ent.Outcome)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(42), ent.TotalTokens)
}

// The Anthropic backend takes a Responses request through its chat
// translation: Responses -> chat -> Messages and back, tool calls included.
func TestResponsesThroughAnthropic(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	h := start(t, config(anthropicBackend("claude", fake.URL)), withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))

	body := h.ok(t, "/v1/responses", `{"model":"claude","instructions":"Be kind.","input":"Hello"}`)
	r := decodeResponse(t, body)
	assert.Equal(t, "Hi! My name is Claude.", r.Output[0].Content[0].Text)
	assert.Equal(t, int64(2095), r.Usage.InputTokens)
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "Be kind."}}, fake.Last().JSON()["system"])
	assert.Equal(t, int64(503), h.last(t).CompletionTokens)

	body = h.ok(t, "/v1/responses", `{"model":"claude","input":"Weather?","stream":true,`+responsesTool+`}`)
	evs := responsesEvents(t, body)
	last := evs[len(evs)-1]
	require.Equal(t, "response.completed", last["type"])
	var call map[string]any
	for _, it := range last["response"].(map[string]any)["output"].([]any) {
		if m := it.(map[string]any); m["type"] == "function_call" {
			call = m
		}
	}
	require.NotNil(t, call, body)
	assert.Equal(t, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", call["call_id"])
	ent := h.last(t)
	assert.False(t, ent.TokensEstimated)
	assert.Equal(t, int64(472), ent.PromptTokens)
}

// Under mode: detector the classifier reads a Responses body's
// instructions and its tool outputs: an SSN in either routes to the local
// fail-closed rule, never to the cloud catch-all.
func TestResponsesSensitiveStaysLocal(t *testing.T) {
	local := newStub(t, "local", chatAnswer)
	cloud := newStub(t, "cloud", responsesAnswer)
	cb := cloudBackend("cloud", cloud.URL, "openai", "gpt-5-mini", proxyapi.Credential{Purpose: "apiKey", Env: "K"})
	cfg := config(cb, backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{
		{Name: "sensitive", Strategy: proxyapi.StrategyPrimaryFallback, FailClosed: true, Backends: []string{"local"}, Match: proxyapi.Match{DataClassification: []string{"pii"}}},
		rule("catch-all", proxyapi.StrategyPrimaryFallback, "cloud"),
	}
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	h := start(t, cfg, withEnv(map[string]string{"K": "sk"}))

	for _, body := range []string{
		`{"model":"cloud","input":[{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"customer SSN 536-22-8410"}]}`,
		`{"model":"cloud","input":[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"SSN 536\u002d22\u002d8410"}]}]}`,
		`{"model":"cloud","instructions":"The user's SSN is 536-22-8410.","input":"hi"}`,
		`{"model":"cloud","input":[{"role":"user","content":[{"type":"input_text","text":"my ssn: 536-22-8410"}]}]}`,
	} {
		code, out, _ := h.do(t, "/v1/responses", body)
		require.Equal(t, 200, code, out)
		ent := h.last(t)
		assert.Equal(t, "sensitive", ent.Rule, body)
		assert.Equal(t, "local", ent.Backend, body)
	}
	assert.Zero(t, cloud.hits.Load(), "no sensitive request reached the cloud")
	code, _, _ := h.do(t, "/v1/responses", `{"model":"cloud","input":"hello"}`)
	require.Equal(t, 200, code)
	assert.Equal(t, "catch-all", h.last(t).Rule)

	// With the local backend down the sensitive request is refused (503 in
	// OpenAI's error shape), never sent to the cloud.
	probeDown(h.srv.Engine(), "local")
	before := cloud.hits.Load()
	code, body, _ := h.do(t, "/v1/responses", `{"model":"cloud","instructions":"SSN 536-22-8410","input":"hi"}`)
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	_, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "fail_closed", c)
	assert.Equal(t, proxyapi.OutcomeFailClosed, h.last(t).Outcome)
	assert.Equal(t, before, cloud.hits.Load())
}

// Policy applies to /v1/responses as to a chat completion: budgets answer
// 429 in OpenAI's error shape; a GET is 405.
func TestResponsesPolicy(t *testing.T) {
	up := newStub(t, "vllm", chatAnswer)
	cfg := config(backend("local", up.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "tokens", Scope: "router", MaxTokens: 20, Window: dur(time.Hour)}}
	h := start(t, cfg)
	h.ok(t, "/v1/responses", `{"model":"local","input":"hi"}`)
	code, _, _ := h.do(t, "/v1/responses", `{"model":"local","input":"hi"}`)
	require.Equal(t, 200, code) // 15 tokens used, under 20 at admission
	code, body, hdr := h.do(t, "/v1/responses", `{"model":"local","input":"hi"}`)
	require.Equal(t, http.StatusTooManyRequests, code, body)
	typ, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "rate_limit_error", typ)
	assert.Equal(t, "budget_exceeded", c)
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	assert.Equal(t, proxyapi.OutcomeBudgetExceeded, h.last(t).Outcome)

	// Spans and GenAI metrics name it a chat operation.
	assert.Equal(t, "chat", telemetry.Operation("/v1/responses"))

	resp, err := h.front.Client().Get(h.front.URL + "/v1/responses")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// FuzzResponsesUsage: the Responses stream scanner reads the same usage
// however the body is cut into writes, and never trusts a negative count.
func FuzzResponsesUsage(f *testing.F) {
	f.Add([]byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}}\n\n"), 7)
	f.Add([]byte("data: {\"response\":{\"usage\":{\"input_tokens\":-3,\"output_tokens\":4}}}\r\ndata: {\"response\":{\"usage\":null}}\n"), 30)
	f.Add([]byte(`{"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`), 0)
	f.Fuzz(func(t *testing.T, body []byte, cut int) {
		var whole, split responsesScanner
		_, _ = whole.Write(body)
		if cut < 0 {
			cut = -cut
		}
		cut %= len(body) + 1
		_, _ = split.Write(body[:cut])
		_, _ = split.Write(body[cut:])
		wu, wok := whole.Usage()
		su, sok := split.Usage()
		require.Equal(t, wok, sok)
		require.Equal(t, wu, su)
		if wok {
			require.GreaterOrEqual(t, wu.PromptTokens, int64(0))
			require.GreaterOrEqual(t, wu.CompletionTokens, int64(0))
		}
		if u, ok := parseResponsesUsage(body); ok {
			require.Positive(t, u.Tokens())
		}
	})
}

// Bedrock takes a Responses request through its chat translation, streams
// and tool calls included; a stream the provider breaks is broken for the
// Responses client too.
func TestResponsesThroughBedrock(t *testing.T) {
	fake := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret}, "us-east-2", testBRModel)
	h := start(t, config(bedrockBackend("nova", fake.URL)), withEnv(bedrockTestEnv))

	body := h.ok(t, "/v1/responses", `{"model":"nova","input":"Hello"}`)
	assert.Equal(t, "Hello! How can I help you today?", decodeResponse(t, body).Output[0].Content[0].Text)
	assert.Equal(t, int64(22), h.last(t).TotalTokens)

	body = h.ok(t, "/v1/responses", `{"model":"nova","stream":true,"input":"Top song?","tools":[{"type":"function","name":"top_song"}]}`)
	evs := responsesEvents(t, body)
	var done map[string]any
	for _, e := range evs {
		if e["type"] == "response.function_call_arguments.done" {
			done = e
		}
	}
	require.NotNil(t, done, body)
	assert.JSONEq(t, `{"sign": "WZPZ"}`, done["arguments"].(string))
	assert.Equal(t, "response.completed", evs[len(evs)-1]["type"])
	ent := h.last(t)
	assert.Equal(t, int64(375), ent.PromptTokens)
	assert.Equal(t, int64(35), ent.CompletionTokens)

	fake.SetMode(providertest.StreamError)
	code, body, _ := h.do(t, "/v1/responses", `{"model":"nova","stream":true,"input":"Hello"}`)
	assert.Equal(t, 200, code)
	assert.NotContains(t, body, "response.completed")
	assert.Equal(t, proxyapi.OutcomeUpstreamAborted, h.last(t).Outcome)
}

// Vertex AI takes a Responses request through its chat translation.
func TestResponsesThroughVertex(t *testing.T) {
	fake := providertest.NewVertex(t, "proj-1", "us-central1", testGemini)
	b := vertexBackend("gem", fake.URL+"/v1/projects/proj-1/locations/us-central1/publishers/google/models")
	h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": fake.ServiceAccountJSON}))

	body := h.ok(t, "/v1/responses", `{"model":"gem","input":"Why is the sky blue?"}`)
	assert.Equal(t, "The sky appears blue because of Rayleigh scattering.", decodeResponse(t, body).Output[0].Content[0].Text)
	assert.Equal(t, int64(16), h.last(t).TotalTokens)

	body = h.ok(t, "/v1/responses", `{"model":"gem","stream":true,"input":"Weather?","tools":[{"type":"function","name":"get_current_weather"}]}`)
	evs := responsesEvents(t, body)
	last := evs[len(evs)-1]
	require.Equal(t, "response.completed", last["type"], body)
	out := last["response"].(map[string]any)["output"].([]any)
	call := out[len(out)-1].(map[string]any)
	assert.Equal(t, "function_call", call["type"])
	assert.Equal(t, "get_current_weather", call["name"])
	assert.JSONEq(t, `{"location":"Boston"}`, call["arguments"].(string))
	ent := h.last(t)
	assert.Equal(t, int64(28), ent.PromptTokens)
	assert.Equal(t, int64(7), ent.CompletionTokens)
}

// Shadowing: a Responses request served by OpenAI (passed through) is
// copied to a local chat server in its own protocol (translated); only the
// served answer is charged and audited.
func TestResponsesShadowTranslated(t *testing.T) {
	primary := newStub(t, "openai", responsesAnswer)
	mirror := newStub(t, "vllm", chatAnswer)
	cfg := config(cloudBackend("gpt", primary.URL, "openai", "gpt-5-mini", proxyapi.Credential{Purpose: "apiKey", Env: "K"}), backend("local", mirror.URL))
	cfg.Rules = []proxyapi.Rule{rule("s", "shadow", "gpt", "local")}
	h := start(t, cfg, withEnv(map[string]string{"K": "sk"}))
	body := h.ok(t, "/v1/responses", `{"model":"gpt","instructions":"Be brief.","input":"hi"}`)
	assert.Equal(t, "Hi", decodeResponse(t, body).Output[0].Content[0].Text)
	require.Eventually(t, func() bool { return mirror.hits.Load() == 1 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, h.srv.Wait(t.Context()))
	copyOf := mirror.Last()
	assert.Equal(t, "/v1/chat/completions", copyOf.Path)
	assert.Equal(t, "true", copyOf.Header.Get("X-Llmkube-Shadow"))
	assert.JSONEq(t, `{"model":"gpt","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`, string(copyOf.Body))
	assert.Equal(t, "/v1/responses", primary.Last().Path)
	assert.Len(t, h.audit.all(), 1)
	assert.Equal(t, int64(36), h.last(t).TotalTokens)
}

// Failover: a translated attempt that fails (5xx) hands the request on to
// the next backend, which takes it in its own protocol.
func TestResponsesFailover(t *testing.T) {
	down := newStub(t, "vllm", statusHandler(http.StatusBadGateway))
	up := newStub(t, "openai", responsesAnswer)
	cfg := config(backend("local", down.URL), cloudBackend("gpt", up.URL, "openai", "gpt-5-mini", proxyapi.Credential{Purpose: "apiKey", Env: "K"}))
	cfg.Rules = []proxyapi.Rule{rule("r", proxyapi.StrategyPrimaryFallback, "local", "gpt")}
	h := start(t, cfg, withEnv(map[string]string{"K": "sk"}))
	body := h.ok(t, "/v1/responses", `{"model":"local","input":"hi"}`)
	assert.Equal(t, "Hi", decodeResponse(t, body).Output[0].Content[0].Text)
	assert.Equal(t, "/v1/chat/completions", down.Last().Path)
	assert.Equal(t, `{"model":"gpt-5-mini","input":"hi"}`, string(up.Last().Body))
	ent := h.last(t)
	assert.Equal(t, "gpt", ent.Backend)
	assert.Equal(t, 2, ent.Attempts)
}
