package providers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	awsKeyID   = "AKIAIOSFODNN7EXAMPLE"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	awsSession = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
	brModel    = "anthropic.claude-3-5-sonnet-20240620-v1:0"
)

func bedrockCreds(name string) []proxyapi.Credential {
	p := "LLMKUBE_" + strings.ToUpper(name) + "_"
	return []proxyapi.Credential{
		{Purpose: "awsAccessKeyId", Env: p + "AWS_ACCESS_KEY_ID"},
		{Purpose: "awsSecretAccessKey", Env: p + "AWS_SECRET_ACCESS_KEY"},
		{Purpose: "awsSessionToken", Env: p + "AWS_SESSION_TOKEN"},
		{Purpose: "awsRegion", Env: p + "AWS_REGION"},
	}
}

func bedrockEnv(name, region string, session bool) map[string]string {
	p := "LLMKUBE_" + strings.ToUpper(name) + "_"
	m := map[string]string{p + "AWS_ACCESS_KEY_ID": awsKeyID, p + "AWS_SECRET_ACCESS_KEY": awsSecret, p + "AWS_REGION": region}
	if session {
		m[p+"AWS_SESSION_TOKEN"] = awsSession
	}
	return m
}

func bedrockBackend(t *testing.T) (*providertest.Bedrock, Provider) {
	fake := providertest.NewBedrock(t, aws.Credentials{AccessKeyID: awsKeyID, SecretAccessKey: awsSecret, SessionToken: awsSession}, "eu-west-1", brModel)
	b := external("nova", "bedrock", fake.URL, brModel, bedrockCreds("nova")...)
	return fake, newProvider(t, b, bedrockEnv("nova", "eu-west-1", true))
}

func TestBedrockRegion(t *testing.T) {
	for _, tc := range []struct{ url, region, wantBase, wantRegion string }{
		{"https://bedrock-runtime.us-west-2.amazonaws.com", "eu-west-1", "https://bedrock-runtime.us-west-2.amazonaws.com", "us-west-2"},
		{"https://bedrock-runtime-fips.us-east-1.amazonaws.com/", "", "https://bedrock-runtime-fips.us-east-1.amazonaws.com", "us-east-1"},
		{"", "ap-southeast-2", "https://bedrock-runtime.ap-southeast-2.amazonaws.com", "ap-southeast-2"},
		{"https://vpce-0123.bedrock-runtime.example.internal", "eu-central-1", "https://vpce-0123.bedrock-runtime.example.internal", "eu-central-1"},
	} {
		p, err := New(external("b", "bedrock", tc.url, brModel, bedrockCreds("b")...), env(bedrockEnv("b", tc.region, false)), http.DefaultTransport)
		require.NoError(t, err, tc.url)
		assert.Equal(t, tc.wantBase, p.BaseURL())
		assert.Equal(t, tc.wantRegion, p.(*bedrock).Region())
	}
	_, err := New(external("b", "bedrock", "", brModel, bedrockCreds("b")...), env(bedrockEnv("b", "", false)), http.DefaultTransport)
	assert.ErrorContains(t, err, "no region")
	_, err = New(external("b", "bedrock", "", brModel), env(nil), http.DefaultTransport)
	assert.Error(t, err)
}

// TestBedrockModelARN: a model given as an ARN (an inference profile) is one
// URI label, its ':' and '/' escaped as the AWS SDKs escape them.
func TestBedrockModelARN(t *testing.T) {
	const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0"
	p, err := New(external("b", "bedrock", "", arn, bedrockCreds("b")...), env(bedrockEnv("b", "us-east-1", false)), http.DefaultTransport)
	require.NoError(t, err)
	u, err := p.(*bedrock).url(true)
	require.NoError(t, err)
	assert.Equal(t, "https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream", u.String())
}

func TestBedrockRequestMapping(t *testing.T) {
	fake, p := bedrockBackend(t)
	resp, body := call(t, p, "/v1/chat/completions", `{
	  "model": "nova", "max_tokens": 512, "temperature": 0.5, "top_p": 0.8, "stop": ["\n\nHuman:"],
	  "tool_choice": "required",
	  "tools": [{"type": "function", "function": {"name": "top_song", "description": "Most popular song on a radio station", "parameters": {"type": "object", "properties": {"sign": {"type": "string"}}, "required": ["sign"]}}}],
	  "messages": [
	    {"role": "system", "content": "You are a DJ."},
	    {"role": "user", "content": [{"type": "text", "text": "Top song on WZPZ? Also this:"}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}]},
	    {"role": "assistant", "content": null, "tool_calls": [{"id": "tooluse_1", "type": "function", "function": {"name": "top_song", "arguments": "{\"sign\":\"WZPZ\"}"}}]},
	    {"role": "tool", "tool_call_id": "tooluse_1", "content": "Elemental Hotel"},
	    {"role": "user", "content": "And the artist?"}
	  ]}`)
	require.Equal(t, 200, resp.StatusCode, body)
	got := fake.Last()
	assert.Equal(t, "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", got.Path)
	assert.True(t, strings.HasPrefix(got.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+awsKeyID+"/"), "SigV4 signed (and verified by the fake)")
	assert.Equal(t, awsSession, got.Header.Get("X-Amz-Security-Token"))
	assert.NotEmpty(t, got.Header.Get("X-Amz-Date"))
	assert.JSONEq(t, `{
	  "system": [{"text": "You are a DJ."}],
	  "inferenceConfig": {"maxTokens": 512, "temperature": 0.5, "topP": 0.8, "stopSequences": ["\n\nHuman:"]},
	  "toolConfig": {
	    "tools": [{"toolSpec": {"name": "top_song", "description": "Most popular song on a radio station", "inputSchema": {"json": {"type": "object", "properties": {"sign": {"type": "string"}}, "required": ["sign"]}}}}],
	    "toolChoice": {"any": {}}
	  },
	  "messages": [
	    {"role": "user", "content": [{"text": "Top song on WZPZ? Also this:"}, {"image": {"format": "jpeg", "source": {"bytes": "/9j/4AAQ"}}}]},
	    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "top_song", "input": {"sign": "WZPZ"}}}]},
	    {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "Elemental Hotel"}]}}, {"text": "And the artist?"}]}
	  ]}`, string(got.Body))
}

