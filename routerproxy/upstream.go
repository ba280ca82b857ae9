package routerproxy

// The upstream call of one attempt: the request built from the client's
// (headers filtered), sent, and its response headers awaited.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
)

var (
	errHeaderTimeout = errors.New("upstream response header timeout")
	errStreamIdle    = errors.New("upstream stream idle timeout")
)

// hop-by-hop and proxy-owned request headers never forwarded upstream.
var dropRequest = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true, "Accept-Encoding": true,
}

// externalAllow is every client header an external (cloud) backend
// receives; the proxy adds the provider's own credential. Everything else
// stays inside the cluster: credentials (Authorization, Cookie, API keys,
// X-Amz-Security-Token), internal routing and identity (team,
// classification, task complexity, caller), X-Forwarded-For and other
// tenants' billing headers (OpenAI-Organization, Ocp-Apim-Subscription-Key).
var externalAllow = map[string]bool{
	"Content-Type": true, "Accept": true, "Accept-Language": true, "User-Agent": true,
	"Openai-Beta": true, "X-Request-Id": true, "Idempotency-Key": true,
	"Anthropic-Version": true, "Anthropic-Beta": true,
}

// connectionTokens are the headers a Connection header names: hop-by-hop
// by RFC 9110 §7.6.1, never forwarded in either direction.
//
// Only the headers h holds are returned (they are what the caller filters
// out of h), so the usual "keep-alive" and "close" cost no map.
func connectionTokens(h http.Header) map[string]bool {
	var out map[string]bool
	for _, v := range h["Connection"] {
		for tok := range strings.SplitSeq(v, ",") {
			tok = strings.TrimSpace(tok)
			if tok == "" || strings.EqualFold(tok, "keep-alive") && h["Keep-Alive"] == nil || strings.EqualFold(tok, "close") && h["Close"] == nil {
				continue
			}
			key := http.CanonicalHeaderKey(tok)
			if _, ok := h[key]; !ok {
				continue
			}
			if out == nil {
				out = map[string]bool{}
			}
			out[key] = true
		}
	}
	return out
}

// upstream is one attempt's live response.
type upstream struct {
	resp    *http.Response
	cancel  context.CancelCauseFunc
	ctx     context.Context
	started time.Time
	// guard is the attempt's one timer: the header timeout while send
	// waits, then the idle guard while the body is read (one timer per
	// attempt, not two).
	guard  *time.Timer
	idling atomic.Bool
	// pick is the pod an endpoint backend's attempt went to (nil for
	// other backends); relay tells it the answer's length.
	pick *balance.Pick
	// model is the model name the request was sent with; "" when the
	// client's went as it was.
	model string
	// proto is the client's API, which the answer speaks too.
	proto protocol
}

func (u *upstream) expire() {
	if u.idling.Load() {
		u.cancel(errStreamIdle)
	} else {
		u.cancel(errHeaderTimeout)
	}
}

// idleGuard re-arms the attempt's timer to cancel it after idle of
// upstream silence; nil when idle is 0 (no guard). The caller stops it.
func (u *upstream) idleGuard(idle time.Duration) *time.Timer {
	if idle <= 0 {
		return nil
	}
	u.idling.Store(true)
	u.guard.Reset(idle)
	return u.guard
}

