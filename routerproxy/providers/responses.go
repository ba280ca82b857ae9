// The OpenAI Responses API (POST /v1/responses) served by a backend that
// speaks chat completions: the request is translated to a chat completion,
// sent through the backend's own path (an OpenAI-compatible server, or a
// provider translator of this package: the chat completion is what they
// already take), and the answer translated back, streams included.
//
// Reference: https://platform.openai.com/docs/api-reference/responses

package providers

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ResponsesPath is the client path of the Responses API.
const ResponsesPath = "/v1/responses"

// Responses wraps next, a round tripper that takes chat completions (an
// OpenAI-compatible upstream's transport, or a Provider), into one that
// takes Responses requests and answers in the Responses API's shapes. A
// request it cannot express as a chat completion (a stateful feature, a
// built-in tool) gets an OpenAI-shaped 400; next is not called.
func Responses(next http.RoundTripper) http.RoundTripper {
	return viaChat[*responsesRequest]{next: next, endpoint: "/responses", toChat: ResponsesToChat,
		refuse:  func(err error) *http.Response { return unsupported("responses", err) },
		prepare: func(up *http.Request) { up.Header.Set("Content-Type", "application/json") },
		answer:  responsesAnswer}
}

// responsesAnswer is the Responses answer of a chat upstream's.
func responsesAnswer(rr *responsesRequest, resp *http.Response) *http.Response {
	if resp.StatusCode != http.StatusOK {
		// An OpenAI-shaped error (the Responses API's errors have the same
		// shape), or a 5xx the proxy fails over from.
		return resp
	}
	base, custom := rr.echo(), rr.customTools()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		st := &responsesStream{sse: newSSEReader(resp.Body), resp: base, custom: custom}
		return converted(resp, true, &streamBody{src: resp.Body, step: st.step})
	}
	return converted(resp, false, &lazyBody{src: resp.Body, convert: func(b []byte) ([]byte, error) {
		return chatToResponse(b, base, custom)
	}})
}

// responsesRequest is the Responses request, as far as it is translated;
// members not named here (metadata, include, reasoning, truncation,
// service_tier, prompt_cache_key, safety_identifier, top_logprobs, text's
// verbosity) have no chat completions counterpart every backend takes and
// are not sent (docs/api-responses.md).
type responsesRequest struct {
	Model             string            `json:"model"`
	Input             json.RawMessage   `json:"input"`
	Instructions      *string           `json:"instructions"`
	Tools             []json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	MaxOutputTokens   *int64            `json:"max_output_tokens"`
	Temperature       *float64          `json:"temperature"`
	TopP              *float64          `json:"top_p"`
	Stream            bool              `json:"stream"`
	User              string            `json:"user"`
	Text              *struct {
		Format json.RawMessage `json:"format"`
	} `json:"text"`
	// The stateful features: refused (StatefulFeature).
	Store              *bool           `json:"store"`
	PreviousResponseID json.RawMessage `json:"previous_response_id"`
	Conversation       json.RawMessage `json:"conversation"`
	Background         *bool           `json:"background"`
	Prompt             json.RawMessage `json:"prompt"`
}

// StatefulFeature names the stateful feature a Responses request asks for
// that only a backend keeping state (OpenAI itself) can serve, or "".
func (r *responsesRequest) statefulFeature() string {
	switch {
	case present(r.PreviousResponseID):
		return "previous_response_id"
	case present(r.Conversation):
		return "conversation"
	case r.Store != nil && *r.Store:
		return "store: true"
	case r.Background != nil && *r.Background:
		return "background: true"
	case present(r.Prompt):
		return "prompt (a stored prompt template)"
	}
	return ""
}

// customTools are the names of the request's custom (freeform) tools,
// which a chat backend sees as functions of one string argument, "input".
func (r *responsesRequest) customTools() map[string]bool {
	var out map[string]bool
	for _, raw := range r.Tools {
		var t struct{ Type, Name string }
		if json.Unmarshal(raw, &t) == nil && t.Type == "custom" {
			if out == nil {
				out = map[string]bool{}
			}
			out[t.Name] = true
		}
	}
	return out
}

