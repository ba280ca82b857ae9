// The OpenAI chat completions wire types and answers the translators read
// and write; the OpenAI and LiteLLM backends themselves pass through the
// proxy untranslated.

package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// The OpenAI chat completions request, as far as it is translated.
// Reference: https://platform.openai.com/docs/api-reference/chat/create
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
	Stream              bool            `json:"stream"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	N                   *int            `json:"n"`
	User                string          `json:"user"`
	Functions           json.RawMessage `json:"functions"`
	FunctionCall        json.RawMessage `json:"function_call"`

	stops  []string
	choice toolChoice
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`

	parts []contentPart
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`

	image *image
}

// image is an image_url part: a data URL (mediaType + base64 data) or a
// remote URL.
type image struct {
	mediaType string
	data      string
	url       string
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolChoice is the parsed tool_choice: mode "" (unset), auto, none,
// required or function (with name).
type toolChoice struct {
	mode string
	name string
}

func parseChat(body []byte) (*chatRequest, error) {
	var r chatRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errf("the request body is not a chat completions request: %v", err)
	}
	for _, check := range [...]func() error{r.checkOptions, r.parseStop, r.checkTools, r.parseToolChoice, r.parseMessages} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// checkOptions refuses what no provider translates: no messages, more than
// one choice, the deprecated functions.
func (r *chatRequest) checkOptions() error {
	if len(r.Messages) == 0 {
		return errf("messages must not be empty")
	}
	if r.N != nil && *r.N > 1 {
		return errf("n > 1 is not supported")
	}
	if present(r.Functions) || present(r.FunctionCall) {
		return errf("the deprecated functions/function_call fields are not translated; use tools/tool_choice")
	}
	return nil
}

// present reports whether a raw field was sent with a value other than null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// textOrList decodes a member that is a string or an array of T, as the
// chat, Messages and Responses APIs write content: a string is one item,
// text's of it. bad is the error when it is neither.
func textOrList[T any](raw json.RawMessage, text func(string) T, bad string) ([]T, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []T{text(s)}, nil
	}
	var list []T
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New(bad)
	}
	return list, nil
}

// parseStop reads stop, a string or an array of strings, into stops.
func (r *chatRequest) parseStop() error {
	if !present(r.Stop) {
		return nil
	}
	var one string
	if json.Unmarshal(r.Stop, &one) == nil {
		r.stops = []string{one}
	} else if err := json.Unmarshal(r.Stop, &r.stops); err != nil {
		return errf("stop must be a string or an array of strings")
	}
	return nil
}

// checkTools refuses tools other than named functions.
func (r *chatRequest) checkTools() error {
	for _, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return errf("only tools of type function with a name are supported")
		}
	}
	return nil
}

// parseToolChoice reads tool_choice, a mode or a named function, into
// choice.
func (r *chatRequest) parseToolChoice() error {
	if !present(r.ToolChoice) {
		return nil
	}
	var s string
	if json.Unmarshal(r.ToolChoice, &s) == nil {
		switch s {
		case "auto", "none", "required":
			r.choice.mode = s
			return nil
		}
		return errf("tool_choice %q is not supported", s)
	}
	var o struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(r.ToolChoice, &o) != nil || o.Type != "function" || o.Function.Name == "" {
		return errf("tool_choice must be auto, none, required or {type: function, function: {name}}")
	}
	r.choice = toolChoice{mode: "function", name: o.Function.Name}
	return nil
}

// parseMessages checks each message and parses its content.
func (r *chatRequest) parseMessages() error {
	for i := range r.Messages {
		if err := r.Messages[i].parse(i); err != nil {
			return err
		}
	}
	return nil
}

// parse checks message i's role, tool call id and tool calls, and parses
// its content into parts.
func (m *chatMessage) parse(i int) error {
	switch m.Role {
	case "system", "developer", "user", "assistant", "tool":
	default:
		return errf("messages[%d]: role %q is not supported", i, m.Role)
	}
	parts, err := parseContent(m.Content)
	if err != nil {
		return errf("messages[%d]: %v", i, err)
	}
	m.parts = parts
	if m.Role == "tool" && m.ToolCallID == "" {
		return errf("messages[%d]: a tool message needs tool_call_id", i)
	}
	for j, tc := range m.ToolCalls {
		if tc.Function.Name == "" || tc.ID == "" {
			return errf("messages[%d].tool_calls[%d]: id and function.name are required", i, j)
		}
		if _, err := argsObject(tc.Function.Arguments); err != nil {
			return errf("messages[%d].tool_calls[%d]: %v", i, j, err)
		}
	}
	return nil
}

func parseContent(raw json.RawMessage) ([]contentPart, error) {
	if !present(raw) {
		return nil, nil
	}
	parts, err := textOrList(raw, func(s string) contentPart { return contentPart{Type: "text", Text: s} },
		"content must be a string or an array of content parts")
	if err != nil {
		return nil, err
	}
	for i := range parts {
		p := &parts[i]
		switch p.Type {
		case "text":
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, errors.New("image_url part without url")
			}
			img, err := parseImage(p.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			p.image = img
		default:
			return nil, errors.New("content part type " + strconv.Quote(p.Type) + " is not supported")
		}
	}
	return parts, nil
}

// parseImage reads a data URL (data:<media type>;base64,<data>) or keeps a
// remote URL.
func parseImage(u string) (*image, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mt, b64 := strings.CutSuffix(meta, ";base64")
		if !ok || !b64 || !strings.HasPrefix(mt, "image/") {
			return nil, errors.New("image data URLs must be data:image/<type>;base64,<data>")
		}
		return &image{mediaType: mt, data: data}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "gs://") {
		return &image{url: u, mediaType: mediaTypeFromName(u)}, nil
	}
	return nil, errors.New("image_url must be a data URL or an http(s) URL")
}

func mediaTypeFromName(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	switch strings.ToLower(u[strings.LastIndexByte(u, '.')+1:]) {
	case "png":
		return "image/png"
	case "jpg", "jpeg":
		return "image/jpeg"
	case "gif":
		return "image/gif"
	case "webp":
		return "image/webp"
	}
	return ""
}

// argsObject parses tool call arguments (a JSON text) into an object.
func argsObject(s string) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage(`{}`), nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return nil, errors.New("tool call arguments are not a JSON object")
	}
	return json.RawMessage(s), nil
}

// text joins a message's text parts.
func (m *chatMessage) text() string {
	var b strings.Builder
	for i, p := range m.parts {
		if p.Type == "text" {
			if i > 0 && b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// maxTokens is max_completion_tokens, else max_tokens, else 0.
func (r *chatRequest) maxTokens() int64 {
	if r.MaxCompletionTokens != nil {
		return *r.MaxCompletionTokens
	}
	if r.MaxTokens != nil {
		return *r.MaxTokens
	}
	return 0
}

// toolName finds the function name of an earlier tool call by id.
func toolName(msgs []chatMessage, upto int, id string) string {
	for i := upto - 1; i >= 0; i-- {
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Function.Name
			}
		}
	}
	return ""
}

// ---- the chat completions request written for another API ----

// chatOut is the chat completions request the Messages and Responses
// translations write; each sets the members its own API has.
type chatOut struct {
	Model             string          `json:"model"`
	Messages          []chatOutMsg    `json:"messages"`
	Tools             []chatOutTool   `json:"tools,omitempty"`
	ToolChoice        any             `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxTokens         *int64          `json:"max_tokens,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	TopK              *int64          `json:"top_k,omitempty"`
	Stop              []string        `json:"stop,omitempty"`
	User              string          `json:"user,omitempty"`
	ResponseFormat    json.RawMessage `json:"response_format,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	StreamOptions     *streamOptions  `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// streamWithUsage makes the request a stream when stream is set, one that
