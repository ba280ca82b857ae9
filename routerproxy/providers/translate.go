package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// The runs every translator shares: the round trip itself (roundTrip); on
// the way up the request's turns and blocks (writer), sampling and tool
// schemas; on the way back the converted response and a stream's events,
// end and failure.

// turn is one provider message: a role and its blocks, as Anthropic and
// Bedrock write a message (Vertex AI calls the blocks parts). Consecutive
// messages of one role become one turn, since the providers take
// alternating roles.
type turn[B any] struct {
	Role   string `json:"role"`
	Blocks []B    `json:"content"`
}

// writer is how a provider writes the chat messages as its turns of
// blocks B.
type writer[B any] struct {
	assistant string                                     // the provider's name for the assistant's role
	system    func(text string)                          // takes system and developer text
	text      func(text string) B                        // a text part
	image     func(img *image) (B, error)                // an image part; an error: the provider cannot take it
	call      func(tc *toolCall, args json.RawMessage) B // an assistant's tool call, args a JSON object
	result    func(i int, m *chatMessage) (B, error)     // tool message i: a tool result, the user's
}

// turns walks the chat messages in order: system and developer text goes
// to system, every other message becomes blocks of a role. A message with
// no blocks is skipped. It is an error when no turn remains.
func (w writer[B]) turns(msgs []chatMessage) ([]turn[B], error) {
	var out []turn[B]
	for i := range msgs {
		m := &msgs[i]
		role := "user"
		var bs []B
		var err error
		switch m.Role {
		case "system", "developer":
			if t := m.text(); t != "" {
				w.system(t)
			}
			continue
		case "tool":
			var b B
			b, err = w.result(i, m)
			bs = []B{b}
		case "assistant":
			role = w.assistant
			bs, err = w.blocks(m)
		default: // user
			bs, err = w.blocks(m)
		}
		if err != nil {
			return nil, err
		}
		if len(bs) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Blocks = append(out[n-1].Blocks, bs...)
		} else {
			out = append(out, turn[B]{role, bs})
		}
	}
	if len(out) == 0 {
		return nil, errf("no user or assistant message with content")
	}
	return out, nil
}

