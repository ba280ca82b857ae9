package providers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTripFunc answers a request with a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// chatUpstream answers every chat completion with body (an event stream
// when ctype says so) and records the request.
func chatUpstream(ctype, body string, got *http.Request, gotBody *[]byte) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		*got = *r
		*gotBody, _ = io.ReadAll(r.Body)
		return newResponse(http.StatusOK, ctype, io.NopCloser(strings.NewReader(body)), -1), nil
	})
}

func responsesCall(t *testing.T, rt http.RoundTripper, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://vllm:8000/v1/responses", strings.NewReader(body))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return resp, string(b) + "\nREAD ERROR: " + err.Error()
	}
	return resp, string(b)
}

func TestResponsesToChat(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"string input, instructions, sampling", `{"model":"m","instructions":"sys","input":"hi","temperature":0.5,"top_p":0.9,"max_output_tokens":9,"user":"u","parallel_tool_calls":false}`,
			`{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}],"temperature":0.5,"top_p":0.9,"max_tokens":9,"user":"u","parallel_tool_calls":false}`},
		{"stream asks for usage", `{"model":"m","input":"hi","stream":true}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"image parts stay parts", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"what is it?"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"low"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]}]}`},
		{"assistant output_text and a following call join one turn", `{"model":"m","input":[{"role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"g","arguments":"{\"a\":1}"},{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"one"},{"type":"input_text","text":"two"}]},{"type":"function_call_output","call_id":"c2","output":"3"}]}`,
			`{"model":"m","messages":[{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"onetwo"},{"role":"tool","tool_call_id":"c2","content":"3"}]}`},
		{"tool choice modes and json schema", `{"model":"m","input":"x","tool_choice":"required","text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}}}`,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required","response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}}}`},
		{"store false and reasoning are not sent", `{"model":"m","input":"x","store":false,"reasoning":{"effort":"low"},"include":["reasoning.encrypted_content"],"metadata":{"a":"b"}}`,
			`{"model":"m","messages":[{"role":"user","content":"x"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, err := ResponsesToChat([]byte(tc.in))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(out))
		})
	}
	for _, tc := range []struct{ in, why string }{
		{`{"model":"m"}`, "input is required"},
		{`{"model":"m","input":[]}`, "input must not be empty"},
		{`{"model":"m","input":"x","previous_response_id":"resp_1"}`, "previous_response_id needs state"},
		{`{"model":"m","input":"x","prompt":{"id":"pmpt_1"}}`, "stored prompt"},
		{`{"model":"m","input":"x","tools":[{"type":"file_search","vector_store_ids":["vs"]}]}`, `built-in tool "file_search"`},
		{`{"model":"m","input":"x","tool_choice":{"type":"web_search_preview"}}`, "tool_choice"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, `"input_file" are not translated`},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]}`, "file_id"},
		{`{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`, "user messages only"},
		{`{"model":"m","input":[{"role":"tool","content":"x"}]}`, `unknown role "tool"`},
		{`{"model":"m","input":[{"type":"function_call","name":"f"}]}`, "call_id and name"},
		{`{"model":"m","input":[{"type":"web_search_call","id":"ws"}]}`, `"web_search_call"`},
		{`{"model":"m","input":5}`, "a string or a list of items"},
	} {
		_, _, err := ResponsesToChat([]byte(tc.in))
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.why, tc.in)
	}
}

func TestResponsesRoundTripper(t *testing.T) {
	var got http.Request
	var gotBody []byte
	rt := Responses(chatUpstream("application/json", `{"id":"c","object":"chat.completion","model":"served","choices":[{"index":0,"message":{"role":"assistant","content":"Partial","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`, &got, &gotBody))
	resp, body := responsesCall(t, rt, `{"model":"m","input":"x","max_output_tokens":5}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Equal(t, "/v1/chat/completions", got.URL.Path)
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, int64(len(gotBody)), got.ContentLength)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	assert.Equal(t, "incomplete", r["status"])
	assert.Equal(t, map[string]any{"reason": "max_output_tokens"}, r["incomplete_details"])
	assert.Equal(t, "served", r["model"])
	assert.Equal(t, map[string]any{"input_tokens": 7.0, "output_tokens": 5.0, "total_tokens": 12.0,
		"input_tokens_details": map[string]any{"cached_tokens": 2.0}, "output_tokens_details": map[string]any{"reasoning_tokens": 1.0}}, r["usage"])
	out := r["output"].([]any)
	require.Len(t, out, 2)
	assert.Equal(t, "Partial", out[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
	assert.Equal(t, "call_1", out[1].(map[string]any)["call_id"])

	// An upstream error is the client's, as it is (OpenAI's error shape).
	rt = Responses(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return errorResponse(http.StatusTooManyRequests, "rate_limit_error", "rate_limited", "slow down"), nil
	}))
	resp, body = responsesCall(t, rt, `{"model":"m","input":"x"}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Contains(t, body, `"slow down"`)

	// A request that cannot be translated never reaches the upstream.
	called := false
	rt = Responses(roundTripFunc(func(r *http.Request) (*http.Response, error) { called = true; return nil, io.EOF }))
	resp, body = responsesCall(t, rt, `{"model":"m","input":"x","background":true}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "background: true")
	assert.False(t, called)
}

func TestResponsesStreamEnds(t *testing.T) {
	stream := func(events ...string) http.RoundTripper {
		var got http.Request
		var b []byte
		return Responses(chatUpstream("text/event-stream", strings.Join(events, ""), &got, &b))
	}
	// A stream cut before its finish_reason is broken, not completed.
	_, body := responsesCall(t, stream(`data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}`+"\n\n"), `{"model":"m","input":"x","stream":true}`)
	assert.Contains(t, body, "READ ERROR: upstream chat stream ended before its finish_reason")
	assert.NotContains(t, body, "response.completed")

	// An upstream error event is the Responses stream's error event.
	_, body = responsesCall(t, stream(`data: {"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`+"\n\n"), `{"model":"m","input":"x","stream":true}`)
	assert.Contains(t, body, "event: error\ndata: ")
	assert.Contains(t, body, `"code":"overloaded"`)
	assert.Contains(t, body, "READ ERROR")

	// finish_reason length: response.incomplete, with the usage.
	_, body = responsesCall(t, stream(`data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"length"}]}`+"\n\n",
		`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`+"\n\n", "data: [DONE]\n\n"), `{"model":"m","input":"x","stream":true}`)
	require.NotContains(t, body, "READ ERROR", body)
	last := body[strings.LastIndex(body, "event: "):]
	assert.True(t, strings.HasPrefix(last, "event: response.incomplete\n"), last)
	assert.Contains(t, last, `"input_tokens":3`)
	assert.Contains(t, last, `"reason":"max_output_tokens"`)

	// Two tool calls: two function_call items, each closed before the next.
	_, body = responsesCall(t, stream(
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`+"\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"k\":"}}]}}]}`+"\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"2}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n",
		"data: [DONE]\n\n"), `{"model":"m","input":"x","stream":true}`)
	var done []map[string]any
	for _, ev := range strings.Split(body, "\n\n") {
		if d, ok := strings.CutPrefix(ev, "event: response.output_item.done\ndata: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(d), &m))
			done = append(done, m["item"].(map[string]any))
		}
	}
	require.Len(t, done, 2, body)
	assert.Equal(t, []any{"a", "f", "{}"}, []any{done[0]["call_id"], done[0]["name"], done[0]["arguments"]})
	assert.Equal(t, []any{"b", "g", `{"k":2}`}, []any{done[1]["call_id"], done[1]["name"], done[1]["arguments"]})
}

// FuzzResponsesToChat: any body either translates to valid chat JSON
// whose messages carry every input text, or is refused; never a panic.
func FuzzResponsesToChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],"tools":[{"type":"function","name":"n"}],"tool_choice":{"type":"function","name":"n"},"stream":true}`,
		`{"input":[{"type":"reasoning"},{"role":"developer","content":"x"}],"text":{"format":{"type":"json_object"}}}`,
		`{"input":[{"content":null}]}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, out, err := ResponsesToChat(body)
		if err != nil {
			return
		}
		require.True(t, json.Valid(out), "%s", out)
		var c struct {
			Messages []json.RawMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(out, &c))
		require.NotEmpty(t, c.Messages)
		// The stream translation of any chat stream ends or fails, never panics.
		var got http.Request
		var b []byte
		rt := Responses(chatUpstream("text/event-stream", "data: "+string(bytes.ReplaceAll(body, []byte("\n"), nil))+"\n\ndata: [DONE]\n\n", &got, &b))
		req, _ := http.NewRequest(http.MethodPost, "http://x/v1/responses", bytes.NewReader([]byte(`{"model":"m","input":"x","stream":true}`)))
		resp, rerr := rt.RoundTrip(req)
		require.NoError(t, rerr)
		_, _ = io.ReadAll(resp.Body)
	})
}

