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
)

// msgToolRound is the second turn of a tool-use round trip as the Anthropic
// SDK sends it: a system prompt as blocks, an image, the assistant's
// tool_use and the user's tool_result with its id.
const msgToolRound = `{"model":"%s","max_tokens":256,"system":[{"type":"text","text":"You are terse."}],` +
	`"tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{"location":{"type":"string"}}}}],` +
	`"tool_choice":{"type":"auto"},"stop_sequences":["END"],"temperature":0.2,"metadata":{"user_id":"u-1"},` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"Weather?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},` +
	`{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"location":"SF"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":[{"type":"text","text":"%s"}]}]}]%s}`

func msgBody(model, toolOutput, extra string) string {
	return fmt.Sprintf(msgToolRound, model, toolOutput, extra)
}

// anthropicShape decodes a Messages error body.
func anthropicShape(t *testing.T, body string) (typ, msg string) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.Equal(t, "error", e.Type, body)
	require.NotEmpty(t, e.Error.Message, body)
	return e.Error.Type, e.Error.Message
}

func TestMessagesPassThroughToAnthropic(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	b := anthropicBackend("claude", fake.URL)
	h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey}))

	body := msgBody("claude", "18C", "")
	code, got, _ := h.do(t, "/v1/messages?beta=true", body, "x-api-key", "client-key", "anthropic-version", "2023-06-01", "anthropic-beta", "tools-2024")
	require.Equal(t, 200, code, got)
	assert.JSONEq(t, echoedAs(t, providertest.AnthropicToolResponse, "claude"), got, "the answer is Anthropic's, untouched but for the model the client asked for (model.go)")
	rec := fake.Last()
	assert.Equal(t, "/v1/messages", rec.Path)
	assert.Equal(t, "beta=true", rec.Query, "the beta client's query goes with it")
	assert.Equal(t, testAnthropicKey, rec.Header.Get("X-Api-Key"), "the backend's key, never the client's")
	assert.Equal(t, "tools-2024", rec.Header.Get("Anthropic-Beta"))
	assert.Equal(t, strings.Replace(body, `"model":"claude"`, `"model":"claude-sonnet-4-20250514"`, 1), string(rec.Body), "only the model is rewritten")
	e := h.last(t)
	assert.Equal(t, int64(384+16), e.PromptTokens, "input and cache reads")
	assert.Equal(t, int64(92), e.CompletionTokens)
	assert.False(t, e.TokensEstimated)

	code, got, hdr := h.do(t, "/v1/messages", msgBody("claude", "18C", `,"stream":true`))
	require.Equal(t, 200, code, got)
	assert.True(t, strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream"))
	assert.Contains(t, got, "event: message_stop")
	assert.NotContains(t, string(fake.Last().Body), "stream_options", "a Messages stream is not asked for OpenAI's usage")
	e = h.last(t)
	assert.Equal(t, int64(472), e.PromptTokens)
	assert.Equal(t, int64(89), e.CompletionTokens)
	assert.True(t, e.Stream)
}

// vllmChat answers a chat completion with a tool call, or a stream of
// text and a tool call, as vLLM does.
func vllmChat(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(mustBody(r), `"stream":true`) {
		providertest.SSE(w,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"content":"lo"}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":"}}]}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"SF\"}"}}]}}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"id":"chatcmpl-9","model":"qwen","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}}`,
			`[DONE]`)
		return
	}
	providertest.JSON(w, `{"id":"chatcmpl-8","object":"chat.completion","model":"qwen","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_5","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"SF\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":10}}}`)
}

