package routerproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

var dropResponse = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// maxCapture bounds how much of a non-streamed response is kept to read usage.
const maxCapture = 4 << 20

// relay copies the attempt's committed response to the client, in
// stages: the head (relayHead), the body (pump, which tallies what usage
// needs), the accounting (account), and how it ended (ending). No failover
// happens from here on: bytes may have reached the client. broken, when
// set, is why the upstream broke the response (stream_idle,
// network_error): the caller blames the backend and aborts the client's
// response.
func (a *attempt) relay(clientCtx context.Context, w http.ResponseWriter, adm *admitted, ent *proxyapi.AuditEntry) (end ending, broken string) {
	up := a.up
	defer up.cancel(nil)
	defer up.resp.Body.Close()
	ent.Backend, ent.Tier = a.att.Backend.Name(), a.att.Backend.Config.Tier
	ent.UpstreamModel = ent.Model
	if up.model != "" {
		ent.UpstreamModel = clip(up.model, maxAuditField)
	}

	rc := http.NewResponseController(w)
	t := tally{stream: strings.HasPrefix(up.resp.Header.Get("Content-Type"), "text/event-stream"), proto: up.proto}
	// The client sees the model it asked for (model.go). A JSON answer is
	// held until it is whole, to be sent with its new length.
	ec := newEcho(adm.model, up.model, up.resp.StatusCode)
	held := ec != nil && !t.stream
	a.relayHead(w, rc, t.stream, ec != nil)
	if t.proto == protoMessages {
		t.msgs = &messagesUsage{}
	}
	idle := a.s.eng.StreamIdle()
	idleTimer := up.idleGuard(idle)
	if idleTimer != nil {
		defer idleTimer.Stop()
	}
	// Each write to the client has its own deadline, cleared before the
	// connection is reused.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	readErr, writeErr := a.pump(w, rc, &t, idle, idleTimer, ec, held)
	// Hand the client its last bytes before the bookkeeping below.
	if writeErr == nil {
		_ = rc.Flush()
	}
	a.account(&t, adm, ent)
	return a.ending(clientCtx, &t, idle, readErr, writeErr)
}

// relayHead copies the upstream's headers (hop-by-hop ones dropped) and,
// unless held, writes them with its status: an event stream's opening the
// client sees at once. A response whose model is rewritten (echo) loses
// its length, which the rewrite changes; a held one gets its new length
// when it is sent (sendHeld).
func (a *attempt) relayHead(w http.ResponseWriter, rc *http.ResponseController, stream, echoed bool) {
	resp := a.up.resp
	h := w.Header()
	respHop := connectionTokens(resp.Header)
	for k, v := range resp.Header {
		if !dropResponse[k] && !respHop[k] && !keepOurs(h, k) {
			h[k] = v
		}
	}
	if echoed {
		if !stream {
			return // held: sendHeld writes the head
		}
		delete(h, "Content-Length")
	}
	// The body is relayed byte for byte, so the upstream's Content-Length
	// (when it sent one) stays true for streams too; without one net/http
	// chunks the response.
	w.WriteHeader(resp.StatusCode)
	if stream && !bodyArrived(resp.Body) {
		// The client sees the stream open before the first token. When body
		// bytes came with the headers they go out in the same write.
		_ = rc.Flush()
	}
}

