package providers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var quotaNow = time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// The providers' own answers, as their documentation shows them (see the
// sources in quota.go).
func TestReadLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		body   string
		want   Limit
	}{
		{"openai requests limit", 429,
			hdr("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1s", "X-Ratelimit-Remaining-Tokens", "149984", "X-Ratelimit-Reset-Tokens", "6m0s"),
			`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Limit{RateLimited, time.Second, "x-ratelimit-reset-requests"}},
		{"openai tokens limit", 429,
			hdr("X-Ratelimit-Remaining-Requests", "59", "X-Ratelimit-Reset-Requests", "1s", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s"),
			`{"error":{"message":"Rate limit reached for tokens","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			Limit{RateLimited, 6 * time.Minute, "x-ratelimit-reset-tokens"}},
		{"openai no remaining says which: the earliest", 429,
			hdr("X-Ratelimit-Reset-Requests", "20ms", "X-Ratelimit-Reset-Tokens", "6m0s"), ``,
			Limit{RateLimited, 20 * time.Millisecond, "x-ratelimit-reset-requests"}},
		{"retry-after wins", 429,
			hdr("Retry-After", "30", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1s"), ``,
			Limit{RateLimited, 30 * time.Second, "retry-after"}},
		{"retry-after as an HTTP date", 429,
			hdr("Retry-After", quotaNow.Add(90*time.Second).Format(http.TimeFormat)), ``,
			Limit{RateLimited, 90 * time.Second, "retry-after"}},
		{"openai insufficient_quota", 429, hdr(),
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			Limit{QuotaExhausted, 0, ""}},
		{"anthropic rate limit", 429,
			hdr("Retry-After", "12", "Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", "2026-12-07T21:00:40Z"),
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			Limit{RateLimited, 12 * time.Second, "retry-after"}},
		{"anthropic reset headers", 429,
			hdr("Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", "2026-12-07T21:00:40Z", "Anthropic-Ratelimit-Requests-Remaining", "40", "Anthropic-Ratelimit-Requests-Reset", "2026-12-07T21:00:02Z"),
			`{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`,
			Limit{RateLimited, 40 * time.Second, "anthropic-ratelimit-tokens-reset"}},
		{"anthropic billing", 402, hdr(),
			`{"type":"error","error":{"type":"billing_error","message":"There is an issue with your billing"}}`,
			Limit{QuotaExhausted, 0, ""}},
		{"anthropic credit balance", 400, hdr(),
			`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`,
			Limit{QuotaExhausted, 0, ""}},
		{"anthropic other 400 is no signal", 400, hdr(),
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`,
			Limit{}},
		{"bedrock throttling 429", 429, hdr("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
			`{"message":"Too many requests, please wait before trying again."}`,
			Limit{RateLimited, 0, ""}},
		{"bedrock throttling 400", 400, hdr("X-Amzn-Errortype", "ThrottlingException"),
			`{"message":"Too many tokens, please wait before trying again."}`,
			Limit{RateLimited, 0, ""}},
		{"bedrock service quota", 400, hdr("X-Amzn-Errortype", "ServiceQuotaExceededException"),
			`{"message":"Your request exceeds the service quota for your account."}`,
			Limit{QuotaExhausted, 0, ""}},
		{"vertex resource exhausted with retry info", 429, hdr(),
			`{"error":{"code":429,"message":"Resource exhausted. Please try again later.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"33s"}]}}`,
			Limit{RateLimited, 33 * time.Second, "google.rpc.RetryInfo"}},
		{"vertex per-day quota", 429, hdr(),
			`[{"error":{"code":429,"message":"Quota exceeded for metric: generate_content_free_tier_requests, limit: 0","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}]`,
			Limit{QuotaExhausted, 7 * time.Second, "google.rpc.RetryInfo"}},
		{"a 429 with nothing readable", 429, hdr("Retry-After", "soon"), `not json`, Limit{RateLimited, 0, ""}},
		{"a 5xx is no signal", 503, hdr("Retry-After", "5"), ``, Limit{}},
		{"a 404 is no signal", 404, hdr(), `{"error":{"code":"model_not_found"}}`, Limit{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReadLimit(tc.status, tc.h, []byte(tc.body), quotaNow))
		})
	}
}

// A translator's converted error keeps what ReadLimit reads: the reset
// headers, a Vertex RetryInfo as Retry-After, and a spent quota as
// insufficient_quota (the per-day quota id is not in the converted body).
func TestConvertedErrorKeepsTheQuotaSignal(t *testing.T) {
	c := &common{name: "vertex", now: func() time.Time { return quotaNow }}
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		want Limit
	}{
		{"vertex per day", hdr(),
			`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7.5s"}]}}`,
			Limit{QuotaExhausted, 8 * time.Second, "retry-after"}},
		{"anthropic reset", hdr("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", "2026-12-07T21:00:40Z"),
			`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			Limit{RateLimited, 40 * time.Second, "anthropic-ratelimit-requests-reset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			for k, v := range tc.h {
				rec.Header()[k] = v
			}
			rec.WriteHeader(429)
			_, _ = rec.WriteString(tc.body)
			raw := rec.Result()
			out := c.upstreamError(raw, vertexError)
			b, err := io.ReadAll(out.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.want, ReadLimit(out.StatusCode, out.Header, b, quotaNow), string(b))
		})
	}
}