// customArguments are a custom tool call's arguments as the chat backend
// sees them; customInput reads the input back (the arguments as they are
// when the model did not write the one-member object).
func customArguments(input string) string {
	b, _ := json.Marshal(map[string]string{"input": input})
	return string(b)
}

func customInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) == nil && a.Input != nil {
		return *a.Input
	}
	return args
}

// ResponsesToChat translates a Responses request body to a chat completions
// body (stream_options.include_usage set on a stream, so usage reaches the
// budgets). The error says what cannot be translated.
func ResponsesToChat(body []byte) (*responsesRequest, []byte, error) {
	var r responsesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, errf("the request body is not a Responses request: %v", err)
	}
	if f := r.statefulFeature(); f != "" {
		return nil, nil, errf("%s needs state kept between requests, which this router does not keep; only a backend with provider openai (passed through) serves it", f)
	}
	out := chatOut{Model: r.Model, ParallelToolCalls: r.ParallelToolCalls, MaxTokens: r.MaxOutputTokens,
		Temperature: r.Temperature, TopP: r.TopP, User: r.User}
	out.streamWithUsage(r.Stream)
	if r.Instructions != nil && *r.Instructions != "" {
		out.Messages = append(out.Messages, chatOutMsg{Role: "system", Content: *r.Instructions})
	}
	msgs, err := inputMessages(r.Input)
	if err != nil {
		return nil, nil, err
	}
	out.Messages = append(out.Messages, msgs...)
	if len(out.Messages) == 0 {
		return nil, nil, errf("input must not be empty")
	}
	if out.Tools, err = chatTools(r.Tools); err != nil {
		return nil, nil, err
	}
	if out.ToolChoice, err = chatToolChoice(r.ToolChoice); err != nil {
		return nil, nil, err
	}
	if r.Text != nil && present(r.Text.Format) {
		if out.ResponseFormat, err = chatResponseFormat(r.Text.Format); err != nil {
			return nil, nil, err
		}
	}
	b, err := json.Marshal(out)
	return &r, b, err
}

// responsesItem is one input item; which members count depends on Type.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

type responsesPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	FileID   string `json:"file_id"`
	Detail   string `json:"detail"`
}

// inputMessages translates input (a string, or a list of items) to chat
// messages: message items by role (developer becomes system), a
// function_call joins the assistant turn before it as a tool call, a
// function_call_output is a tool message, both with their call ids.
// Reasoning items (a model's earlier reasoning, opaque to any other model)
// are left out.
func inputMessages(raw json.RawMessage) ([]chatOutMsg, error) {
	if !present(raw) {
		return nil, errf("input is required")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errf("input: %v", err)
		}
		return []chatOutMsg{{Role: "user", Content: s}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errf("input must be a string or a list of items: %v", err)
	}
	var out []chatOutMsg
	for i, it := range items {
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			m, err := messageItem(i, it)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		case "function_call", "custom_tool_call":
			if it.CallID == "" || it.Name == "" {
				return nil, errf("input[%d]: a %s needs call_id and name", i, typ)
			}
			args := it.Arguments
			if typ == "custom_tool_call" {
				args = customArguments(it.Input)
			}
			tc := toolCallOut(it.CallID, it.Name, args)
			if n := len(out); n > 0 && out[n-1].Role == "assistant" {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, tc)
			} else {
				out = append(out, chatOutMsg{Role: "assistant", ToolCalls: []outToolCall{tc}})
			}
		case "function_call_output", "custom_tool_call_output":
			if it.CallID == "" {
				return nil, errf("input[%d]: a %s needs call_id", i, typ)
			}
			text, err := outputText(it.Output)
			if err != nil {
				return nil, errf("input[%d].output: %v", i, err)
			}
			out = append(out, chatOutMsg{Role: "tool", ToolCallID: it.CallID, Content: text})
		case "reasoning":
			continue
		default:
			return nil, errf("input[%d]: items of type %q are not translated to chat completions (item_reference and the built-in tools' items need OpenAI's own state)", i, typ)
		}
	}
	return out, nil
}

