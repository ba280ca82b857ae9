package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxy/auth/authtest"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// renderConfig compiles a testdata case with the real llmkube-compile
// binary and returns its router-proxy config.
func renderConfig(t *testing.T, input string) *proxyapi.Config {
	t.Helper()
	_, compile := binaries(t)
	out, err := exec.Command(compile, "render", "-f", input, "-o", "json").Output()
	require.NoError(t, err)
	var list struct {
		Items []struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(out, &list))
	for _, it := range list.Items {
		if it.Kind == "ConfigMap" {
			cfg, err := proxyapi.Parse(strings.NewReader(it.Data["config.json"]))
			require.NoError(t, err)
			return cfg
		}
	}
	t.Fatal("no ConfigMap rendered")
	return nil
}

func (p *proc) get(t *testing.T, path, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.listen+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestAuthEndToEnd drives the real router-proxy binary with the config the
// compiler renders for testdata/proxy-jwt-allowlists, against a local issuer
// whose JWKS is on loopback.
func TestAuthEndToEnd(t *testing.T) {
	is := authtest.NewIssuer(t)
	cfg := renderConfig(t, "../../testdata/proxy-jwt-allowlists/input.yaml")
	cfg.Policy.Auth.JWT.JWKSURI = is.Server.URL
	cfg.Policy.Auth.JWT.Issuer = authtest.IssuerURL
	ups := map[string]*upstream{}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		ups[b.Name] = newUpstream(t, b.Name)
		b.URL = ups[b.Name].URL
	}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Policy.Audit.Sink, cfg.Policy.Audit.FilePath = "file", auditPath
	p := startProxy(t, cfg)

	token := func(team string) string { return is.Sign(t, jwt.SigningMethodRS256, "rsa-1", authtest.Claims(team)) }
	bearer := func(team string) string { return "Bearer " + token(team) }

	// No token, or a bad one: 401 with a Bearer challenge, before routing.
	code, body := p.post(t, `{"model":"qwen3-32b"}`, "x-llmkube-team", "platform")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.Contains(t, body, `"type":"authentication_error"`)
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.listen+"/v1/chat/completions", strings.NewReader(`{"model":"qwen3-32b"}`))
	req.Header.Set("Authorization", "Bearer "+token("platform")[:40]+"x")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Bearer realm="llmkube", error="invalid_token"`, resp.Header.Get("WWW-Authenticate"))
	for _, u := range ups {
		assert.Zero(t, u.hits.Load(), "nothing unauthenticated reached a backend")
	}

	// The verified team routes, not the header the client sent.
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("platform"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "qwen-gold", served(t, body), "the platform rule matches the verified team")
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("research"), "x-llmkube-team", "platform")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "qwen", served(t, body), "a forged team header is replaced by the verified team")

	// Allowlists: default deny, per model.
	code, body = p.post(t, `{"model":"qwen3-gold"}`, "Authorization", bearer("research"))
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "model_not_allowed")
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("sales"))
	assert.Equal(t, http.StatusForbidden, code, "an unlisted team")

	// /v1/models lists what the team may reach; /health stays open.
	code, _, _ = p.get(t, "/v1/models", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _, body = p.get(t, "/v1/models", token("research"))
	require.Equal(t, 200, code)
	assert.Contains(t, body, `"id":"qwen3-32b"`)
	assert.NotContains(t, body, "qwen3-gold")
	_, _, body = p.get(t, "/v1/models", token("platform"))
	assert.Contains(t, body, "qwen3-gold")
	code, _, _ = p.get(t, "/health", "")
	assert.Equal(t, 200, code)

	// The team budget keys on the verified team: research exhausts its own
	// and cannot spend platform's by forging the header.
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("research"), "x-big-usage", "1")
	require.Equal(t, 200, code)
	code, body = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("research"), "x-llmkube-team", "platform")
	assert.Equal(t, http.StatusTooManyRequests, code, body)
	code, _ = p.post(t, `{"model":"qwen3-32b"}`, "Authorization", bearer("platform"))
	assert.Equal(t, 200, code, "platform's budget is untouched")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	raw, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	var forbidden *proxyapi.AuditEntry
	outcomes := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e proxyapi.AuditEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		outcomes[e.Outcome]++
		if e.Outcome == proxyapi.OutcomeForbidden && forbidden == nil {
			forbidden = &e
		}
	}
	assert.Equal(t, 2, outcomes[proxyapi.OutcomeUnauthorized])
	assert.Equal(t, 2, outcomes[proxyapi.OutcomeForbidden])
	require.NotNil(t, forbidden)
	assert.Equal(t, "research", forbidden.Team, "the audit names the verified team")
	assert.Equal(t, "qwen3-gold", forbidden.Model)
}