// A custom (freeform) tool, as Codex declares apply_patch: a function of
// one string for the chat backend, a custom_tool_call for the client, its
// input unwrapped, streamed or not.
func TestResponsesCustomTools(t *testing.T) {
	const tool = `"tools":[{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}}]`
	_, out, err := ResponsesToChat([]byte(`{"model":"m",` + tool + `,"tool_choice":{"type":"custom","name":"apply_patch"},"input":[
		{"role":"user","content":"fix it"},
		{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"},
		{"type":"custom_tool_call_output","call_id":"c1","output":"Done!"}]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"model":"m","messages":[
		{"role":"user","content":"fix it"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** End Patch\"}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"Done!"}],
		"tools":[{"type":"function","function":{"name":"apply_patch","description":"Edit files.\n\nThe input must follow this lark grammar:\nstart: patch",
			"parameters":{"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free text"}},"required":["input"],"additionalProperties":false}}}],
		"tool_choice":{"type":"function","function":{"name":"apply_patch"}}}`, string(out))

	var got http.Request
	var b []byte
	rt := Responses(chatUpstream("application/json", `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_p","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\"}"}}]},"finish_reason":"tool_calls"}]}`, &got, &b))
	resp, body := responsesCall(t, rt, `{"model":"m","input":"x",`+tool+`}`)
	require.Equal(t, 200, resp.StatusCode, body)
	var r struct {
		Output []map[string]any `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Len(t, r.Output, 1, body)
	assert.Equal(t, "custom_tool_call", r.Output[0]["type"])
	assert.Equal(t, "call_p", r.Output[0]["call_id"])
	assert.Equal(t, "*** Begin Patch", r.Output[0]["input"])
	assert.NotContains(t, r.Output[0], "arguments")

	rt = Responses(chatUpstream("text/event-stream",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_p","function":{"name":"apply_patch","arguments":"{\"inp"}}]}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ut\":\"*** Begin Patch\"}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n"+
			"data: [DONE]\n\n", &got, &b))
	_, body = responsesCall(t, rt, `{"model":"m","input":"x","stream":true,`+tool+`}`)
	require.NotContains(t, body, "READ ERROR", body)
	var types []string
	var done map[string]any
	for _, ev := range strings.Split(strings.TrimSpace(body), "\n\n") {
		name, data, _ := strings.Cut(strings.TrimPrefix(ev, "event: "), "\ndata: ")
		types = append(types, name)
		if name == "response.custom_tool_call_input.done" {
			require.NoError(t, json.Unmarshal([]byte(data), &done))
		}
	}
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.custom_tool_call_input.delta",
		"response.custom_tool_call_input.done", "response.output_item.done", "response.completed"}, types)
	assert.Equal(t, "*** Begin Patch", done["input"])
}
