// Binary test of the MCP endpoint (spec.mcpServer): the real router-proxy
// with the config the real compiler renders, the official Go SDK's client,
// an issuer and upstreams on loopback.
package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

const mcpResource = "https://models.example.com/mcp"

// toolsList is an MCP tools/list request.
const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// mcpHeaders are the headers an MCP client sends with a JSON-RPC POST,
// then hdr.
func mcpHeaders(hdr ...string) []string {
	return append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, hdr...)
}

// mcpRouter starts the router-proxy of testdata/mcp-server with its
// backends on loopback and returns it, its upstreams, the issuer and the
// audit file.
//
// extraModels are added as local backends (models the conformance suite
// calls by name).
func mcpRouter(t *testing.T, extraModels ...string) (*proc, map[string]*upstream, *authtest.Issuer, string) {
	cfg := renderConfig(t, "../../testdata/mcp-server/input.yaml")
	for _, m := range extraModels {
		b := cfg.Backends[0]
		b.Name, b.ModelID = m, m
		cfg.Backends = append(cfg.Backends, b)
	}
	require.NotNil(t, cfg.MCP)
	require.Equal(t, mcpResource, cfg.MCP.ResourceURL)
	is := trustIssuer(t, cfg)
	p, ups, auditPath := serveOnLoopback(t, cfg)
	return p, ups, is, auditPath
}

func mcpSession(t *testing.T, p *proc, token string) *mcp.ClientSession {
	return mcpSessionWith(t, p, authtest.Bearer(token))
}

func mcpSessionWith(t *testing.T, p *proc, tr http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "router-proxy-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + p.listen + "/mcp", HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolNames are the tools as tools/list gives them, in its order.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// callChat calls the tool of model with one user message.
func callChat(t *testing.T, cs *mcp.ClientSession, model, content string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: model, Arguments: map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": content}},
	}})
	require.NoError(t, err)
	return res
}

