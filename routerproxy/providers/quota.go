package providers

// What a provider's answer says about its quota: a transient rate limit
// (skip the backend until the announced reset) or a spent quota (skip it
// for much longer), and when it resets. One reader for every provider's
// format, raw (an OpenAI backend, an Anthropic Messages pass-through) or
// converted by a translator (upstreamError keeps the provider's error code,
// its message and the reset as Retry-After): the header names and error
// codes of the providers do not collide, so a table serves them all.
//
// Sources, per provider:
//   - HTTP: Retry-After is delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
//   - OpenAI (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers,
//     https://platform.openai.com/docs/guides/error-codes#api-errors):
//     x-ratelimit-remaining-{requests,tokens} and x-ratelimit-reset-{requests,tokens}
//     as Go-like durations ("1s", "6m0s", "20ms"); a 429 whose error code is
//     insufficient_quota ("You exceeded your current quota, please check your
//     plan and billing details") is a spent quota, every other 429 a rate limit.
//   - Anthropic (https://docs.anthropic.com/en/api/rate-limits#response-headers,
//     https://docs.anthropic.com/en/api/errors): retry-after in seconds,
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset},
//     the resets RFC 3339; 429 rate_limit_error is a rate limit; 402
//     billing_error, and a 400 whose message says the credit balance is too
//     low, are a spent quota.
//   - Bedrock (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors,
//     the error type in X-Amzn-ErrorType): ThrottlingException (429, or a
//     400 from older endpoints) is a rate limit; ServiceQuotaExceededException
//     (400) a spent quota.
//   - Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429,
//     https://cloud.google.com/apis/design/errors#error_details): 429
//     RESOURCE_EXHAUSTED is a rate limit (per-minute quotas and shared
//     capacity), its google.rpc.RetryInfo retryDelay ("33s") the reset; a
//     google.rpc.QuotaFailure whose quotaId is a per-day quota
//     ("...PerDay...") is a spent quota until the day turns.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// LimitKind is what a provider's answer says about its quota.
type LimitKind uint8

const (
	// NotLimited: the answer is no quota signal.
	NotLimited LimitKind = iota
	// RateLimited: a transient rate limit; the backend serves again at the
	// reset.
	RateLimited
	// QuotaExhausted: the account's quota or credit is spent; retrying soon
	// is pointless.
	QuotaExhausted
)

// String names the kind as metrics, status and the audit do.
func (k LimitKind) String() string {
	switch k {
	case RateLimited:
		return "rate_limited"
	case QuotaExhausted:
		return "quota_exhausted"
	}
	return "none"
}

// Limit is a provider answer's quota signal.
type Limit struct {
	Kind LimitKind
	// Reset is how long until the provider serves again, as it announced
	// it; 0 when it announced nothing usable.
	Reset time.Duration
	// Signal names what the reset was read from (a header, or a body
	// field), "" when none.
	Signal string
}

// Error codes and types (an OpenAI-shaped error's code, a Messages
// error's type, Bedrock's error type, Vertex's status) of a quota signal.
var limitCodes = map[string]LimitKind{
	"insufficient_quota":            QuotaExhausted, // OpenAI (429)
	"billing_error":                 QuotaExhausted, // Anthropic (402)
	"ServiceQuotaExceededException": QuotaExhausted, // Bedrock (400)
	"rate_limit_exceeded":           RateLimited,    // OpenAI (429)
	"rate_limit_error":              RateLimited,    // Anthropic (429)
	"ThrottlingException":           RateLimited,    // Bedrock (429, 400)
	"RESOURCE_EXHAUSTED":            RateLimited,    // Vertex AI (429)
}

// exhaustedMessages are message fragments (lowercased) that say a quota is
// spent when the code does not: Anthropic's credit error is a 400
// invalid_request_error.
var exhaustedMessages = []string{
	"credit balance is too low",
	"exceeded your current quota",
}