// sendHeld sends a held answer: the head, with the body's length once its
// model is replaced (ec non-nil), else as the upstream sent it.
func (a *attempt) sendHeld(w http.ResponseWriter, rc *http.ResponseController, t *tally, ec *echo) error {
	body := t.capture
	if ec != nil {
		body = ec.doc(make([]byte, 0, len(body)+len(ec.quoted)), body)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(a.up.resp.StatusCode)
	if len(body) == 0 {
		return nil
	}
	return a.write(w, rc, body, false)
}

// tally is what relay keeps of the body as it passes: its size, when its
// first byte came, and what its usage is read from (a stream's scanner, or
// the captured body, or only its tail when it is too large to keep).
type tally struct {
	stream bool
	// proto is the answer's API: a Responses answer's usage is
	// input_tokens and output_tokens (a stream's in its last Response), a
	// Messages answer's is read by msgs.
	proto   protocol
	scan    engine.StreamScanner
	rscan   responsesScanner
	capture []byte
	bytes   int64
	first   time.Time
	msgs    *messagesUsage // a Messages answer's usage (messages.go); nil: OpenAI's
}

func (t *tally) add(p []byte) {
	t.bytes += int64(len(p))
	switch {
	case t.stream && t.proto == protoResponses:
		_, _ = t.rscan.Write(p)
	case t.stream && t.msgs != nil:
		t.msgs.Write(p)
	case t.stream:
		_, _ = t.scan.Write(p)
	case t.bytes <= maxCapture:
		t.capture = append(t.capture, p...)
	default:
		// Too large to keep: keep only the tail, where usage is.
		t.capture = append(t.capture, p...)
		if len(t.capture) > 2*engine.UsageTail {
			t.capture = append(t.capture[:0], t.capture[len(t.capture)-engine.UsageTail:]...)
		}
	}
}

// usage is the usage the response reports; ok is false when it reports
// none the proxy trusts.
func (t *tally) usage() (u engine.Usage, ok bool) {
	if t.msgs != nil {
		if t.stream {
			return t.msgs.streamUsage()
		}
		return t.msgs.bodyUsage(t.capture, t.bytes > maxCapture)
	}
	switch {
	case t.stream && t.proto == protoResponses:
		return t.rscan.Usage()
	case t.proto == protoResponses && t.bytes <= maxCapture:
		return parseResponsesUsage(t.capture)
	case t.stream:
		return t.scan.Usage()
	case t.bytes <= maxCapture:
		return engine.ParseUsage(t.capture)
	}
	return engine.ParseUsageTail(t.capture)
}

// pump copies the body to the client until it ends or a side breaks it:
// readErr is the upstream's break (nil at EOF), writeErr the client's.
// With an echo, a stream's lines go out with the client's model; a held
// answer is kept until it is whole (sendHeld), or sent as it came once it
// outgrows maxCapture or breaks.
func (a *attempt) pump(w http.ResponseWriter, rc *http.ResponseController, t *tally, idle time.Duration, idleTimer *time.Timer, ec *echo, held bool) (readErr, writeErr error) {
	up := a.up
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, err := up.resp.Body.Read(buf)
		if n > 0 {
			// The idle guard measures the upstream's silence only: it is
			// stopped while the client takes the bytes (its back-pressure
			// is bounded by the write deadline instead) and re-armed after.
			if idleTimer != nil && !idleTimer.Stop() && context.Cause(up.ctx) == errStreamIdle {
				return context.Cause(up.ctx), a.unhold(w, rc, t, held)
			}
			if t.first.IsZero() {
				t.first = a.s.now()
			}
			if held && t.bytes+int64(n) > maxCapture {
				// Too large to hold: relayed as it came.
				if writeErr = a.sendHeld(w, rc, t, nil); writeErr != nil {
					return nil, writeErr
				}
				held, ec = false, nil
			}
			t.add(buf[:n])
			out := buf[:n]
			if ec != nil && !held {
				out = ec.stream(out)
			}
			if !held && len(out) > 0 {
				if writeErr = a.write(w, rc, out, t.stream); writeErr != nil {
					return nil, writeErr
				}
			}
			if idleTimer != nil {
				idleTimer.Reset(idle)
			}
		}
		if err == io.EOF {
			switch {
			case held:
				writeErr = a.sendHeld(w, rc, t, ec)
			case ec != nil:
				if rest := ec.end(); len(rest) > 0 {
					writeErr = a.write(w, rc, rest, t.stream)
				}
			}
			return nil, writeErr
		}
		if err != nil {
			if ec != nil && !held {
				if rest := ec.end(); len(rest) > 0 {
					_ = a.write(w, rc, rest, t.stream)
				}
			}
			return err, a.unhold(w, rc, t, held)
		}
	}
}

// unhold sends what a held answer has when the upstream broke it, as it
// came (the client then sees it cut, as without the hold).
func (a *attempt) unhold(w http.ResponseWriter, rc *http.ResponseController, t *tally, held bool) error {
	if !held {
		return nil
	}
	return a.sendHeld(w, rc, t, nil)
}

