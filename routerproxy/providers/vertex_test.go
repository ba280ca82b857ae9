package providers

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gmModel = "gemini-2.0-flash-001"

var saCred = proxyapi.Credential{Purpose: "googleServiceAccountJSON", Env: "LLMKUBE_GEM_GOOGLE_APPLICATION_CREDENTIALS_JSON"}

func vertexBackend(t *testing.T) (*providertest.Vertex, Provider) {
	fake := providertest.NewVertex(t, "my-project", "us-central1", gmModel)
	b := external("gem", "vertex_ai", fake.URL+"/v1/projects/my-project/locations/us-central1/publishers/google/models", gmModel, saCred)
	return fake, newProvider(t, b, map[string]string{saCred.Env: fake.ServiceAccountJSON})
}

func TestVertexTarget(t *testing.T) {
	fake := providertest.NewVertex(t, "sa-project", "global", gmModel)
	e := map[string]string{saCred.Env: fake.ServiceAccountJSON}
	for _, tc := range []struct{ url, project, location, want string }{
		{"", "sa-project", "global", "https://aiplatform.googleapis.com/v1/projects/sa-project/locations/global/publishers/google/models/" + gmModel + ":generateContent"},
		{"https://aiplatform.googleapis.com", "sa-project", "global", "https://aiplatform.googleapis.com/v1/projects/sa-project/locations/global/publishers/google/models/" + gmModel + ":generateContent"},
		{"https://europe-west4-aiplatform.googleapis.com", "sa-project", "europe-west4", "https://europe-west4-aiplatform.googleapis.com/v1/projects/sa-project/locations/europe-west4/publishers/google/models/" + gmModel + ":generateContent"},
		{"https://us-central1-aiplatform.googleapis.com/v1/projects/other/locations/us-central1/publishers/google/models", "other", "us-central1", "https://us-central1-aiplatform.googleapis.com/v1/projects/other/locations/us-central1/publishers/google/models/" + gmModel + ":generateContent"},
		{"https://aiplatform.googleapis.com/v1beta1/projects/p2/locations/global", "p2", "global", "https://aiplatform.googleapis.com/v1beta1/projects/p2/locations/global/publishers/google/models/" + gmModel + ":generateContent"},
	} {
		p, err := New(external("gem", "vertex_ai", tc.url, gmModel, saCred), env(e), http.DefaultTransport)
		require.NoError(t, err, tc.url)
		v := p.(*vertex)
		pr, loc := v.Target()
		assert.Equal(t, tc.project, pr, tc.url)
		assert.Equal(t, tc.location, loc, tc.url)
		assert.Equal(t, tc.want, v.url(false))
	}
	assert.Zero(t, fake.TokenRequests.Load(), "no token before the first request")

	_, err := New(external("gem", "vertex_ai", "", gmModel, saCred), env(map[string]string{saCred.Env: `{"type":"authorized_user","client_secret":"zzz"}`}), http.DefaultTransport)
	assert.ErrorContains(t, err, "not a usable service-account JSON")
	assert.NotContains(t, err.Error(), "zzz")
}

