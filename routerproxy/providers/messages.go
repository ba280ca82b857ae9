package providers

// Anthropic Messages requests (POST /v1/messages) served by any backend:
// passed through untouched to an Anthropic backend (MessagesNative), and
// translated to chat completions and back for every other one
// (MessagesOverChat), which then goes the chat path: an OpenAI-compatible
// upstream, or Bedrock and Vertex through their chat translators.
// Reference: https://docs.anthropic.com/en/api/messages,
// https://docs.anthropic.com/en/docs/build-with-claude/streaming.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// MessagesNative is the round tripper that sends a Messages request to a
// provider that speaks the Messages API itself (anthropic), unchanged but
// for its credential; nil for every other provider. Build it once per
// backend.
func MessagesNative(p Provider) http.RoundTripper {
	a, ok := p.(*anthropic)
	if !ok {
		return nil
	}
	u, err := url.Parse(a.url())
	if err != nil {
		return &broken{err: fmt.Errorf("anthropic: url %q: %v", a.base, err), base: a.base}
	}
	return &anthropicNative{a: a, url: u, key: []string{a.key}}
}

var defaultVersion = []string{AnthropicVersion}

// SpeaksMessages reports whether rt is a MessagesNative round tripper: the
// request goes as it came, with the backend's model.
func SpeaksMessages(rt http.RoundTripper) bool {
	_, ok := rt.(*anthropicNative)
	return ok
}

type anthropicNative struct {
	a   *anthropic
	url *url.URL
	key []string // the X-Api-Key header's value
}

// RoundTrip sends req, the proxy's own request of this attempt (changed in
// place), to the Messages endpoint.
func (n *anthropicNative) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *n.url
	u.RawQuery = req.URL.RawQuery // ?beta=true, as the SDKs' beta client sends it
	req.URL, req.Host = &u, ""
	req.Header.Del("Authorization")
	// Shared, read-only values: no allocation per request.
	req.Header["X-Api-Key"] = n.key
	if req.Header.Get("Anthropic-Version") == "" {
		req.Header["Anthropic-Version"] = defaultVersion
	}
	return n.a.send(req)
}

// MessagesOverChat serves Messages requests through next, a chat
// completions upstream: the request is translated to a chat completion
// (sent to the same base URL's /v1/chat/completions), the answer (a JSON
// completion, a chunk stream or an error) back to the Messages API.
func MessagesOverChat(next http.RoundTripper) http.RoundTripper {
	return viaChat[*MessagesRequest]{next: next, endpoint: "/messages", toChat: MessagesToChat,
		refuse: func(err error) *http.Response {
			return messagesError(http.StatusBadRequest, "invalid_request_error", err.Error())
		},
		prepare: func(up *http.Request) {
			up.URL.RawQuery = "" // ?beta=true is the Messages API's
			up.Header.Del("Anthropic-Version")
			up.Header.Del("Anthropic-Beta")
		},
		answer: messagesAnswer}
}

// messagesAnswer is the Messages answer of a chat upstream's.
func messagesAnswer(mr *MessagesRequest, resp *http.Response) *http.Response {
	switch {
	case resp.StatusCode >= 500:
		return resp // the proxy fails over and never relays it
	case resp.StatusCode != http.StatusOK:
		return chatErrorToMessages(resp)
	}
	stream := mr.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	var step func(*bytes.Buffer) error
	if stream {
		st := &msgStream{sse: newSSEReader(resp.Body), model: mr.Model, stops: mr.StopSequences, blocks: map[int]int{}, cur: -1}
		step = st.step
	}
	return respond(resp, stream, step, func(b []byte) ([]byte, error) { return ChatToMessages(b, mr.Model, mr.StopSequences) })
}

// ---- request ----