func TestBedrockToolChoice(t *testing.T) {
	fake, p := bedrockBackend(t)
	tools := `"tools":[{"type":"function","function":{"name":"f"}}]`
	spec := `"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}}}}]`
	for _, tc := range []struct{ in, want string }{
		{tools, `"toolConfig":{` + spec + `}`},
		{tools + `,"tool_choice":"auto"`, `"toolConfig":{` + spec + `,"toolChoice":{"auto":{}}}`},
		{tools + `,"tool_choice":{"type":"function","function":{"name":"f"}}`, `"toolConfig":{` + spec + `,"toolChoice":{"tool":{"name":"f"}}}`},
		{tools + `,"tool_choice":"none"`, `"messages":[{"role":"user","content":[{"text":"hi"}]}]`},
	} {
		chatOK(t, p, `{"model":"m","messages":[{"role":"user","content":"hi"}],`+tc.in+`}`)
		want := `{"messages":[{"role":"user","content":[{"text":"hi"}]}],` + tc.want + `}`
		if strings.HasPrefix(tc.want, `"messages"`) {
			want = `{` + tc.want + `}`
		}
		assert.JSONEq(t, want, string(fake.Last().Body), tc.in)
	}
	// Remote image URLs cannot be expressed.
	resp, body := call(t, p, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}}]}]}`)
	assert.Equal(t, 400, resp.StatusCode, body)
}

func TestBedrockResponse(t *testing.T) {
	fake, p := bedrockBackend(t)
	assertAnswers(t, fake, p,
		`{"model":"m","messages":[{"role":"user","content":"Hello"}]}`,
		`{"id":"chatcmpl-9c1ab1f4-6cc4-4b0c-a6a1-4c1b8f0e8b33","object":"chat.completion","created":1700000000,"model":"`+brModel+`",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},"finish_reason":"stop","logprobs":null}],
	  "usage":{"prompt_tokens":12,"completion_tokens":10,"total_tokens":22}}`,
		`{"model":"m","messages":[{"role":"user","content":"Top song?"}],"tools":[{"type":"function","function":{"name":"top_song"}}]}`,
		`{"id":"chatcmpl-9c1ab1f4-6cc4-4b0c-a6a1-4c1b8f0e8b33","object":"chat.completion","created":1700000000,"model":"`+brModel+`",
	  "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q","type":"function","function":{"name":"top_song","arguments":"{\"sign\":\"WZPZ\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],
	  "usage":{"prompt_tokens":375,"completion_tokens":35,"total_tokens":410}}`)
}

func TestBedrockStream(t *testing.T) {
	fake, p := bedrockBackend(t)
	resp, body := chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hello"}]}`)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream", fake.Last().Path)
	assert.NotContains(t, string(fake.Last().Body), "stream", "ConverseStream has no stream member")
	a := assemble(t, body)
	assert.Equal(t, "assistant", a.Role)
	assert.Equal(t, "Hello! How can I help?", a.Content)
	assert.Equal(t, "stop", a.Finish)
	assert.Equal(t, &usage{PromptTokens: 12, CompletionTokens: 8, TotalTokens: 20}, a.Usage)
	assert.True(t, a.Done)

	fake.SetMode(providertest.Tool)
	_, body = chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Top song?"}],"tools":[{"type":"function","function":{"name":"top_song"}}]}`)
	a = assemble(t, body)
	assert.Equal(t, "Let me look that up.", a.Content)
	assertOneCall(t, a, "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "top_song", `{"sign": "WZPZ"}`)
	assert.Equal(t, "tool_calls", a.Finish)
	assert.Equal(t, &usage{PromptTokens: 375, CompletionTokens: 35, TotalTokens: 410}, a.Usage)

	fake.SetMode(providertest.StreamError)
	b := brokenStream(t, p, "Hello", "bedrock stream error: modelStreamErrorException")
	assert.Contains(t, b, `"code":"modelStreamErrorException"`)
	assert.Contains(t, b, `"content":"Hello"`)
}

func TestBedrockErrors(t *testing.T) {
	fake, p := bedrockBackend(t)
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	assertRefusal(t, fake, p, providertest.RateLimited, refusal{429, "rate_limit_error", "ThrottlingException", "bedrock: Too many requests, please wait before trying again."})
	assertRefusal(t, fake, p, providertest.BadRequest, refusal{status: 400, code: "ValidationException"})
	assertRefusal(t, fake, p, providertest.Overloaded, refusal{status: 503})

	// A wrong secret: the fake's signature check fails (403), and the
	// error never carries a credential.
	fake.SetMode(providertest.Auto)
	fake.Creds.SecretAccessKey = "other"
	resp, body := call(t, p, "/v1/chat/completions", chat)
	assert.Equal(t, 403, resp.StatusCode, body)
	_, code, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "InvalidSignatureException", code)
	assert.NotContains(t, body, awsSecret)
}

func TestBedrockFinishReasons(t *testing.T) {
	for in, want := range map[string]string{"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
		"guardrail_intervened": "content_filter", "content_filtered": "content_filter", "model_context_window_exceeded": "length"} {
		assert.Equal(t, want, stopFinish(in), in)
	}
}
