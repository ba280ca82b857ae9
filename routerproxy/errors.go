package routerproxy

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
)

// writeError answers with an OpenAI-style error object. Strings are JSON
// encoded (strconv's Go quoting wrote \x00 for a control byte in a path,
// which is not JSON).
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	if _, ok := w.(*messagesWriter); ok {
		writeMessagesError(w, status, msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	b := proxyapi.AppendErrorJSON(make([]byte, 0, 128+len(msg)), typ, code, msg)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// retryAfter sets Retry-After to d in whole seconds, at least 1, and
// returns the value.
func retryAfter(w http.ResponseWriter, d time.Duration) string {
	secs := strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
	w.Header().Set("Retry-After", secs)
	return secs
}

// refusal is one way the proxy answers a request itself, without an
// upstream's response: its status, OpenAI error type and code, and the
// audit outcome (the requests metric is labelled with the outcome and
// status, so it follows). refusals is the one table of them.
type refusal struct {
	status    int
	typ, code string
	outcome   string
	// close ends the connection after the answer (the body was not read
	// to its end); retry sets Retry-After: 1 when the caller set none.
	close, retry bool
	// challenge is the WWW-Authenticate an auth refusal carries (RFC 6750).
	challenge string
	// silent answers nothing: the client has gone, and only the audit
	// entry records how the request ended.
	silent bool
}

type refusalKind uint8

const (
	refMissingToken refusalKind = iota
	refInvalidToken
	refInvalidAPIKey
	refExpiredAPIKey
	refMultipleCredentials
	refForbidden
	refTooLarge
	refBodyBusy
	refBodyTimeout
	refInvalidBody
	refInvalidJSON
	refModelRequired
	refNoRoute
	refFailClosed
	refBudgetStoreDown
	refBudgetExceeded
	refRateLimited
	refPoolHoldExpired
	refAllFailed
	refUpstreamRateLimited
	refUpstreamHeld
	refClientCancelled
)

const bearerChallenge = `Bearer realm="llmkube"`

var refusals = [...]refusal{
	refMissingToken:  {status: http.StatusUnauthorized, typ: "authentication_error", code: auth.CodeMissingToken, outcome: proxyapi.OutcomeUnauthorized, challenge: bearerChallenge},
	refInvalidToken:  {status: http.StatusUnauthorized, typ: "authentication_error", code: auth.CodeInvalidToken, outcome: proxyapi.OutcomeUnauthorized, challenge: bearerChallenge + `, error="invalid_token"`},
	refInvalidAPIKey: {status: http.StatusUnauthorized, typ: "authentication_error", code: auth.CodeInvalidAPIKey, outcome: proxyapi.OutcomeUnauthorized, challenge: bearerChallenge + `, error="invalid_token"`},
	refExpiredAPIKey: {status: http.StatusUnauthorized, typ: "authentication_error", code: auth.CodeExpiredAPIKey, outcome: proxyapi.OutcomeUnauthorized, challenge: bearerChallenge + `, error="invalid_token"`},
	// The credential twice (RFC 6750 §3.1 invalid_request): refused by
	// policy.auth, so the audit counts it with the other auth refusals.
	refMultipleCredentials: {status: http.StatusBadRequest, typ: "invalid_request_error", code: auth.CodeMultipleCredentials, outcome: proxyapi.OutcomeUnauthorized, challenge: bearerChallenge + `, error="invalid_request"`},
	refForbidden:           {status: http.StatusForbidden, typ: "permission_error", code: "model_not_allowed", outcome: proxyapi.OutcomeForbidden},
	refTooLarge:            {status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large", outcome: proxyapi.OutcomeTooLarge},
	refBodyBusy:            {status: http.StatusServiceUnavailable, typ: "server_error", code: "body_memory_busy", outcome: proxyapi.OutcomeBodyBusy, retry: true},
	refBodyTimeout:         {status: http.StatusRequestTimeout, typ: "invalid_request_error", code: "body_timeout", outcome: proxyapi.OutcomeBadRequest, close: true},
	refInvalidBody:         {status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_body", outcome: proxyapi.OutcomeBadRequest, close: true},
	refInvalidJSON:         {status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_json", outcome: proxyapi.OutcomeBadRequest},
	refModelRequired:       {status: http.StatusBadRequest, typ: "invalid_request_error", code: "model_required", outcome: proxyapi.OutcomeBadRequest},
	refNoRoute:             {status: http.StatusServiceUnavailable, typ: "server_error", code: "no_route", outcome: proxyapi.OutcomeNoRoute},
	refFailClosed:          {status: http.StatusServiceUnavailable, typ: "server_error", code: "fail_closed", outcome: proxyapi.OutcomeFailClosed},
	refBudgetStoreDown:     {status: http.StatusServiceUnavailable, typ: "server_error", code: "budget_store_unavailable", outcome: proxyapi.OutcomeBudgetStoreDown, retry: true},
	refBudgetExceeded:      {status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "budget_exceeded", outcome: proxyapi.OutcomeBudgetExceeded},
	refRateLimited:         {status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded", outcome: proxyapi.OutcomeRateLimited},
	refPoolHoldExpired:     {status: http.StatusServiceUnavailable, typ: "server_error", code: "model_pool_swap_timeout", outcome: proxyapi.OutcomePoolHoldExpired},
	refAllFailed:           {status: http.StatusBadGateway, typ: "server_error", code: "upstream_unavailable", outcome: proxyapi.OutcomeAllFailed},
	refUpstreamRateLimited: {status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "upstream_rate_limited", outcome: proxyapi.OutcomeAllFailed},
	// Every backend the request could use is held for its provider's
	// quota (quota.go): nothing was sent.
	refUpstreamHeld: {status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "upstream_rate_limited", outcome: proxyapi.OutcomeUpstreamHeld},
	// 499, nginx's "client closed request": nobody is told.
	refClientCancelled: {status: 499, outcome: proxyapi.OutcomeClientCancelled, silent: true},
}

// authRefusal is the row of a request policy.auth refuses (routerproxy/auth
// answers 401 with missing_token, invalid_token, invalid_api_key or
// expired_api_key, and 400 multiple_credentials).
func authRefusal(e *auth.Error) refusalKind {
	switch e.Code {
	case auth.CodeInvalidToken:
		return refInvalidToken
	case auth.CodeInvalidAPIKey:
		return refInvalidAPIKey
	case auth.CodeExpiredAPIKey:
		return refExpiredAPIKey
	case auth.CodeMultipleCredentials:
		return refMultipleCredentials
	}
	return refMissingToken
}

// ending is how a request ended, as its audit entry records it (and the
// requests metric and the request span, which are labelled from the entry).
type ending struct {
	status  int
	outcome string
	err     string
}

// record is the one place an audit entry's status, outcome and error are
// written: every refusal through refuseAs, every relayed response through
// relay's ending.
func (e ending) record(ent *proxyapi.AuditEntry) {
	ent.Status, ent.Outcome, ent.Error = e.status, e.outcome, e.err
}

// refuseAs answers the request as k and records it in its audit entry:
// audit is what the audit line says, told what the client is told (empty:
// the same).
func refuseAs(w http.ResponseWriter, ent *proxyapi.AuditEntry, k refusalKind, audit, told string) {
	rf := &refusals[k]
	ending{status: rf.status, outcome: rf.outcome, err: audit}.record(ent)
	if told == "" {
		told = audit
	}
	answer(w, k, told)
}

// answer tells the client refusal k with msg (nothing when the client has
// gone).
func answer(w http.ResponseWriter, k refusalKind, msg string) {
	rf := &refusals[k]
	if rf.silent {
		return
	}
	if rec, ok := w.(*mcpRecorder); ok {
		rec.refuse(k, msg) // an MCP tool call's: its result says it
		return
	}
	h := w.Header()
	if rf.retry && h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
	if rf.close {
		h.Set("Connection", "close")
	}
	if rf.challenge != "" {
		h.Set("WWW-Authenticate", rf.challenge)
	}
	writeError(w, rf.status, rf.typ, rf.code, msg)
}
