package routerproxy

import (
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openai and litellm pass through untranslated: the provider key as bearer,
// external.model substituted, the path appended to the url (a /v1 base is
// not doubled), stream usage requested.
func TestProviderPassThrough(t *testing.T) {
	up := newStub(t, "lite", sseHandler("lite", 2, 0))
	for _, tc := range []struct{ provider, key, url string }{
		{"litellm", "LITELLM_MASTER_KEY", up.URL + "/v1"},
		{"openai", "OPENAI_API_KEY", up.URL},
	} {
		b := cloudBackend("ext", tc.url, tc.provider, "team/gpt-4o-mini", proxyapi.Credential{Purpose: "apiKey", Env: "LLMKUBE_EXT_" + tc.key})
		h := start(t, config(b), withEnv(map[string]string{"LLMKUBE_EXT_" + tc.key: "sk-" + tc.provider}))
		require.Nil(t, h.srv.backends[0].tr, "no translation for %s", tc.provider)

		body := h.okChat(t, `{"model":"ext","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer client")
		got := up.Last()
		assert.Equal(t, "/v1/chat/completions", got.Path)
		assert.Equal(t, "Bearer sk-"+tc.provider, got.Header.Get("Authorization"))
		assert.JSONEq(t, `{"model":"team/gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, string(got.Body))
		s := decodeStream(t, body)
		assert.Equal(t, "lite-0 lite-1 ", s.Content)
		require.NotNil(t, s.Usage)
		ent := h.last(t)
		assert.Equal(t, int64(10), ent.TotalTokens)
		assert.False(t, ent.TokensEstimated)
	}
}
