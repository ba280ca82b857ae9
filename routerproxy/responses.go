package routerproxy

// POST /v1/responses (the OpenAI Responses API): admitted, routed, charged
// and audited as a chat completion; what differs is here. A backend with
// provider openai takes the request as it is (passed through: OpenAI keeps
// the Responses API's state itself); every other backend takes chat
// completions, so the request is translated there and back
// (providers.Responses). Usage is read from the Responses answer's own
// "usage" (input_tokens, output_tokens), whichever way it went.

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers"
)

// responsesRoundTripper is how backend b sends a Responses request: its own
// round tripper for an OpenAI backend (passed through), else rt wrapped in
// the translation to chat completions.
func (b *backendRT) responsesRoundTripper(rt http.RoundTripper) http.RoundTripper {
	c := b.st.Config
	if c.Kind == proxyapi.KindExternal && c.Provider == wellknown.ProviderOpenAI {
		return rt
	}
	return providers.Responses(rt)
}

// responsesUsage is a Responses usage object.
type responsesUsage struct {
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	TotalTokens  *int64 `json:"total_tokens"`
}

// engineUsage is u in the engine's terms; ok is false for a usage that
// reports no count or an implausible one (the caller estimates).
func (u *responsesUsage) engineUsage() (engine.Usage, bool) {
	if u == nil || u.InputTokens == nil && u.OutputTokens == nil && u.TotalTokens == nil {
		return engine.Usage{}, false
	}
	var out engine.Usage
	for _, p := range []struct {
		src *int64
		dst *int64
	}{{u.InputTokens, &out.PromptTokens}, {u.OutputTokens, &out.CompletionTokens}, {u.TotalTokens, &out.TotalTokens}} {
		if p.src == nil {
			continue
		}
		if *p.src < 0 || *p.src > engine.MaxUsageTokens {
			return engine.Usage{}, false
		}
		*p.dst = *p.src
	}
	return out, out.Tokens() > 0
}

// parseResponsesUsage reads a Response's top-level usage.
func parseResponsesUsage(b []byte) (engine.Usage, bool) {
	if !bytes.Contains(b, []byte(`"usage"`)) {
		return engine.Usage{}, false
	}
	var r struct {
		Usage *responsesUsage `json:"usage"`
	}
	if json.Unmarshal(b, &r) != nil {
		return engine.Usage{}, false
	}
	return r.Usage.engineUsage()
}

// maxResponsesEvent bounds the bytes kept of one event's data line while
// looking for usage: response.completed repeats the whole output.
const maxResponsesEvent = maxCapture

// responsesScanner watches a Responses event stream for the usage of its
// last event that carries a Response (response.completed, .incomplete or
// .failed). Write never fails and never modifies the stream.
type responsesScanner struct {
	sse   engine.SSEData
	usage engine.Usage
	found bool
}

func (s *responsesScanner) Write(p []byte) (int, error) {
	s.sse.Max = maxResponsesEvent
	s.sse.Write(p, s.data)
	return len(p), nil
}

// data reads the usage of one event's data line.
func (s *responsesScanner) data(l []byte) {
	if !bytes.Contains(l, []byte(`"usage"`)) {
		return
	}
	var ev struct {
		Response *struct {
			Usage *responsesUsage `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(l, &ev) != nil || ev.Response == nil {
		return
	}
	if u, ok := ev.Response.Usage.engineUsage(); ok {
		s.usage, s.found = u, true
	}
}

// Usage is the last usage seen, a final unterminated line included.
func (s *responsesScanner) Usage() (engine.Usage, bool) {
	s.sse.Flush(s.data)
	return s.usage, s.found
}
