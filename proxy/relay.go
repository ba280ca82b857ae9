package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/engine"
	"github.com/llmkube/llmkube-compile/proxy/budget"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

var dropResponse = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// maxCapture bounds how much of a non-streamed response is kept to read usage.
const maxCapture = 4 << 20

// relay copies the committed upstream response to the client. No failover
// happens from here on: bytes may have reached the client. broken, when
// set, is why the upstream broke the response (stream_idle, network_error):
// the caller blames the backend and aborts the client's response.
func (s *Server) relay(clientCtx context.Context, w http.ResponseWriter, att *engine.Attempt, b *backendRT, up *upstream, route *engine.Route, reqBody []byte, charge budget.Settler, ent *proxyapi.AuditEntry) (broken string) {
	defer up.cancel(nil)
	resp := up.resp
	defer resp.Body.Close()
	name := att.Backend.Name()
	ent.Backend, ent.Tier, ent.Status = name, att.Backend.Config.Tier, resp.StatusCode

	h := w.Header()
	respHop := connectionTokens(resp.Header)
	for k, v := range resp.Header {
		if !dropResponse[k] && !respHop[k] {
			h[k] = v
		}
	}
	// The body is relayed byte for byte, so the upstream's Content-Length
	// (when it sent one) stays true for streams too; without one net/http
	// chunks the response.
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if stream {
		ent.Outcome = proxyapi.OutcomeOKStream
	} else {
		ent.Outcome = proxyapi.OutcomeOK
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if stream && !bodyArrived(resp.Body) {
		// The client sees the stream open before the first token. When body
		// bytes came with the headers they go out in the same write.
		_ = rc.Flush()
	}

	idle := s.eng.StreamIdle()
	idleTimer := up.idleGuard(idle)
	if idleTimer != nil {
		defer idleTimer.Stop()
	}

	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var scan engine.StreamScanner
	var capture []byte
	var respBytes int64
	var first time.Time
	var readErr, writeErr error
	// Each write to the client has its own deadline, cleared before the
	// connection is reused.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			// The idle guard measures the upstream's silence only: it is
			// stopped while the client takes the bytes (its back-pressure
			// is bounded by the write deadline instead) and re-armed after.
			if idleTimer != nil && !idleTimer.Stop() && context.Cause(up.ctx) == errStreamIdle {
				readErr = context.Cause(up.ctx)
				break
			}
			if first.IsZero() {
				first = s.now()
			}
			respBytes += int64(n)
			switch {
			case stream:
				_, _ = scan.Write(buf[:n])
			case respBytes <= maxCapture:
				capture = append(capture, buf[:n]...)
			default:
				// Too large to keep: keep only the tail, where usage is.
				capture = append(capture, buf[:n]...)
				if len(capture) > 2*engine.UsageTail {
					capture = append(capture[:0], capture[len(capture)-engine.UsageTail:]...)
				}
			}
			_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
			if _, writeErr = w.Write(buf[:n]); writeErr == nil && stream {
				writeErr = rc.Flush()
			}
			if writeErr != nil {
				break
			}
			if idleTimer != nil {
				idleTimer.Reset(idle)
			}
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	// Hand the client its last bytes before the bookkeeping below.
	if writeErr == nil {
		_ = rc.Flush()
	}
	if !first.IsZero() {
		ft := first.Sub(up.started)
		ent.FirstTokenMs = float64(ft.Microseconds()) / 1000
		b.met.firstToken.Observe(ft.Seconds())
		s.eng.RecordFirstToken(att.Backend, ft)
	}

	// Usage and cost: from the response, else estimated (never zero).
	var u engine.Usage
	var ok bool
	if stream {
		u, ok = scan.Usage()
	} else if respBytes <= maxCapture {
		u, ok = engine.ParseUsage(capture)
	} else {
		u, ok = engine.ParseUsageTail(capture)
	}
	switch {
	case ok:
	case resp.StatusCode >= http.StatusBadRequest:
		// An upstream that refused the request generated nothing: an error
		// answer without usage is not charged (and not estimated).
	default:
		if !stream && bytes.Contains(capture, []byte(`"usage"`)) {
			// It sent usage the proxy would not trust (negative, absurd or
			// overflowing counts): say which upstream, then estimate.
			s.log.Warn("upstream reported implausible usage; charging the estimate", "backend", name, "rule", route.RuleName)
		}
		u = engine.EstimateUsage(int64(len(reqBody)), respBytes)
		s.m.estimated.WithLabelValues(name).Inc()
	}
	if ok && !u.Estimated {
		// The answer's length teaches the pod balancer how long this
		// backend's answers are (for requests that do not bound them).
		up.pick.Answered(u.CompletionTokens)
	}
	cost := b.price.Cost(u)
	ent.PromptTokens, ent.CompletionTokens, ent.TotalTokens, ent.TokensEstimated = u.PromptTokens, u.CompletionTokens, u.Tokens(), u.Estimated
	ent.CostUSD = cost.String()
	if charge != nil {
		charge.Add(u.Tokens(), cost)
	}
	b.met.prompt.Add(float64(u.PromptTokens))
	b.met.completion.Add(float64(u.CompletionTokens))
	if cost > 0 {
		b.met.costs.Add(float64(cost) / 1e12)
	}

	switch {
	case readErr != nil && context.Cause(up.ctx) == errStreamIdle:
		ent.Outcome, ent.Error = proxyapi.OutcomeStreamIdle, "no byte from the upstream for "+idle.String()
		return "stream_idle"
	case (writeErr != nil || readErr != nil) && s.cut.Load():
		ent.Outcome, ent.Error = proxyapi.OutcomeShutdownDeadline, "cut at the drain deadline (--shutdown-timeout)"
	case writeErr != nil && errors.Is(writeErr, os.ErrDeadlineExceeded):
		ent.Outcome, ent.Error = proxyapi.OutcomeClientCancelled, "client stopped reading for "+s.writeTimeout.String()+" during the response"
	case writeErr != nil || (readErr != nil && clientCtx.Err() != nil):
		ent.Outcome, ent.Error = proxyapi.OutcomeClientCancelled, "client went away during the response"
	case readErr != nil:
		ent.Outcome, ent.Error = proxyapi.OutcomeUpstreamAborted, "upstream body: "+readErr.Error()
		return "network_error"
	}
	return ""
}

// bodyArrived reports whether bytes of the response body are already read
// from the upstream connection (proxy/h1 bodies say so), so the first Read
// will not wait for the upstream.
func bodyArrived(body io.Reader) bool {
	b, ok := body.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
}