func TestMessagesTranslatedToChat(t *testing.T) {
	a := newStub(t, "qwen", vllmChat)
	h := start(t, config(backend("qwen", a.URL)))

	code, got, _ := h.do(t, "/v1/messages?beta=true", msgBody("qwen", "18C", ""))
	require.Equal(t, 200, code, got)
	rec := a.Last()
	assert.Equal(t, "/v1/chat/completions", rec.Path)
	assert.Empty(t, rec.Query)
	assert.JSONEq(t, `{"model":"qwen","max_tokens":256,"temperature":0.2,"stop":["END"],"user":"u-1","tool_choice":"auto",
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}],
		"messages":[{"role":"system","content":"You are terse."},
		{"role":"user","content":[{"type":"text","text":"Weather?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
		{"role":"assistant","content":"Checking.","tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"SF\"}"}}]},
		{"role":"tool","tool_call_id":"toolu_01A","content":"18C"}]}`, string(rec.Body))
	assert.JSONEq(t, `{"id":"msg_8","type":"message","role":"assistant","model":"qwen","stop_reason":"tool_use","stop_sequence":null,
		"content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"call_5","name":"get_weather","input":{"location":"SF"}}],
		"usage":{"input_tokens":20,"output_tokens":9,"cache_read_input_tokens":10}}`, got)
	e := h.last(t)
	assert.Equal(t, int64(30), e.PromptTokens)
	assert.Equal(t, int64(9), e.CompletionTokens)

	code, got, _ = h.do(t, "/v1/messages", msgBody("qwen", "18C", `,"stream":true`))
	require.Equal(t, 200, code, got)
	assert.Contains(t, string(a.Last().Body), `"stream_options":{"include_usage":true}`)
	var names []string
	var text, args string
	for _, ev := range strings.Split(strings.TrimSpace(got), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		require.True(t, ok, ev)
		names = append(names, strings.TrimPrefix(name, "event: "))
		var d struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			ContentBlock json.RawMessage `json:"content_block"`
			Delta        struct {
				Type, Text  string
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage json.RawMessage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &d), data)
		require.Equal(t, strings.TrimPrefix(name, "event: "), d.Type)
		switch d.Type {
		case "content_block_start":
			if d.Index == 1 {
				assert.JSONEq(t, `{"type":"tool_use","id":"call_7","name":"get_weather","input":{}}`, string(d.ContentBlock))
			}
		case "content_block_delta":
			text += d.Delta.Text
			args += d.Delta.PartialJSON
		case "message_delta":
			assert.Equal(t, "tool_use", d.Delta.StopReason)
			assert.JSONEq(t, `{"input_tokens":40,"output_tokens":12}`, string(d.Usage))
		}
	}
	assert.Equal(t, []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, names)
	assert.Equal(t, "Hello", text)
	assert.Equal(t, `{"location":"SF"}`, args)
	e = h.last(t)
	assert.Equal(t, int64(40), e.PromptTokens)
	assert.Equal(t, int64(12), e.CompletionTokens)
	assert.False(t, e.TokensEstimated)
}