// ends with usage, so that usage reaches the budgets.
func (o *chatOut) streamWithUsage(stream bool) {
	o.Stream = stream
	if stream {
		o.StreamOptions = &streamOptions{IncludeUsage: true}
	}
}

type chatOutMsg struct {
	Role       string        `json:"role"`
	Content    any           `json:"content"` // string, []chatOutPart, or nil
	ToolCalls  []outToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type chatOutPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatOutImage `json:"image_url,omitempty"`
}

type chatOutImage struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type chatOutTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	} `json:"function"`
}

// viaChat serves the requests of another API (Messages, Responses) through
// next, a chat completions round tripper: a request is translated to a chat
// completion sent to the same base's /chat/completions, next's answer
// translated back.
type viaChat[R any] struct {
	next     http.RoundTripper
	endpoint string                               // the API's path: /messages, /responses
	toChat   func(body []byte) (R, []byte, error) // the translation; its error is the client's 400
	refuse   func(err error) *http.Response       // that 400, in the API's words
	prepare  func(up *http.Request)               // drops or sets what differs from the API's own request
	answer   func(r R, resp *http.Response) *http.Response
}

func (v viaChat[R]) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	r, chat, err := v.toChat(body)
	if err != nil {
		return v.refuse(err), nil
	}
	up := req.Clone(req.Context())
	up.URL.Path = strings.TrimSuffix(strings.TrimSuffix(up.URL.Path, "/"), v.endpoint) + "/chat/completions"
	up.URL.RawPath = ""
	up.Body = newBytesBody(chat)
	up.GetBody = func() (io.ReadCloser, error) { return newBytesBody(chat), nil }
	up.ContentLength = int64(len(chat))
	v.prepare(up)
	resp, err := v.next.RoundTrip(up)
	if err != nil {
		return nil, err
	}
	return v.answer(r, resp), nil
}

func newBytesBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// ---- responses ----

// Reference: https://platform.openai.com/docs/api-reference/chat/object
type chatCompletion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

type choice struct {
	Index        int         `json:"index"`
	Message      *outMessage `json:"message,omitempty"`
	Delta        *outDelta   `json:"delta,omitempty"`
	FinishReason *string     `json:"finish_reason"`
	Logprobs     *struct{}   `json:"logprobs"`
}

type outMessage struct {
	Role      string        `json:"role"`
	Content   *string       `json:"content"`
	ToolCalls []outToolCall `json:"tool_calls,omitempty"`
}

type outDelta struct {
	Role      string        `json:"role,omitempty"`
	Content   *string       `json:"content,omitempty"`
	ToolCalls []outToolCall `json:"tool_calls,omitempty"`
}

// outToolCall is a chat tool call, written by the translators and read
// back from a chat upstream by the Messages and Responses translations.
type outToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// index is which call a chunk's delta continues (0 when it names none).
func (c *outToolCall) index() int {
	if c.Index == nil {
		return 0
	}
	return *c.Index
}

type usage struct {
	PromptTokens     int64          `json:"prompt_tokens"`
	CompletionTokens int64          `json:"completion_tokens"`
	TotalTokens      int64          `json:"total_tokens"`
	PromptDetails    *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// chatIn is a chat completion (or chunk) as an upstream writes it, read by
// the Messages and Responses translations.
type chatIn struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message      *chatInMsg      `json:"message"`
		Delta        *chatInMsg      `json:"delta"`
		FinishReason string          `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"` // vLLM: the stop string matched
	} `json:"choices"`
	Usage *chatUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatUsage is a chat completion's usage as an upstream writes it: usage
// and the reasoning tokens among the completion's.
type chatUsage struct {
	usage
	CompletionDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type chatInMsg struct {
	Content   *string       `json:"content"`
	ToolCalls []outToolCall `json:"tool_calls"`
}

// newUsage fills total when the provider gave none and adds cached details.
func newUsage(prompt, completion, total, cached int64) usage {
	u := usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: max(total, prompt+completion)}
	if cached > 0 {
		u.PromptDetails = &promptDetails{CachedTokens: cached}
	}
	return u
}

func strp(s string) *string { return &s }