func callText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPEndToEnd: a real MCP client lists the tools a team may reach and
// calls one with a valid token; the call runs the HTTP API's path (rules,
// content classification, allowlists, budgets, audit marked mcp); a model
// outside the allowlist is a tool error with nothing sent upstream.
func TestMCPEndToEnd(t *testing.T) {
	p, ups, is, auditPath := mcpRouter(t)

	platform := mcpSession(t, p, is.TokenFor(t, "platform", mcpResource))
	assert.Equal(t, []string{"qwen3-32b", "qwen3-vl", "gpt-5"}, toolNames(t, platform), "the router's order, as /v1/models")
	research := mcpSession(t, p, is.TokenFor(t, "research", mcpResource))
	assert.Equal(t, []string{"qwen3-32b", "qwen3-vl"}, toolNames(t, research), "tools/list shows a team only the models it may reach")
	listed, err := research.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "private", listed.CacheScope, "a list that depends on the caller's team is no intermediary's to cache for another")

	// A call: the answer's text, its usage in structured content.
	res, err := research.CallTool(context.Background(), &mcp.CallToolParams{Name: "qwen3-32b", Arguments: map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Say hi."}}, "max_tokens": 16,
	}})
	require.NoError(t, err)
	require.False(t, res.IsError, callText(res))
	assert.Equal(t, "hi", callText(res))
	assert.JSONEq(t, `{"model":"qwen3-32b","finish_reason":"","usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, mustJSON(t, res.StructuredContent))
	assert.Equal(t, int64(1), ups["qwen"].posts.Load())

	// Outside the allowlist: a tool error, nothing upstream.
	res = callChat(t, research, "gpt-5", "Say hi.")
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "model_not_allowed")
	assert.Zero(t, ups["gpt"].posts.Load(), "nothing reached the provider")

	// A forged team header on the MCP request is not identity: the verified
	// team decides, on tools/list and on the call.
	forged := mcpSessionWith(t, p, authtest.Headers{Header: http.Header{"X-Llmkube-Team": {"platform"}}, Next: authtest.Bearer(is.TokenFor(t, "research", mcpResource))})
	assert.Equal(t, []string{"qwen3-32b", "qwen3-vl"}, toolNames(t, forged))
	res = callChat(t, forged, "gpt-5", "Say hi.")
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "model_not_allowed")
	assert.Zero(t, ups["gpt"].posts.Load(), "a forged team header reached nothing")

	// The content classifier runs on a tool call: an SSN stays local.
	res = callChat(t, platform, "gpt-5", "My SSN is 536-22-8410.")
	require.False(t, res.IsError, callText(res))
	assert.Zero(t, ups["gpt"].posts.Load(), "the sensitive call did not reach the cloud")
	assert.Equal(t, int64(2), ups["qwen"].posts.Load())

	// A text-only model's tool refuses image content; the vision model's takes it.
	img := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is this?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
	}}}
	res, err = research.CallTool(context.Background(), &mcp.CallToolParams{Name: "qwen3-32b", Arguments: map[string]any{"messages": img}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, callText(res), "text only")
	res, err = research.CallTool(context.Background(), &mcp.CallToolParams{Name: "qwen3-vl", Arguments: map[string]any{"messages": img}})
	require.NoError(t, err)
	assert.False(t, res.IsError, callText(res))

	// Charged to the team's budget.
	st := p.status(t)
	require.Len(t, st.Budgets, 1)
	assert.Positive(t, st.Budgets[0].TokensUsed)

	// The audit marks each call mcp, with its tool.
	entries, raw := stopForAudit(t, p, auditPath)
	assert.NotContains(t, raw, "536-22-8410")
	require.Len(t, entries, 5, "one entry per call that reached the inference handler")
	for _, e := range entries {
		assert.Equal(t, proxyapi.ViaMCP, e.Via)
	}
	assert.Equal(t, "qwen3-32b", entries[0].Tool)
	assert.Equal(t, "research", entries[0].Team)
	assert.Equal(t, proxyapi.OutcomeForbidden, entries[1].Outcome)
	assert.Equal(t, "gpt-5", entries[1].Tool)
	assert.Equal(t, "research", entries[2].Team, "the forged team header is replaced by the verified one")
	assert.Equal(t, proxyapi.OutcomeForbidden, entries[2].Outcome)
	assert.Equal(t, "sensitive-local-only", entries[3].Rule)
	assert.Equal(t, []string{"us-ssn"}, entries[3].Detectors)
}

// TestMCPAuthorization: no token or a bad one gets 401 with the metadata
// URL; a token for another audience gets 401; the RFC 9728 document names
// the issuer and the resource; another Origin is refused.
func TestMCPAuthorization(t *testing.T) {
	p, ups, is, _ := mcpRouter(t)
	post := func(token, origin string) answer {
		var hdr []string
		if token != "" {
			hdr = append(hdr, "Authorization", "Bearer "+token)
		}
		if origin != "" {
			hdr = append(hdr, "Origin", origin)
		}
		return p.send(t, "/mcp", toolsList, mcpHeaders(hdr...)...)
	}
	const challenge = `Bearer resource_metadata="https://models.example.com/.well-known/oauth-protected-resource/mcp"`
	// RFC 6750 §3.1: a refused token's challenge says invalid_token; a
	// request without one gets no error code.
	const refused = challenge + `, error="invalid_token"`
	a := post("", "")
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Equal(t, challenge, a.hdr.Get("WWW-Authenticate"))
	a = post(is.TokenFor(t, "platform", "https://other.example.com/mcp"), "")
	assert.Equal(t, http.StatusUnauthorized, a.code, "a token for another resource")
	assert.Equal(t, refused, a.hdr.Get("WWW-Authenticate"))
	assert.Contains(t, a.body, "its audience does not name this resource")
	a = post(is.Token(t, "platform"), "")
	assert.Equal(t, http.StatusUnauthorized, a.code, "a token naming no audience")
	assert.Equal(t, refused, a.hdr.Get("WWW-Authenticate"))
	assert.Contains(t, a.body, "it has no aud claim", "the missing claim is named")
	a = post(is.TokenFor(t, "platform", mcpResource)[:60]+"x", "")
	assert.Equal(t, http.StatusUnauthorized, a.code, "a forged token")
	assert.Equal(t, refused, a.hdr.Get("WWW-Authenticate"))
	// Two Authorization headers: 400, as on the inference paths (the SDK
	// alone would read the first).
	a = p.send(t, "/mcp", toolsList, mcpHeaders("Authorization", "Bearer "+is.TokenFor(t, "platform", mcpResource), "Authorization", "Bearer x")...)
	assert.Equal(t, http.StatusBadRequest, a.code, a.body)
	assert.Contains(t, a.body, `"code":"multiple_credentials"`)
	a = post(is.TokenFor(t, "platform", mcpResource), "https://evil.example")
	assert.Equal(t, http.StatusForbidden, a.code, a.body)
	a = post(is.TokenFor(t, "platform", mcpResource), "https://models.example.com")
	assert.Equal(t, http.StatusOK, a.code, a.body)
	assert.Contains(t, a.body, `"qwen3-32b"`)

	code, _, body := p.get(t, "/.well-known/oauth-protected-resource/mcp", "")
	require.Equal(t, http.StatusOK, code, body)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	decodeJSON(t, body, &meta)
	assert.Equal(t, mcpResource, meta.Resource)
	assert.Equal(t, []string{authtest.IssuerURL}, meta.AuthorizationServers)
	// RFC 9728 §3.3: the document's resource is the identifier its URL was
	// built from. The bare path stands for the origin, which is not the
	// resource /mcp protects, and another suffix for another resource.
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/v1/chat/completions"} {
		code, _, body := p.get(t, path, "")
		assert.Equal(t, http.StatusNotFound, code, path)
		assert.NotContains(t, body, `"resource"`, path)
	}
	for _, u := range ups {
		assert.Zero(t, u.posts.Load(), "nothing reached an upstream")
	}
}
