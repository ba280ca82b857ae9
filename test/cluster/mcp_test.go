//go:build e2ecluster

package cluster

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

const mcpResource = "https://models.example.com/mcp"

// An MCP tool call through the router's Service: a router with
// spec.mcpServer, rendered and applied as the README says, its JWKS served
// on the node's bridge address; the official Go SDK's client lists the
// tools with a team's token and calls one, answered by the model pod.
func TestMCPToolCallThroughTheService(t *testing.T) {
	ns := namespace(t, "mcp")
	apply(t, stubModel("qwen3-coder", ns, 1, 0))

	is := authtest.NewIssuer(t)
	l, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	jwks := &http.Server{Handler: is.Server.Config.Handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = jwks.Serve(l) }()
	t.Cleanup(func() { _ = jwks.Close() })

	router := inferenceService("qwen3-coder", ns) + `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: agents, namespace: ` + ns + `}
spec:
  backends: [{name: qwen, displayName: qwen3-coder, inferenceServiceRef: {name: qwen3-coder}}]
  defaultRoute: qwen
  policy:
    auth:
      jwt: {provider: test, issuer: "` + authtest.IssuerURL + `", jwksURI: "http://` + l.Addr().String() + `/", teamClaim: team}
  mcpServer:
    enabled: true
    resourceURL: ` + mcpResource + `
`
	input := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(input, []byte(router), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, run(t, "", e.bin, "render", "-f", input))
	kubectl(t, "-n", ns, "rollout", "status", "deploy/agents-router-proxy", "--timeout=120s")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/qwen3-coder", "--timeout=120s")
	base := serviceURL(t, ns, "agents-router-proxy")

	token := is.TokenFor(t, "platform", mcpResource)
	var answer string
	eventually(t, 60*time.Second, "an MCP tool call through the router's Service", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "v0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: authtest.Bearer(token)}, DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		if len(tools.Tools) != 1 || tools.Tools[0].Name != "qwen3-coder" {
			return errorf("tools %+v", tools.Tools)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "qwen3-coder", Arguments: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "hello"}},
		}})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return errorf("tool result %+v", res)
		}
		answer = res.Content[0].(*mcp.TextContent).Text
		return nil
	})
	if !strings.Contains(answer, "qwen3-coder-") {
		t.Errorf("the answer %q does not come from a qwen3-coder pod", answer)
	}

	// No token: 401 with the metadata URL, from inside the cluster too.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