// answer is a provider's buffered answer as it is converted: its text and
// tool calls, then the chat.completion of them.
type answer struct {
	text  strings.Builder
	calls []outToolCall
}

// call adds a tool call, its arguments compacted.
func (a *answer) call(id, name string, args json.RawMessage) {
	a.calls = append(a.calls, toolCallOut(id, name, compactJSON(args)))
}

// completion is the chat.completion JSON of the answer.
func (a *answer) completion(id, model string, created int64, finish string, u usage) []byte {
	msg := &outMessage{Role: "assistant", ToolCalls: a.calls}
	if text := a.text.String(); text != "" || len(a.calls) == 0 {
		msg.Content = strp(text)
	}
	b, _ := json.Marshal(chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model,
		Choices: []choice{{Message: msg, FinishReason: strp(finish)}}, Usage: &u})
	return b
}

// decodeAnswer decodes a provider's buffered answer.
func decodeAnswer[T any](provider string, raw []byte) (*T, error) {
	r := new(T)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, errors.New(provider + ": unreadable response: " + err.Error())
	}
	return r, nil
}

func toolCallOut(id, name, args string) outToolCall {
	var c outToolCall
	c.ID, c.Type, c.Function.Name, c.Function.Arguments = id, "function", name, args
	return c
}

// chunker writes chat.completion.chunk SSE events.
type chunker struct {
	id, model string
	created   int64
	out       *bytes.Buffer
	role      bool // the role chunk was sent
	finished  bool
	calls     map[int]int // the tool call started at each of the provider's content blocks
}

// blockCall starts a tool call at the provider's content block block (the
// Anthropic and Bedrock streams continue a call by its block) and returns
// the call's index.
func (c *chunker) blockCall(block int, id, name string) int {
	if c.calls == nil {
		c.calls = map[int]int{}
	}
	i := len(c.calls)
	c.calls[block] = i
	c.toolStart(i, id, name)
	return i
}

// blockArgs continues the tool call started at block with args; nothing
// when none started there or args is empty.
func (c *chunker) blockArgs(block int, args string) {
	if i, ok := c.calls[block]; ok && args != "" {
		c.toolArgs(i, args)
	}
}

func (c *chunker) write(v any) {
	b, _ := json.Marshal(v)
	c.out.WriteString("data: ")
	c.out.Write(b)
	c.out.WriteString("\n\n")
}

func (c *chunker) chunk(d *outDelta, finish string, u *usage) {
	ch := chatCompletion{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model, Usage: u, Choices: []choice{}}
	if d != nil {
		var fr *string
		if finish != "" {
			fr = strp(finish)
		}
		ch.Choices = []choice{{Delta: d, FinishReason: fr}}
	}
	c.write(ch)
}

// start sends the role chunk once.
func (c *chunker) start() {
	if !c.role {
		c.role = true
		c.chunk(&outDelta{Role: "assistant", Content: strp("")}, "", nil)
	}
}

func (c *chunker) text(s string) {
	c.start()
	if s != "" {
		c.chunk(&outDelta{Content: strp(s)}, "", nil)
	}
}

func (c *chunker) toolStart(index int, id, name string) {
	c.start()
	tc := toolCallOut(id, name, "")
	tc.Index = &index
	c.chunk(&outDelta{ToolCalls: []outToolCall{tc}}, "", nil)
}

func (c *chunker) toolArgs(index int, args string) {
	c.start()
	var tc outToolCall
	tc.Index, tc.Function.Arguments = &index, args
	c.chunk(&outDelta{ToolCalls: []outToolCall{tc}}, "", nil)
}

func (c *chunker) finish(reason string) {
	c.start()
	c.finished = true
	c.chunk(&outDelta{}, reason, nil)
}

// end sends the usage chunk (when known) and [DONE].
func (c *chunker) end(u *usage) {
	if u != nil {
		c.chunk(nil, "", u)
	}
	c.out.WriteString("data: [DONE]\n\n")
}

