package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Anthropic is a fake of the Anthropic Messages API
// (https://docs.anthropic.com/en/api/messages).
type Anthropic struct {
	*httptest.Server
	recorder
	Key string
}

// NewAnthropic starts a fake that accepts only key.
func NewAnthropic(t testing.TB, key string) *Anthropic {
	a := &Anthropic{Key: key}
	a.Server = start(t, a.serve)
	return a
}

// anthropicError is the error shape of https://docs.anthropic.com/en/api/errors.
func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_018EeWyXxfu5pfWkrYcMdjWG")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_018EeWyXxfu5pfWkrYcMdjWG"}`, typ, msg)
}

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	rec := a.Record(r)
	// Wire checks: https://docs.anthropic.com/en/api/overview (headers) and
	// https://docs.anthropic.com/en/api/messages (body).
	if r.Method != http.MethodPost || rec.Path != "/v1/messages" {
		anthropicError(w, http.StatusNotFound, "not_found_error", "Not found: "+r.Method+" "+rec.Path)
		return
	}
	if r.Header.Get("X-Api-Key") != a.Key {
		anthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	if !knownAnthropicVersion(r.Header.Get("Anthropic-Version")) || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "" {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required; content-type must be application/json")
		return
	}
	offered, stream, f := checkMessages(rec.Body)
	a.respond(w, anthropicError, anthropicFaults, f, offered, func(mode Mode, tool bool) { writeMessages(w, mode, tool, stream) })
}

// knownAnthropicVersion reports whether v is an API version Anthropic
// serves: 2023-06-01 (what the chat translation sends) or a later dated
// version (what a newer SDK sends through the Messages pass-through).
func knownAnthropicVersion(v string) bool {
	d, err := time.Parse(time.DateOnly, v)
	return err == nil && !d.Before(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC))
}

// nonEmptyContent reports whether a message's content is a non-empty
// string or a non-empty array of blocks.
func nonEmptyContent(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s != ""
	}
	var blocks []json.RawMessage
	return json.Unmarshal(raw, &blocks) == nil && len(blocks) > 0
}

// checkMessages checks a Messages request body as Anthropic validates it;
// offered says it offers tools, stream that it asks for a stream.
func checkMessages(data []byte) (offered, stream bool, f *fault) {
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"` // a string or blocks
		} `json:"messages"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Model == "" || body.MaxTokens <= 0 || len(body.Messages) == 0 {
		return false, false, invalid(anthropicFaults, "model, max_tokens and messages are required")
	}
	for _, m := range body.Messages {
		if (m.Role != "user" && m.Role != "assistant") || !nonEmptyContent(m.Content) {
			return false, false, invalid(anthropicFaults, "messages: roles must be user or assistant with content")
		}
	}
	return len(body.Tools) > 0, body.Stream, nil
}

// writeMessages answers a Messages request, streamed or not.
func writeMessages(w http.ResponseWriter, mode Mode, tool, stream bool) {
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		for _, e := range streamFor(mode, tool, anthropicTextStream, anthropicToolStream, anthropicErrorStream) {
			fmt.Fprint(w, e)
			flush(w)
		}
		return
	}
	writeAnswer(w, "application/json", tool, AnthropicTextResponse, AnthropicToolResponse)
}

// anthropicFaults are Anthropic's answers in the failing modes.
var anthropicFaults = map[Mode]fault{
	RateLimited: {status: http.StatusTooManyRequests, code: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", retryAfter: "7"},
	Overloaded:  {status: 529, code: "overloaded_error", message: "Overloaded"},
	BadRequest:  {status: http.StatusBadRequest, code: "invalid_request_error", message: "messages.0.content: text content blocks must be non-empty"},
}

// AnthropicTextResponse is the example response of
// https://docs.anthropic.com/en/api/messages ("Hi! My name is Claude.").
const AnthropicTextResponse = `{
  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-20250514",
  "content": [{"type": "text", "text": "Hi! My name is Claude."}],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}`

// AnthropicToolResponse is the tool_use example of
// https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use.
const AnthropicToolResponse = `{
  "id": "msg_01Aq9w938a90dw8q",
  "model": "claude-sonnet-4-20250514",
  "stop_reason": "tool_use",
  "role": "assistant",
  "type": "message",
  "content": [
    {"type": "text", "text": "I'll check the current weather in San Francisco for you."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "San Francisco, CA", "unit": "celsius"}}
  ],
  "usage": {"input_tokens": 384, "output_tokens": 92, "cache_read_input_tokens": 16}
}`

// anthropicTextStream is the "Basic streaming request" example of
// https://docs.anthropic.com/en/docs/build-with-claude/streaming.
var anthropicTextStream = []string{
	"event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"id\": \"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"model\": \"claude-opus-4-20250514\", \"stop_reason\": null, \"stop_sequence\": null, \"usage\": {\"input_tokens\": 25, \"output_tokens\": 1}}}\n\n",
	"event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"text\": \"\"}}\n\n",
	"event: ping\ndata: {\"type\": \"ping\"}\n\n",
	"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"Hello\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": \"!\"}}\n\n",
	"event: content_block_stop\ndata: {\"type\": \"content_block_stop\", \"index\": 0}\n\n",
	"event: message_delta\ndata: {\"type\": \"message_delta\", \"delta\": {\"stop_reason\": \"end_turn\", \"stop_sequence\":null}, \"usage\": {\"output_tokens\": 15}}\n\n",
	"event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n",
}

// anthropicToolStream is the "Streaming request with tool use" example of
// https://docs.anthropic.com/en/docs/build-with-claude/streaming.
var anthropicToolStream = []string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_014p7gG3wDgGV9EUtLvnow3U\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-20250514\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2},\"content\":[],\"stop_reason\":null}}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
	"event: ping\ndata: {\"type\": \"ping\"}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Okay\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\", let's check the weather for San Francisco, CA:\"}}\n\n",
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\":\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"San Francisco, CA\\\"\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\", \\\"unit\\\": \\\"fahrenheit\\\"}\"}}\n\n",
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

// anthropicErrorStream ends with the in-stream error event of
// https://docs.anthropic.com/en/docs/build-with-claude/streaming ("Error events").
var anthropicErrorStream = []string{
	anthropicTextStream[0],
	anthropicTextStream[1],
	anthropicTextStream[3],
	"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n",
}
