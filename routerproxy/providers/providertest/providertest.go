// Package providertest has loopback fakes of the providers the router-proxy
// translates to (Anthropic, Bedrock, Vertex AI and Google's OAuth token
// endpoint). Each fake checks the request's wire format (method, path,
// headers, authentication, body shape), records it and answers with fixtures
// copied from the provider's public API documentation (the source of each
// fixture is named next to it), streaming included. VLLM is an in-cluster
// model server's answers about model names, as vLLM gives them.
package providertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Recorded is one request a fake received.
type Recorded struct {
	Method string
	Path   string // escaped path
	Query  string
	Header http.Header
	Body   []byte
}

// JSON decodes the recorded body into a generic value.
func (r Recorded) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Mode selects a fake's answer.
type Mode int

const (
	// Auto answers with text, or with a tool call when the request offers tools.
	Auto Mode = iota
	// Text always answers with text.
	Text
	// Tool always answers with a tool call.
	Tool
	// RateLimited answers 429 in the provider's error format.
	RateLimited
	// Overloaded answers the provider's 5xx.
	Overloaded
	// BadRequest answers 400 in the provider's error format.
	BadRequest
	// StreamError streams a few events, then the provider's in-stream error.
	StreamError
)

// Recorder keeps the requests an upstream received, in order, for the test
// to read back: the fakes of this package, and any loopback upstream a test
// starts itself. The zero value is ready to use.
type Recorder struct {
	mu   sync.Mutex
	reqs []Recorded
}

// Record keeps req and gives it its body back, so that the handler reading
// it next finds it whole.
func (r *Recorder) Record(req *http.Request) Recorded {
	b, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(b))
	rec := Recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery, Header: req.Header.Clone(), Body: b}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	return rec
}

// Requests returns what the upstream received.
func (r *Recorder) Requests() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Recorded(nil), r.reqs...)
}

// Last returns the last request (zero when none).
func (r *Recorder) Last() Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return Recorded{}
	}
	return r.reqs[len(r.reqs)-1]
}

// recorder is shared by the fakes: what they received and how they answer.
type recorder struct {
	Recorder
	modeMu sync.Mutex
	mode   Mode
}

// SetMode changes the fake's answers.
func (r *recorder) SetMode(m Mode) {
	r.modeMu.Lock()
	r.mode = m
	r.modeMu.Unlock()
}

func (r *recorder) getMode() Mode {
	r.modeMu.Lock()
	defer r.modeMu.Unlock()
	return r.mode
}

func start(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// fault is a request a fake refuses: the status, the provider's own
// error code and message, and the Retry-After it sends, if any.
type fault struct {
	status        int
	code, message string
	retryAfter    string
}

// errorFormat writes an error in a provider's format.
type errorFormat func(w http.ResponseWriter, status int, code, msg string)

// respond answers a request whose body check found f (nil: none) and
// whether it offers tools: with f, else with the provider's fault for the
// current mode, else with write's answer in that mode, a tool call (tool)
// or text.
func (r *recorder) respond(w http.ResponseWriter, format errorFormat, faults map[Mode]fault, f *fault, offered bool, write func(mode Mode, tool bool)) {
	mode := r.getMode()
	if f == nil {
		if mf, ok := faults[mode]; ok {
			f = &mf
		}
	}
	if f != nil {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		format(w, f.status, f.code, f.message)
		return
	}
	write(mode, mode == Tool || (mode == Auto && offered))
}

// streamFor is the stream a fake sends: broken off in mode StreamError,
// else the tool call's or the text's.
func streamFor[T any](mode Mode, tool bool, text, toolCall, broken []T) []T {
	switch {
	case mode == StreamError:
		return broken
	case tool:
		return toolCall
	}
	return text
}

// invalid is a provider's 400 for a request body it does not accept: its
// BadRequest fault, saying msg.
func invalid(faults map[Mode]fault, msg string) *fault {
	f := faults[BadRequest]
	f.message = msg
	return &f
}

// checkJSON checks that a request says its body is JSON, then the body
// with check.
func checkJSON(r *http.Request, body []byte, faults map[Mode]fault, check func([]byte) (offered bool, f *fault)) (offered bool, f *fault) {
	if r.Header.Get("Content-Type") != "application/json" {
		return false, invalid(faults, "Content-Type must be application/json")
	}
	return check(body)
}

// writeAnswer writes a buffered answer of contentType: the tool call's
// fixture when tool is set, else the text's.
func writeAnswer(w http.ResponseWriter, contentType string, tool bool, text, toolCall string) {
	w.Header().Set("Content-Type", contentType)
	if tool {
		text = toolCall
	}
	_, _ = io.WriteString(w, text)
}

// decodeObject decodes the JSON object data into body; unknown is a
// member of it that known does not list ("" when there is none).
func decodeObject(data []byte, body any, known map[string]bool) (unknown string, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", err
	}
	if err := json.Unmarshal(data, body); err != nil {
		return "", err
	}
	for k := range top {
		if !known[k] {
			return k, nil
		}
	}
	return "", nil
}

// OpenAIError decodes an OpenAI-style error body, as a translation or the
// router-proxy answers a refused or failed chat: its type, its code (""
// when null) and its message, which must be set.
func OpenAIError(t testing.TB, body string) (typ, code, msg string) {
	t.Helper()
	var v struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not an OpenAI-style error (%v): %s", err, body)
	}
	if v.Error.Message == "" {
		t.Fatalf("an OpenAI-style error without a message: %s", body)
	}
	if v.Error.Code != nil {
		code = *v.Error.Code
	}
	return v.Error.Type, code, v.Error.Message
}
