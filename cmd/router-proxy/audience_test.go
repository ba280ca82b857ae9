// Binary tests of policy.auth.jwt.audiences and of the caller's token on
// its way upstream (issue 61): the real router-proxy with the config the
// real compiler renders, an issuer and upstreams that record what reaches
// them on loopback.
package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

// assertNoCallerToken fails when a header of a request that reached a
// backend carries the caller's token.
func assertNoCallerToken(t *testing.T, backend, token string, hs []http.Header) {
	t.Helper()
	require.NotEmpty(t, hs, "%s received no request", backend)
	for _, h := range hs {
		for k, vs := range h {
			for _, v := range vs {
				assert.NotContains(t, v, token, "%s received the caller's token in %s", backend, k)
			}
		}
	}
}

// postAs posts a chat completion for model with a bearer token and returns
// the status, the challenge and the body.
func postAs(t *testing.T, p *proc, model, token string) (int, string, string) {
	t.Helper()
	a := p.send(t, chatPath, chat(model), "Authorization", "Bearer "+token)
	return a.code, a.hdr.Get("WWW-Authenticate"), a.body
}

// TestAudiencesEndToEnd: testdata/proxy-jwt-audiences through the built
// router-proxy. A token minted for another service, or naming no audience,
// is refused with 401 before any backend; one naming an audience of the
// router is served; and the caller's token reaches none of its backends
// (an InferenceService, an OpenAI-compatible provider, a translated one),
// each of which gets its own credential or none.
func TestAudiencesEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/proxy-jwt-audiences/input.yaml")
	require.Equal(t, []string{"https://models.hospital.example", "llm-router"}, cfg.Policy.Auth.JWT.Audiences)
	is := trustIssuer(t, cfg)
	p, recs, _ := serveOnLoopback(t, cfg)

	const refused = `Bearer realm="llmkube", error="invalid_token"`
	for name, c := range map[string]struct {
		aud  any
		want string
	}{
		"another service's":  {"https://other.example/mcp", "its audience does not name this resource"},
		"a list naming none": {[]string{"https://other.example/mcp", "billing"}, "its audience does not name this resource"},
		"no aud":             {nil, "it has no aud claim"},
	} {
		code, challenge, body := postAs(t, p, "qwen3-32b", is.TokenFor(t, "platform", c.aud))
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %s", name, body)
		assert.Equal(t, refused, challenge, name)
		assert.Contains(t, body, c.want, name)
	}
	for name, rec := range recs {
		assert.Empty(t, rec.headers(), "a refused token reached %s", name)
	}

	for _, aud := range []any{"llm-router", []string{"https://other.example/mcp", "https://models.hospital.example"}} {
		tok := is.TokenFor(t, "platform", aud)
		for model, backend := range map[string]string{"qwen3-32b": "qwen", "gpt-4.1": "gpt", "claude-sonnet": "claude"} {
			code, _, body := postAs(t, p, model, tok)
			require.Equal(t, http.StatusOK, code, "%s (aud %v): %s", model, aud, body)
			assertNoCallerToken(t, backend, tok, recs[backend].headers())
		}
	}
	// Each backend got its own credential, or none.
	last := func(b string) http.Header { hs := recs[b].headers(); return hs[len(hs)-1] }
	assert.Empty(t, last("qwen").Values("Authorization"), "the InferenceService gets no Authorization")
	assert.Equal(t, "Bearer provider-key-gpt", last("gpt").Get("Authorization"))
	assert.Empty(t, last("claude").Values("Authorization"))
	assert.Equal(t, "provider-key-claude", last("claude").Get("X-Api-Key"))
}

// TestMCPAudienceOnTheHTTPAPI: with mcpServer, the MCP resource URL is an
// audience of the HTTP API too (a tool call is served by the HTTP API's
// handler with the caller's token): without policy.auth.jwt.audiences the
// HTTP API accepts only it, so the two doors agree on a token for another
// service; with audiences it accepts them and the resource URL, while /mcp
// accepts only the resource URL (docs/mcp.md).
func TestMCPAudienceOnTheHTTPAPI(t *testing.T) {
	start := func(audiences []string) (*proc, *authtest.Issuer) {
		cfg := renderConfig(t, "../../testdata/mcp-server/input.yaml")
		require.Empty(t, cfg.Policy.Auth.JWT.Audiences)
		cfg.Policy.Auth.JWT.Audiences = audiences
		is := trustIssuer(t, cfg)
		p, _, _ := serveOnLoopback(t, cfg)
		return p, is
	}
	mcpStatus := func(p *proc, token string) int {
		return p.send(t, "/mcp", toolsList, mcpHeaders("Authorization", "Bearer "+token)...).code
	}

	p, is := start(nil)
	for aud, want := range map[string]int{mcpResource: http.StatusOK, "https://other.example/mcp": http.StatusUnauthorized, "": http.StatusUnauthorized} {
		var claim any
		if aud != "" {
			claim = aud
		}
		tok := is.TokenFor(t, "platform", claim)
		code, _, body := postAs(t, p, "qwen3-32b", tok)
		assert.Equal(t, want, code, "HTTP API, aud %q: %s", aud, body)
		assert.Equal(t, want, mcpStatus(p, tok), "/mcp, aud %q", aud)
	}

	p, is = start([]string{"llm-router"})
	for aud, want := range map[string][2]int{
		"llm-router":                {http.StatusOK, http.StatusUnauthorized},
		mcpResource:                 {http.StatusOK, http.StatusOK},
		"https://other.example/mcp": {http.StatusUnauthorized, http.StatusUnauthorized},
	} {
		tok := is.TokenFor(t, "platform", aud)
		code, _, body := postAs(t, p, "qwen3-32b", tok)
		assert.Equal(t, want[0], code, "HTTP API, aud %q: %s", aud, body)
		assert.Equal(t, want[1], mcpStatus(p, tok), "/mcp, aud %q", aud)
	}
}

// TestCallerTokenReachesNoPoolMember: a ModelPool member (activated through
// a real API server, poolsim playing the pool's reconciler) gets no
// Authorization from a caller whose token the router verified.
func TestCallerTokenReachesNoPoolMember(t *testing.T) {
	env, ns, sim := simPool(t, 100*time.Millisecond)
	cfg := simConfig(ns, sim, 30*time.Second)
	auth, is := issuerAuth(t)
	auth.JWT.Audiences = []string{"llm-router"}
	cfg.Policy.Auth = auth
	p := poolReplica(t, env, cfg)

	code, _, body := postAs(t, p, "coder", is.TokenFor(t, "platform", "https://other.example/mcp"))
	assert.Equal(t, http.StatusUnauthorized, code, body)
	tok := is.TokenFor(t, "platform", "llm-router")
	for _, model := range []string{"coder", "chat"} { // the resident member, then one swapped in
		code, _, body = postAs(t, p, model, tok)
		require.Equal(t, http.StatusOK, code, "%s: %s", model, body)
		hs := sim.Received(model)
		assertNoCallerToken(t, model, tok, hs)
		assert.Empty(t, hs[len(hs)-1].Values("Authorization"), model)
	}
}
