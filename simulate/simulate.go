// Package simulate holds what the executable data-plane models share: one
// request as a client sends it, and what a data plane makes of it. Each
// plane's model lives in its own sub-package (simulate/envoyai for the
// Gateway plane, simulate/agentgateway for the AgentGateway plane) and reads
// the objects every router on one gateway generated, plus any foreign
// objects, never one router's objects alone: the defects these models exist
// to catch are where routers meet on a shared gateway.
//
// The models are used by the targets' tests and by `llmkube-compile test`
// and `explain`; each states the upstream version and source it follows.
// Each declares how routingtest builds it for a plane (PlaneModel, in its
// planemodel.go); simulate/builtin lists them, one line per plane.
package simulate

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Token is the bearer JWT a caller presents. The models do not parse JWTs:
// a Token is what a verifier would read from one. A token whose Issuer no
// provider on the route trusts, or that is Invalid (bad signature, expired),
// fails verification.
type Token struct {
	Issuer string
	// Claims are the payload's claims besides iss.
	Claims map[string]any
	// Invalid marks a token no verifier accepts.
	Invalid bool
	// Raw is what the caller sends after "Bearer " (default "caller-jwt").
	Raw string
}

// NamesAudience reports whether the token's aud claim (a string or a list
// of strings) names one of audiences, as the gateways' JWT verifiers check
// it when a provider lists audiences (RFC 7519 §4.1.3).
func (t *Token) NamesAudience(audiences []string) bool {
	var aud []string
	switch v := t.Claims["aud"].(type) {
	case string:
		aud = []string{v}
	case []string:
		aud = v
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				aud = append(aud, s)
			}
		}
	}
	for _, a := range aud {
		for _, want := range audiences {
			if a == want {
				return true
			}
		}
	}
	return false
}

// RawValue is the token as sent.
func (t *Token) RawValue() string {
	if t.Raw != "" {
		return t.Raw
	}
	return "caller-jwt"
}

// Request is one request as a client sends it.
type Request struct {
	Method string // default POST
	Path   string // default /v1/chat/completions
	Host   string // default "gateway.example"
	// Headers are the client's own headers (a key may repeat). Authorization
	// is added from Token when Token is set.
	Headers http.Header
	// Body is the JSON body; Body["model"] is the requested model. nil: no body.
	Body map[string]any
	// Token, when set, is sent as Authorization: Bearer.
	Token *Token
	// APIKey, when set, is an API key sent as Authorization: Bearer or
	// x-api-key (apikey.go).
	APIKey     *APIKey
	ClientAddr string
	// Down are backends that fail every attempt, named as the plane's
	// Outcome.Attempts names them.
	Down map[string]bool
	// RateLimited are backends whose provider answers every attempt 429,
	// rate limited with Retry-After: 30 in its own error format, named as
	// Down names them.
	RateLimited map[string]bool
}

// LimitedRetryAfter is the Retry-After a RateLimited backend answers with.
const LimitedRetryAfter = "30"

// Normalized returns a copy with defaults filled in and the token's
// Authorization header added.
func (r Request) Normalized() Request {
	if r.Method == "" {
		r.Method = http.MethodPost
	}
	if r.Path == "" {
		r.Path = "/v1/chat/completions"
	}
	if r.Host == "" {
		r.Host = "gateway.example"
	}
	h := http.Header{}
	for k, vs := range r.Headers {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if r.Token != nil {
		h.Set("Authorization", "Bearer "+r.Token.RawValue())
	}
	if k := r.APIKey; k != nil {
		if k.Header == APIKeyHeader {
			h.Set(APIKeyHeader, k.RawValue())
		} else {
			h.Set("Authorization", "Bearer "+k.RawValue())
		}
	}
	if r.Body != nil && h.Get("Content-Type") == "" {
		// A client sending a JSON body says so; every plane then sees it.
		h.Set("Content-Type", "application/json")
	}
	r.Headers = h
	return r
}

// Model is the body's model, "" when absent or not a string.
func (r Request) Model() string {
	if s, ok := r.Body["model"].(string); ok {
		return s
	}
	return ""
}

// Charge is one budget a request is counted against, with the key the
// budget's bucket is chosen by ("" for router and rule budgets).
type Charge struct {
	Router string // namespace/name
	Budget string
	Key    string
}

// Outcome is what the data plane makes of a request.
type Outcome struct {
	// Status is the answer's status: 200 when a backend answers.
	Status int
	// Router (namespace/name), Rule and Backend name the ModelRouter
	// objects that served it, when a backend answered or was chosen.
	Router, Rule, Backend string
	// Attempts are the backends in the order the plane would try them
	// (the first answers while every backend is healthy).
	Attempts []string
	// Upstream are the headers that reach the backend.
	Upstream http.Header
	// UpstreamModel is the model the request reaches the backend with (the
	// client's, unless the plane rewrote it).
	UpstreamModel string
	// Charges are the budgets the request is counted against.
	Charges []Charge
	// ErrorCode is the error code of a refusal's body (the OpenAI-style
	// error.code the router-proxy writes), "" when the answer has none;
	// Header are the answer's own headers. Only a model that reproduces its
	// plane's refusals sets them (see ModelsRefusals).
	ErrorCode string
	Header    http.Header
	// Trace says step by step what the plane did, for explain and for
	// failure messages.
	Trace []string
}

// Tracef appends a step to the trace.
func (o *Outcome) Tracef(format string, args ...any) {
	o.Trace = append(o.Trace, fmt.Sprintf(format, args...))
}

// String is a one-line summary.
func (o Outcome) String() string {
	var b strings.Builder
	b.WriteString(http.StatusText(o.Status))
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(o.Status))
	b.WriteString(")")
	if o.Backend != "" {
		b.WriteString(" by backend ")
		b.WriteString(o.Router + "/" + o.Backend)
		if o.Rule != "" {
			b.WriteString(" via rule " + o.Rule)
		}
	}
	return b.String()
}

// HeaderNames are the header names of h, lowercased and sorted.
func HeaderNames(h http.Header) []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, strings.ToLower(k))
	}
	sort.Strings(out)
	return out
}
