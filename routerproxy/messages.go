package routerproxy

// The Anthropic Messages API (POST /v1/messages) on the serving port: the
// same intake, routing, budgets, failover, shadowing and audit as a chat
// completion (inference); what differs is kept here: the error shape of
// the proxy's own answers (messagesWriter), how an attempt reaches its
// backend (messagesUpstream: passed through to an Anthropic backend,
// translated to chat completions for any other, routerproxy/providers/messages.go),
// and the usage read from a Messages answer (messagesUsage).
// docs/api-messages.md is the user's side of it.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/internal/jsonscan"
	"github.com/llmkube/llmkube-compile/routerproxy/providers"
)

// The Messages API's paths.
const (
	messagesPath    = "/v1/messages"
	countTokensPath = "/v1/messages/count_tokens"
)

// messagesWriter is the client's ResponseWriter on a Messages path: the
// proxy's own refusals (writeError) take the Messages error shape.
// Unwrap keeps http.ResponseController (flush, deadlines) working.
type messagesWriter struct{ http.ResponseWriter }

func (m *messagesWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// writeMessagesError answers with a Messages error object: the type follows
// the status (Anthropic's error types), the message is the proxy's.
func writeMessagesError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	b := providers.AppendMessagesError(make([]byte, 0, 96+len(msg)), providers.MessagesErrorType(status), msg)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serveMessages serves the Messages paths; false when r is on neither.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != messagesPath && r.URL.Path != countTokensPath {
		return false
	}
	mw := &messagesWriter{w}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(mw, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+"; use POST")
		return true
	}
	if s.auth != nil && r.Header.Get("Authorization") == "" {
		// The Anthropic SDKs' ANTHROPIC_API_KEY may come as x-api-key:
		// the router's token there is verified as if it were the bearer
		// (and, like it, reaches no backend: forwardHeaders).
		if k := r.Header.Get("X-Api-Key"); k != "" {
			r.Header.Set("Authorization", "Bearer "+k)
		}
	}
	if r.URL.Path == countTokensPath {
		s.countTokens(mw, r)
		return true
	}
	s.inference(mw, r)
	return true
}

