package proxyapi

import (
	"encoding/json"
	"time"
)

// Audit outcomes.
const (
	OutcomeOK               = "ok"
	OutcomeOKStream         = "ok_stream"
	OutcomeNoRoute          = "no_route"
	OutcomeFailClosed       = "fail_closed"
	OutcomeAllFailed        = "all_backends_failed"
	OutcomeBudgetExceeded   = "budget_exceeded"
	OutcomeBadRequest       = "bad_request"
	OutcomeTooLarge         = "too_large"
	OutcomeClientCancelled  = "client_cancelled"
	OutcomeStreamIdle       = "stream_idle_timeout"
	OutcomeUpstreamAborted  = "upstream_aborted"
	OutcomeShutdownDeadline = "shutdown_deadline"
	// OutcomeBodyBusy: the request-body memory budget stayed full for the body read timeout.
	OutcomeBodyBusy = "body_memory_busy"
	// OutcomeUpstreamHeld: every backend the request could use is held
	// for its provider's rate limit or spent quota; nothing was sent (429
	// with Retry-After).
	OutcomeUpstreamHeld = "upstream_held"
	// OutcomeUnauthorized: policy.auth found no valid bearer token (401).
	OutcomeUnauthorized = "unauthorized"
	// OutcomeForbidden: the verified team may not use the model (403).
	OutcomeForbidden = "forbidden"
	// OutcomeBudgetStoreDown: the shared budget store could not be asked
	// and the store fails closed (503).
	OutcomeBudgetStoreDown = "budget_store_unavailable"
	// OutcomePoolHoldExpired: a Wait hold for a ModelPool member passed the
	// pool's swapBudget (503 with Retry-After).
	OutcomePoolHoldExpired = "pool_hold_expired"
	// OutcomeRateLimited: a policy.rateLimits limit refused the request
	// (429 with Retry-After); the entry's rateLimit names it.
	OutcomeRateLimited = "rate_limited"
)

// ViaMCP marks an audit entry of a call through the MCP endpoint.
const ViaMCP = "mcp"

// AuditEntry is one audit record: one per request, written as one JSON object.
type AuditEntry struct {
	Time      time.Time `json:"time"`
	Router    string    `json:"router"`
	Namespace string    `json:"namespace"`
	Path      string    `json:"path"`
	Rule      string    `json:"rule,omitempty"`
	Backend   string    `json:"backend,omitempty"`
	Tier      string    `json:"tier,omitempty"`
	// Model is the model the client asked for; UpstreamModel the model name
	// the request was sent with to the backend whose answer was relayed (its
	// served model, which may differ); empty when no answer was relayed.
	Model          string `json:"model,omitempty"`
	UpstreamModel  string `json:"upstreamModel,omitempty"`
	Classification string `json:"classification,omitempty"`
	// ClassificationSource is where the classification came from: header,
	// detector, or header,detector (hybrid).
	ClassificationSource string `json:"classificationSource,omitempty"`
	// Detectors are the content classifier's detectors that fired, by
	// name; never what they matched.
	Detectors      []string `json:"detectors,omitempty"`
	TaskComplexity string   `json:"taskComplexity,omitempty"`
	Stream         bool     `json:"stream"`
	Status         int      `json:"status"`
	Outcome        string   `json:"outcome"`
	// LatencyMs is the whole request, including a streamed body.
	LatencyMs float64 `json:"latencyMs"`
	// FirstTokenMs is the time to the first response body byte.
	FirstTokenMs     float64 `json:"firstTokenMs,omitempty"`
	Attempts         int     `json:"attempts"`
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	TotalTokens      int64   `json:"totalTokens"`
	TokensEstimated  bool    `json:"tokensEstimated,omitempty"`
	CostUSD          string  `json:"costUSD"`
	Budget           string  `json:"budget,omitempty"`
	RateLimit        string  `json:"rateLimit,omitempty"`
	Promoted         bool    `json:"sloPromoted,omitempty"`
	Caller           string  `json:"caller,omitempty"`
	// Team is the verified policy.auth team claim.
	Team string `json:"team,omitempty"`
	// Key is the name of the API key that authenticated the request
	// ("<secretName>/<dataKey>"), never its value; empty for a JWT.
	Key    string `json:"key,omitempty"`
	Client string `json:"client,omitempty"`
	Error  string `json:"error,omitempty"`
	// Held are the backends of the request's route skipped or refused for
	// their provider's quota: "name: rate_limited until <RFC 3339>", or an
	// attempt's refusal (docs/upstream-quota.md). Never a credential.
	Held []string `json:"held,omitempty"`
	// Via is "mcp" for a call that came through the MCP endpoint, with the
	// Tool it called; empty for the HTTP API.
	Via  string `json:"via,omitempty"`
	Tool string `json:"tool,omitempty"`
	// RequestBody is the client's request body, only with includeRequestBody.
	RequestBody json.RawMessage `json:"requestBody,omitempty"`
}

// AppendErrorJSON appends an OpenAI-style error object, with a trailing
// newline, to b. Strings are JSON encoded without HTML escaping (Go's
// strconv quoting would write \x00 for a control byte, which is not JSON).
func AppendErrorJSON(b []byte, typ, code, msg string) []byte {
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, false, msg)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, false, typ)
	b = append(b, `,"param":null,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, false, code)
	}
	return append(b, "}}\n"...)
}
