package routerproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

// A header the proxy sets survives whatever the client sends: naming the
// verified team header in Connection (hop-by-hop, RFC 9110 §7.6.1) does
// not strip it before the upstream, while a client header named there is
// still dropped.
func TestVerifiedTeamSurvivesConnection(t *testing.T) {
	a, h, token := jwtProxy(t)
	for _, conn := range []string{"x-llmkube-team", "X-LLMKUBE-TEAM, x-custom", "keep-alive, x-llmkube-team"} {
		h.okChat(t, chat("a"), "Authorization", "Bearer "+token, "Connection", conn, "X-Llmkube-Team", "platform", "X-Custom", "1")
		got := a.Last().Header
		assert.Equal(t, []string{"research"}, got["X-Llmkube-Team"], "Connection: %s", conn)
		if conn != "x-llmkube-team" && conn != "keep-alive, x-llmkube-team" {
			assert.Empty(t, got["X-Custom"], "a client header named by Connection is hop-by-hop")
		}
	}
}

// TestCallerTokenReachesNoBackendWithAuth: with policy.auth.jwt the
// client's Authorization is its JWT, which the proxy consumed; a local
// backend does not receive it either (the Gateway plane removes it too).
// Without auth a local backend still gets the client's Authorization (a
// runtime's --api-key).
func TestCallerTokenReachesNoBackendWithAuth(t *testing.T) {
	a, h, token := jwtProxy(t)
	h.okChat(t, chat("a"), "Authorization", "Bearer "+token)
	assert.Empty(t, a.Last().Header["Authorization"], "the caller's JWT reached a local backend")

	open := start(t, config(backend("a", a.URL)))
	open.okChat(t, chat("a"), "Authorization", "Bearer vllm-api-key")
	assert.Equal(t, []string{"Bearer vllm-api-key"}, a.Last().Header["Authorization"])
}

// jwtProxy starts a proxy with policy.auth.jwt (team claim "team", team
// header x-llmkube-team) in front of one local backend a, and returns a,
// the proxy and a token of team research.
func jwtProxy(t *testing.T) (*stub, *harness, string) {
	t.Helper()
	is := authtest.NewIssuer(t)
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Auth = &proxyapi.Auth{JWT: is.JWT()}
	h := start(t, cfg, withJWKS)
	token := is.Token(t, "research")
	return a, h, token
}
