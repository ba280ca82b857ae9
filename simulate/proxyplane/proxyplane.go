// Package proxyplane runs requests through the router-proxy itself: the
// engine and the request handling of package routerproxy, built from the config
// the Proxy target renders, with every upstream answered in process. It is
// the Proxy plane of `llmkube-compile test` and `explain`: not a model, the
// shipped code.
//
// What is in process instead of real: the upstreams (a transport that
// records each request and answers in the provider's own format), the
// JWKS (a key generated per Plane; a Token is signed with it, its issuer as
// given, an hour of validity), credentials (placeholder values), and the
// Secrets of policy.auth.apiKeys (a temporary directory per request, each
// Secret holding the key simulate.KeyValue names; apikeys.go). Pod
// balancing (resolution: endpoint) and ModelPool activation are not run:
// requests go to the backend's Service URL, every pool member resident.
package proxyplane

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/simulate"
)

const kid = "routing-test"

// Plane serves requests with the router-proxy built from one config.
type Plane struct {
	cfg  []byte // the rendered config, parsed afresh per request
	key  *rsa.PrivateKey
	jwks []byte
	sa   string // a service-account JSON for vertex_ai backends
}

// New prepares a plane from the router-proxy config the Proxy target
// rendered (the ConfigMap's config.json).
func New(config []byte) (*Plane, error) {
	if _, err := proxyapi.Parse(bytes.NewReader(config)); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	der := x509.MarshalPKCS1PrivateKey(key)
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "routing-test", "private_key_id": kid,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})),
		"client_email": "routing-test@routing-test.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
	})
	return &Plane{cfg: config, key: key, jwks: jwks, sa: string(sa)}, nil
}

// upstream answers and records every request the router-proxy sends.
type upstream struct {
	mu       sync.Mutex
	byHost   map[string]string // upstream host -> backend
	backends map[string]*proxyapi.Backend
	down     map[string]bool
	limited  map[string]bool // answer 429 (limitedReply)
	sent     []sent
}

type sent struct {
	backend string
	header  http.Header
	model   string // the body's model, "" when it has none (a provider's model in the path)
	path    string // the upstream path: which protocol the backend was sent
}

// backendHost is the host a backend's requests are sent to here: each its
// own, since several backends may share one Service.
func backendHost(i int) string { return fmt.Sprintf("backend-%d.routing-test.invalid", i) }

func (u *upstream) RoundTrip(r *http.Request) (*http.Response, error) {
	var body struct {
		Model string `json:"model"`
	}
	if r.Body != nil {
		data, _ := io.ReadAll(r.Body)
		r.Body.Close()
		_ = json.Unmarshal(data, &body)
	}
	if r.URL.Host == "oauth2.googleapis.com" {
		return answer(r, http.StatusOK, `{"access_token":"routing-test","expires_in":3600,"token_type":"Bearer"}`), nil
	}
	name := u.byHost[r.URL.Host]
	if name == "" {
		for host, n := range u.byHost { // providers that derive their host (bedrock by region)
			if strings.HasSuffix(r.URL.Host, host) {
				name = n
			}
		}
	}
	if name == "" {
		return nil, fmt.Errorf("no backend answers at %s", r.URL.Host)
	}
	b := u.backends[name]
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/v1/models") {
		// A local backend whose served model the InferenceService does not
		// say is asked for it (learnModel). There is no runtime here: it
		// lists the name the compiler assumed, the one the gateway planes
		// send too.
		if u.down[name] {
			return answer(r, http.StatusServiceUnavailable, `{"error":{"message":"down","type":"server_error"}}`), nil
		}
		list, _ := json.Marshal(map[string]any{"object": "list", "data": []any{map[string]any{"id": b.Model, "object": "model"}}})
		return answer(r, http.StatusOK, string(list)), nil
	}
	if r.Header.Get(routerproxy.ShadowHeader) == "" && !isProbe(r, b) {
		u.mu.Lock()
		u.sent = append(u.sent, sent{backend: name, header: r.Header.Clone(), model: body.Model, path: r.URL.Path})
		u.mu.Unlock()
	}
	if u.down[name] {
		return answer(r, http.StatusServiceUnavailable, `{"error":{"message":"down","type":"server_error"}}`), nil
	}
	if u.limited[name] && !isProbe(r, b) {
		return limitedReply(r, b), nil
	}
	if isProbe(r, b) {
		return answer(r, http.StatusOK, `{}`), nil
	}
	if strings.HasSuffix(r.URL.Path, "/responses") {
		// A client's Responses request passed through to a backend
		// that speaks it (an OpenAI provider).
		return answer(r, http.StatusOK, responsesReply), nil
	}
	return answer(r, http.StatusOK, replyFor(b)), nil
}

