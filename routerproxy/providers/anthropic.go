package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// Anthropic Messages API.
// Reference: https://docs.anthropic.com/en/api/messages,
// https://docs.anthropic.com/en/docs/build-with-claude/streaming,
// https://docs.anthropic.com/en/api/errors.
type anthropic struct {
	*common
	base string
	key  string
}

func newAnthropic(c *common, base string, creds map[string]string) (Provider, error) {
	if base == "" {
		base = wellknown.Providers[wellknown.ProviderAnthropic].URL
	}
	a := &anthropic{common: c, base: strings.TrimSuffix(base, "/"), key: creds[wellknown.PurposeAPIKey]}
	if a.key == "" {
		return nil, errors.New("no API key: the backend needs credentialsSecretRef with ANTHROPIC_API_KEY")
	}
	return a, nil
}

func (a *anthropic) BaseURL() string { return a.base }

func (a *anthropic) url() string {
	if strings.HasSuffix(a.base, "/v1") {
		return a.base + "/messages"
	}
	return a.base + "/v1/messages"
}

func (a *anthropic) RoundTrip(req *http.Request) (*http.Response, error) {
	return a.roundTrip(req, a, anthropicError)
}

func (a *anthropic) endpoint(bool) (string, string, error) { return a.url(), "text/event-stream", nil }

func (a *anthropic) authorize(up *http.Request, _ []byte) error {
	up.Header.Set("X-Api-Key", a.key)
	up.Header.Set("Anthropic-Version", AnthropicVersion)
	return nil
}

func (a *anthropic) stream(resp *http.Response, ch chunker) func(*bytes.Buffer) error {
	st := &antStream{sse: newSSEReader(resp.Body), ch: ch, redact: a.redact}
	return st.step
}

// ---- request ----

type antRequest struct {
	Model         string           `json:"model"`
	MaxTokens     int64            `json:"max_tokens"`
	System        []antBlock       `json:"system,omitempty"`
	Messages      []turn[antBlock] `json:"messages"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty"`
	TopP          *float64         `json:"top_p,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	Tools         []antTool        `json:"tools,omitempty"`
	ToolChoice    *antToolChoice   `json:"tool_choice,omitempty"`
	Metadata      *antMetadata     `json:"metadata,omitempty"`
}

// antBlock is a content block on the Anthropic Messages wire, both ways:
// written to Anthropic, and read from a Messages client (messages.go).
type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *antSource      `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // a tool result's: a string or blocks
	IsError   bool            `json:"is_error,omitempty"`
}

// antSource is an image block's source on the Anthropic Messages wire, both ways: written
// to Anthropic, and read from a Messages client (messages.go).
type antSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// antTool is a tool on the Anthropic Messages wire, both ways: written to
// Anthropic, and read from a Messages client (messages.go), whose type
// names a server tool.
type antTool struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// antToolChoice is the tool choice on the Anthropic Messages wire, both ways: written
// to Anthropic, and read from a Messages client (messages.go).
type antToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// antMetadata is the request's metadata on the Anthropic Messages wire, both ways: written
// to Anthropic, and read from a Messages client (messages.go).
type antMetadata struct {
	UserID string `json:"user_id"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (a *anthropic) translate(cr *chatRequest) ([]byte, error) {
	out := antRequest{Model: a.model, MaxTokens: cr.maxTokens(), StopSequences: cr.stops, Temperature: cr.Temperature, TopP: cr.TopP, Stream: cr.Stream}
	if out.MaxTokens <= 0 {
		out.MaxTokens = DefaultAnthropicMaxToken
	}
	if cr.User != "" {
		out.Metadata = &antMetadata{UserID: cr.User}
	}
	var err error
	out.Messages, err = writer[antBlock]{assistant: "assistant",
		system: func(t string) { out.System = append(out.System, antText(t)) },
		text:   antText,
		image:  antImage,
		call: func(tc *toolCall, args json.RawMessage) antBlock {
			return antBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: args}
		},
		result: func(_ int, m *chatMessage) (antBlock, error) {
			return antBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: jsonText(m.text())}, nil
		},
	}.turns(cr.Messages)
	if err != nil {
		return nil, err
	}
	for _, t := range cr.Tools {
		out.Tools = append(out.Tools, antTool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.inputSchema()})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = antChoice(cr)
	}
	return json.Marshal(out)
}

// antText is a text block.
func antText(t string) antBlock { return antBlock{Type: "text", Text: t} }

// jsonText is a text as a JSON string, nil when empty.
func jsonText(t string) json.RawMessage {
	if t == "" {
		return nil
	}
	b, _ := json.Marshal(t)
	return b
}

// antImage is an image block: base64 data, or a URL Anthropic fetches.
func antImage(img *image) (antBlock, error) {
	if img.data != "" {
		return antBlock{Type: "image", Source: &antSource{Type: "base64", MediaType: img.mediaType, Data: img.data}}, nil
	}
	if strings.HasPrefix(img.url, "gs://") {
		return antBlock{}, errors.New("gs:// image URLs are not supported")
	}
	return antBlock{Type: "image", Source: &antSource{Type: "url", URL: img.url}}, nil
}

// antChoice is the tool_choice for a request with tools: the OpenAI mode,
// and parallel_tool_calls false as disable_parallel_tool_use (which needs
// a choice to ride on: auto when none was set).
func antChoice(cr *chatRequest) *antToolChoice {
	noParallel := cr.ParallelToolCalls != nil && !*cr.ParallelToolCalls
	var c *antToolChoice
	switch cr.choice.mode {
	case "auto":
		c = &antToolChoice{Type: "auto"}
	case "none":
		c = &antToolChoice{Type: "none"}
	case "required":
		c = &antToolChoice{Type: "any"}
	case "function":
		c = &antToolChoice{Type: "tool", Name: cr.choice.name}
	default:
		if noParallel {
			c = &antToolChoice{Type: "auto"}
		}
	}
	if noParallel && c.Type != "none" {
		c.DisableParallelToolUse = true
	}
	return c
}

// ---- response ----

type antUsage struct {
	InputTokens   int64 `json:"input_tokens"`
	OutputTokens  int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
}

// openai: prompt tokens include cached ones; Anthropic counts them apart.
func (u antUsage) openai() usage {
	p := u.InputTokens + u.CacheCreation + u.CacheRead
	return newUsage(p, u.OutputTokens, 0, u.CacheRead)
}

type antContent struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type antResponse struct {
	ID         string       `json:"id"`
	Model      string       `json:"model"`
	Content    []antContent `json:"content"`
	StopReason string       `json:"stop_reason"`
	Usage      antUsage     `json:"usage"`
}

// stopFinish is the finish_reason of a stop reason of Anthropic's or of
// Bedrock's Converse, which names them as Anthropic does and adds its
// guardrail's and content filter's.
func stopFinish(r string) string {
	switch r {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal", "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop"
}

func (a *anthropic) convert(_ *http.Response, b []byte, created int64) ([]byte, error) {
	r, err := decodeAnswer[antResponse](a.name, b)
	if err != nil {
		return nil, err
	}
	var ans answer
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			ans.text.WriteString(c.Text)
		case "tool_use":
			ans.call(c.ID, c.Name, c.Input)
		}
	}
	return ans.completion(r.ID, a.modelOf(r.Model), created, stopFinish(r.StopReason), r.Usage.openai()), nil
}

func compactJSON(raw json.RawMessage) string {
	if !present(raw) {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func anthropicError(_ http.Header, body []byte) (code, msg string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}

// antStream converts Anthropic's SSE events to chat.completion.chunk events.
type antStream struct {
	sse     *sseReader
	ch      chunker
	usage   antUsage
	started bool
	redact  func(string) string
}

type antEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		ID    string   `json:"id"`
		Model string   `json:"model"`
		Usage antUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *antContent `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *antUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *antStream) step(out *bytes.Buffer) error {
	s.ch.out = out
	name, ev, err := nextEvent[antEvent](s.sse, "anthropic", func() error {
		return s.ch.endStream("anthropic", false, "before message_stop", nil)
	})
	if err != nil {
		return err
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "message_start":
		s.messageStart(&ev)
	case "content_block_start":
		s.blockStart(&ev)
	case "content_block_delta":
		s.blockDelta(&ev)
	case "message_delta":
		s.messageDelta(&ev)
	case "message_stop":
		if !s.ch.finished {
			s.ch.finish("stop")
		}
		s.ch.end(ptr(s.usage.openai()))
		return io.EOF
	case "ping":
		s.ch.comment("ping")
	case "error":
		return s.fail(&ev)
	}
	// content_block_stop and unknown events produce nothing.
	return nil
}

