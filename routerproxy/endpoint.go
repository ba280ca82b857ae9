package routerproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
)

// Endpoint resolution (docs/routing.md). A backend with runtime
// Backend.Endpoints gets a balance.Balancer; package routerproxy/endpoints feeds it
// the ready pods (EndpointSlices) and engine metrics. An attempt places
// itself on a pod (place), sends to it, and reports the outcome to the
// pod's passive health: the response head's at once (podVerdict), the
// body's when it ends (podBody). Pod failures never quarantine the backend
// itself.

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

// initEndpoints creates the balancers of the backends that resolve
// endpoints.
func (s *Server) initEndpoints() {
	for _, b := range s.backends {
		if e := b.st.Config.Endpoints; e != nil && b.st.Config.Kind == proxyapi.KindLocal {
			cfg := balance.FromEndpoints(e, s.cfg.Timeouts.Quarantine.Duration)
			cfg.Now = s.now
			b.bal = balance.New(cfg)
		}
	}
}

// isEndpoint reports whether the backend's health is kept per pod.
func (s *Server) isEndpoint(st *engine.BackendState) bool {
	return s.backends[st.Index].bal != nil
}

// quarantine quarantines a backend after a broken or silent stream, unless
// its pods carry the health (podTransport has quarantined the pod).
func (s *Server) quarantine(st *engine.BackendState) {
	if !s.isEndpoint(st) {
		s.eng.Quarantine(st)
	}
}

// place picks the pod of an endpoint backend for the attempt: its address,
// or "" to send to the backend's URL (not an endpoint backend, or its pods
// not known yet: the Service). Probes and shadow copies go to the URL.
func (a *attempt) place(r *http.Request, body []byte) (string, error) {
	bal := a.b.bal
	if bal == nil || !bal.Synced() {
		return "", nil
	}
	f := bal.Features(r.Header, body)
	pk, err := bal.Pick(&f)
	if err != nil {
		return "", fmt.Errorf("endpoint resolution: %w", err)
	}
	a.pick = pk
	return pk.Addr, nil
}

// podVerdict gives the attempt's pod its part of the verdict on the
// response head (a header timeout or a client that left is none, a network
// error or a 5xx a failure); otherwise the body decides when it ends
// (podBody).
func (a *attempt) podVerdict(v verdict) {
	pk := a.pick
	if pk == nil {
		return
	}
	a.pick = nil
	if !v.podByBody {
		pk.Done(v.pod)
		return
	}
	a.up.resp.Body = &podBody{ReadCloser: a.up.resp.Body, pk: pk, ctx: a.up.ctx}
	a.up.pick = pk
}

// podBody ends the pod's attempt when the body ends: EOF or Close is a
// success, a silent stream quarantines the pod at once, a body that breaks
// mid-way counts as a failure, and a client that went away is no verdict.
// Its first byte tells the balancer the pod has prefilled the prompt
// (Pick.Started): an engine sends the response head before the first token,
// the body's first chunk with it.
type podBody struct {
	io.ReadCloser
	pk      *balance.Pick
	ctx     context.Context
	once    sync.Once
	started bool
}

func (b *podBody) done(r balance.Result) { b.once.Do(func() { b.pk.Done(r) }) }

func (b *podBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.started {
		b.started = true
		b.pk.Started()
	}
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