// An SSN in a tool_result block is sensitive: under mode detector the
// request follows the fail-closed rule to the local backend.
func TestMessagesSSNInToolResultStaysLocal(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	local := newStub(t, "local", vllmChat)
	cfg := config(anthropicBackend("cloud", fake.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{
		{Name: "sensitive", Strategy: "primary-fallback", FailClosed: true, Backends: []string{"local"}, Match: proxyapi.Match{DataClassification: []string{"pii"}}, PoolActivation: "Wait"},
		rule("rest", "primary-fallback", "cloud"),
	}
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	h := start(t, cfg, withEnv(map[string]string{"LLMKUBE_CLOUD_ANTHROPIC_API_KEY": testAnthropicKey}))

	code, got, _ := h.do(t, "/v1/messages", msgBody("cloud", "patient SSN 536-22-8410", ""))
	require.Equal(t, 200, code, got)
	e := h.last(t)
	assert.Equal(t, "sensitive", e.Rule)
	assert.Equal(t, "local", e.Backend)
	assert.Empty(t, fake.Requests(), "nothing reached the cloud")

	code, got, _ = h.do(t, "/v1/messages", msgBody("cloud", "18C", ""))
	require.Equal(t, 200, code, got)
	assert.Equal(t, "cloud", h.last(t).Backend)

	// The local backend down: fail-closed, 503 in the Messages shape.
	probeDown(h.srv.Engine(), "local")
	code, got, _ = h.do(t, "/v1/messages", msgBody("cloud", "patient SSN 536-22-8410", ""))
	require.Equal(t, http.StatusServiceUnavailable, code, got)
	typ, _ := anthropicShape(t, got)
	assert.Equal(t, "overloaded_error", typ)
	assert.Equal(t, proxyapi.OutcomeFailClosed, h.last(t).Outcome)
	assert.Len(t, fake.Requests(), 1)
}

func TestMessagesRefusalsInAnthropicShape(t *testing.T) {
	up, h, token := jwtProxy(t)
	code, got, hdr := h.do(t, "/v1/messages", msgBody("a", "x", ""))
	require.Equal(t, http.StatusUnauthorized, code, got)
	typ, _ := anthropicShape(t, got)
	assert.Equal(t, "authentication_error", typ)
	assert.NotEmpty(t, hdr.Get("WWW-Authenticate"))
	code, got, _ = h.do(t, "/v1/messages/count_tokens", msgBody("a", "x", ""))
	require.Equal(t, http.StatusUnauthorized, code, got)
	code, got, _ = h.do(t, "/v1/messages", msgBody("a", "x", ""), "x-api-key", "not-a-jwt")
	require.Equal(t, http.StatusUnauthorized, code, got)
	code, got, _ = h.do(t, "/v1/messages", msgBody("a", "x", ""), "x-api-key", token)
	require.Equal(t, 200, code, "the router's token as x-api-key: %s", got)
	rec := up.Last()
	assert.Empty(t, rec.Header.Get("X-Api-Key"), "the caller's token reaches no backend")
	assert.Empty(t, rec.Header.Get("Authorization"))
	code, got, _ = h.do(t, "/v1/messages/count_tokens", `{"model":"a","messages":[{"role":"user","content":"hello"}]}`, "Authorization", "Bearer "+token)
	require.Equal(t, 200, code, got)
	assert.JSONEq(t, `{"input_tokens":15}`, got, "59 bytes / 4, rounded up")

	req, _ := http.NewRequest(http.MethodGet, h.front.URL+"/v1/messages", nil)
	resp, err := h.front.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// Over budget: 429 rate_limit_error with Retry-After.
	a := newStub(t, "a", vllmChat)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "tokens", Scope: "router", MaxTokens: 30, Window: dur(time.Hour)}}
	hb := start(t, cfg)
	code, got, _ = hb.do(t, "/v1/messages", msgBody("a", "x", ""))
	require.Equal(t, 200, code, got)
	code, got, hdr = hb.do(t, "/v1/messages", msgBody("a", "x", ""))
	require.Equal(t, http.StatusTooManyRequests, code, got)
	typ, msg := anthropicShape(t, got)
	assert.Equal(t, "rate_limit_error", typ)
	assert.Contains(t, msg, "budget tokens is exhausted")
	assert.NotEmpty(t, hdr.Get("Retry-After"))

	// An upstream's 4xx comes back in the Messages shape.
	bad := newStub(t, "bad", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`)
	})
	hc := start(t, config(backend("bad", bad.URL)))
	code, got, _ = hc.do(t, "/v1/messages", msgBody("bad", "x", ""))
	require.Equal(t, 400, code, got)
	typ, msg = anthropicShape(t, got)
	assert.Equal(t, "invalid_request_error", typ)
	assert.Equal(t, "max_tokens is too large", msg)
}

// Messages to the providers of the chat path: openai and litellm with the
// provider's key and model, Bedrock through its chat translation.
func TestMessagesThroughChatProviders(t *testing.T) {
	up := newStub(t, "ext", vllmChat)
	for _, tc := range []struct{ provider, key, url string }{
		{"litellm", "LITELLM_MASTER_KEY", up.URL + "/v1"},
		{"openai", "OPENAI_API_KEY", up.URL},
	} {
		b := cloudBackend("ext", tc.url, tc.provider, "team/gpt-4o-mini", proxyapi.Credential{Purpose: "apiKey", Env: "LLMKUBE_EXT_" + tc.key})
		h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_EXT_" + tc.key: "sk-" + tc.provider}))
		code, got, _ := h.do(t, "/v1/messages", `{"model":"ext","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "client-key")
		require.Equal(t, 200, code, got)
		rec := up.Last()
		assert.Equal(t, "/v1/chat/completions", rec.Path)
		assert.Equal(t, "Bearer sk-"+tc.provider, rec.Header.Get("Authorization"))
		assert.Empty(t, rec.Header.Get("X-Api-Key"), "the client's key stays here")
		assert.JSONEq(t, `{"model":"team/gpt-4o-mini","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, string(rec.Body))
		assert.Contains(t, got, `"type":"tool_use","id":"call_5"`)
	}

	fake := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret}, "us-east-2", testBRModel)
	h := start(t, config(bedrockBackend("nova", fake.URL)), withEnv(bedrockTestEnv))
	code, got, _ := h.do(t, "/v1/messages", `{"model":"nova","max_tokens":10,"system":"Be brief.","messages":[{"role":"user","content":"Hello"}]}`)
	require.Equal(t, 200, code, got)
	var m struct {
		Type    string `json:"type"`
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
		Usage   map[string]int64
	}
	require.NoError(t, json.Unmarshal([]byte(got), &m), got)
	assert.Equal(t, "message", m.Type)
	assert.Equal(t, "Hello! How can I help you today?", m.Content[0].Text)
	assert.Equal(t, "end_turn", m.Stop)
	assert.Contains(t, string(fake.Last().Body), "Be brief.")
	e := h.last(t)
	assert.Equal(t, int64(22), e.TotalTokens)
	assert.False(t, e.TokensEstimated)

	code, got, _ = h.do(t, "/v1/messages", `{"model":"nova","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"Top song?"}],"tools":[{"name":"top_song","input_schema":{"type":"object"}}]}`)
	require.Equal(t, 200, code, got)
	assert.Contains(t, got, `"content_block":{"type":"tool_use"`)
	assert.Contains(t, got, `"stop_reason":"tool_use"`)
	assert.Contains(t, got, "event: message_stop")
	e = h.last(t)
	assert.Equal(t, int64(375), e.PromptTokens)
}

// The classifier reads every text a Messages body carries: an SSN in any
// of them keeps the request on the fail-closed local rule.
func TestMessagesClassifierReadsEveryPlace(t *testing.T) {
	const ssn = "536-22-8410"
	local := newStub(t, "local", vllmChat)
	cloud := newStub(t, "cloud", vllmChat)
	cfg := config(backend("cloud", cloud.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{
		{Name: "sensitive", Strategy: "primary-fallback", FailClosed: true, Backends: []string{"local"}, Match: proxyapi.Match{DataClassification: []string{"pii"}}, PoolActivation: "Wait"},
	}
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	h := start(t, cfg)
	for name, body := range map[string]string{
		"system string":           `{"model":"cloud","max_tokens":9,"system":"Customer SSN ` + ssn + `","messages":[{"role":"user","content":"hi"}]}`,
		"system block":            `{"model":"cloud","max_tokens":9,"system":[{"type":"text","text":"SSN ` + ssn + `"}],"messages":[{"role":"user","content":"hi"}]}`,
		"user string":             `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":"SSN ` + ssn + `"}]}`,
		"user text block":         `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":"SSN ` + ssn + `"}]}]}`,
		"tool_use input":          `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"lookup","input":{"ssn":"` + ssn + `"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`,
		"tool_result string":      `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"SSN ` + ssn + `"}]}]}`,
		"tool_result escaped":     `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"SSN \u0035\u0033\u0036-22-8410"}]}]}`,
		"tool_result error block": `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"no record for SSN ` + ssn + `"}]}]}]}`,
		"assistant text":          `{"model":"cloud","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"Your SSN is ` + ssn + `"}]},{"role":"user","content":"thanks"}]}`,
		"tool description":        `{"model":"cloud","max_tokens":9,"tools":[{"name":"lookup","description":"Looks up SSN ` + ssn + `","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`,
	} {
		code, got, _ := h.do(t, "/v1/messages", body)
		require.Equal(t, 200, code, "%s: %s", name, got)
		e := h.last(t)
		assert.Equal(t, "local", e.Backend, name)
		assert.Equal(t, "sensitive", e.Rule, name)
	}
	assert.Zero(t, cloud.hits.Load(), "no sensitive text reached the cloud backend")
}

// A translated stream the upstream cuts before [DONE] is cut for the
// client too, and audited as the upstream's abort.
func TestMessagesTranslatedStreamCut(t *testing.T) {
	a := newStub(t, "qwen", sizedStream("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
	h := start(t, config(backend("qwen", a.URL)))
	code, got, _ := h.do(t, "/v1/messages", `{"model":"qwen","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, code)
	assert.Contains(t, got, `"text":"Hel"`)
	assert.NotContains(t, got, "message_stop")
	e := h.last(t)
	assert.Equal(t, proxyapi.OutcomeUpstreamAborted, e.Outcome)
}

// Messages to Vertex AI through its chat translation, streamed with a tool.
func TestMessagesThroughVertex(t *testing.T) {
	fake := providertest.NewVertex(t, "proj-1", "us-central1", testGemini)
	b := vertexBackend("gem", fake.URL+"/v1/projects/proj-1/locations/us-central1/publishers/google/models")
	h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": fake.ServiceAccountJSON}))
	code, got, _ := h.do(t, "/v1/messages", `{"model":"gem","max_tokens":9,"messages":[{"role":"user","content":"Why is the sky blue?"}]}`)
	require.Equal(t, 200, code, got)
	assert.Contains(t, got, `"text":"The sky appears blue because of Rayleigh scattering."`)
	assert.Equal(t, int64(16), h.last(t).TotalTokens)

	code, got, _ = h.do(t, "/v1/messages", `{"model":"gem","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"Weather?"}],"tools":[{"name":"get_current_weather","input_schema":{"type":"object"}}]}`)
	require.Equal(t, 200, code, got)
	assert.Contains(t, got, `"name":"get_current_weather"`)
	assert.Contains(t, got, `"stop_reason":"tool_use"`)
	e := h.last(t)
	assert.Equal(t, int64(28), e.PromptTokens)
	assert.Equal(t, int64(7), e.CompletionTokens)
}

// Failover across protocols: Anthropic overloaded (529), the rule's next
// backend, an in-cluster model, serves the same request translated. Shadow
// across protocols: Anthropic serves, the shadow copy reaches an in-cluster
// model translated.
func TestMessagesFailoverAndShadowAcrossProtocols(t *testing.T) {
	fake := providertest.NewAnthropic(t, testAnthropicKey)
	fake.SetMode(providertest.Overloaded)
	local := newStub(t, "local", vllmChat)
	env := withEnv(map[string]string{"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey})
	cfg := config(anthropicBackend("claude", fake.URL), backend("local", local.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "claude", "local")}
	h := start(t, cfg, env)
	code, got, _ := h.do(t, "/v1/messages", msgBody("claude", "18C", ""))
	require.Equal(t, 200, code, got)
	assert.Contains(t, got, `"id":"call_5"`, "the local model's answer, in Messages")
	e := h.last(t)
	assert.Equal(t, "local", e.Backend)
	assert.Equal(t, 2, e.Attempts)
	assert.Len(t, fake.Requests(), 1)

	fake.SetMode(providertest.Auto)
	shadow := newStub(t, "shadow", vllmChat)
	cfg = config(anthropicBackend("claude", fake.URL), backend("shadow", shadow.URL))
	cfg.Rules = []proxyapi.Rule{rule("s", "shadow", "claude", "shadow")}
	h = start(t, cfg, env)
	code, got, _ = h.do(t, "/v1/messages", msgBody("claude", "18C", ""))
	require.Equal(t, 200, code, got)
	assert.JSONEq(t, echoedAs(t, providertest.AnthropicToolResponse, "claude"), got)
	require.Eventually(t, func() bool { return shadow.hits.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, "/v1/chat/completions", shadow.Last().Path, "the shadow copy is translated for its backend")
	assert.Contains(t, string(shadow.Last().Body), `"tool_call_id":"toolu_01A"`)
	require.NoError(t, h.srv.Wait(t.Context()))
	assert.Len(t, h.audit.all(), 1)
}

// echoedAs is an upstream's JSON answer as the client sees it: its model
// replaced by the one the client asked for (model.go).
func echoedAs(t *testing.T, answer, model string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(answer), &m))
	m["model"] = model
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