// countTokens answers POST /v1/messages/count_tokens with an estimate made
// here (the body's bytes / engine.BytesPerToken, the estimate budgets
// admit with): asking a provider would send the request's content out
// before any rule chose a backend for it. The caller is authenticated and
// held to its allowlist like a request; nothing is routed, charged or
// audited (no tokens are spent).
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	ent := &proxyapi.AuditEntry{}
	id, ok := s.authenticate(w, r, ent)
	if !ok {
		return
	}
	team := id.Team
	body, release, ok := s.intakeBody(w, r, ent)
	defer release()
	if !ok {
		return
	}
	in, ok := s.inspect(w, body, ent)
	if !ok {
		return
	}
	if !s.auth.Allowed(team, in.model) {
		refuseAs(w, ent, refForbidden, "", "team "+strconv.Quote(team)+" may not use model "+strconv.Quote(in.model))
		return
	}
	n := engine.EstimateUsage(int64(len(body)), 0).PromptTokens
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"input_tokens":` + strconv.FormatInt(n, 10) + "}\n"))
}

// messagesRoundTripper is how a Messages request reaches b: as it came to a
// backend that speaks the Messages API (anthropic), translated to chat
// completions for any other (which the chat path then serves: b.model, or
// the provider's translation).
func (b *backendRT) messagesRoundTripper(rt http.RoundTripper) http.RoundTripper {
	if native := providers.MessagesNative(b.tr); native != nil {
		return native
	}
	return providers.MessagesOverChat(b.roundTripper(rt))
}

// messagesUpstream is a Messages attempt's body and round tripper: body is
// what send would send a chat upstream; a backend that takes the request
// as it came gets the backend's model in it.
func (b *backendRT) messagesUpstream(rb reqBody, body []byte) ([]byte, http.RoundTripper) {
	if m := b.st.Config.Model; m != "" && providers.SpeaksMessages(b.msgs) {
		body = rb.withModel(m)
	}
	return body, b.msgs
}

// messagesUsage reads the usage of a Messages answer: the top-level usage
// of a message, or in a stream message_start's message.usage and
// message_delta's usage (cumulative). Cache writes and reads are prompt
// tokens (charged at the prompt price: never under the provider's bill).
type messagesUsage struct {
	sse   engine.SSEData
	u     engine.Usage
	found bool
}

// antUsage is a Messages usage object.
type antUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// prompt is the usage's prompt tokens; ok is false when it names none.
func (a *antUsage) prompt() (int64, bool) {
	if a.InputTokens == nil && a.CacheCreationInputTokens == nil && a.CacheReadInputTokens == nil {
		return 0, false
	}
	return val(a.InputTokens) + val(a.CacheCreationInputTokens) + val(a.CacheReadInputTokens), true
}

// merge folds one usage object into m.u.
func (m *messagesUsage) merge(a *antUsage) {
	if a == nil {
		return
	}
	for _, n := range []*int64{a.InputTokens, a.OutputTokens, a.CacheCreationInputTokens, a.CacheReadInputTokens} {
		if n != nil && (*n < 0 || *n > engine.MaxUsageTokens) {
			return // implausible: the caller estimates
		}
	}
	if p, ok := a.prompt(); ok && p > 0 {
		m.u.PromptTokens = p
	}
	if a.OutputTokens != nil {
		m.u.CompletionTokens = *a.OutputTokens
	}
	m.u.TotalTokens = m.u.PromptTokens + m.u.CompletionTokens
	m.found = m.u.TotalTokens > 0
}

// Write feeds stream bytes, line by line; only data lines that name usage
// are decoded.
func (m *messagesUsage) Write(p []byte) {
	m.sse.Write(p, m.event)
}

// event reads the usage of one SSE data line.
func (m *messagesUsage) event(l []byte) {
	if !bytes.Contains(l, []byte(`"usage"`)) {
		return
	}
	var ev struct {
		Message *struct {
			Usage *antUsage `json:"usage"`
		} `json:"message"`
		Usage *antUsage `json:"usage"`
	}
	if json.Unmarshal(l, &ev) != nil {
		return
	}
	if ev.Message != nil {
		m.merge(ev.Message.Usage)
	}
	m.merge(ev.Usage)
}

// streamUsage is the usage of the stream so far.
func (m *messagesUsage) streamUsage() (engine.Usage, bool) {
	m.sse.Flush(m.event)
	return m.u, m.found
}

// bodyUsage reads the top-level usage of a whole answer (tail: only the
// answer's end was kept, where usage is written last).
func (m *messagesUsage) bodyUsage(b []byte, tail bool) (engine.Usage, bool) {
	var raw []byte
	if tail {
		i := bytes.LastIndex(b, []byte(`"usage"`))
		if i < 0 {
			return engine.Usage{}, false
		}
		rest := bytes.TrimLeft(b[i+len(`"usage"`):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			return engine.Usage{}, false
		}
		raw = rest[1:]
	} else {
		if !bytes.Contains(b, []byte(`"usage"`)) || !json.Valid(b) {
			return engine.Usage{}, false
		}
		_ = jsonscan.Members(b, func(key []byte, start, end int) error {
			if string(key) == `"usage"` {
				raw = b[start:end]
			}
			return nil
		})
	}
	// A whole answer's usage is final: plain counts, no pointers to
	// allocate (absent is 0).
	var f struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	}
	switch {
	case raw == nil:
		return engine.Usage{}, false
	case tail:
		if json.NewDecoder(bytes.NewReader(raw)).Decode(&f) != nil {
			return engine.Usage{}, false
		}
	case json.Unmarshal(raw, &f) != nil:
		return engine.Usage{}, false
	}
	m.merge(&antUsage{InputTokens: &f.InputTokens, OutputTokens: &f.OutputTokens, CacheCreationInputTokens: &f.CacheCreationInputTokens, CacheReadInputTokens: &f.CacheReadInputTokens})
	return m.u, m.found
}
