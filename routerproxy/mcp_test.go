package routerproxy

import (
	"context"
	"encoding/json"
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

const testMCPResource = "http://localhost/mcp"

// mcpSession connects the Go SDK's client to h's /mcp with a token of the
// team (its audience the MCP resource).
func mcpSession(t *testing.T, h *harness, is *authtest.Issuer, team string) *mcp.ClientSession {
	t.Helper()
	return mcpConnect(t, h, is.TokenFor(t, team, testMCPResource))
}

// mcpConnect connects the Go SDK's client to h's /mcp with a bearer token.
func mcpConnect(t *testing.T, h *harness, token string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: h.front.URL + MCPPath, HTTPClient: &http.Client{Transport: authtest.Bearer(token)}, DisableStandaloneSSE: true,
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
		JWT:        is.JWT(),
		Allowlists: []proxyapi.Allowlist{{Team: "platform"}, {Team: "research", Models: []string{"mid/model:v1", "zeta"}}},
	}
	h := start(t, cfg, withJWKS)

	assert.Equal(t, []string{"zeta", "alpha", "mid_model_v1"}, mcpListTools(t, h, is, "platform"))
	assert.Equal(t, []string{"zeta", "mid_model_v1"}, mcpListTools(t, h, is, "research"), "the allowlist removes alpha, the order stays")
}

// mcpHarness starts a router-proxy with /mcp on two local backends.
func mcpHarness(t *testing.T) (*harness, *authtest.Issuer) {
	t.Helper()
	is := authtest.NewIssuer(t)
	cfg := config(backend("a", "http://127.0.0.1:1"), backend("b", "http://127.0.0.1:1"))
	cfg.MCP = &proxyapi.MCP{ResourceURL: testMCPResource}
	cfg.Policy.Auth = &proxyapi.Auth{JWT: is.JWT()}
	return start(t, cfg, withJWKS), is
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

// TestMCPToolNamesWithinTheSpecsLength: a tool name is at most the 128
// characters the MCP specification allows, all of them used; a second id
// that maps to the same name gets its -2 within the 128 too.
func TestMCPToolNamesWithinTheSpecsLength(t *testing.T) {
	long := strings.Repeat("m", 130)
	a, b, c := backend("a", "http://127.0.0.1:1"), backend("b", "http://127.0.0.1:1"), backend("c", "http://127.0.0.1:1")
	a.ModelID, b.ModelID, c.ModelID = long, long[:129]+"x", "short/model"
	tools := mcpTools(config(a, b, c))
	require.Len(t, tools, 3)
	assert.Equal(t, long[:128], tools[0].name, "cut at the spec's 128, not before")
	assert.Equal(t, long[:126]+"-2", tools[1].name, "the suffix replaces the tail: still 128")
	assert.Equal(t, "short_model", tools[2].name)
}

// TestMCPInputSchemaIsTheArgsType: a tool's input schema is the arguments'
// Go type, so it says what a call decodes to: a member the type does not
// name is refused by both, as is a call without messages; a text model's
// tool takes text content, a vision model's content parts too.
func TestMCPInputSchemaIsTheArgsType(t *testing.T) {
	validate := func(vision bool, args string) error {
		s, err := mcpInputSchema(vision)
		require.NoError(t, err)
		rs, err := s.Resolve(nil)
		require.NoError(t, err)
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &v))
		return rs.Validate(v)
	}
	decodes := func(args string) bool {
		var a mcpToolArgs
		dec := json.NewDecoder(strings.NewReader(args))
		dec.DisallowUnknownFields()
		return dec.Decode(&a) == nil && len(a.Messages) > 0
	}
	const text = `{"role":"user","content":"hi"}`
	const parts = `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}`
	for _, c := range []struct {
		args   string
		vision bool
		ok     bool
	}{
		{`{"messages":[` + text + `],"temperature":0.2,"top_p":1,"max_tokens":16,"stop":["\n"],"seed":7}`, false, true},
		{`{"messages":[` + text + `],"stop":"END"}`, false, true},
		{`{"messages":[` + text + `],"model":"other"}`, false, false},
		{`{"messages":[` + text + `],"stream":true}`, false, false},
		{`{"messages":[]}`, false, false},
		{`{"temperature":1}`, false, false},
		{`{"messages":[` + parts + `]}`, true, true},
	} {
		err := validate(c.vision, c.args)
		assert.Equal(t, c.ok, err == nil, "%s: %v", c.args, err)
		assert.Equal(t, c.ok, decodes(c.args), "the handler agrees on %s", c.args)
	}
	assert.Error(t, validate(false, `{"messages":[`+parts+`]}`), "a text model's tool takes no content parts")
	assert.Error(t, validate(false, `{"messages":[`+text+`],"temperature":3}`), "temperature is at most 2")
	assert.Error(t, validate(false, `{"messages":[`+text+`],"max_tokens":0}`), "max_tokens is at least 1")
}

// TestMCPRefusalIsPassedNotParsed: the router's refusal of a tool call
// reaches the recorder as its kind and message, and a backend's own error
// is told apart from it.
func TestMCPRefusalIsPassedNotParsed(t *testing.T) {
	rec := &mcpRecorder{header: http.Header{}}
	answer(rec, refBudgetExceeded, "budget team-a is exhausted")
	require.NotNil(t, rec.refusal)
	assert.Equal(t, refBudgetExceeded, rec.refusal.kind)
	assert.Zero(t, rec.body.Len(), "no OpenAI error body to parse back")
	res := mcpResult(rec, "")
	assert.True(t, res.IsError)
	assert.Equal(t, "the router refused the call with HTTP 429: budget team-a is exhausted (budget_exceeded)", res.Content[0].(*mcp.TextContent).Text)

	rec = &mcpRecorder{header: http.Header{}}
	rec.WriteHeader(http.StatusBadRequest)
	_, _ = rec.Write([]byte(`{"error":{"message":"max_tokens is too large","type":"invalid_request_error","code":"invalid_value"}}`))
	res = mcpResult(rec, "")
	assert.True(t, res.IsError)
	assert.Equal(t, "the model's backend answered HTTP 400: max_tokens is too large (invalid_value)", res.Content[0].(*mcp.TextContent).Text)
}