// errorEvent writes an OpenAI-style error event into the stream.
func (c *chunker) errorEvent(typ, code, msg string) {
	c.out.Write(errorJSON(typ, code, msg, "data: "))
	c.out.WriteString("\n")
}

// comment keeps the client connection (and the proxy's idle timer) alive.
func (c *chunker) comment(s string) { c.out.WriteString(": " + s + "\n\n") }

// streamBody produces OpenAI SSE bytes from a provider stream: step consumes
// upstream input and appends output; it returns io.EOF after writing the
// tail of a complete stream, any other error for a broken one.
type streamBody struct {
	src  io.Closer
	out  bytes.Buffer
	step func(out *bytes.Buffer) error
	err  error
}

func (s *streamBody) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.step(&s.out)
	}
	return s.out.Read(p)
}

func (s *streamBody) Close() error { return s.src.Close() }

// lazyBody converts a whole non-streamed upstream body on the first Read, so
// the proxy's header timeout never covers the body.
type lazyBody struct {
	src     io.ReadCloser
	convert func([]byte) ([]byte, error)
	out     *bytes.Reader
	err     error
}

// maxUpstreamBody bounds a non-streamed provider answer.
const maxUpstreamBody = 32 << 20

func (l *lazyBody) Read(p []byte) (int, error) {
	if l.out == nil && l.err == nil {
		b, err := io.ReadAll(io.LimitReader(l.src, maxUpstreamBody+1))
		switch {
		case err != nil:
			l.err = err
		case len(b) > maxUpstreamBody:
			l.err = errors.New("provider response over 32 MiB")
		default:
			var out []byte
			if out, l.err = l.convert(b); l.err == nil {
				l.out = bytes.NewReader(out)
			}
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.out.Read(p)
}

func (l *lazyBody) Close() error { return l.src.Close() }

func newResponse(status int, ctype string, body io.ReadCloser, length int64) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", ctype)
	if length >= 0 {
		h.Set("Content-Length", strconv.FormatInt(length, 10))
	}
	return &http.Response{Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: body, ContentLength: length}
}

// converted wraps an upstream 200 answer with a converted body.
func converted(up *http.Response, stream bool, body io.ReadCloser) *http.Response {
	var r *http.Response
	if stream {
		r = newResponse(http.StatusOK, "text/event-stream", body, -1)
		r.Header.Set("Cache-Control", "no-cache")
	} else {
		r = newResponse(http.StatusOK, "application/json", body, -1)
	}
	r.Request = up.Request
	return r
}

func errorJSON(typ, code, msg, prefix string) []byte {
	return proxyapi.AppendErrorJSON(append(make([]byte, 0, 128+len(prefix)+len(msg)), prefix...), typ, code, msg)
}

// errorResponse is an OpenAI-style error answer.
func errorResponse(status int, typ, code, msg string) *http.Response {
	b := errorJSON(typ, code, msg, "")
	return newResponse(status, "application/json", newBytesBody(b), int64(len(b)))
}

// errorType is the OpenAI error type of a status. The Messages API names
// the client errors alike (MessagesErrorType starts from it).
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// upstreamError converts a provider error answer (status below 500 and not
// 200) into an OpenAI-style error with the same status. parse extracts the
// provider's error code and message from its body. 5xx answers are returned
// unconverted: the proxy fails over and never relays them.
func (c *common) upstreamError(resp *http.Response, parse func(h http.Header, body []byte) (code, msg string)) *http.Response {
	if resp.StatusCode >= 500 {
		return resp
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	code, msg := parse(resp.Header, b)
	if msg == "" {
		msg = "status " + strconv.Itoa(resp.StatusCode)
	}
	status := resp.StatusCode
	if status < 400 {
		status = http.StatusBadGateway
	}
	code = convertedCode(resp, b, code, c.now())
	out := errorResponse(status, errorType(status), code, c.name+": "+c.redact(msg))
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		out.Header.Set("Retry-After", ra)
	}
	keepLimitHeaders(resp, b, out)
	out.Request = resp.Request
	return out
}