// messageItem is a message item as a chat message: its content a string,
// or parts (input_text, input_image, output_text, refusal).
func messageItem(i int, it responsesItem) (chatOutMsg, error) {
	role := it.Role
	switch role {
	case "user", "assistant", "system":
	case "developer":
		role = "system"
	default:
		return chatOutMsg{}, errf("input[%d]: unknown role %q", i, role)
	}
	if !present(it.Content) {
		return chatOutMsg{}, errf("input[%d]: a message needs content", i)
	}
	if it.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(it.Content, &s); err != nil {
			return chatOutMsg{}, errf("input[%d].content: %v", i, err)
		}
		return chatOutMsg{Role: role, Content: s}, nil
	}
	var parts []responsesPart
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return chatOutMsg{}, errf("input[%d].content must be a string or a list of parts: %v", i, err)
	}
	var out []chatOutPart
	images := false
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, chatOutPart{Type: "text", Text: p.Text})
		case "refusal":
			out = append(out, chatOutPart{Type: "text", Text: p.Refusal})
		case "input_image":
			if p.ImageURL == "" {
				return chatOutMsg{}, errf("input[%d].content[%d]: an input_image by file_id needs OpenAI's file store; send image_url", i, j)
			}
			out = append(out, chatOutPart{Type: "image_url", ImageURL: &chatOutImage{p.ImageURL, p.Detail}})
			images = true
		default:
			return chatOutMsg{}, errf("input[%d].content[%d]: parts of type %q are not translated", i, j, p.Type)
		}
	}
	if images && role != "user" {
		return chatOutMsg{}, errf("input[%d]: images are taken in user messages only", i)
	}
	if !images {
		// Text only: one string, which every chat server takes for every
		// role (assistant and system messages with parts are not).
		var b strings.Builder
		for _, p := range out {
			b.WriteString(p.Text)
		}
		return chatOutMsg{Role: role, Content: b.String()}, nil
	}
	return chatOutMsg{Role: role, Content: out}, nil
}

// outputText is a function_call_output's output: a string, or parts whose
// texts are joined.
func outputText(raw json.RawMessage) (string, error) {
	if !present(raw) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []responsesPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("must be a string or a list of parts: %v", err)
	}
	var b strings.Builder
	for j, p := range parts {
		if p.Type != "input_text" && p.Type != "output_text" {
			return "", fmt.Errorf("parts[%d]: parts of type %q are not translated in a tool output", j, p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// chatTools translates function tools; built-in tools (web_search,
// file_search, code_interpreter, computer_use, mcp, ...) run at OpenAI and
// are refused.
func chatTools(tools []json.RawMessage) ([]chatOutTool, error) {
	var out []chatOutTool
	for i, raw := range tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
			Format      json.RawMessage `json:"format"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, errf("tools[%d]: %v", i, err)
		}
		var format struct {
			Type, Syntax, Definition string
		}
		switch t.Type {
		case "function":
		case "custom":
			// A freeform tool: a function of one string, its grammar (when it
			// has one) told in the description, since chat has no grammars.
			_ = json.Unmarshal(t.Format, &format)
			if format.Type == "grammar" {
				t.Description += "\n\nThe input must follow this " + format.Syntax + " grammar:\n" + format.Definition
			}
			t.Parameters = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free text"}},"required":["input"],"additionalProperties":false}`)
			t.Strict = nil
		default:
			return nil, errf("tools[%d]: the built-in tool %q runs at OpenAI and is served only by a backend with provider openai; declare a function tool", i, t.Type)
		}
		if t.Name == "" {
			return nil, errf("tools[%d]: a function tool needs a name", i)
		}
		var ct chatOutTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Strict = t.Name, t.Description, t.Strict
		if present(t.Parameters) {
			ct.Function.Parameters = t.Parameters
		}
		out = append(out, ct)
	}
	return out, nil
}

// chatToolChoice translates tool_choice: the modes as they are, a function
// by name to chat's nested form.
func chatToolChoice(raw json.RawMessage) (any, error) {
	if !present(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return nil, errf("tool_choice %q is not supported", s)
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || (c.Type != "function" && c.Type != "custom") || c.Name == "" {
		return nil, errf("tool_choice: only auto, none, required and {\"type\":\"function\" or \"custom\",\"name\":...} are translated")
	}
	return map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}, nil
}

