package proxy

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxy/auth/authtest"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

const testMCPResource = "http://localhost/mcp"

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to h's /mcp with a token of the
// team.
func mcpSession(t *testing.T, h *harness, is *authtest.Issuer, team string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := authtest.Claims(team)
	c["aud"] = testMCPResource
	client := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: h.front.URL + MCPPath, HTTPClient: &http.Client{Transport: bearer(is.Sign(t, jwt.SigningMethodRS256, "rsa-1", c))}, DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpListTools lists the tools of h's /mcp as the team's token sees them,
// in the order they came.
func mcpListTools(t *testing.T, h *harness, is *authtest.Issuer, team string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := mcpSession(t, h, is, team).ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestMCPToolsInRouterOrder: tools/list names the models in the router's
// order, as /v1/models does (docs/mcp.md), not by name, for every team and
// after the allowlist has removed some.
func TestMCPToolsInRouterOrder(t *testing.T) {
	is := authtest.NewIssuer(t)
	zeta, alpha, mid := backend("zeta", "http://127.0.0.1:1"), backend("alpha", "http://127.0.0.1:1"), backend("mid", "http://127.0.0.1:1")
	mid.ModelID = "mid/model:v1" // a name MCP does not allow: the tool is mid_model_v1
	cfg := config(zeta, alpha, mid)
	cfg.MCP = &proxyapi.MCP{ResourceURL: testMCPResource}
	cfg.Policy.Auth = &proxyapi.Auth{
		JWT:        &proxyapi.JWT{Issuer: authtest.IssuerURL, JWKSURI: is.Server.URL, TeamClaim: "team", HeaderKey: "x-llmkube-team"},
		Allowlists: []proxyapi.Allowlist{{Team: "platform"}, {Team: "research", Models: []string{"mid/model:v1", "zeta"}}},
	}
	h := start(t, cfg, func(o *Options) { o.JWKSClient = &http.Client{Timeout: 5 * time.Second} })

	assert.Equal(t, []string{"zeta", "alpha", "mid_model_v1"}, mcpListTools(t, h, is, "platform"))
	assert.Equal(t, []string{"zeta", "mid_model_v1"}, mcpListTools(t, h, is, "research"), "the allowlist removes alpha, the order stays")
}

// mcpHarness starts a router-proxy with /mcp on two local backends.
func mcpHarness(t *testing.T) (*harness, *authtest.Issuer) {
	t.Helper()
	is := authtest.NewIssuer(t)
	cfg := config(backend("a", "http://127.0.0.1:1"), backend("b", "http://127.0.0.1:1"))
	cfg.MCP = &proxyapi.MCP{ResourceURL: testMCPResource}
	cfg.Policy.Auth = &proxyapi.Auth{JWT: &proxyapi.JWT{Issuer: authtest.IssuerURL, JWKSURI: is.Server.URL, TeamClaim: "team", HeaderKey: "x-llmkube-team"}}
	return start(t, cfg, func(o *Options) { o.JWKSClient = &http.Client{Timeout: 5 * time.Second} }), is
}

// TestMCPCapabilitiesMatchWhatItAnswers: the endpoint declares what it
// answers (the 2026-07-28 draft's server/discover holds a server to it):
// tools, and prompts and resources, which it lists empty (clients that
// list them on connect get lists, not errors); no listChanged (a stateless
// server has no session to notify) and no logging (it logs nothing to
// clients).
func TestMCPCapabilitiesMatchWhatItAnswers(t *testing.T) {
	h, is := mcpHarness(t)
	cs := mcpSession(t, h, is, "research")
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps)
	assert.Equal(t, &mcp.ToolCapabilities{}, caps.Tools)
	assert.Equal(t, &mcp.PromptCapabilities{}, caps.Prompts)
	assert.Equal(t, &mcp.ResourceCapabilities{}, caps.Resources)
	//lint:ignore SA1019 the test holds that the deprecated logging capability is not declared (nothing is logged to clients)
	assert.Nil(t, caps.Logging)
	assert.Nil(t, caps.Completions)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, prompts.Prompts)
	resources, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, resources.Resources)
}