// send dispatches one attempt and waits for response headers at most hto.
// host, when set, is the pod the attempt was placed on (endpoint.go).
func (s *Server) send(parent context.Context, b *backendRT, r *http.Request, rb reqBody, hto time.Duration, shadow bool, host string) (*upstream, error) {
	body, model := rb.raw, b.st.Config.Model
	if b.tr == nil {
		// A translator builds its request with its own model; any other
		// backend is sent the model it serves (model.go).
		if model = s.upstreamModel(parent, b, r, host, hto); model != "" {
			body = rb.withModel(model)
		}
	}
	rt, proto := b.roundTripper(s.rt), protocolOf(r.URL.Path)
	switch proto {
	case protoMessages:
		body, rt = b.messagesUpstream(rb, body)
	case protoResponses:
		rt = b.responsesRoundTripper(rt)
	}
	ctx, cancel := context.WithCancelCause(parent)
	req, err := b.newRequest(ctx, r.URL, body)
	if err != nil {
		cancel(err)
		return nil, err
	}
	if host != "" {
		req.URL.Host, req.Host = host, "" // the request's own URL copy
	}
	s.forwardHeaders(req.Header, r.Header, b.st.Config.Kind == proxyapi.KindExternal)
	if b.bearer != "" {
		req.Header.Set("Authorization", b.bearer)
	}
	if shadow {
		req.Header.Set(ShadowHeader, "true")
	}
	if s.tel != nil {
		// The attempt's span is the backend's parent (in-cluster backends only).
		s.tel.Inject(ctx, b.st.Index, req.Header)
	}
	req.ContentLength = int64(len(body))
	up := &upstream{cancel: cancel, ctx: ctx, started: s.now(), model: model, proto: proto}
	up.guard = time.AfterFunc(hto, up.expire)
	resp, err := rt.RoundTrip(req)
	if !up.guard.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		cancel(errHeaderTimeout)
		return nil, errHeaderTimeout
	}
	if err != nil {
		if c := context.Cause(ctx); c != nil && c != context.Canceled {
			err = c
		}
		cancel(err)
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		// A runtime refusing the name it listed may have restarted serving
		// another model: read its list again.
		b.learn.forget()
	}
	up.resp = resp
	return up, nil
}

// forwardHeaders copies the client's headers a backend may receive into
// the upstream request's: no hop-by-hop or proxy-owned header, and to an
// external backend only externalAllow.
func (s *Server) forwardHeaders(dst, src http.Header, external bool) {
	hop := connectionTokens(src)
	if s.auth != nil {
		// The verified team is the proxy's header, not the client's: a
		// Connection header naming it must not strip it.
		delete(hop, s.auth.Header)
	}
	for k, v := range src {
		if dropRequest[k] || hop[k] || (external && !externalAllow[k]) {
			continue
		}
		// With policy.auth.jwt the client's Authorization is its JWT, which
		// the proxy consumed: it reaches no backend, local ones included
		// (as on the Gateway plane). Without auth a local backend gets it
		// (a runtime's --api-key is presented as Authorization).
		// The Messages API's x-api-key is the same credential.
		if s.auth != nil && (k == "Authorization" || k == "X-Api-Key") {
			continue
		}
		dst[k] = v
	}
}

// newRequest is the upstream POST for a client request's path and query
// with body, as http.NewRequestWithContext builds it. The upstream URL of a
// query-less path is parsed once per backend and copied per request
// (make bench-proxy measured the parse at about 1 µs per request); the
// paths are the few the handler serves, so the cache stays small.
func (b *backendRT) newRequest(ctx context.Context, in *url.URL, body []byte) (*http.Request, error) {
	if in.RawQuery != "" || in.RawPath != "" {
		return http.NewRequestWithContext(ctx, http.MethodPost, joinURL(b.base, in.Path, in.RawQuery), bytes.NewReader(body))
	}
	var u *url.URL
	if v, ok := b.urls.Load(in.Path); ok {
		u = v.(*url.URL)
	} else {
		parsed, err := url.Parse(joinURL(b.base, in.Path, ""))
		if err != nil {
			return nil, err
		}
		b.urls.Store(in.Path, parsed)
		u = parsed
	}
	uc := *u
	req := (&http.Request{
		Method: http.MethodPost, URL: &uc, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header), Host: strings.TrimSuffix(uc.Host, ":"), ContentLength: int64(len(body)),
	}).WithContext(ctx)
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		return req, nil
	}
	req.Body = newBodyReader(body)
	req.GetBody = func() (io.ReadCloser, error) { return newBodyReader(body), nil }
	return req, nil
}

// bodyReader is a request body over bytes: one allocation where
// io.NopCloser(bytes.NewReader(b)) makes two.
type bodyReader struct{ bytes.Reader }

func newBodyReader(b []byte) *bodyReader {
	r := &bodyReader{}
	r.Reset(b)
	return r
}

func (*bodyReader) Close() error { return nil }

func joinURL(base interface {
	String() string
}, path, query string) string {
	b := strings.TrimSuffix(base.String(), "/")
	if strings.HasSuffix(b, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = path[3:]
	}
	if query != "" {
		return b + path + "?" + query
	}
	return b + path
}