// chatResponseFormat translates text.format to response_format.
func chatResponseFormat(raw json.RawMessage) (json.RawMessage, error) {
	var f struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Schema      json.RawMessage `json:"schema"`
		Description string          `json:"description,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, errf("text.format: %v", err)
	}
	switch f.Type {
	case "text":
		return nil, nil
	case "json_object":
		return json.RawMessage(`{"type":"json_object"}`), nil
	case "json_schema":
		js := map[string]any{"name": f.Name, "schema": f.Schema}
		if f.Description != "" {
			js["description"] = f.Description
		}
		if f.Strict != nil {
			js["strict"] = *f.Strict
		}
		b, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": js})
		return b, err
	}
	return nil, errf("text.format type %q is not supported", f.Type)
}

// The Responses API's answer.

// responseObject is a Response (the non-streamed answer, and the
// response.created/in_progress/completed events' payload).
type responseObject struct {
	ID                 string           `json:"id"`
	Object             string           `json:"object"`
	CreatedAt          int64            `json:"created_at"`
	Status             string           `json:"status"`
	Error              any              `json:"error"`
	IncompleteDetails  *incomplete      `json:"incomplete_details"`
	Instructions       *string          `json:"instructions"`
	MaxOutputTokens    *int64           `json:"max_output_tokens"`
	Model              string           `json:"model"`
	Output             []outputItem     `json:"output"`
	ParallelToolCalls  bool             `json:"parallel_tool_calls"`
	PreviousResponseID *string          `json:"previous_response_id"`
	Store              bool             `json:"store"`
	Temperature        *float64         `json:"temperature"`
	TopP               *float64         `json:"top_p"`
	ToolChoice         json.RawMessage  `json:"tool_choice"`
	Tools              json.RawMessage  `json:"tools"`
	Truncation         string           `json:"truncation"`
	Usage              *responsesUsage  `json:"usage"`
	Metadata           map[string]any   `json:"metadata"`
	Text               map[string]any   `json:"text"`
	Reasoning          map[string]*bool `json:"reasoning"`
}

type incomplete struct {
	Reason string `json:"reason"`
}

// outputItem is a message or a function_call of the output.
type outputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   *[]outputPart `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Input     *string       `json:"input,omitempty"` // a custom tool call's
}

type outputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type responsesUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func (u *chatUsage) responses() *responsesUsage {
	if u == nil {
		return nil
	}
	r := &responsesUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: max(u.TotalTokens, u.PromptTokens+u.CompletionTokens)}
	if u.PromptDetails != nil {
		r.InputTokensDetails.CachedTokens = u.PromptDetails.CachedTokens
	}
	if u.CompletionDetails != nil {
		r.OutputTokensDetails.ReasoningTokens = u.CompletionDetails.ReasoningTokens
	}
	return r
}

// echo is the Response the request describes, before any output: the
// members a Response repeats from its request.
func (r *responsesRequest) echo() responseObject {
	o := responseObject{ID: newID("resp_"), Object: "response", CreatedAt: time.Now().Unix(), Status: "in_progress",
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model, Output: []outputItem{},
		ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls, Temperature: r.Temperature, TopP: r.TopP,
		ToolChoice: json.RawMessage(`"auto"`), Tools: json.RawMessage(`[]`), Truncation: "disabled",
		Metadata: map[string]any{}, Text: map[string]any{"format": map[string]string{"type": "text"}},
		Reasoning: map[string]*bool{"effort": nil, "summary": nil}}
	if present(r.ToolChoice) {
		o.ToolChoice = r.ToolChoice
	}
	if len(r.Tools) > 0 {
		o.Tools, _ = json.Marshal(r.Tools)
	}
	if r.Text != nil && present(r.Text.Format) {
		o.Text = map[string]any{"format": r.Text.Format}
	}
	return o
}

// finished sets the Response's status from a chat finish_reason.
func (o *responseObject) finished(reason string) {
	o.Status = "completed"
	switch reason {
	case "length":
		o.Status, o.IncompleteDetails = "incomplete", &incomplete{Reason: "max_output_tokens"}
	case "content_filter":
		o.Status, o.IncompleteDetails = "incomplete", &incomplete{Reason: "content_filter"}
	}
}

