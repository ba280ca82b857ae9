package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/runtime"
	"github.com/llmkube/llmkube-compile/runtime/balance"
)

// Endpoint resolution (docs/routing.md). A backend with runtime
// Backend.Endpoints gets a balance.Balancer; package proxy/endpoints feeds it
// the ready pods (EndpointSlices) and engine metrics. The dispatch path only
// tags the attempt's context (withEndpoint); podTransport then places the
// attempt on a pod, rewrites the upstream host to the pod, and reports the
// outcome to the pod's passive health. Pod failures never quarantine the
// backend itself.

// EndpointBackend is a backend with endpoint resolution.
type EndpointBackend struct {
	Name      string
	Endpoints *proxyapi.Endpoints
	Balancer  *balance.Balancer
}

// EndpointBackends lists the backends with endpoint resolution.
func (s *Server) EndpointBackends() []EndpointBackend {
	var out []EndpointBackend
	for _, b := range s.backends {
		if b.bal != nil {
			out = append(out, EndpointBackend{Name: b.st.Name(), Endpoints: b.st.Config.Endpoints, Balancer: b.bal})
		}
	}
	return out
}

// initEndpoints creates the balancers and wraps the transport when some
// backend resolves endpoints.
func (s *Server) initEndpoints() {
	found := false
	for _, b := range s.backends {
		if e := b.st.Config.Endpoints; e != nil && b.st.Config.Kind == proxyapi.KindLocal {
			cfg := balance.FromEndpoints(e, s.cfg.Timeouts.Quarantine.Duration)
			cfg.Now = s.now
			b.bal = balance.New(cfg)
			found = true
		}
	}
	if found {
		s.rt = &podTransport{next: s.rt}
	}
}

type podKey struct{}

// placement is what podTransport needs to place one attempt.
type placement struct {
	bal    *balance.Balancer
	header http.Header
	body   []byte
}

// withEndpoint tags an attempt on an endpoint backend.
func (s *Server) withEndpoint(ctx context.Context, b *backendRT, r *http.Request, body []byte) context.Context {
	if b.bal == nil {
		return ctx
	}
	return context.WithValue(ctx, podKey{}, &placement{bal: b.bal, header: r.Header, body: body})
}

// isEndpoint reports whether the backend's health is kept per pod.
func (s *Server) isEndpoint(st *runtime.BackendState) bool {
	return s.backends[st.Index].bal != nil
}

// quarantine quarantines a backend after a broken or silent stream, unless
// its pods carry the health (podTransport has quarantined the pod).
func (s *Server) quarantine(st *runtime.BackendState) {
	if !s.isEndpoint(st) {
		s.eng.Quarantine(st)
	}
}

// podTransport places tagged requests on a pod. Untagged requests (service
// resolution, probes, shadow copies) and requests of a backend whose pod set
// is not known yet pass through to the Service URL.
type podTransport struct{ next http.RoundTripper }

func (t *podTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pl, _ := req.Context().Value(podKey{}).(*placement)
	if pl == nil || !pl.bal.Synced() {
		return t.next.RoundTrip(req)
	}
	f := pl.bal.Features(pl.header, pl.body)
	pk, err := pl.bal.Pick(&f)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("endpoint resolution: %w", err)
	}
	out := *req
	u := *req.URL
	u.Host = pk.Addr
	out.URL = &u
	out.Host = ""
	resp, err := t.next.RoundTrip(&out)
	ctx := req.Context()
	if err != nil {
		if ctx.Err() != nil { // header timeout or client gone: no verdict
			pk.Done(balance.Neutral)
		} else {
			pk.Done(balance.Failure)
		}
		return nil, err
	}
	if resp.StatusCode >= 500 {
		pk.Done(balance.Failure)
		return resp, nil
	}
	resp.Body = &podBody{ReadCloser: resp.Body, pk: pk, ctx: ctx}
	return resp, nil
}

// podBody ends the pod's attempt when the body ends: EOF or Close is a
// success, a silent stream quarantines the pod at once, a body that breaks
// mid-way counts as a failure, and a client that went away is no verdict.
type podBody struct {
	io.ReadCloser
	pk   *balance.Pick
	ctx  context.Context
	once sync.Once
}

func (b *podBody) done(r balance.Result) { b.once.Do(func() { b.pk.Done(r) }) }

func (b *podBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		switch {
		case err == io.EOF:
			b.done(balance.Success)
		case errors.Is(context.Cause(b.ctx), errStreamIdle):
			b.done(balance.StreamIdle)
		case b.ctx.Err() != nil:
			b.done(balance.Neutral)
		default:
			b.done(balance.Failure)
		}
	}
	return n, err
}

func (b *podBody) Close() error {
	b.done(balance.Success)
	return b.ReadCloser.Close()
}
