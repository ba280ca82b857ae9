package providers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessagesToChatRefusesWhatChatCannotCarry(t *testing.T) {
	for body, want := range map[string]string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`:                   `tools[0]: the server tool "web_search_20250305" runs only on an Anthropic backend`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}`:                           `messages[0]: content[0]: a "document" block is not translated to chat completions`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]}]}]}`: `messages[0]: content[0]: a tool result's "image" block is not translated to chat completions (text only)`,
		`{"model":"m","messages":[{"role":"system","content":"x"}]}`:                                                                               `messages[0]: role must be user or assistant, not "system"`,
		`{"model":"m","messages":[]}`: `messages: at least one message is required`,
		`{"model":"m","container":"c","messages":[{"role":"user","content":"hi"}]}`:                    `container is served only by an Anthropic backend; this request's rule chose an OpenAI-compatible one`,
		`{"model":"m","system":[{"type":"image"}],"messages":[{"role":"user","content":"hi"}]}`:        `system[0]: only text blocks are allowed, not "image"`,
		`{"model":"m","tool_choice":{"type":"sometimes"},"messages":[{"role":"user","content":"hi"}]}`: `tool_choice: unknown type "sometimes"`,
	} {
		_, _, err := MessagesToChat([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, want, err.Error())
	}
}

func TestMessagesToChatOptions(t *testing.T) {
	_, out, err := MessagesToChat([]byte(`{"model":"m","max_tokens":5,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},
		"tools":[{"name":"f"}],"tool_choice":{"type":"any","disable_parallel_tool_use":true},
		"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"boom"},{"type":"text","text":"and?"}]}]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"model":"m","max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"tool_choice":"required","parallel_tool_calls":false,
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}],
		"messages":[{"role":"user","content":"hi"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"toolu_1","content":"Error: boom"},{"role":"user","content":"and?"}]}`, string(out))

	_, out, err = MessagesToChat([]byte(`{"model":"m","tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"},"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	var c struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	require.NoError(t, json.Unmarshal(out, &c))
	assert.JSONEq(t, `{"type":"function","function":{"name":"f"}}`, string(c.ToolChoice))
}

func TestChatToMessagesStopReasons(t *testing.T) {
	for _, c := range []struct{ finish, matched, want, seq string }{
		{"stop", `null`, "end_turn", ""},
		{"stop", `"END"`, "stop_sequence", "END"},
		{"stop", `"OTHER"`, "end_turn", ""},
		{"length", `null`, "max_tokens", ""},
		{"tool_calls", `null`, "tool_use", ""},
		{"content_filter", `null`, "refusal", ""},
	} {
		b, err := ChatToMessages([]byte(`{"id":"chatcmpl-x","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"`+c.finish+`","stop_reason":`+c.matched+`}]}`), "req-model", []string{"END"})
		require.NoError(t, err)
		var m struct {
			Model        string  `json:"model"`
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}
		require.NoError(t, json.Unmarshal(b, &m))
		assert.Equal(t, c.want, m.StopReason, c.finish+" "+c.matched)
		assert.Equal(t, "req-model", m.Model, "the request's model when the upstream names none")
		if c.seq != "" {
			require.NotNil(t, m.StopSequence)
			assert.Equal(t, c.seq, *m.StopSequence)
		} else {
			assert.Nil(t, m.StopSequence)
		}
	}
}

// TestErrorTypes holds the error type each API names a status with: the
// Messages API names the client errors as OpenAI does, its own way the
// too-large, overloaded and server ones.
func TestErrorTypes(t *testing.T) {
	for status, want := range map[int][2]string{
		400: {"invalid_request_error", "invalid_request_error"},
		401: {"authentication_error", "authentication_error"},
		403: {"permission_error", "permission_error"},
		404: {"not_found_error", "not_found_error"},
		413: {"invalid_request_error", "request_too_large"},
		422: {"invalid_request_error", "invalid_request_error"},
		429: {"rate_limit_error", "rate_limit_error"},
		500: {"server_error", "api_error"},
		503: {"server_error", "overloaded_error"},
		529: {"server_error", "overloaded_error"},
	} {
		assert.Equal(t, want[0], errorType(status), status)
		assert.Equal(t, want[1], MessagesErrorType(status), status)
	}
}