// MessagesRequest is the part of a Messages request the translation reads.
// What an OpenAI-compatible model cannot do is refused (server tools,
// containers, MCP servers, documents); thinking, service_tier and other
// Anthropic-only hints are not sent (docs/api-messages.md lists them).
type MessagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     *int64          `json:"max_tokens"`
	System        json.RawMessage `json:"system"`
	Messages      []msgMessage    `json:"messages"`
	StopSequences []string        `json:"stop_sequences"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	TopK          *int64          `json:"top_k"`
	Stream        bool            `json:"stream"`
	Tools         []antTool       `json:"tools"`
	ToolChoice    *antToolChoice  `json:"tool_choice"`
	Metadata      *antMetadata    `json:"metadata"`
	Container     json.RawMessage `json:"container"`
	MCPServers    json.RawMessage `json:"mcp_servers"`
}

type msgMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// MessagesToChat parses a Messages request and translates it to a chat
// completions body (streams ask for usage). An error is the client's 400:
// what the Messages request holds that chat completions cannot express.
func MessagesToChat(body []byte) (*MessagesRequest, []byte, error) {
	var mr MessagesRequest
	if err := json.Unmarshal(body, &mr); err != nil {
		return nil, nil, fmt.Errorf("the body is not a Messages request: %v", err)
	}
	for name, raw := range map[string]json.RawMessage{"container": mr.Container, "mcp_servers": mr.MCPServers} {
		if present(raw) {
			return nil, nil, fmt.Errorf("%s is served only by an Anthropic backend; this request's rule chose an OpenAI-compatible one", name)
		}
	}
	if len(mr.Messages) == 0 {
		return nil, nil, errors.New("messages: at least one message is required")
	}
	out := chatOut{Model: mr.Model, MaxTokens: mr.MaxTokens, Temperature: mr.Temperature, TopP: mr.TopP, TopK: mr.TopK, Stop: mr.StopSequences}
	out.streamWithUsage(mr.Stream)
	if mr.Metadata != nil {
		out.User = mr.Metadata.UserID
	}
	sys, err := systemText(mr.System)
	if err != nil {
		return nil, nil, err
	}
	if sys != "" {
		out.Messages = append(out.Messages, chatOutMsg{Role: "system", Content: sys})
	}
	for i := range mr.Messages {
		msgs, err := chatMessages(&mr.Messages[i])
		if err != nil {
			return nil, nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		out.Messages = append(out.Messages, msgs...)
	}
	for i, t := range mr.Tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, nil, fmt.Errorf("tools[%d]: the server tool %q runs only on an Anthropic backend", i, t.Type)
		}
		var ct chatOutTool
		ct.Type, ct.Function.Name, ct.Function.Description, ct.Function.Parameters = "function", t.Name, t.Description, t.InputSchema
		if !present(ct.Function.Parameters) {
			ct.Function.Parameters = emptySchema
		}
		out.Tools = append(out.Tools, ct)
	}
	if tc := mr.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto", "":
			out.ToolChoice = json.RawMessage(`"auto"`)
		case "any":
			out.ToolChoice = json.RawMessage(`"required"`)
		case "none":
			out.ToolChoice = json.RawMessage(`"none"`)
		case "tool":
			b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}})
			out.ToolChoice = json.RawMessage(b)
		default:
			return nil, nil, fmt.Errorf("tool_choice: unknown type %q", tc.Type)
		}
		if tc.DisableParallelToolUse && len(out.Tools) > 0 {
			out.ParallelToolCalls = ptr(false)
		}
	}
	b, err := json.Marshal(out)
	return &mr, b, err
}

// systemText is the system prompt, a string or text blocks, as one text.
func systemText(raw json.RawMessage) (string, error) {
	if !present(raw) {
		return "", nil
	}
	blocks, err := textOrList(raw, antText, "system: must be a string or an array of text blocks")
	if err != nil {
		return "", err
	}
	var parts []string
	for i, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("system[%d]: only text blocks are allowed, not %q", i, b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// blocks reads a message content: a string is one text block.
func blocks(raw json.RawMessage) ([]antBlock, error) {
	return textOrList(raw, antText, "content must be a string or an array of content blocks")
}

// chatMessages translates one Messages turn: a user turn's tool results
// become tool messages (first, answering the assistant's calls just
// before), its text and images one user message; an assistant turn's text
// and tool uses one assistant message with tool_calls, ids kept.
func chatMessages(m *msgMessage) ([]chatOutMsg, error) {
	bs, err := blocks(m.Content)
	if err != nil {
		return nil, err
	}
	switch m.Role {
	case "user":
		var out []chatOutMsg
		var parts []chatOutPart
		for i, b := range bs {
			switch b.Type {
			case "text":
				parts = append(parts, chatOutPart{Type: "text", Text: b.Text})
			case "image":
				u, err := imageURL(b.Source)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: %v", i, err)
				}
				parts = append(parts, chatOutPart{Type: "image_url", ImageURL: &chatOutImage{URL: u}})
			case "tool_result":
				text, err := toolResultText(b)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: %v", i, err)
				}
				out = append(out, chatOutMsg{Role: "tool", ToolCallID: b.ToolUseID, Content: text})
			default:
				return nil, fmt.Errorf("content[%d]: a %q block is not translated to chat completions", i, b.Type)
			}
		}
		if len(parts) > 0 {
			out = append(out, userMessage(parts))
		}
		return out, nil
	case "assistant":
		msg := chatOutMsg{Role: "assistant"}
		var text []string
		for i, b := range bs {
			switch b.Type {
			case "text":
				text = append(text, b.Text)
			case "tool_use":
				input := b.Input
				if !present(input) {
					input = json.RawMessage(`{}`)
				}
				msg.ToolCalls = append(msg.ToolCalls, toolCallOut(b.ID, b.Name, compactJSON(input)))
			case "thinking", "redacted_thinking":
				// The model's earlier reasoning, signed for Anthropic's own
				// models: another model neither reads nor needs it.
			default:
				return nil, fmt.Errorf("content[%d]: a %q block is not translated to chat completions", i, b.Type)
			}
		}
		if len(text) > 0 || len(msg.ToolCalls) == 0 {
			msg.Content = strings.Join(text, "")
		}
		return []chatOutMsg{msg}, nil
	}
	return nil, fmt.Errorf("role must be user or assistant, not %q", m.Role)
}

// userMessage is a user message of parts: plain text when it is one text.
func userMessage(parts []chatOutPart) chatOutMsg {
	if len(parts) == 1 && parts[0].Type == "text" {
		return chatOutMsg{Role: "user", Content: parts[0].Text}
	}
	return chatOutMsg{Role: "user", Content: parts}
}

// imageURL is an image block's source as an image_url: a data URL for
// base64 data, the URL itself for a url source.
func imageURL(s *antSource) (string, error) {
	switch {
	case s == nil:
		return "", errors.New("an image block needs a source")
	case s.Type == "base64":
		return "data:" + s.MediaType + ";base64," + s.Data, nil
	case s.Type == "url":
		return s.URL, nil
	}
	return "", fmt.Errorf("image source type %q is not translated to chat completions", s.Type)
}

// toolResultText is a tool result's content (a string or text blocks) as
// the tool message's text; an error result says so first.
func toolResultText(b antBlock) (string, error) {
	var text string
	if present(b.Content) {
		bs, err := blocks(b.Content)
		if err != nil {
			return "", err
		}
		var parts []string
		for _, c := range bs {
			if c.Type != "text" {
				return "", fmt.Errorf("a tool result's %q block is not translated to chat completions (text only)", c.Type)
			}
			parts = append(parts, c.Text)
		}
		text = strings.Join(parts, "\n")
	}
	if b.IsError {
		text = "Error: " + text
	}
	return text, nil
}

// ---- response ----

type msgResponse struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []msgOutBlock   `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        msgUsage        `json:"usage"`
	Container    json.RawMessage `json:"container,omitempty"`
}

type msgOutBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type msgUsage struct {
	InputTokens          int64 `json:"input_tokens"`
	OutputTokens         int64 `json:"output_tokens"`
	CacheReadInputTokens int64 `json:"cache_read_input_tokens,omitempty"`
}

// msgUsageOf is a chat usage in Messages terms: cached prompt tokens are
// cache reads, not input.
func msgUsageOf(u *chatUsage) msgUsage {
	if u == nil {
		return msgUsage{}
	}
	out := msgUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptDetails != nil && u.PromptDetails.CachedTokens > 0 && u.PromptDetails.CachedTokens <= u.PromptTokens {
		out.CacheReadInputTokens = u.PromptDetails.CachedTokens
		out.InputTokens -= u.PromptDetails.CachedTokens
	}
	return out
}

// stopReason maps a chat finish_reason (and vLLM's matched stop string)
// to the Messages stop_reason and stop_sequence.
func stopReason(finish string, matched json.RawMessage, stops []string) (string, *string) {
	switch finish {
	case "length":
		return "max_tokens", nil
	case "tool_calls", "function_call":
		return "tool_use", nil
	case "content_filter":
		return "refusal", nil
	}
	var s string
	if json.Unmarshal(matched, &s) == nil && s != "" {
		for _, st := range stops {
			if st == s {
				return "stop_sequence", &s
			}
		}
	}
	return "end_turn", nil
}