func TestVertexRequestMapping(t *testing.T) {
	fake, p := vertexBackend(t)
	resp, body := call(t, p, "/v1/chat/completions", `{
	  "model": "gem", "max_tokens": 256, "temperature": 0.4, "top_p": 0.95, "stop": "STOP!",
	  "tool_choice": {"type": "function", "function": {"name": "get_current_weather"}},
	  "tools": [{"type": "function", "function": {"name": "get_current_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}, {"type": "function", "function": {"name": "noop"}}],
	  "messages": [
	    {"role": "system", "content": "Answer briefly."},
	    {"role": "user", "content": [{"type": "text", "text": "Weather in Boston? And this:"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}, {"type": "image_url", "image_url": {"url": "gs://bucket/pic.jpg"}}]},
	    {"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "get_current_weather", "arguments": "{\"location\":\"Boston\"}"}}]},
	    {"role": "tool", "tool_call_id": "call_0", "content": "{\"temperature\": 38, \"unit\": \"F\"}"},
	    {"role": "assistant", "content": "38F.", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "done"}
	  ]}`)
	require.Equal(t, 200, resp.StatusCode, body)
	got := fake.Last()
	assert.Equal(t, "/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.0-flash-001:generateContent", got.Path)
	assert.Equal(t, "Bearer "+fake.AccessToken(), got.Header.Get("Authorization"))
	assert.JSONEq(t, `{
	  "systemInstruction": {"parts": [{"text": "Answer briefly."}]},
	  "generationConfig": {"maxOutputTokens": 256, "temperature": 0.4, "topP": 0.95, "stopSequences": ["STOP!"]},
	  "tools": [{"functionDeclarations": [
	    {"name": "get_current_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}},
	    {"name": "noop"}
	  ]}],
	  "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_current_weather"]}},
	  "contents": [
	    {"role": "user", "parts": [{"text": "Weather in Boston? And this:"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}, {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/pic.jpg"}}]},
	    {"role": "model", "parts": [{"functionCall": {"name": "get_current_weather", "args": {"location": "Boston"}}}]},
	    {"role": "user", "parts": [{"functionResponse": {"name": "get_current_weather", "response": {"temperature": 38, "unit": "F"}}}]},
	    {"role": "model", "parts": [{"text": "38F."}, {"functionCall": {"name": "noop", "args": {}}}]},
	    {"role": "user", "parts": [{"functionResponse": {"name": "noop", "response": {"content": "done"}}}]}
	  ]}`, string(got.Body))

	for _, tc := range []struct{ choice, want string }{
		{`"auto"`, `{"functionCallingConfig":{"mode":"AUTO"}}`},
		{`"none"`, `{"functionCallingConfig":{"mode":"NONE"}}`},
		{`"required"`, `{"functionCallingConfig":{"mode":"ANY"}}`},
	} {
		chatOK(t, p, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":`+tc.choice+`}`)
		assert.JSONEq(t, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":`+tc.want+`}`, string(fake.Last().Body))
	}
	// A tool result must name a known call (Gemini needs the function name).
	resp, body = call(t, p, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`)
	assert.Equal(t, 400, resp.StatusCode, body)
	assert.Equal(t, int64(1), fake.TokenRequests.Load(), "the access token is cached")
}

func TestVertexResponse(t *testing.T) {
	fake, p := vertexBackend(t)
	assertAnswers(t, fake, p,
		`{"model":"m","messages":[{"role":"user","content":"Why is the sky blue?"}]}`,
		`{"id":"chatcmpl-IwqtZ5nnF4m6mNAP2qGWyQY","object":"chat.completion","created":1700000000,"model":"gemini-2.0-flash-001",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"The sky appears blue because of Rayleigh scattering."},"finish_reason":"stop","logprobs":null}],
	  "usage":{"prompt_tokens":6,"completion_tokens":10,"total_tokens":16}}`,
		`{"model":"m","messages":[{"role":"user","content":"Weather in Boston?"}],"tools":[{"type":"function","function":{"name":"get_current_weather"}}]}`,
		`{"id":"chatcmpl-6QqtZ_7eNLCBmNAPpOGD4Ac","object":"chat.completion","created":1700000000,"model":"gemini-2.0-flash-001",
	  "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_current_weather","arguments":"{\"location\":\"Boston\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],
	  "usage":{"prompt_tokens":28,"completion_tokens":7,"total_tokens":35}}`)
}

func TestVertexStream(t *testing.T) {
	fake, p := vertexBackend(t)
	_, body := chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Why is the sky blue?"}]}`)
	assert.Equal(t, "/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.0-flash-001:streamGenerateContent", fake.Last().Path)
	assert.Equal(t, "alt=sse", fake.Last().Query)
	a := assemble(t, body)
	assert.Equal(t, "chatcmpl-MQqtZ6iCG8mYmNAPtY2fgAY", a.ID)
	assert.Equal(t, "The sky appears blue due to Rayleigh scattering.", a.Content)
	assert.Equal(t, "stop", a.Finish)
	assert.Equal(t, &usage{PromptTokens: 6, CompletionTokens: 9, TotalTokens: 15}, a.Usage)
	assert.True(t, a.Done)

	fake.SetMode(providertest.Tool)
	_, body = chatOK(t, p, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"get_current_weather"}}]}`)
	a = assemble(t, body)
	assertOneCall(t, a, "call_0", "get_current_weather", `{"location":"Boston"}`)
	assert.Equal(t, "tool_calls", a.Finish)
	assert.Equal(t, int64(35), a.Usage.TotalTokens)

	fake.SetMode(providertest.StreamError)
	assert.Contains(t, brokenStream(t, p, "x", "vertex_ai stream error: UNAVAILABLE"), `"code":"UNAVAILABLE"`)
}

func TestVertexErrors(t *testing.T) {
	fake, p := vertexBackend(t)
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	assertRefusal(t, fake, p, providertest.RateLimited, refusal{429, "rate_limit_error", "RESOURCE_EXHAUSTED", "vertex_ai: Resource exhausted. Please try again later."})
	assertRefusal(t, fake, p, providertest.BadRequest, refusal{status: 400, code: "INVALID_ARGUMENT"})
	assertRefusal(t, fake, p, providertest.Overloaded, refusal{status: 503})

	// A failing token exchange is an error (the proxy fails over), worded
	// without the key.
	fake3 := providertest.NewVertex(t, "p", "global", gmModel)
	fake3.FailTokens.Store(true)
	p3 := newProvider(t, external("gem", "vertex_ai", fake3.URL+"/v1/projects/p/locations/global", gmModel, saCred), map[string]string{saCred.Env: fake3.ServiceAccountJSON})
	req, _ := http.NewRequest(http.MethodPost, p3.BaseURL()+"/v1/chat/completions", strings.NewReader(chat))
	_, err := p3.RoundTrip(req)
	require.Error(t, err)
	assert.Equal(t, "vertex_ai: obtaining an access token from the service account failed (token endpoint status 400)", err.Error())
	assert.Empty(t, fake3.Requests())
}

func TestVertexFinishReasons(t *testing.T) {
	for in, want := range map[string]string{"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
		"BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter", "OTHER": "stop", "MALFORMED_FUNCTION_CALL": "stop"} {
		assert.Equal(t, want, gmFinish(in, false), in)
	}
	assert.Equal(t, "tool_calls", gmFinish("STOP", true))
}

// TestVertexSendErrorHidesAccessToken: a transport error that quotes the
// request (its bearer access token) reaches the proxy without the token.
func TestVertexSendErrorHidesAccessToken(t *testing.T) {
	fake := providertest.NewVertex(t, "p", "global", gmModel)
	failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/token" {
			return http.DefaultTransport.RoundTrip(r)
		}
		return nil, errors.New("connection reset sending " + r.Header.Get("Authorization"))
	})
	p, err := New(external("gem", "vertex_ai", fake.URL+"/v1/projects/p/locations/global", gmModel, saCred), env(map[string]string{saCred.Env: fake.ServiceAccountJSON}), failing)
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, p.BaseURL()+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	_, err = p.RoundTrip(req)
	require.Error(t, err)
	require.NotEmpty(t, fake.AccessToken())
	assert.NotContains(t, err.Error(), fake.AccessToken())
	assert.Equal(t, "connection reset sending Bearer [redacted]", err.Error())
}
