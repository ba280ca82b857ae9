package routerproxy

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// A served request moves its backend's series: the attempt, the first
// token, the tokens by kind and the cost (okHandler reports 10 prompt and 5
// completion tokens), and the request's count and duration by rule,
// backend, outcome and code; a refused one only its count.
func TestServedRequestMetrics(t *testing.T) {
	s := newStub(t, "s", nil)
	b := backend("s", s.URL)
	b.Cost = &proxyapi.Cost{PromptUSD: "1", CompletionUSD: "2"} // per million tokens
	h := start(t, config(b))
	for range 2 {
		h.okChat(t, chat("m"))
	}
	code, _, _ := h.do(t, "/v1/chat/completions", `{"model":`)
	require.Equal(t, 400, code)
	h.settle(t) // the bookkeeping ends after the client has its answer
	rec := httptest.NewRecorder()
	h.srv.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out, _ := io.ReadAll(rec.Body)
	m := string(out)
	assert.Contains(t, m, `llmkube_router_upstream_attempts_total{backend="s",result="ok",router="r"} 2`)
	assert.Contains(t, m, `llmkube_router_first_token_seconds_count{backend="s",router="r"} 2`)
	assert.Contains(t, m, `llmkube_router_tokens_total{backend="s",kind="prompt",router="r"} 20`)
	assert.Contains(t, m, `llmkube_router_tokens_total{backend="s",kind="completion",router="r"} 10`)
	assert.Contains(t, m, `llmkube_router_cost_usd_total{backend="s",router="r"} 4e-05`)
	assert.Contains(t, m, `llmkube_router_requests_total{backend="s",code="200",outcome="ok",router="r",rule="(default)"} 2`)
	assert.Contains(t, m, `llmkube_router_request_duration_seconds_count{backend="s",router="r",rule="(default)"} 2`)
	assert.Contains(t, m, `llmkube_router_requests_total{backend="",code="400",outcome="bad_request",router="r",rule=""} 1`, "a request nobody served is counted without a duration")
	assert.NotContains(t, m, `llmkube_router_request_duration_seconds_count{backend=""`)
}