// messageID is the Messages id of a chat completion id.
func messageID(id string) string {
	if strings.HasPrefix(id, "msg_") {
		return id
	}
	return "msg_" + strings.TrimPrefix(id, "chatcmpl-")
}

// ChatToMessages converts a chat completion to a Messages answer; model is
// echoed when the upstream names none.
func ChatToMessages(b []byte, model string, stops []string) ([]byte, error) {
	var c chatIn
	if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) == 0 || c.Choices[0].Message == nil {
		return nil, errors.New("the upstream's chat completion could not be read")
	}
	if c.Model != "" {
		model = c.Model
	}
	ch := c.Choices[0]
	out := msgResponse{ID: messageID(c.ID), Type: "message", Role: "assistant", Model: model, Content: []msgOutBlock{}, Usage: msgUsageOf(c.Usage)}
	if t := ch.Message.Content; t != nil && *t != "" {
		out.Content = append(out.Content, msgOutBlock{Type: "text", Text: t})
	}
	for _, tc := range ch.Message.ToolCalls {
		args, err := argsObject(tc.Function.Arguments)
		if err != nil {
			args = json.RawMessage(`{}`)
		}
		out.Content = append(out.Content, msgOutBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: args})
	}
	reason, seq := stopReason(ch.FinishReason, ch.StopReason, stops)
	out.StopReason, out.StopSequence = &reason, seq
	return json.Marshal(out)
}

// ---- stream ----

// msgStream turns chat.completion.chunk events into Messages events:
// message_start, a content block per text run and per tool call
// (text_delta, input_json_delta), message_delta with the stop reason and
// usage, message_stop.
type msgStream struct {
	sse     *sseReader
	model   string
	stops   []string
	started bool
	cur     int         // the open block's index, -1 for none
	curTool int         // the open block's tool call index, -1 for text
	blocks  map[int]int // tool call index → block index
	next    int         // the next block's index
	finish  string
	matched json.RawMessage
	usage   *chatUsage
	done    bool
}

func writeEvent(out *bytes.Buffer, name string, v any) {
	b, _ := json.Marshal(v)
	out.WriteString("event: " + name + "\ndata: ")
	out.Write(b)
	out.WriteString("\n\n")
}

func (s *msgStream) start(out *bytes.Buffer, id, model string) {
	if s.started {
		return
	}
	s.started = true
	if model == "" {
		model = s.model
	}
	writeEvent(out, "message_start", map[string]any{"type": "message_start", "message": msgResponse{
		ID: messageID(id), Type: "message", Role: "assistant", Model: model, Content: []msgOutBlock{}}})
	writeEvent(out, "ping", map[string]string{"type": "ping"})
}

func (s *msgStream) closeBlock(out *bytes.Buffer) {
	if s.cur >= 0 {
		writeEvent(out, "content_block_stop", map[string]any{"type": "content_block_stop", "index": s.cur})
		s.cur = -1
	}
}

