package routerproxy

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// mirror sends a shadow copy in the background: at most MaxShadowPerBackend
// run at once per backend, the rest are dropped and counted. Shadow results
// never quarantine and are never charged.
func (s *Server) mirror(r *http.Request, route *engine.Route, b *backendRT, body reqBody) {
	name := b.st.Name()
	select {
	case b.shadow <- struct{}{}:
	default:
		s.m.shadowDropped.WithLabelValues(name).Inc()
		return
	}
	if b.base == nil {
		<-b.shadow
		return
	}
	hto := s.eng.HeaderTimeout(route.Rule, b.st)
	idle := s.eng.StreamIdle()
	if idle <= 0 {
		// Nobody waits on a copy, so it always has an idle guard: a target
		// that stalls must not hold one of its backend's few slots forever.
		idle = s.shadowIdle
	}
	// Detach from the client request: the copy must not be cancelled by the
	// client finishing first, and must not hold the request's header map.
	sr := r.Clone(context.WithoutCancel(r.Context()))
	sr.Header = r.Header.Clone()
	s.shadowWG.Add(1)
	go func() {
		defer s.shadowWG.Done()
		defer func() { <-b.shadow }()
		ctx := context.WithoutCancel(r.Context())
		var span trace.Span
		if s.tel != nil {
			ctx, span = s.tel.StartAttempt(ctx, r.URL.Path, b.st.Index, 0, true)
			defer telemetry.EndSpan(span)
		}
		up, err := s.send(ctx, b, sr, body, hto, true, "")
		if err != nil {
			s.m.shadowSent.WithLabelValues(name, "error").Inc()
			telemetry.AttemptResult(span, "error")
			return
		}
		telemetry.UpstreamStatus(span, up.resp.StatusCode)
		defer up.cancel(nil)
		defer up.resp.Body.Close()
		t := up.idleGuard(idle)
		if t != nil {
			defer t.Stop()
		}
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		for {
			n, err := up.resp.Body.Read(*bp)
			if n > 0 && t != nil {
				t.Reset(idle)
			}
			if err != nil {
				break
			}
		}
		res := "ok"
		if up.resp.StatusCode >= 500 {
			res = "5xx"
		}
		s.m.shadowSent.WithLabelValues(name, res).Inc()
		telemetry.AttemptResult(span, res)
	}()
}
