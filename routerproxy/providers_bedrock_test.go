package routerproxy

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testAWSKeyID  = "AKIAPROXYTESTEXAMPLE"
	testAWSSecret = "proxy/test/SECRET/wJalrXUtnFEMIK7MDENGbPxRfiCY"
	testBRModel   = "anthropic.claude-3-5-sonnet-20240620-v1:0"
)

func bedrockBackend(name, url string) proxyapi.Backend {
	return cloudBackend(name, url, "bedrock", testBRModel,
		proxyapi.Credential{Purpose: "awsAccessKeyId", Env: "LLMKUBE_NOVA_AWS_ACCESS_KEY_ID"},
		proxyapi.Credential{Purpose: "awsSecretAccessKey", Env: "LLMKUBE_NOVA_AWS_SECRET_ACCESS_KEY"},
		proxyapi.Credential{Purpose: "awsSessionToken", Env: "LLMKUBE_NOVA_AWS_SESSION_TOKEN"},
		proxyapi.Credential{Purpose: "awsRegion", Env: "LLMKUBE_NOVA_AWS_REGION"})
}

var bedrockTestEnv = map[string]string{"LLMKUBE_NOVA_AWS_ACCESS_KEY_ID": testAWSKeyID, "LLMKUBE_NOVA_AWS_SECRET_ACCESS_KEY": testAWSSecret, "LLMKUBE_NOVA_AWS_REGION": "us-east-2"}

func TestProviderBedrockThroughProxy(t *testing.T) {
	fake := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: testAWSKeyID, SecretAccessKey: testAWSSecret}, "us-east-2", testBRModel)
	h := start(t, config(bedrockBackend("nova", fake.URL)), withEnv(bedrockTestEnv))
	st := h.srv.Engine().Backend("nova")
	require.True(t, st.Healthy(), "the optional session token is not set: %s", st.StaticProblem())

	body := h.okChat(t, `{"model":"nova","messages":[{"role":"user","content":"Hello"}]}`)
	c := decodeCompletion(t, body)
	assert.Equal(t, "Hello! How can I help you today?", *c.Choices[0].Message.Content)
	assert.Empty(t, fake.Last().Header.Get("X-Amz-Security-Token"))
	ent := h.last(t)
	assert.Equal(t, int64(22), ent.TotalTokens)
	assert.False(t, ent.TokensEstimated)

	body = h.okChat(t, `{"model":"nova","stream":true,"messages":[{"role":"user","content":"Top song?"}],"tools":[{"type":"function","function":{"name":"top_song"}}]}`)
	s := decodeStream(t, body)
	s.assertToolCall(t, "top_song", `{"sign": "WZPZ"}`)
	ent = h.last(t)
	assert.Equal(t, proxyapi.OutcomeOKStream, ent.Outcome)
	assert.Equal(t, int64(375), ent.PromptTokens)
	assert.Equal(t, int64(35), ent.CompletionTokens)

	// A broken stream (in-stream exception) aborts the client and quarantines.
	fake.SetMode(providertest.StreamError)
	req := `{"model":"nova","stream":true,"messages":[{"role":"user","content":"Hello"}]}`
	h.sent.Add(1)
	resp, err := h.front.Client().Post(h.front.URL+"/v1/chat/completions", "application/json", stringsReader(req))
	if err == nil {
		_, _ = readAll(resp)
	}
	ent = h.last(t)
	assert.Equal(t, proxyapi.OutcomeUpstreamAborted, ent.Outcome)
	assert.Contains(t, ent.Error, "modelStreamErrorException")
	assert.True(t, h.srv.Engine().Quarantined(st))
}

// Without a url the regional host comes from AWS_REGION.
func TestProviderBedrockNoURL(t *testing.T) {
	b := bedrockBackend("nova", "")
	b.HealthCheck.Path = ""
	h := start(t, config(b), withEnv(bedrockTestEnv))
	assert.Equal(t, "https://bedrock-runtime.us-east-2.amazonaws.com", h.srv.backends[0].base.String())
	assert.True(t, h.srv.Engine().Backend("nova").Healthy())

	env := map[string]string{"LLMKUBE_NOVA_AWS_ACCESS_KEY_ID": testAWSKeyID, "LLMKUBE_NOVA_AWS_SECRET_ACCESS_KEY": testAWSSecret}
	h = start(t, config(b), withEnv(env))
	st := h.srv.Engine().Backend("nova")
	assert.False(t, st.Healthy())
	assert.Contains(t, st.StaticProblem(), "awsRegion")
}
