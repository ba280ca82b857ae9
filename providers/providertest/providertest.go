// Package providertest has loopback fakes of the providers the router-proxy
// translates to (Anthropic, Bedrock, Vertex AI and Google's OAuth token
// endpoint). Each fake checks the request's wire format (method, path,
// headers, authentication, body shape), records it and answers with fixtures
// copied from the provider's public API documentation (the source of each
// fixture is named next to it), streaming included.
package providertest

import (
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

// fault is an error answer: the HTTP status, and the provider's error type
// (or code) and message.
type fault struct {
	status   int
	typ, msg string
}

// tools reports whether a fake in mode answers with a tool call, the
// request offering tools or not.
func (m Mode) tools(offered bool) bool { return m == Tool || (m == Auto && offered) }

// recorder is shared by the fakes.
type recorder struct {
	mu   sync.Mutex
	reqs []Recorded
	mode Mode
}

func (r *recorder) record(req *http.Request) Recorded {
	b, _ := io.ReadAll(req.Body)
	rec := Recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.RawQuery, Header: req.Header.Clone(), Body: b}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	return rec
}

// Requests returns what the fake received.
func (r *recorder) Requests() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Recorded(nil), r.reqs...)
}

// Last returns the last request (zero when none).
func (r *recorder) Last() Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return Recorded{}
	}
	return r.reqs[len(r.reqs)-1]
}

// SetMode changes the fake's answers.
func (r *recorder) SetMode(m Mode) {
	r.mu.Lock()
	r.mode = m
	r.mu.Unlock()
}

func (r *recorder) getMode() Mode {
	r.mu.Lock()
	defer r.mu.Unlock()
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
