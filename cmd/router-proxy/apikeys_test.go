package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

// apiKeyStatus reads the process's /status apiKeys.
func apiKeyStatus(t *testing.T, p *proc) proxyapi.APIKeyStatus {
	t.Helper()
	st := p.status(t)
	require.NotNil(t, st.APIKeys)
	return *st.APIKeys
}

// TestAPIKeysFromSecretFiles drives the real binary with the config the
// compiler renders for testdata/proxy-api-keys, its Secret directories
// written as the kubelet writes them: research's key reaches research's
// model (qwen3-32b) and not the one its allowlist leaves out, whatever team
// header it forges; the expired platform key is refused 401
// expired_api_key; a rotation (a new ..data directory swapped in) takes
// effect in the running process, the old key refused 401 invalid_api_key
// and the new one served; no key value reaches a backend, the audit file,
// stdout or stderr.
func TestAPIKeysFromSecretFiles(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/proxy-api-keys/input.yaml")
	require.Len(t, cfg.Policy.Auth.APIKeys, 2)
	root := t.TempDir()
	const (
		researchKey = "sk-research-0f1e2d3c4b5a69788796"
		rotatedKey  = "sk-research-rotated-aa55aa55aa55"
		platformKey = "sk-platform-trial-1234567890ab"
	)
	past := time.Now().Add(-time.Hour).UTC()
	for i := range cfg.Policy.Auth.APIKeys {
		k := &cfg.Policy.Auth.APIKeys[i]
		assert.Equal(t, "/etc/llmkube/api-keys/"+k.SecretName, k.Dir, "the rendered config names the mount")
		k.Dir = filepath.Join(root, k.SecretName)
		switch k.SecretName {
		case "analytics-keys":
			authtest.WriteSecret(t, k.Dir, map[string]string{"ci": researchKey + "\n"})
		case "partner.trial-keys":
			authtest.WriteSecret(t, k.Dir, map[string]string{"trial": platformKey})
			k.ExpiresAt = &past // expired before the process started
		}
	}
	cfg.Policy.Auth.JWT = nil // keys alone: nothing of the issuer's is needed
	p, ups, auditPath := serveOnLoopback(t, cfg)
	pid := p.cmd.Process.Pid

	code, body := p.post(t, chatFor("qwen3-32b", "hello"), "Authorization", "Bearer "+researchKey, "X-Llmkube-Team", "platform")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "qwen", served(t, body))
	code, body = p.post(t, chatFor("qwen3-32b", "hello"), "X-Api-Key", researchKey)
	require.Equal(t, http.StatusOK, code, body)
	code, body = p.post(t, chatFor("qwen3-gold", "hello"), "Authorization", "Bearer "+researchKey, "X-Llmkube-Team", "platform")
	assert.Equal(t, http.StatusForbidden, code, "research's key reaches no model its allowlist leaves out, forged team or not: %s", body)
	assert.Contains(t, body, `"code":"model_not_allowed"`)
	code, body = p.post(t, chatFor("qwen3-gold", "hello"), "Authorization", "Bearer "+platformKey)
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.Contains(t, body, `"code":"expired_api_key"`)

	// Rotation, as the kubelet does it; the process reads the files again.
	gen := apiKeyStatus(t, p).Generation
	dir := filepath.Join(root, "analytics-keys")
	authtest.WriteSecret(t, dir, map[string]string{"ci-2": rotatedKey})
	require.Eventually(t, func() bool { return apiKeyStatus(t, p).Generation > gen }, 60*time.Second, 50*time.Millisecond,
		"the rotated Secret was not taken")
	st := apiKeyStatus(t, p)
	assert.Contains(t, st.Keys, "analytics-keys/ci-2")
	assert.NotContains(t, st.Keys, "analytics-keys/ci")
	code, body = p.post(t, chatFor("qwen3-32b", "hello"), "Authorization", "Bearer "+researchKey)
	assert.Equal(t, http.StatusUnauthorized, code, "the old key is refused after rotation: %s", body)
	assert.Contains(t, body, `"code":"invalid_api_key"`)
	code, body = p.post(t, chatFor("qwen3-32b", "hello"), "X-Api-Key", rotatedKey)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, pid, p.cmd.Process.Pid)
	assert.Nil(t, p.cmd.ProcessState, "the process was not restarted")

	for name, u := range ups {
		for _, h := range u.headers() {
			assert.Empty(t, h.Values("Authorization"), "%s got the caller's credential", name)
			assert.Empty(t, h.Values("X-Api-Key"), "%s got the caller's credential", name)
			assert.Equal(t, []string{"research"}, h.Values("X-Llmkube-Team"), "%s got another team than the key's", name)
		}
	}

	metrics := p.metrics(t)
	statusJSON := mustJSON(t, apiKeyStatus(t, p))

	entries, raw := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 6)
	keys := []string{}
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	assert.Equal(t, []string{"analytics-keys/ci", "analytics-keys/ci", "analytics-keys/ci", "", "", "analytics-keys/ci-2"}, keys,
		"the audit names the key that authenticated each request")
	assert.Equal(t, "research", entries[0].Team)
	assert.Equal(t, proxyapi.OutcomeUnauthorized, entries[3].Outcome)
	for _, secret := range []string{researchKey, rotatedKey, platformKey} {
		for where, text := range map[string]string{"audit": raw, "stderr": p.stderr.String(), "stdout": p.stdout.String(), "metrics": metrics, "status": statusJSON} {
			assert.False(t, strings.Contains(text, secret), "a key's value is in the %s", where)
		}
	}
}
