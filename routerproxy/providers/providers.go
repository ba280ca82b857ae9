// Package providers translates the OpenAI chat completions API to the APIs of
// external providers that do not speak it (Anthropic Messages, Bedrock
// Converse, Vertex AI Gemini) and their answers back, streams included.
//
// A Provider is an http.RoundTripper: the proxy builds the request it would
// send to an OpenAI-compatible upstream (URL = base + OpenAI path, body = the
// client's OpenAI body) and hands it to the Provider, which translates it,
// authenticates it (API key, SigV4, OAuth), sends it with the proxy's
// transport and returns a response in OpenAI format: a chat.completion JSON
// object, a text/event-stream of chat.completion.chunk objects ending with a
// usage chunk and [DONE], or an OpenAI-style error object. Budgets and cost
// read usage from that response exactly as for an OpenAI upstream.
//
// openai and litellm (and local backends) need no translation: New returns
// nil for them and the proxy keeps its pass-through path.
package providers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Provider translates one backend's requests. It is safe for concurrent use.
type Provider interface {
	// RoundTrip sends the OpenAI request req (its URL is the backend base
	// plus the OpenAI path; its body the OpenAI JSON) to the provider and
	// returns an OpenAI-format response. A request that cannot be translated
	// gets a 400 response, not an error; an error means the provider could
	// not be reached (or no credential could be obtained) and is never
	// worded with a credential.
	RoundTrip(req *http.Request) (*http.Response, error)
	// BaseURL is the resolved upstream base URL (the configured url, or the
	// one composed from the credentials, e.g. Bedrock's regional host).
	BaseURL() string
}

// Anthropic Messages API constants.
const (
	AnthropicVersion         = "2023-06-01"
	DefaultAnthropicMaxToken = 4096
)

// translators are the providers that do not speak the OpenAI API, one per
// provider marked Translated in wellknown.Providers (a test holds the two
// together). creds maps a credential purpose (wellknown.Purpose*) to its value.
var translators = map[string]func(c *common, url string, creds map[string]string) (Provider, error){
	wellknown.ProviderAnthropic: newAnthropic,
	wellknown.ProviderBedrock:   newBedrock,
	wellknown.ProviderVertexAI:  newVertex,
}

// Translated reports whether provider needs translation (New returns a
// Provider for it).
func Translated(provider string) bool { return wellknown.Providers[provider].Translated }

// New returns the Provider of an external backend, or nil when the backend
// passes through (local, openai, litellm). next sends the translated
// requests (and Vertex token requests). A non-nil error says why the backend
// cannot serve (e.g. an unusable service-account JSON or no Bedrock region);
// the returned Provider then fails every request with that error.
func New(b *proxyapi.Backend, getenv func(string) string, next http.RoundTripper) (Provider, error) {
	if b.Kind != proxyapi.KindExternal || !Translated(b.Provider) {
		return nil, nil
	}
	creds := map[string]string{}
	for _, c := range b.Credentials {
		if v := getenv(c.Env); v != "" {
			creds[c.Purpose] = v
		}
	}
	base := &common{name: b.Provider, model: b.Model, next: next, now: time.Now}
	for _, v := range creds {
		base.secrets = append(base.secrets, v)
	}
	p, err := translators[b.Provider](base, b.URL, creds)
	if err != nil {
		err = fmt.Errorf("%s: %s", b.Provider, base.redact(err.Error()))
		return &broken{err: err, base: b.URL}, err
	}
	return p, nil
}

// broken is a provider that cannot serve.
type broken struct {
	err  error
	base string
}

func (b *broken) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, b.err
}
func (b *broken) BaseURL() string { return b.base }

// common is shared by every provider.
type common struct {
	name    string
	model   string
	next    http.RoundTripper
	now     func() time.Time
	secrets []string // credential values, scrubbed from every error text
}

// redact removes credential values from a text that may leave the process.
func (c *common) redact(s string) string {
	for _, v := range c.secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// modelOf is the model an answer names, the backend's when it names none.
func (c *common) modelOf(named string) string {
	if named == "" {
		return c.model
	}
	return named
}

// chatPath reports whether a proxied path is the chat completions endpoint.
func chatPath(u *url.URL) bool {
	return strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/chat/completions")
}

// readRequest reads the proxied request's body and parses it.
func (c *common) readRequest(req *http.Request) (*chatRequest, *http.Response) {
	if !chatPath(req.URL) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errorResponse(http.StatusBadRequest, "invalid_request_error", "unsupported_endpoint",
			"provider "+c.name+" serves only /v1/chat/completions through this router")
	}
	body, err := readBody(req)
	if err != nil {
		return nil, errorResponse(http.StatusBadRequest, "invalid_request_error", "invalid_json", "reading the request body failed")
	}
	cr, err := parseChat(body)
	if err != nil {
		return nil, errorResponse(http.StatusBadRequest, "invalid_request_error", "unsupported_request", c.name+": "+err.Error())
	}
	return cr, nil
}

// readBody reads a request's body and closes it.
func readBody(req *http.Request) ([]byte, error) {
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	return b, err
}

// send dispatches a translated request; network errors are redacted, of
// the credentials and of the request's own bearer token (Vertex AI's access
// token).
func (c *common) send(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		msg := c.redact(err.Error())
		if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
			msg = strings.ReplaceAll(msg, tok, "[redacted]")
		}
		return nil, errors.New(msg)
	}
	return resp, nil
}

// badRequest is a client request this provider cannot express.
type badRequest string

func (e badRequest) Error() string { return string(e) }

func errf(format string, a ...any) error { return badRequest(fmt.Sprintf(format, a...)) }
