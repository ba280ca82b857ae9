package routerproxy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Credentials never appear in logs, audit entries, errors, /status or
// metrics, whatever happens upstream.
func TestProviderCredentialsNeverLeak(t *testing.T) {
	ant := providertest.NewAnthropic(t, testAnthropicKey)
	const session = "IQoJb3JpZ2luX2VjEXAMPLE-session-token"
	br := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret, SessionToken: session}, "us-east-2", testBRModel)
	gem := providertest.NewVertex(t, "proj-1", "global", testGemini)
	const openaiKey = "sk-proj-openai-SECRET-0123456789"
	oai := newStub(t, "oai", nil)

	o := backend("oai", oai.URL)
	o.Kind, o.Tier, o.Provider, o.Model = proxyapi.KindExternal, "cloud", "openai", "gpt-4o"
	o.Credentials = []proxyapi.Credential{{Purpose: "apiKey", Env: "LLMKUBE_OAI_OPENAI_API_KEY"}}
	// A backend whose Secret holds an unusable service account: logged at
	// start, without its content.
	bad := vertexBackend("badgem", gem.URL+"/v1/projects/proj-1/locations/global")
	bad.Credentials[0].Env = "LLMKUBE_BADGEM_GOOGLE_APPLICATION_CREDENTIALS_JSON"
	const badSA = `{"type":"service_account","private_key":"not-a-key-SECRET-MATERIAL"`
	cfg := config(anthropicBackend("claude", ant.URL), bedrockBackend("nova", br.URL), vertexBackend("gem", gem.URL+"/v1/projects/proj-1/locations/global"), o, bad)
	cfg.Default.Strategy = "BackendNameMatch"
	cfg.Timeouts.Quarantine = dur(0) // every mode reaches every provider
	// and so do quota holds (a rate limit holds for at most this).
	cfg.Timeouts.QuotaExhaustedHold = dur(time.Nanosecond)
	cfg.Policy.Audit.IncludeRequestBody = true
	env := map[string]string{
		"LLMKUBE_CLAUDE_ANTHROPIC_API_KEY": testAnthropicKey,
		"LLMKUBE_NOVA_AWS_ACCESS_KEY_ID":   testAWSKeyID, "LLMKUBE_NOVA_AWS_SECRET_ACCESS_KEY": testAWSSecret,
		"LLMKUBE_NOVA_AWS_SESSION_TOKEN": session, "LLMKUBE_NOVA_AWS_REGION": "us-east-2",
		"LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON":    gem.ServiceAccountJSON,
		"LLMKUBE_OAI_OPENAI_API_KEY":                         openaiKey,
		"LLMKUBE_BADGEM_GOOGLE_APPLICATION_CREDENTIALS_JSON": badSA,
	}
	logs := &syncbuf.Buffer{}
	h := start(t, cfg, withEnv(env), func(o *Options) {
		o.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})

	var answers strings.Builder
	post := func(body string) {
		code, b, hdr := h.post(t, body, "Authorization", "Bearer client")
		answers.WriteString(b)
		for k, v := range hdr {
			answers.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		_ = code
	}
	modes := []providertest.Mode{providertest.Auto, providertest.Tool, providertest.RateLimited, providertest.Overloaded, providertest.BadRequest, providertest.StreamError}
	for _, m := range modes {
		ant.SetMode(m)
		br.SetMode(m)
		gem.SetMode(m)
		for _, model := range []string{"claude", "nova", "gem", "oai"} {
			for _, stream := range []string{"false", "true"} {
				post(`{"model":"` + model + `","stream":` + stream + `,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`)
			}
		}
	}
	// Wrong credentials upstream: 401/403 answers and a failing token exchange.
	ant.SetMode(providertest.Auto)
	ant.Key = "rotated"
	br.SetMode(providertest.Auto)
	br.Creds.SecretAccessKey = "rotated"
	gem.FailTokens.Store(true)
	for _, model := range []string{"claude", "nova", "gem", "badgem"} {
		post(`{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`)
	}
	h.settle(t)

	audit, err := json.Marshal(h.audit.all())
	require.NoError(t, err)
	admin := httptest.NewServer(h.srv.AdminHandler())
	defer admin.Close()
	var scraped strings.Builder
	for _, p := range []string{"/metrics", wellknown.StatusPath} {
		resp, err := http.Get(admin.URL + p)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		scraped.Write(b)
	}
	var keyLines []string
	for _, l := range strings.Split(gem.PrivateKeyPEM, "\n") {
		if len(l) > 20 && !strings.HasPrefix(l, "-----") {
			keyLines = append(keyLines, l)
		}
	}
	assert.Contains(t, logs.String(), "badgem")
	secrets := append([]string{"SECRET-MATERIAL", testAnthropicKey, testAWSSecret, session, openaiKey, gem.AccessToken(), `"private_key"`}, keyLines...)
	require.NotEmpty(t, gem.AccessToken(), "a token was issued, so it is checked too")
	for name, text := range map[string]string{"logs": logs.String(), "audit": string(audit), "answers": answers.String(), "admin": scraped.String()} {
		require.NotEmpty(t, text, name)
		for _, s := range secrets {
			assert.NotContains(t, text, s, "%s leaks a credential", name)
		}
	}
	// The requests did reach every provider with their credentials.
	assert.NotEmpty(t, ant.Requests())
	assert.NotEmpty(t, br.Requests())
	assert.NotEmpty(t, gem.Requests())
	assert.Equal(t, "Bearer "+openaiKey, oai.Last().Header.Get("Authorization"))
	for _, outcome := range []string{"ok_stream", "all_backends_failed", "upstream_aborted"} {
		assert.True(t, strings.Contains(string(audit), `"outcome":"`+outcome+`"`), "outcome %s was exercised", outcome)
	}
	assert.False(t, strings.Contains(string(audit), `"outcome":"no_route"`))
}