// write hands p to the client within the write timeout, flushed at once in
// a stream.
func (a *attempt) write(w http.ResponseWriter, rc *http.ResponseController, p []byte, stream bool) error {
	_ = rc.SetWriteDeadline(time.Now().Add(a.s.writeTimeout))
	if _, err := w.Write(p); err != nil || !stream {
		return err
	}
	return rc.Flush()
}

// account records the first token's latency, reads the answer's usage
// (estimated when it reports none it can trust, never zero), prices it,
// settles the budgets' charge and counts it.
func (a *attempt) account(t *tally, adm *admitted, ent *proxyapi.AuditEntry) {
	s, b, name := a.s, a.b, a.att.Backend.Name()
	if !t.first.IsZero() {
		ft := t.first.Sub(a.up.started)
		ent.FirstTokenMs = float64(ft.Microseconds()) / 1000
		b.met.firstToken.Observe(ft.Seconds())
		s.eng.RecordFirstToken(a.att.Backend, ft)
	}
	u, ok := t.usage()
	switch {
	case ok:
	case a.up.resp.StatusCode >= http.StatusBadRequest:
		// An upstream that refused the request generated nothing: an error
		// answer without usage is not charged (and not estimated).
	default:
		if !t.stream && bytes.Contains(t.capture, []byte(`"usage"`)) {
			// It sent usage the proxy would not trust (negative, absurd or
			// overflowing counts): say which upstream, then estimate.
			s.log.Warn("upstream reported implausible usage; charging the estimate", "backend", name, "rule", adm.route.RuleName)
		}
		u = engine.EstimateUsage(int64(len(adm.body.raw)), t.bytes)
		s.m.estimated.WithLabelValues(name).Inc()
	}
	if ok && !u.Estimated {
		// The answer's length teaches the pod balancer how long this
		// backend's answers are (for requests that do not bound them).
		a.up.pick.Answered(u.CompletionTokens)
	}
	cost := b.price.Cost(u)
	ent.PromptTokens, ent.CompletionTokens, ent.TotalTokens, ent.TokensEstimated = u.PromptTokens, u.CompletionTokens, u.Tokens(), u.Estimated
	ent.CostUSD = cost.String()
	if adm.charge != nil {
		adm.charge.Add(u.Tokens(), cost)
	}
	settleRateLimits(adm.limits, u)
	b.met.prompt.Add(float64(u.PromptTokens))
	b.met.completion.Add(float64(u.CompletionTokens))
	if cost > 0 {
		b.met.costs.Add(float64(cost) / 1e12)
	}
}

// ending classifies how the relayed response ended: its audit outcome,
// and broken when the upstream broke it (a silent stream, a cut body).
func (a *attempt) ending(clientCtx context.Context, t *tally, idle time.Duration, readErr, writeErr error) (end ending, broken string) {
	s := a.s
	end = ending{status: a.up.resp.StatusCode, outcome: proxyapi.OutcomeOK}
	if t.stream {
		end.outcome = proxyapi.OutcomeOKStream
	}
	switch {
	case readErr != nil && context.Cause(a.up.ctx) == errStreamIdle:
		end.outcome, end.err = proxyapi.OutcomeStreamIdle, "no byte from the upstream for "+idle.String()
		return end, "stream_idle"
	case (writeErr != nil || readErr != nil) && s.cut.Load():
		end.outcome, end.err = proxyapi.OutcomeShutdownDeadline, "cut at the drain deadline (--shutdown-timeout)"
	case writeErr != nil && errors.Is(writeErr, os.ErrDeadlineExceeded):
		end.outcome, end.err = proxyapi.OutcomeClientCancelled, "client stopped reading for "+s.writeTimeout.String()+" during the response"
	case writeErr != nil || (readErr != nil && clientCtx.Err() != nil):
		end.outcome, end.err = proxyapi.OutcomeClientCancelled, "client went away during the response"
	case readErr != nil:
		end.outcome, end.err = proxyapi.OutcomeUpstreamAborted, "upstream body: "+readErr.Error()
		return end, "network_error"
	}
	return end, ""
}

// bodyArrived reports whether bytes of the response body are already read
// from the upstream connection (routerproxy/h1 bodies say so), so the first Read
// will not wait for the upstream.
func bodyArrived(body io.Reader) bool {
	b, ok := body.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
}
