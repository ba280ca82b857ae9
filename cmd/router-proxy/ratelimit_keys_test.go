// Binary tests of policy.rateLimits with scope key: API keys
// (policy.auth.apiKeys) counted by name across replicas on the real Redis.
package main

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
	"github.com/llmkube/llmkube-compile/test/redistest"
)

const (
	nightlyKey  = "sk-nightly-5c4b3a29180f7e6d"
	notebookKey = "sk-notebook-a1b2c3d4e5f60718"
)

// keyRateConfig is one local backend behind API keys of team ml (a Secret
// with keys nightly and notebook, written as the kubelet does) and limits.
func keyRateConfig(t *testing.T, upstream string, limits ...proxyapi.RateLimit) *proxyapi.Config {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "batch-keys")
	authtest.WriteSecret(t, dir, map[string]string{"nightly": nightlyKey, "notebook": notebookKey})
	cfg := qwenConfig(upstream)
	cfg.Policy.Auth = &proxyapi.Auth{APIKeys: []proxyapi.APIKeySource{{SecretName: "batch-keys", Team: "ml", Dir: dir}}}
	cfg.Policy.RateLimits = limits
	return cfg
}

// TestKeyRateLimitAcrossReplicas: a scope key limit counts each API key on
// its own counter, shared by two router-proxy processes on one Redis: of 3N
// requests with one key sent at once, exactly N are served (429 with
// Retry-After for the rest), and another key of the same team still has its
// own N. The audit names the key that was refused, never its value.
func TestKeyRateLimitAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen")
	const n = 5
	cfg := keyRateConfig(t, up.URL, proxyapi.RateLimit{Name: "per-key", Scope: proxyapi.RateLimitScopeKey, RequestsPerMinute: n})
	flags := storeFlags(rs.Addr)
	ps := []*proc{startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)}

	start := time.Now()
	served := tally(t, fire(t, ps, 3*n, "Authorization", "Bearer "+nightlyKey))
	other := tally(t, fire(t, ps, 2*n, "X-Api-Key", notebookKey))
	if time.Since(start) < time.Minute { // the window did not roll under the test
		assert.Equal(t, n, served, "exactly N for the key across both replicas")
		assert.Equal(t, n, other, "another key of the team has its own N")
	} else {
		assert.LessOrEqual(t, served, 2*n, "N per window")
	}
	for _, p := range ps {
		st := p.status(t)
		require.Len(t, st.RateLimits, 1)
		assert.Equal(t, proxyapi.RateLimitStatus{Name: "per-key", Counting: 2, Utilization: "1.000000"}, st.RateLimits[0], "two keys counting, on every replica")
	}
	for _, p := range ps {
		assert.NotContains(t, p.stdout.String()+p.stderr.String(), nightlyKey, "no key value in the audit or the logs")
	}
}

// TestKeyTokenRateLimitAcrossReplicas: output tokens per minute of one
// listed key hold across the replicas; a key the limit does not list is not
// counted by it.
func TestKeyTokenRateLimitAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t, "")
	up := newUpstream(t, "qwen") // 10 prompt + 5 completion tokens
	cfg := keyRateConfig(t, up.URL, proxyapi.RateLimit{Name: "nightly-tpm", Scope: proxyapi.RateLimitScopeKey, Keys: []string{"batch-keys/nightly"}, OutputTokensPerMinute: 25})
	flags := storeFlags(rs.Addr)
	a, b := startProxy(t, cfg, flags...), startProxy(t, cfg, flags...)
	for i := range 5 { // 5 x 5 output tokens: the cap
		p := a
		if i%2 == 1 {
			p = b
		}
		code, body := p.post(t, `{"model":"qwen"}`, "Authorization", "Bearer "+nightlyKey)
		require.Equal(t, http.StatusOK, code, body)
	}
	require.Eventually(t, func() bool {
		st := b.status(t).RateLimits
		return len(st) == 1 && st[0].Utilization == "1.000000"
	}, 10*time.Second, 10*time.Millisecond, "the settled output reaches the cap")
	assert.Equal(t, 0, tally(t, fire(t, []*proc{a, b}, 4, "Authorization", "Bearer "+nightlyKey)), "the key's output cap holds on both replicas")
	as := fire(t, []*proc{a, b}, 4, "Authorization", "Bearer "+notebookKey)
	assert.Equal(t, 4, tally(t, as), "the limit lists only nightly")
	assert.Empty(t, as[0].hdr.Get("X-Ratelimit-Limit-Output-Tokens"), "no limit counts notebook")
}
