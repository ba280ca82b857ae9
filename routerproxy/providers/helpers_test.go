package providers

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

func external(name, provider, url, model string, creds ...proxyapi.Credential) *proxyapi.Backend {
	return &proxyapi.Backend{Name: name, ModelID: name, Kind: proxyapi.KindExternal, Tier: "cloud", Provider: provider, URL: url, Model: model, Credentials: creds, Weight: 1}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func newProvider(t *testing.T, b *proxyapi.Backend, e map[string]string) Provider {
	t.Helper()
	p, err := New(b, env(e), http.DefaultTransport)
	require.NoError(t, err)
	require.NotNil(t, p)
	p.(interface{ setClock(func() time.Time) }).setClock(func() time.Time { return time.Unix(1700000000, 0) })
	return p
}

func (c *common) setClock(f func() time.Time) { c.now = f }

// call sends an OpenAI request through p as the proxy would.
func call(t *testing.T, p Provider, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.BaseURL()+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := p.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// chatOK posts a chat completion to p, which must answer 200.
func chatOK(t *testing.T, p Provider, body string) (*http.Response, string) {
	t.Helper()
	resp, b := call(t, p, "/v1/chat/completions", body)
	require.Equal(t, 200, resp.StatusCode, b)
	return resp, b
}

// sseData returns the data payloads of an OpenAI stream, comments dropped.
func sseData(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		ev = strings.TrimSpace(ev)
		if ev == "" || strings.HasPrefix(ev, ":") {
			continue
		}
		d, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, "event %q", ev)
		out = append(out, d)
	}
	return out
}

// assembled is what a client reconstructs from a stream.
type assembled struct {
	ID, Model, Role, Content, Finish string
	Calls                            []struct{ ID, Name, Args string }
	Usage                            *usage
	Done                             bool
}

func assemble(t *testing.T, body string) assembled {
	t.Helper()
	var a assembled
	for _, d := range sseData(t, body) {
		if d == "[DONE]" {
			a.Done = true
			continue
		}
		require.False(t, a.Done, "data after [DONE]")
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Role      string  `json:"role"`
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    *int   `json:"index"`
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct {
							Name      string  `json:"name"`
							Arguments *string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(d), &c), d)
		require.Equal(t, "chat.completion.chunk", c.Object, d)
		a.ID, a.Model = c.ID, c.Model
		if c.Usage != nil {
			require.Empty(t, c.Choices, "the usage chunk has no choices")
			a.Usage = c.Usage
			continue
		}
		require.Len(t, c.Choices, 1, d)
		ch := c.Choices[0]
		if ch.Delta.Role != "" {
			a.Role = ch.Delta.Role
		}
		if ch.Delta.Content != nil {
			a.Content += *ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			require.NotNil(t, tc.Index, d)
			for len(a.Calls) <= *tc.Index {
				a.Calls = append(a.Calls, struct{ ID, Name, Args string }{})
			}
			k := &a.Calls[*tc.Index]
			if tc.ID != "" {
				require.Equal(t, "function", tc.Type)
				k.ID, k.Name = tc.ID, tc.Function.Name
			}
			if tc.Function.Arguments != nil {
				k.Args += *tc.Function.Arguments
			}
		}
		if ch.FinishReason != nil {
			a.Finish = *ch.FinishReason
		}
	}
	return a
}

// brokenStream sends a streamed chat that the fake breaks off mid-stream
// and returns what the client read before the break: the read fails with
// wantErr (a broken stream is a read error, so the proxy quarantines).
func brokenStream(t *testing.T, p Provider, content, wantErr string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.BaseURL()+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"`+content+`"}]}`))
	resp, err := p.RoundTrip(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.ErrorContains(t, err, wantErr, "a broken stream is a read error, so the proxy quarantines")
	return string(b)
}

// refusal is how a provider's refusal reaches the client: its status and,
// where code is set, its OpenAI error (typ and msg asserted when set).
type refusal struct {
	status         int
	typ, code, msg string
}

// assertRefusal sets the fake to mode and asserts what a chat gets back.
func assertRefusal(t *testing.T, fake interface{ SetMode(providertest.Mode) }, p Provider, mode providertest.Mode, want refusal) {
	t.Helper()
	fake.SetMode(mode)
	resp, body := call(t, p, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, want.status, resp.StatusCode, body)
	if want.code == "" {
		return
	}
	typ, code, msg := providertest.OpenAIError(t, body)
	assert.Equal(t, want.code, code)
	if want.typ != "" {
		assert.Equal(t, want.typ, typ)
	}
	if want.msg != "" {
		assert.Equal(t, want.msg, msg)
	}
}

// assertAnswers asserts the buffered answers p gives to text, with the fake
// in its text mode (Auto), and to tool, in its Tool mode: the completions
// wantText and wantTool. It returns the text answer.
func assertAnswers(t *testing.T, fake interface{ SetMode(providertest.Mode) }, p Provider, text, wantText, tool, wantTool string) *http.Response {
	t.Helper()
	resp, body := chatOK(t, p, text)
	assert.JSONEq(t, wantText, body)
	fake.SetMode(providertest.Tool)
	_, body = chatOK(t, p, tool)
	assert.JSONEq(t, wantTool, body)
	return resp
}

// assertOneCall asserts that a streamed answer holds one tool call, with
// its id, name and arguments (JSON).
func assertOneCall(t *testing.T, a assembled, id, name, args string) {
	t.Helper()
	require.Len(t, a.Calls, 1)
	assert.Equal(t, id, a.Calls[0].ID)
	assert.Equal(t, name, a.Calls[0].Name)
	assert.JSONEq(t, args, a.Calls[0].Args)
}