// resetHeaders are the per-dimension reset headers with their remaining
// counterpart and format (OpenAI durations, Anthropic RFC 3339).
var resetHeaders = []struct {
	reset, remaining string
	rfc3339          bool
}{
	{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Remaining-Requests", false},
	{"X-Ratelimit-Reset-Tokens", "X-Ratelimit-Remaining-Tokens", false},
	{"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Requests-Remaining", true},
	{"Anthropic-Ratelimit-Tokens-Reset", "Anthropic-Ratelimit-Tokens-Remaining", true},
	{"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Input-Tokens-Remaining", true},
	{"Anthropic-Ratelimit-Output-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Remaining", true},
}

// ReadLimit reads the quota signal of a provider's error answer: its
// status, headers and (up to 64 KiB of) body. Only a 429, or a 4xx whose
// error code or message names a quota, is a signal.
func ReadLimit(status int, h http.Header, body []byte, now time.Time) Limit {
	if status < 400 || status >= 500 {
		return Limit{}
	}
	e := readErrorFields(h, body)
	kind := NotLimited
	if status == http.StatusTooManyRequests {
		kind = RateLimited
	}
	for _, c := range []string{e.code, e.typ, e.status} {
		if k, ok := limitCodes[c]; ok && k > kind {
			kind = k
		}
	}
	msg := strings.ToLower(e.message)
	for _, m := range exhaustedMessages {
		if strings.Contains(msg, m) {
			kind = QuotaExhausted
		}
	}
	if e.perDay {
		kind = QuotaExhausted
	}
	if kind == NotLimited {
		return Limit{}
	}
	l := Limit{Kind: kind}
	l.Reset, l.Signal = readReset(h, now)
	if l.Signal == "" && e.retryDelay > 0 {
		l.Reset, l.Signal = e.retryDelay, "google.rpc.RetryInfo"
	}
	return l
}

// readReset is the reset a response's headers announce: Retry-After when
// set (the provider's own answer to "when"); otherwise the latest reset
// of the dimensions whose remaining count is 0 (the limit that was hit),
// or, when no header says which, the earliest reset given (a hold too
// short costs one round trip; one too long refuses a provider that
// serves).
func readReset(h http.Header, now time.Time) (time.Duration, string) {
	if v := h.Get("Retry-After"); v != "" {
		if d, ok := parseRetryAfter(v, now); ok {
			return d, "retry-after"
		}
	}
	var spent, any time.Duration
	var spentName, anyName string
	for _, r := range resetHeaders {
		v := h.Get(r.reset)
		if v == "" {
			continue
		}
		d, ok := parseReset(v, r.rfc3339, now)
		if !ok {
			continue
		}
		name := strings.ToLower(r.reset)
		if rem := strings.TrimSpace(h.Get(r.remaining)); rem == "0" && d > spent {
			spent, spentName = d, name
		}
		if anyName == "" || d < any {
			any, anyName = d, name
		}
	}
	if spentName != "" {
		return spent, spentName
	}
	return any, anyName
}

// parseRetryAfter reads delay-seconds or an HTTP-date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 || n > 1e9 {
			return 0, false
		}
		return time.Duration(n * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// parseReset reads one reset header: an RFC 3339 instant (Anthropic) or a
// duration (OpenAI: "1s", "6m0s", "20ms", or plain seconds).
func parseReset(v string, rfc3339 bool, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if rfc3339 {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, false
		}
		return max(t.Sub(now), 0), true
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 && n < 1e9 {
		return time.Duration(n * float64(time.Second)), true
	}
	return 0, false
}

// errorFields are the parts of an error body (any provider's shape) a
// quota signal is read from.
type errorFields struct {
	code, typ, status, message string
	retryDelay                 time.Duration
	perDay                     bool
}

// readErrorFields reads the error of an OpenAI-shaped body
// ({"error":{"type","code","message"}}), an Anthropic one
// ({"type":"error","error":{"type","message"}}), Bedrock's (the type in
// X-Amzn-ErrorType, {"message"}) or Vertex's ({"error":{"status","message",
// "details"}}, or a list of them).
func readErrorFields(h http.Header, body []byte) errorFields {
	var out errorFields
	out.code, _, _ = strings.Cut(h.Get("X-Amzn-Errortype"), ":")
	type gErr struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
			Violations []struct {
				QuotaID string `json:"quotaId"`
			} `json:"violations"`
		} `json:"details"`
	}
	var e struct {
		Error    gErr   `json:"error"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	if json.Unmarshal(body, &e) != nil {
		var arr []struct {
			Error gErr `json:"error"`
		}
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
			e.Error = arr[0].Error
		}
	}
	var code string
	if json.Unmarshal(e.Error.Code, &code) == nil && out.code == "" {
		out.code = code
	}
	out.typ, out.status, out.message = e.Error.Type, e.Error.Status, e.Error.Message
	if out.message == "" {
		out.message = e.Message + e.MessageU
	}
	for _, d := range e.Error.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				out.retryDelay = v
			}
		case strings.HasSuffix(d.Type, "google.rpc.QuotaFailure"):
			for _, v := range d.Violations {
				if strings.Contains(v.QuotaID, "PerDay") {
					out.perDay = true
				}
			}
		}
	}
	return out
}

// convertedCode is the error code of a converted provider error: the
// provider's own, except that a spent quota is OpenAI's
// insufficient_quota, so that the reader of the converted answer tells it
// from a rate limit whatever told the translator (a Vertex QuotaFailure's
// per-day quota id, which the conversion does not keep).
func convertedCode(resp *http.Response, body []byte, code string, now time.Time) string {
	if ReadLimit(resp.StatusCode, resp.Header, body, now).Kind == QuotaExhausted {
		return "insufficient_quota"
	}
	return code
}

// keepLimitHeaders copies a provider answer's quota headers onto the
// converted answer, so ReadLimit reads the same signal from either: the
// reset headers, and a Vertex RetryInfo as Retry-After.
func keepLimitHeaders(from *http.Response, body []byte, to *http.Response) {
	for _, r := range resetHeaders {
		for _, k := range []string{r.reset, r.remaining} {
			if v := from.Header.Get(k); v != "" {
				to.Header.Set(k, v)
			}
		}
	}
	if to.Header.Get("Retry-After") == "" {
		if e := readErrorFields(from.Header, body); e.retryDelay > 0 {
			to.Header.Set("Retry-After", strconv.FormatInt(int64((e.retryDelay+time.Second-1)/time.Second), 10))
		}
	}
}