// responseModel is the model a translated Response names: the one the
// backend answered with (as the chat path relays it), else the request's.
// The one place the Responses answer's model is decided.
func responseModel(requested, answered string) string {
	if answered != "" {
		return answered
	}
	return requested
}

// newID is a fresh item or response id with its type's prefix.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func messageOutput(id, text, status string) outputItem {
	parts := []outputPart{{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}}
	return outputItem{Type: "message", ID: id, Status: status, Role: "assistant", Content: &parts}
}

func callOutput(id, callID, name, args, status string) outputItem {
	return outputItem{Type: "function_call", ID: id, Status: status, CallID: callID, Name: name, Arguments: &args}
}

func customOutput(id, callID, name, input, status string) outputItem {
	return outputItem{Type: "custom_tool_call", ID: id, Status: status, CallID: callID, Name: name, Input: &input}
}

// chatToResponse translates a chat completion to a Response.
func chatToResponse(b []byte, o responseObject, custom map[string]bool) ([]byte, error) {
	var c chatIn
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("upstream chat completion: %v", err)
	}
	if len(c.Choices) == 0 {
		return nil, errors.New("upstream chat completion has no choices")
	}
	ch := c.Choices[0]
	msg := ch.Message
	if msg == nil {
		msg = &chatInMsg{}
	}
	o.Model = responseModel(o.Model, c.Model)
	text := ""
	if msg.Content != nil {
		text = *msg.Content
	}
	if text != "" || len(msg.ToolCalls) == 0 {
		o.Output = append(o.Output, messageOutput(newID("msg_"), text, "completed"))
	}
	for _, tc := range msg.ToolCalls {
		if custom[tc.Function.Name] {
			o.Output = append(o.Output, customOutput(newID("ctc_"), tc.ID, tc.Function.Name, customInput(tc.Function.Arguments), "completed"))
			continue
		}
		o.Output = append(o.Output, callOutput(newID("fc_"), tc.ID, tc.Function.Name, tc.Function.Arguments, "completed"))
	}
	o.finished(ch.FinishReason)
	o.Usage = c.Usage.responses()
	return json.Marshal(o)
}

// responsesStream translates a chat completions SSE stream to the Responses
// event stream, event by event: the text becomes a message item, each tool
// call a function_call item (its call id kept), and the usage chunk the
// response.completed event's usage.
type responsesStream struct {
	sse     *sseReader
	resp    responseObject
	custom  map[string]bool // the custom tools' names
	seq     int
	started bool
	// cur is the output item being streamed (an index into resp.Output),
	// -1 when none; text and args accumulate its content.
	cur      int
	curCall  int // the chat tool call index cur streams, for function calls
	text     strings.Builder
	finish   string
	finished bool
	usage    *chatUsage
}

// event writes one Responses event: its type as the SSE event name and in
// the payload, with the sequence number.
func (s *responsesStream) event(out *bytes.Buffer, typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, _ := json.Marshal(fields)
	out.WriteString("event: " + typ + "\ndata: ")
	out.Write(b)
	out.WriteString("\n\n")
}

func (s *responsesStream) start(out *bytes.Buffer) {
	if s.started {
		return
	}
	s.started, s.cur = true, -1
	s.event(out, "response.created", map[string]any{"response": s.resp})
	s.event(out, "response.in_progress", map[string]any{"response": s.resp})
}

// closeItem ends the item being streamed.
func (s *responsesStream) closeItem(out *bytes.Buffer) {
	if s.cur < 0 {
		return
	}
	i := s.cur
	it := &s.resp.Output[i]
	it.Status = "completed"
	switch it.Type {
	case "message":
		text := s.text.String()
		(*it.Content)[0].Text = text
		part := (*it.Content)[0]
		s.event(out, "response.output_text.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
		s.event(out, "response.content_part.done", map[string]any{"item_id": it.ID, "output_index": i, "content_index": 0, "part": part})
	case "function_call":
		s.event(out, "response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": i, "name": it.Name, "arguments": *it.Arguments})
	case "custom_tool_call":
		// The input is inside the arguments object: told once it is whole.
		input := customInput(s.text.String())
		*it.Input = input
		s.event(out, "response.custom_tool_call_input.delta", map[string]any{"item_id": it.ID, "output_index": i, "delta": input})
		s.event(out, "response.custom_tool_call_input.done", map[string]any{"item_id": it.ID, "output_index": i, "input": input})
	}
	s.event(out, "response.output_item.done", map[string]any{"output_index": i, "item": *it})
	s.cur = -1
	s.text.Reset()
}