// messageStart opens the completion with the message's id, model and
// input usage.
func (s *antStream) messageStart(ev *antEvent) {
	if m := ev.Message; m != nil {
		s.ch.id = m.ID
		if m.Model != "" {
			s.ch.model = m.Model
		}
		s.usage = m.Usage
	}
	s.started = true
	s.ch.start()
}

// blockStart starts a tool call (with any input already given) or a text
// block's first text.
func (s *antStream) blockStart(ev *antEvent) {
	b := ev.ContentBlock
	if b == nil {
		return
	}
	switch b.Type {
	case "tool_use":
		i := s.ch.blockCall(ev.Index, b.ID, b.Name)
		if args := compactJSON(b.Input); args != "{}" {
			s.ch.toolArgs(i, args)
		}
	case "text":
		s.ch.text(b.Text)
	}
}

// blockDelta continues a text block or a started tool call's arguments.
func (s *antStream) blockDelta(ev *antEvent) {
	d := ev.Delta
	if d == nil {
		return
	}
	switch d.Type {
	case "text_delta":
		s.ch.text(d.Text)
	case "input_json_delta":
		s.ch.blockArgs(ev.Index, d.PartialJSON)
	}
}

// messageDelta takes the cumulative usage and the stop reason.
func (s *antStream) messageDelta(ev *antEvent) {
	if u := ev.Usage; u != nil {
		s.usage.OutputTokens = u.OutputTokens
		if u.InputTokens > 0 {
			s.usage.InputTokens = u.InputTokens
		}
		if u.CacheCreation > 0 {
			s.usage.CacheCreation = u.CacheCreation
		}
		if u.CacheRead > 0 {
			s.usage.CacheRead = u.CacheRead
		}
	}
	if ev.Delta != nil && ev.Delta.StopReason != "" {
		s.ch.finish(stopFinish(ev.Delta.StopReason))
	}
}

// fail ends the stream with an error event's type and (redacted) message,
// and the usage so far once the message started.
func (s *antStream) fail(ev *antEvent) error {
	typ, msg := "api_error", ""
	if ev.Error != nil {
		typ, msg = ev.Error.Type, s.redact(ev.Error.Message)
	}
	var u *usage
	if s.started {
		u = ptr(s.usage.openai())
	}
	return s.ch.fail("anthropic", typ, msg, u)
}

// streamErrorType maps a provider error type to an OpenAI one.
func streamErrorType(t string) string {
	l := strings.ToLower(t)
	switch {
	case strings.Contains(l, "rate") || strings.Contains(l, "throttl") || strings.Contains(l, "exhausted"):
		return "rate_limit_error"
	case strings.Contains(l, "invalid") || strings.Contains(l, "validation"):
		return "invalid_request_error"
	}
	return "server_error"
}

func ptr[T any](v T) *T { return &v }