func (s *msgStream) openBlock(out *bytes.Buffer, block msgOutBlock, tool int) {
	s.closeBlock(out)
	s.cur, s.curTool = s.next, tool
	s.next++
	writeEvent(out, "content_block_start", map[string]any{"type": "content_block_start", "index": s.cur, "content_block": block})
}

func (s *msgStream) step(out *bytes.Buffer) error {
	if s.done {
		return io.EOF
	}
	_, data, err := s.sse.next()
	if err == io.EOF {
		return errors.New("the upstream's chat stream ended without [DONE]")
	}
	if err != nil {
		return err
	}
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return s.end(out)
	}
	var c chatIn
	if err := json.Unmarshal(data, &c); err != nil {
		return errors.New("the upstream's chat stream sent an event that is not JSON")
	}
	if present(c.Error) {
		s.start(out, c.ID, c.Model)
		writeEvent(out, "error", map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": "upstream stream error: " + string(c.Error)}})
		s.done = true
		return errors.New("the upstream's chat stream reported an error")
	}
	s.start(out, c.ID, c.Model)
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.FinishReason != "" {
			s.finish, s.matched = ch.FinishReason, ch.StopReason
		}
		d := ch.Delta
		if d == nil {
			continue
		}
		if d.Content != nil && *d.Content != "" {
			if s.cur < 0 || s.curTool >= 0 {
				s.openBlock(out, msgOutBlock{Type: "text", Text: strp("")}, -1)
			}
			writeEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": s.cur, "delta": map[string]string{"type": "text_delta", "text": *d.Content}})
		}
		for _, tc := range d.ToolCalls {
			i := tc.index()
			bi, seen := s.blocks[i]
			if !seen {
				s.openBlock(out, msgOutBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(`{}`)}, i)
				s.blocks[i] = s.cur
				bi = s.cur
			} else if bi != s.cur {
				// Interleaved calls: Messages blocks do not interleave.
				return errors.New("the upstream's chat stream interleaved tool calls")
			}
			if tc.Function.Arguments != "" {
				writeEvent(out, "content_block_delta", map[string]any{"type": "content_block_delta", "index": bi, "delta": map[string]string{"type": "input_json_delta", "partial_json": tc.Function.Arguments}})
			}
		}
	}
	return nil
}

// end closes the open block and writes message_delta (stop reason and
// usage) and message_stop.
func (s *msgStream) end(out *bytes.Buffer) error {
	s.start(out, "", "")
	s.closeBlock(out)
	reason, seq := stopReason(s.finish, s.matched, s.stops)
	u := msgUsageOf(s.usage)
	writeEvent(out, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": seq}, "usage": u})
	writeEvent(out, "message_stop", map[string]string{"type": "message_stop"})
	s.done = true
	return io.EOF
}

// ---- errors ----

// MessagesErrorType is the Messages error type of an HTTP status.
func MessagesErrorType(status int) string {
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case status == http.StatusServiceUnavailable || status == 529:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	}
	return errorType(status) // the client errors are named as OpenAI names them
}

// AppendMessagesError appends a Messages error body.
func AppendMessagesError(dst []byte, typ, msg string) []byte {
	b, _ := json.Marshal(msg)
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = strconv.AppendQuote(dst, typ) // typ is one of ours: plain ASCII
	dst = append(dst, `,"message":`...)
	dst = append(dst, b...)
	return append(dst, "}}\n"...)
}

func messagesError(status int, typ, msg string) *http.Response {
	b := AppendMessagesError(nil, typ, msg)
	return newResponse(status, "application/json", newBytesBody(b), int64(len(b)))
}

// chatErrorToMessages converts a chat upstream's error answer (below 500)
// to a Messages error with the same status and message.
func chatErrorToMessages(resp *http.Response) *http.Response {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &e)
	msg := e.Error.Message
	if msg == "" {
		msg = e.Message
	}
	if msg == "" {
		msg = "upstream answered status " + strconv.Itoa(resp.StatusCode)
	}
	out := messagesError(resp.StatusCode, MessagesErrorType(resp.StatusCode), msg)
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		out.Header.Set("Retry-After", ra)
	}
	out.Request = resp.Request
	return out
}