// limitedReply is a backend's 429 in its provider's own format (the
// formats providers.ReadLimit reads), with Retry-After.
func limitedReply(r *http.Request, b *proxyapi.Backend) *http.Response {
	var resp *http.Response
	switch b.Provider {
	case "anthropic":
		resp = answer(r, http.StatusTooManyRequests, `{"type":"error","error":{"type":"rate_limit_error","message":"rate limited (routing test)"}}`)
	case "bedrock":
		resp = answer(r, http.StatusTooManyRequests, `{"message":"Too many requests, please wait before trying again."}`)
		resp.Header.Set("X-Amzn-Errortype", "ThrottlingException")
	case "vertex_ai":
		resp = answer(r, http.StatusTooManyRequests, `{"error":{"code":429,"message":"Resource exhausted. Please try again later.","status":"RESOURCE_EXHAUSTED"}}`)
	default:
		resp = answer(r, http.StatusTooManyRequests, `{"error":{"message":"rate limited (routing test)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	}
	resp.Header.Set("Retry-After", simulate.LimitedRetryAfter)
	return resp
}

// responsesReply is a non-streamed OpenAI Responses answer.
const responsesReply = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":20,"total_tokens":30}}`

func isProbe(r *http.Request, b *proxyapi.Backend) bool {
	return r.Method == http.MethodGet && b.HealthCheck.Path != "" && strings.HasSuffix(r.URL.Path, b.HealthCheck.Path)
}

// replyFor is a non-streamed completion in the backend's own API.
func replyFor(b *proxyapi.Backend) string {
	switch b.Provider {
	case "anthropic":
		return `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20}}`
	case "bedrock":
		return `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":20,"totalTokens":30}}`
	case "vertex_ai":
		return `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20,"totalTokenCount":30},"modelVersion":"m","responseId":"r1"}`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}`
}

func answer(r *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r,
	}
}

// jwksClient serves the plane's key set for any JWKS URI.
type jwksClient struct{ jwks []byte }

func (j jwksClient) RoundTrip(r *http.Request) (*http.Response, error) {
	return answer(r, http.StatusOK, string(j.jwks)), nil
}

// getenv hands every credential variable a placeholder value the
// providers accept.
func (p *Plane) getenv(name string) string {
	switch {
	case strings.HasSuffix(name, "GOOGLE_APPLICATION_CREDENTIALS_JSON"):
		return p.sa
	case strings.HasSuffix(name, "AWS_REGION"):
		return "us-east-1"
	case strings.HasSuffix(name, "AWS_SESSION_TOKEN"):
		return ""
	case strings.HasPrefix(name, "LLMKUBE_"):
		return "credential-" + strings.ToLower(name)
	}
	return ""
}

type auditSink struct {
	mu sync.Mutex
	e  []*proxyapi.AuditEntry
}

func (a *auditSink) Write(e *proxyapi.AuditEntry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cp := *e
	a.e = append(a.e, &cp)
}

func (a *auditSink) Close(context.Context) error { return nil }

// Token signs t with the plane's key: its issuer, claims, an expiry an hour
// ahead. An Invalid token is signed with another key.
func (p *Plane) Token(t *simulate.Token) (string, error) {
	claims := jwt.MapClaims{"iss": t.Issuer, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range t.Claims {
		claims[k] = v
	}
	key := p.key
	if t.Invalid {
		other, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", err
		}
		key = other
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	return tok.SignedString(key)
}

// Serve runs one request through a router-proxy built for it (so budgets
// start empty). Down names backends by their ModelRouter name.
func (p *Plane) Serve(in simulate.Request) simulate.Outcome {
	o := simulate.Outcome{}
	cfg, err := proxyapi.Parse(bytes.NewReader(p.cfg))
	if err != nil {
		o.Status = http.StatusInternalServerError
		o.Tracef("the router-proxy refuses its config: %v", err)
		return o
	}
	keys, err := writeKeys(cfg, in.APIKey)
	if err != nil {
		o.Status = http.StatusInternalServerError
		o.Tracef("the API keys' Secrets cannot be written: %v", err)
		return o
	}
	defer keys()
	up := newUpstream(cfg, in.Down)
	up.limited = in.RateLimited
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	audit := &auditSink{}
	srv, err := routerproxy.New(cfg, routerproxy.Options{
		Audit: audit, Getenv: p.getenv, Transport: up, Context: ctx,
		JWKSClient: &http.Client{Transport: jwksClient{p.jwks}},
	})
	if err != nil {
		o.Status = http.StatusInternalServerError
		o.Tracef("the router-proxy does not start: %v", err)
		return o
	}
	req := in.Normalized()
	hr, data, err := p.request(req)
	if err != nil {
		o.Status = http.StatusInternalServerError
		return o
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, hr)
	o.Status = rec.Code
	o.Header = rec.Header()
	var refusal struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if o.Status >= 400 && json.Unmarshal(rec.Body.Bytes(), &refusal) == nil {
		o.ErrorCode = refusal.Error.Code
	}
	for _, s := range up.sent {
		o.Attempts = append(o.Attempts, s.backend)
	}
	if len(up.sent) > 0 && o.Status < 300 {
		last := up.sent[len(up.sent)-1]
		o.Backend, o.Upstream, o.UpstreamModel = last.backend, last.header, last.model
	}
	for _, e := range audit.e {
		if e.Rule != "" {
			o.Rule = e.Rule
		}
		if o.Backend != "" && o.UpstreamModel == "" {
			// A provider whose model is in the path (bedrock, vertex_ai):
			// what the router-proxy records it sent.
			o.UpstreamModel = e.UpstreamModel
		}
		traceEntry(e, &o)
		if e.Rule != "" {
			for _, step := range ruleSteps(srv.Engine(), req.Model(), hr.Header, data, e.Rule, e.Outcome == proxyapi.OutcomeForbidden) {
				o.Tracef("%s", step)
			}
		}
		o.Tracef("router-proxy: status %d, outcome %s, rule %q, backend %q, %d attempt(s)%s", e.Status, e.Outcome, e.Rule, e.Backend, e.Attempts, errSuffix(e.Error))
		o.Charges = append(o.Charges, charges(cfg, srv.Status(), e.Team)...)
	}
	if o.Backend != "" {
		// Whether a client's protocol was passed through or translated
		// shows in the path the backend was sent.
		o.Tracef("router-proxy: the client's %s %s reached backend %s as %s", hr.Method, hr.URL.Path, o.Backend, up.sent[len(up.sent)-1].path)
	}
	if o.Backend != "" && o.UpstreamModel != "" && o.UpstreamModel != req.Model() {
		o.Tracef("router-proxy: backend %s is sent the model it serves, %q (the client sees %q)", o.Backend, o.UpstreamModel, req.Model())
	}
	if o.Status >= 400 {
		o.Tracef("answer: %s", strings.TrimSpace(rec.Body.String()))
	}
	return o
}

// newUpstream is the transport for cfg's backends: each is reached at a
// host of its own (a Bedrock backend at amazonaws.com), their endpoints
// and pools dropped, so that what is sent where can be told apart.
func newUpstream(cfg *proxyapi.Config, down map[string]bool) *upstream {
	up := &upstream{byHost: map[string]string{}, backends: map[string]*proxyapi.Backend{}, down: down}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		b.Endpoints = nil
		b.Pool = nil
		if b.URL != "" {
			u, err := url.Parse(b.URL)
			if err == nil {
				u.Host = backendHost(i)
				b.URL = u.String()
			}
			up.byHost[backendHost(i)] = b.Name
		} else {
			up.byHost["amazonaws.com"] = b.Name
		}
		up.backends[b.Name] = b
	}
	return up
}

// request is the HTTP request of req, with its body as JSON (data) and the
// bearer token of req.Token signed.
func (p *Plane) request(req simulate.Request) (hr *http.Request, data []byte, err error) {
	var body io.Reader = http.NoBody
	if req.Body != nil {
		data, _ = json.Marshal(req.Body)
		body = bytes.NewReader(data)
	}
	hr = httptest.NewRequest(req.Method, req.Path, body)
	hr.Host = req.Host
	if req.ClientAddr != "" {
		hr.RemoteAddr = req.ClientAddr + ":40000"
	}
	for k, vs := range req.Headers {
		hr.Header[k] = vs
	}
	hr.Header.Set("Content-Type", "application/json")
	if req.Token != nil {
		raw, err := p.Token(req.Token)
		if err != nil {
			return nil, nil, err
		}
		hr.Header.Set("Authorization", "Bearer "+raw)
	}
	return hr, data, nil
}

// traceEntry traces what an audit entry says of the caller and the
// classification.
func traceEntry(e *proxyapi.AuditEntry, o *simulate.Outcome) {
	if e.Team != "" {
		o.Tracef("auth: the token verifies, team %q", e.Team)
	}
	if e.Classification != "" {
		detectors := ""
		if len(e.Detectors) > 0 {
			detectors = " (detectors: " + strings.Join(e.Detectors, ", ") + ")"
		}
		o.Tracef("classification: %s, from %s%s", e.Classification, e.ClassificationSource, detectors)
	}
}

// charges are the budgets the router-proxy has charged, keyed by the
// caller's team where a budget is per team.
func charges(cfg *proxyapi.Config, st proxyapi.Status, team string) []simulate.Charge {
	var out []simulate.Charge
	for _, b := range st.Budgets {
		if b.TokensUsed <= 0 {
			continue
		}
		key := ""
		for _, cb := range cfg.Policy.Budgets {
			if cb.Name == b.Name && cb.Scope == proxyapi.ScopeTeam {
				key = team
			}
		}
		out = append(out, simulate.Charge{Router: cfg.Router.Namespace + "/" + cfg.Router.Name, Budget: b.Name, Key: key})
	}
	return out
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// ruleSteps says how the engine reached the rule that served: each rule
// before it, in order, did not match or matched with no eligible backend
// (skipped), then the rule itself. refused: the rule (or the default
// route) was reached but the caller's allowlist leaves it no backend.
func ruleSteps(eng *engine.Engine, model string, h http.Header, body []byte, served string, refused bool) []string {
	req := &engine.Request{Model: model, Header: h}
	cls := eng.Classify(h, body)
	var out []string
	for _, r := range eng.Rules() {
		name := r.Config.Name
		if name == served && refused {
			return append(out, fmt.Sprintf("rule %q matches, but the caller's allowlist names the model of none of its backends: refused, never served by another rule", name))
		}
		if name == served {
			return append(out, fmt.Sprintf("rule %q matches and serves", name))
		}
		if eng.Matches(r, req, cls) {
			out = append(out, fmt.Sprintf("rule %q matches but none of its backends is eligible: skipped", name))
		} else {
			out = append(out, fmt.Sprintf("rule %q does not match", name))
		}
	}
	if served == engine.DefaultRuleName && refused {
		return append(out, "no rule serves it: the default route's backend is not in the caller's allowlist: refused")
	}
	if served == engine.DefaultRuleName {
		return append(out, "no rule serves it: the default route does")
	}
	return out
}