func (s *responsesStream) textDelta(out *bytes.Buffer, d string) {
	if s.cur >= 0 && s.resp.Output[s.cur].Type != "message" {
		s.closeItem(out)
	}
	if s.cur < 0 {
		it := messageOutput(newID("msg_"), "", "in_progress")
		empty := []outputPart{}
		it.Content = &empty
		s.resp.Output = append(s.resp.Output, it)
		s.cur = len(s.resp.Output) - 1
		s.event(out, "response.output_item.added", map[string]any{"output_index": s.cur, "item": it})
		part := outputPart{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}
		*s.resp.Output[s.cur].Content = []outputPart{part}
		s.event(out, "response.content_part.added", map[string]any{"item_id": it.ID, "output_index": s.cur, "content_index": 0, "part": part})
	}
	s.text.WriteString(d)
	s.event(out, "response.output_text.delta", map[string]any{"item_id": s.resp.Output[s.cur].ID, "output_index": s.cur, "content_index": 0, "delta": d, "logprobs": []any{}})
}

func (s *responsesStream) toolDelta(out *bytes.Buffer, tc outToolCall) {
	idx := tc.index()
	if s.cur >= 0 && (s.resp.Output[s.cur].Type == "message" || s.curCall != idx) {
		s.closeItem(out)
	}
	if s.cur < 0 {
		it := callOutput(newID("fc_"), tc.ID, tc.Function.Name, "", "in_progress")
		if s.custom[tc.Function.Name] {
			it = customOutput(newID("ctc_"), tc.ID, tc.Function.Name, "", "in_progress")
		}
		s.resp.Output = append(s.resp.Output, it)
		s.cur, s.curCall = len(s.resp.Output)-1, idx
		s.event(out, "response.output_item.added", map[string]any{"output_index": s.cur, "item": it})
	}
	if d := tc.Function.Arguments; d != "" {
		it := &s.resp.Output[s.cur]
		if it.Type == "custom_tool_call" {
			s.text.WriteString(d)
			return
		}
		*it.Arguments += d
		s.event(out, "response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": s.cur, "delta": d})
	}
}

// step consumes one upstream event and writes the Responses events it
// makes; io.EOF after response.completed.
func (s *responsesStream) step(out *bytes.Buffer) error {
	if !s.started {
		s.start(out) // the client sees the response begin before the first token
		return nil
	}
	_, data, err := s.sse.next()
	if err == io.EOF || (err == nil && string(bytes.TrimSpace(data)) == "[DONE]") {
		if !s.finished {
			return errors.New("upstream chat stream ended before its finish_reason")
		}
		s.closeItem(out)
		s.resp.finished(s.finish)
		s.resp.Usage = s.usage.responses()
		typ := "response.completed"
		if s.resp.Status == "incomplete" {
			typ = "response.incomplete"
		}
		s.event(out, typ, map[string]any{"response": s.resp})
		return io.EOF
	}
	if err != nil {
		return err
	}
	var c chatIn
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("upstream chat stream: %v", err)
	}
	if present(c.Error) {
		var e struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if err := json.Unmarshal(c.Error, &e); err != nil {
			return fmt.Errorf("upstream chat stream: %v", err)
		}
		code := e.Type
		if s, ok := e.Code.(string); ok && s != "" {
			code = s
		}
		s.event(out, "error", map[string]any{"code": code, "message": e.Message, "param": nil})
		return fmt.Errorf("upstream chat stream error: %s", code)
	}
	s.resp.Model = responseModel(s.resp.Model, c.Model)
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if d := ch.Delta; d != nil {
			if d.Content != nil && *d.Content != "" {
				s.textDelta(out, *d.Content)
			}
			for _, tc := range d.ToolCalls {
				s.toolDelta(out, tc)
			}
		}
		if ch.FinishReason != "" {
			s.finish, s.finished = ch.FinishReason, true
		}
	}
	return nil
}