// blocks converts a user or assistant message's content parts, then its
// tool calls.
func (w writer[B]) blocks(m *chatMessage) ([]B, error) {
	var out []B
	for _, p := range m.parts {
		switch {
		case p.Type == "text" && p.Text != "":
			out = append(out, w.text(p.Text))
		case p.image != nil:
			b, err := w.image(p.image)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		args, _ := argsObject(tc.Function.Arguments)
		out = append(out, w.call(tc, args))
	}
	return out, nil
}

// maxTokensSet is the request's token limit, nil when it sets none.
func (r *chatRequest) maxTokensSet() *int64 {
	if n := r.maxTokens(); n > 0 {
		return &n
	}
	return nil
}

// samplingSet reports whether the request sets any of the sampling settings
// a generation config carries (token limit, temperature, top_p, stop).
func (r *chatRequest) samplingSet() bool {
	return r.maxTokens() > 0 || r.Temperature != nil || r.TopP != nil || len(r.stops) > 0
}

// sampling is the sampling a Bedrock inference config and a Vertex AI
// generation config carry alike, beside the token limit each names its own
// way.
type sampling struct {
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

// sampling is the request's sampling settings other than its token limit.
func (r *chatRequest) sampling() sampling {
	return sampling{Temperature: r.Temperature, TopP: r.TopP, StopSequences: r.stops}
}

// parameters is a tool's JSON schema, nil when the request gives none.
func (t *chatTool) parameters() json.RawMessage {
	if p := t.Function.Parameters; present(p) {
		return p
	}
	return nil
}

// inputSchema is a tool's JSON schema, the empty object schema when the
// request gives none (the providers that require one).
func (t *chatTool) inputSchema() json.RawMessage {
	if p := t.parameters(); p != nil {
		return p
	}
	return emptySchema
}

// translator is what each provider does its own way; common.roundTrip does
// the rest of a chat completion's round trip.
type translator interface {
	// translate writes the provider's request body of a chat request (an
	// error says what the provider cannot take).
	translate(cr *chatRequest) ([]byte, error)
	// endpoint is where a translated request goes, and the Accept header of
	// a stream ("": the provider is sent none, streamed or not).
	endpoint(stream bool) (url, accept string, err error)
	// authorize adds the credentials to the upstream request of body.
	authorize(up *http.Request, body []byte) error
	// stream converts the provider's stream, writing chunks with ch.
	stream(resp *http.Response, ch chunker) func(*bytes.Buffer) error
	// convert converts a buffered answer.
	convert(resp *http.Response, raw []byte, created int64) ([]byte, error)
}

// roundTrip is a translator's RoundTrip: the chat request read, translated
// by t and sent, the answer converted back; parse reads the provider's
// error answers.
func (c *common) roundTrip(req *http.Request, t translator, parse func(h http.Header, body []byte) (code, msg string)) (*http.Response, error) {
	cr, bad := c.readRequest(req)
	if bad != nil {
		return bad, nil
	}
	body, err := t.translate(cr)
	if err != nil {
		return unsupported(c.name, err), nil
	}
	url, accept, err := t.endpoint(cr.Stream)
	if err != nil {
		return nil, err
	}
	up, err := http.NewRequestWithContext(req.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	up.Header.Set("Content-Type", "application/json")
	if accept != "" && !cr.Stream {
		accept = "application/json" // a buffered answer is JSON
	}
	if accept != "" {
		up.Header.Set("Accept", accept)
	}
	if err := t.authorize(up, body); err != nil {
		return nil, err
	}
	resp, err := c.send(up)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return c.upstreamError(resp, parse), nil
	}
	created := c.now().Unix()
	var step func(*bytes.Buffer) error
	if cr.Stream {
		step = t.stream(resp, chunker{created: created, model: c.model})
	}
	return respond(resp, cr.Stream, step, func(raw []byte) ([]byte, error) { return t.convert(resp, raw, created) }), nil
}

// unsupported is the client's 400 for a request the provider cannot take.
func unsupported(provider string, err error) *http.Response {
	return errorResponse(http.StatusBadRequest, "invalid_request_error", "unsupported_request", provider+": "+err.Error())
}

// respond is the client's response to an upstream 200: a stream converted
// event by event by step, or a body converted once by convert.
func respond(resp *http.Response, stream bool, step func(*bytes.Buffer) error, convert func([]byte) ([]byte, error)) *http.Response {
	if stream {
		return converted(resp, true, &streamBody{src: resp.Body, step: step})
	}
	return converted(resp, false, &lazyBody{src: resp.Body, convert: convert})
}

// openaiUsage is a provider's usage in OpenAI's terms, nil when it reported none.
func openaiUsage[U interface{ openai() usage }](u *U) *usage {
	if u == nil {
		return nil
	}
	return ptr((*u).openai())
}

// nextEvent reads the next event of a provider's SSE stream: its name and
// its data decoded into T. At the stream's end the error is end's (io.EOF
// when the provider finished: see endStream).
func nextEvent[T any](sse *sseReader, provider string, end func() error) (name string, ev T, err error) {
	name, data, err := sse.next()
	switch {
	case err == io.EOF:
		err = end()
	case err == nil && json.Unmarshal(data, &ev) != nil:
		what := "event"
		if name != "" {
			what = name + " event"
		}
		err = streamError(provider, fmt.Errorf("unreadable %s", what))
	}
	return name, ev, err
}

// streamError is a provider's stream that could not be read on.
func streamError(provider string, err error) error {
	return fmt.Errorf("%s stream: %w", provider, err)
}

// endStream ends a stream at the upstream's EOF: the last chunk with usage
// when the provider finished, or an error when it stopped short (what names
// the event it did not send).
func (c *chunker) endStream(provider string, finished bool, what string, u *usage) error {
	if !finished {
		return fmt.Errorf("%s stream ended %s", provider, what)
	}
	c.end(u)
	return io.EOF
}

// fail writes the provider's stream error as an OpenAI error event, then the
// usage so far when there is any, and ends the stream.
func (c *chunker) fail(provider, typ, msg string, u *usage) error {
	c.errorEvent(streamErrorType(typ), typ, provider+": "+msg)
	if u != nil {
		c.chunk(nil, "", u)
	}
	return fmt.Errorf("%s stream error: %s", provider, typ)
}
