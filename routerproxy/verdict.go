package routerproxy

// An attempt's verdict: one value for what the outcome of one try of one
// backend means, decided once (classify, or the pool hold's activate) and
// read by everyone after: the failover (dispatch.go), the backend's passive
// health and metrics (finish), the pod's (podVerdict) and the pool's
// re-check (call).

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/llmkube/llmkube-compile/routerproxy/telemetry"
)

// step is where the failover hands the request after an attempt.
type step uint8

const (
	// stepRelay: the response is the client's (relay.go); no failover
	// after it.
	stepRelay step = iota
	// stepNext: the backend is passed over; the next one is tried.
	stepNext
	// stepEnd: the request ends here, refused (refusal) or with a client
	// that has gone.
	stepEnd
)

// verdict is what an attempt's outcome says about its backend, its pod and
// the failover.
type verdict struct {
	step step
	// health is the backend's passive-health report.
	health engine.Result
	// result labels llmkube_router_upstream_attempts_total; empty: not
	// counted (a success is counted by the backend's own counter).
	result string
	// failed also counts in llmkube_router_quarantines_total.
	failed bool
	// pod is the verdict on the attempt's pod (endpoint backends); with
	// podByBody the response body decides when it ends (podBody).
	pod       balance.Result
	podByBody bool
	// drain reads the unrelayed response body (up to 64 KiB) before it is
	// closed, so the connection can be reused.
	drain bool
	// skipped: the backend was passed over before it was sent to (its
	// span says skipped).
	skipped bool
	// retryable: a pooled member may have been swapped out by another
	// replica; the pool is re-read and the request sent once more (call).
	retryable bool
	// why the backend did not serve: the failover's last error, or with
	// stepEnd the audit entry's error.
	why string
	// stepEnd: the answer (told: what the client is told, empty: why;
	// retryAfter: a Retry-After to set first, 0: none).
	refusal    refusalKind
	told       string
	retryAfter time.Duration
}

// The attempts metric's results a verdict is matched on.
const (
	resultRateLimited = "rate_limited"
	resultCancelled   = "cancelled"
)

// served is the verdict on a response the client gets.
var served = verdict{step: stepRelay, health: engine.Success, podByBody: true}

// classify is the one classification of a sent attempt's (error, response
// head). ctx is the client's: an error after it ended is the client's, not
// the backend's.
func (a *attempt) classify(ctx context.Context, err error) verdict {
	name := a.att.Backend.Name()
	switch {
	case err != nil && ctx.Err() != nil:
		return verdict{step: stepEnd, health: engine.Neutral, result: resultCancelled, pod: balance.Neutral, refusal: refClientCancelled, why: "client went away"}
	case errors.Is(err, errHeaderTimeout):
		// A slow answer is not a broken backend: no quarantine.
		return verdict{step: stepNext, health: engine.Neutral, result: "header_timeout", pod: balance.Neutral, why: name + ": no response headers within the timeout"}
	case err != nil:
		return verdict{step: stepNext, health: engine.Failure, result: "network_error", failed: true, pod: balance.Failure, retryable: true, why: name + ": " + err.Error()}
	}
	switch code := a.up.resp.StatusCode; {
	case code >= 400 && code < 500 && a.b.st.Config.Kind == proxyapi.KindExternal:
		// A provider's rate limit or spent quota holds the backend and
		// fails over (quota.go); any other 4xx is the client's answer.
		if v, ok := a.quotaVerdict(name); ok {
			return v
		}
	case code >= 500:
		return verdict{step: stepNext, health: engine.Failure, result: "5xx", failed: true, pod: balance.Failure, drain: true, retryable: true, why: name + ": status " + strconv.Itoa(code)}
	case code < 200:
		// An upgrade (101) or any 1xx the transport hands back fails
		// over: a POST client cannot be switched to another protocol, and
		// relaying it would hang the client.
		return verdict{step: stepNext, health: engine.Failure, result: "bad_status", failed: true, podByBody: true, why: name + ": status " + strconv.Itoa(code)}
	}
	return served
}

// swapped is v for a pooled member that failed again after the re-check
// and is no longer resident: swapped out once more (replicas alternating
// models on a busy node), it is not broken, and quarantining it would
// leave its requests unroutable, with nothing to activate it again, for
// the whole quarantine.
func (v verdict) swapped() verdict {
	v.health, v.result, v.failed = engine.Neutral, "pool_swapped", false
	return v
}

// finish records the attempt's verdict, once. A failure of an endpoint
// backend is its pod's (endpoint.go), not the backend's.
func (a *attempt) finish(v verdict) {
	if a.finished {
		return
	}
	a.finished = true
	s, name := a.s, a.att.Backend.Name()
	health := v.health
	if health == engine.Failure && s.isEndpoint(a.att.Backend) {
		health = engine.Neutral
	}
	s.eng.Report(a.att, health)
	if a.span != nil {
		a.traceVerdict(v)
	}
	switch {
	case v.health == engine.Success:
		a.b.met.attemptOK.Inc()
	case v.result != "":
		s.m.attempts.WithLabelValues(name, v.result).Inc()
	}
	if v.failed {
		s.m.quarantines.WithLabelValues(name, v.result).Inc()
	}
	if v.skipped {
		telemetry.AttemptResult(a.span, telemetry.ResultSkipped)
	}
}

// traceVerdict puts the verdict on the attempt's span.
func (a *attempt) traceVerdict(v verdict) {
	result := v.result
	switch {
	case v.health == engine.Success:
		result = telemetry.ResultOK
	case result == "":
		result = "no_url"
	}
	telemetry.AttemptResult(a.span, result)
}

// broke records that the upstream broke a relayed response (a silent or
// cut stream): the backend is quarantined, unless its pods carry the
// health (the pod's verdict is podBody's).
func (a *attempt) broke(reason string) {
	a.s.quarantine(a.att.Backend)
	a.s.m.quarantines.WithLabelValues(a.att.Backend.Name(), reason).Inc()
	telemetry.AttemptResult(a.span, reason)
}
