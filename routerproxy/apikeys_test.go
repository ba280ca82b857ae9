package routerproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

const proxyKey = "sk-research-5f0c1d2e3a4b"

// keyProxy starts a proxy with policy.auth.apiKeys (Secret research-keys,
// key "ci", team research) and an allowlist giving research model a only,
// in front of the local backends a and b; it returns a and the proxy.
func keyProxy(t *testing.T) (*stub, *harness) {
	t.Helper()
	a, b := newStub(t, "a", nil), newStub(t, "b", nil)
	dir := filepath.Join(t.TempDir(), "research-keys")
	authtest.WriteSecret(t, dir, map[string]string{"ci": proxyKey})
	cfg := config(backend("a", a.URL), backend("b", b.URL))
	cfg.Policy.Auth = &proxyapi.Auth{
		APIKeys:    []proxyapi.APIKeySource{{SecretName: "research-keys", Team: "research", Dir: dir}},
		Allowlists: []proxyapi.Allowlist{{Team: "research", Models: []string{"a"}}},
	}
	return a, start(t, cfg)
}

func TestAPIKeyReachesItsTeamsModels(t *testing.T) {
	a, h := keyProxy(t)
	for _, hdr := range [][]string{{"Authorization", "Bearer " + proxyKey}, {"X-Api-Key", proxyKey}} {
		h.okChat(t, chat("a"), append(hdr, "X-Llmkube-Team", "admins")...)
		got := a.Last().Header
		assert.Empty(t, got["Authorization"], "the caller's key reached a backend")
		assert.Empty(t, got["X-Api-Key"], "the caller's key reached a backend")
		assert.Equal(t, []string{"research"}, got["X-Llmkube-Team"], "the backend sees the key's team, not the forged one")
		ent := h.last(t)
		assert.Equal(t, "research", ent.Team)
		assert.Equal(t, "research-keys/ci", ent.Key)
	}
	code, body, _ := h.post(t, chat("b"), "Authorization", "Bearer "+proxyKey, "X-Llmkube-Team", "admins")
	assert.Equal(t, http.StatusForbidden, code, body)
	b, err := json.Marshal(h.audit.all())
	require.NoError(t, err)
	assert.NotContains(t, string(b), proxyKey, "the key's value is in the audit")
}

func TestAPIKeyRefusalShapes(t *testing.T) {
	_, h := keyProxy(t)
	for _, tc := range []struct {
		path, body string
		hdr        []string
		code       string
	}{
		{"/v1/chat/completions", chat("a"), nil, `"code":"missing_token"`},
		{"/v1/chat/completions", chat("a"), []string{"Authorization", "Bearer sk-guess"}, `"code":"invalid_api_key"`},
		{"/v1/responses", `{"model":"a","input":"hi"}`, []string{"X-Api-Key", "sk-guess"}, `"code":"invalid_api_key"`},
		{"/v1/messages", `{"model":"a","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, []string{"X-Api-Key", "sk-guess"}, `"type":"authentication_error"`},
	} {
		code, body, hdr := h.do(t, tc.path, tc.body, tc.hdr...)
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %s", tc.path, body)
		assert.Contains(t, body, tc.code, tc.path)
		assert.Contains(t, hdr.Get("WWW-Authenticate"), `Bearer realm="llmkube"`, tc.path)
		if tc.path == "/v1/messages" {
			assert.Contains(t, body, `"type":"error"`, "the Anthropic error shape")
		}
	}
	ent := h.last(t)
	assert.Equal(t, proxyapi.OutcomeUnauthorized, ent.Outcome)
	assert.Empty(t, ent.Key)
}

func TestAPIKeysInStatus(t *testing.T) {
	_, h := keyProxy(t)
	st := h.srv.Status()
	require.NotNil(t, st.APIKeys)
	assert.Equal(t, int64(1), st.APIKeys.Generation)
	assert.Equal(t, []string{"research-keys/ci"}, st.APIKeys.Keys)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(b), proxyKey)
}

// TestAPIKeyOnMCP: with jwt and API keys, /mcp also takes a key of the
// router as its bearer token: tools/list shows what the key's team may use,
// a tool call is served and audited with the key's name; an unknown or
// expired key is refused 401.
func TestAPIKeyOnMCP(t *testing.T) {
	is := authtest.NewIssuer(t)
	a := newStub(t, "a", nil)
	dir := filepath.Join(t.TempDir(), "research-keys")
	authtest.WriteSecret(t, dir, map[string]string{"agent": proxyKey})
	oldDir := filepath.Join(t.TempDir(), "old-keys")
	authtest.WriteSecret(t, oldDir, map[string]string{"gone": "sk-expired-0000000000"})
	past := time.Now().Add(-time.Hour)
	cfg := config(backend("a", a.URL), backend("b", "http://127.0.0.1:1"))
	cfg.MCP = &proxyapi.MCP{ResourceURL: testMCPResource}
	cfg.Policy.Auth = &proxyapi.Auth{
		JWT: is.JWT(),
		APIKeys: []proxyapi.APIKeySource{
			{SecretName: "research-keys", Team: "research", Dir: dir},
			{SecretName: "old-keys", Team: "research", Dir: oldDir, ExpiresAt: &past},
		},
		Allowlists: []proxyapi.Allowlist{{Team: "research", Models: []string{"a"}}},
	}
	h := start(t, cfg, withJWKS)

	cs := mcpConnect(t, h, proxyKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, "a", tools.Tools[0].Name, "the key's team's allowlist decides the tools")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a", Arguments: map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "hello"}},
	}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	assert.Empty(t, a.Last().Header["Authorization"], "the key reached the backend")
	var served *proxyapi.AuditEntry
	for _, e := range h.audit.all() {
		if e.Via == "mcp" {
			served = &e
		}
	}
	require.NotNil(t, served, "the tool call is audited")
	assert.Equal(t, "research-keys/agent", served.Key)
	assert.Equal(t, "research", served.Team)

	for _, key := range []string{"sk-guess", "sk-expired-0000000000"} {
		code, _, hdr := h.do(t, MCPPath, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream", "Authorization", "Bearer "+key)
		assert.Equal(t, http.StatusUnauthorized, code, key)
		assert.Contains(t, hdr.Get("WWW-Authenticate"), `error="invalid_token"`, key)
	}
}
