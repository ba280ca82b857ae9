// The router-proxy's POST /v1/responses against a client nobody here
// wrote: the official openai SDK (test/mcp-js/responses.mjs, pinned by
// test/mcp-js/package-lock.json, installed by make mcp-js), run with Node 22
// as a process against the built binary.
package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

// newModelStub is a model server on loopback: it records the bodies sent
// to path (bodies) and answers them with answer; any other path (a health
// probe) is answered 200.
func newModelStub(t *testing.T, path string, answer func(w http.ResponseWriter, body string)) *stub {
	onPath := func(r *http.Request) bool { return r.URL.Path == path }
	return newStub(t, onPath, func(w http.ResponseWriter, r *http.Request, body string) {
		if onPath(r) {
			answer(w, body)
		}
	})
}

// newChatModel is an OpenAI-compatible chat server (a vLLM): a tool call
// when it is offered tools and holds no tool result, else text; streamed
// when asked, with usage when asked.
func newChatModel(t *testing.T) *stub {
	return newModelStub(t, "/v1/chat/completions", func(w http.ResponseWriter, body string) {
		tool := strings.Contains(body, `"tools"`) && !strings.Contains(body, `"role":"tool"`)
		if strings.Contains(body, `"stream":true`) && strings.Contains(body, `"name":"apply_patch"`) {
			providertest.SSE(w,
				`{"id":"c4","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_p1","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":"}}]}}]}`,
				`{"id":"c4","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"*** Begin Patch\\n*** End Patch\"}"}}]},"finish_reason":"tool_calls"}]}`,
				`{"id":"c4","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`,
				"[DONE]")
			return
		}
		if strings.Contains(body, `"stream":true`) {
			events := []string{
				`{"id":"c1","model":"qwen3-32b","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{"content":"lo!"}}]}`,
				`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			}
			if strings.Contains(body, `"include_usage":true`) {
				events = append(events, `{"id":"c1","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}`)
			}
			providertest.SSE(w, append(events, "[DONE]")...)
			return
		}
		if tool {
			providertest.JSON(w, `{"id":"c2","object":"chat.completion","model":"qwen3-32b","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`)
			return
		}
		text := "Hello!"
		if strings.Contains(body, `"role":"tool"`) {
			text = "It is 18C and sunny in Paris."
		}
		providertest.JSON(w, `{"id":"c3","object":"chat.completion","model":"qwen3-32b","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`, text)
	})
}

// newResponsesModel is OpenAI's Responses API (a backend with provider
// openai, passed through): a Response or its event stream, a function call
// when offered tools and no call output yet.
func newResponsesModel(t *testing.T) *stub {
	return newModelStub(t, "/v1/responses", func(w http.ResponseWriter, body string) {
		const usage = `"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":24}`
		resp := func(status, output, usage string) string {
			return `{"id":"resp_up1","object":"response","created_at":1765000000,"status":"` + status + `","model":"gpt-5","output":[` + output + `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"error":null,"incomplete_details":null,` + usage + `}`
		}
		msg := func(status, text string) string {
			return `{"type":"message","id":"msg_up1","status":"` + status + `","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[],"logprobs":[]}]}`
		}
		if strings.Contains(body, `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			seq := 0
			ev := func(typ, fields string) {
				fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
				seq++
			}
			part := `{"type":"output_text","text":"","annotations":[],"logprobs":[]}`
			ev("response.created", `"response":`+resp("in_progress", "", `"usage":null`))
			ev("response.in_progress", `"response":`+resp("in_progress", "", `"usage":null`))
			ev("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_up1","status":"in_progress","role":"assistant","content":[]}`)
			ev("response.content_part.added", `"item_id":"msg_up1","output_index":0,"content_index":0,"part":`+part)
			ev("response.output_text.delta", `"item_id":"msg_up1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]`)
			ev("response.output_text.delta", `"item_id":"msg_up1","output_index":0,"content_index":0,"delta":"lo!","logprobs":[]`)
			ev("response.output_text.done", `"item_id":"msg_up1","output_index":0,"content_index":0,"text":"Hello!","logprobs":[]`)
			ev("response.content_part.done", `"item_id":"msg_up1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}`)
			ev("response.output_item.done", `"output_index":0,"item":`+msg("completed", "Hello!"))
			ev("response.completed", `"response":`+resp("completed", msg("completed", "Hello!"), `"usage":{"input_tokens":11,"output_tokens":2,"total_tokens":13}`))
			return
		}
		switch {
		case strings.Contains(body, `"tools"`) && !strings.Contains(body, `function_call_output`):
			providertest.JSON(w, "%s", resp("completed", `{"type":"function_call","id":"fc_up1","call_id":"call_w1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}`, usage))
		case strings.Contains(body, `function_call_output`):
			providertest.JSON(w, "%s", resp("completed", msg("completed", "It is 18C and sunny in Paris."), usage))
		default:
			providertest.JSON(w, "%s", resp("completed", msg("completed", "Hello!"), usage))
		}
	})
}

// sdkResult is what test/mcp-js/responses.mjs prints.
type sdkResult struct {
	Plain struct {
		ID, Status, Text string
		Usage            sdkUsage
	}
	Stream struct {
		Types  []string
		Deltas string
		Text   string
		Usage  sdkUsage
	}
	Tools struct {
		CallID    string `json:"call_id"`
		Name      string
		Arguments string
		Text      string
	}
	Custom struct {
		Types  []string
		CallID string `json:"call_id"`
		Name   string
		Input  string
	}
	SSN        struct{ Text string }
	NoToken    sdkFailure
	OverBudget struct {
		Served int `json:"served"`
		sdkFailure
	}
}

type sdkUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type sdkFailure struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// runResponsesSDK runs the script: model for every call but the one with
// an SSN in a tool output (ssnModel), route a header:value sent with them.
func runResponsesSDK(t *testing.T, node, dir string, p *proc, token, model, ssnModel, route string, env ...string) sdkResult {
	t.Helper()
	args := []string{filepath.Join("..", "..", "test", "mcp-js", "responses.mjs"), dir, "http://" + p.listen + "/v1", token, model, ssnModel}
	if route != "" {
		args = append(args, route)
	}
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), env...)
	out := runNode(t, cmd)
	var got sdkResult
	decodeJSON(t, out, &got)
	return got
}

// TestResponsesOpenAISDK: testdata/classification-detector rendered by the
// real compiler (classification mode detector, policy.auth with a JWT, and
// two rules added in front: "translated", chosen by a header, to the local
// backend, and "metered", with a one-call token budget), its local backend
// a chat server (vLLM) on loopback, its OpenAI backend OpenAI's Responses
// API on loopback. The openai SDK makes a plain call, a streamed one, a
// function-call round trip, a call for the cloud model with an SSN in a
// tool output, a call without a token and calls over budget: once
// translated to chat completions, once passed through to OpenAI.
func TestResponsesOpenAISDK(t *testing.T) {
	node, dir := mcpJS(t)
	cfg := renderConfig(t, "../../testdata/classification-detector/input.yaml")
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	auth, is := issuerAuth(t)
	cfg.Policy.Auth = auth
	added := func(name, header string) proxyapi.Rule {
		r := cfg.Rules[len(cfg.Rules)-1]
		r.Name, r.Backends = name, []string{"local-qwen"}
		r.Match = proxyapi.Match{Headers: []proxyapi.HeaderMatch{{Name: header, Value: "on"}}}
		return r
	}
	cfg.Rules = append([]proxyapi.Rule{added("metered", "x-budget-test"), added("translated", "x-route-local")}, cfg.Rules...)
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "one-call", Scope: "rule", RuleName: "metered", MaxTokens: 1, Window: proxyapi.Duration{Duration: time.Hour}}}
	local, cloud := newChatModel(t), newResponsesModel(t)
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		switch b.Name {
		case "local-qwen":
			b.URL = local.URL
		case "cloud-gpt":
			b.URL = cloud.URL
			b.Cost = &proxyapi.Cost{PromptUSD: "1", CompletionUSD: "10"}
		}
	}
	auditPath := fileAudit(t, cfg)
	p := startProxyEnv(t, cfg, credentialEnv(cfg))
	token := is.Token(t, "platform")

	// The calls both runs make the same way.
	common := func(t *testing.T, got sdkResult, ents []proxyapi.AuditEntry) {
		assert.Equal(t, "completed", got.Plain.Status)
		assert.Equal(t, "Hello!", got.Plain.Text)
		assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
			"response.output_item.done", "response.completed"}, got.Stream.Types)
		assert.Equal(t, "Hello!", got.Stream.Deltas)
		assert.Equal(t, "Hello!", got.Stream.Text)
		assert.Equal(t, sdkUsage{11, 2}, got.Stream.Usage)
		assert.Equal(t, "call_w1", got.Tools.CallID)
		assert.Equal(t, "get_weather", got.Tools.Name)
		assert.JSONEq(t, `{"city":"Paris"}`, got.Tools.Arguments)
		assert.Equal(t, "It is 18C and sunny in Paris.", got.Tools.Text)
		assert.Equal(t, "It is 18C and sunny in Paris.", got.SSN.Text)
		assert.Equal(t, sdkFailure{Status: 401, Type: "authentication_error", Code: "invalid_token"}, sdkFailure{got.NoToken.Status, got.NoToken.Type, got.NoToken.Code, ""}, "%+v", got.NoToken)
		assert.Equal(t, 429, got.OverBudget.Status, "%+v", got.OverBudget)
		assert.Equal(t, "rate_limit_error", got.OverBudget.Type)
		assert.Equal(t, "budget_exceeded", got.OverBudget.Code)

		for _, e := range ents {
			assert.Equal(t, "/v1/responses", e.Path)
		}
		stream, ssn, noToken, over := ents[1], ents[4], ents[5], ents[len(ents)-1]
		assert.Equal(t, proxyapi.OutcomeOKStream, stream.Outcome)
		assert.Equal(t, int64(13), stream.TotalTokens)
		assert.False(t, stream.TokensEstimated)
		assert.Equal(t, "sensitive-local-only", ssn.Rule, "an SSN in a tool output stays local")
		assert.Equal(t, "local-qwen", ssn.Backend)
		assert.Equal(t, "cloud-gpt", ssn.Model)
		assert.Contains(t, ssn.Detectors, "us-ssn")
		assert.Equal(t, 401, noToken.Status)
		assert.Equal(t, proxyapi.OutcomeBudgetExceeded, over.Outcome)
		assert.Equal(t, "metered", over.Rule)
	}
	// entries waits for the run's n audit lines (the file sink writes
	// them after the answers) and returns them in the order the requests
	// came: a line is written when its request ends, which on a busy
	// machine can be after the SDK's next request began, so the file's
	// order is not the requests' (each entry's time is its start, and the
	// SDK sends one request at a time).
	audited := 0
	entries := func(t *testing.T, n int) []proxyapi.AuditEntry {
		var all []proxyapi.AuditEntry
		require.Eventually(t, func() bool {
			all = auditSoFar(t, auditPath)
			slices.SortStableFunc(all, func(a, b proxyapi.AuditEntry) int { return a.Time.Compare(b.Time) })
			return len(all) >= audited+n
		}, 30*time.Second, 10*time.Millisecond)
		require.Len(t, all, audited+n)
		defer func() { audited = len(all) }()
		return all[audited:]
	}

	t.Run("translated to chat completions", func(t *testing.T) {
		got := runResponsesSDK(t, node, dir, p, token, "local-qwen", "cloud-gpt", "x-route-local:on", "RESPONSES_CUSTOM_TOOL=1")
		ents := entries(t, 9) // plain, stream, 2 tools, custom tool, ssn, no token, 2 metered
		assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.custom_tool_call_input.delta",
			"response.custom_tool_call_input.done", "response.output_item.done", "response.completed"}, got.Custom.Types)
		assert.Equal(t, "call_p1", got.Custom.CallID)
		assert.Equal(t, "apply_patch", got.Custom.Name)
		assert.Equal(t, "*** Begin Patch\n*** End Patch", got.Custom.Input)
		ents = append(ents[:4], ents[5:]...) // the custom tool call is this run's only
		common(t, got, ents)
		assert.Equal(t, sdkUsage{12, 3}, got.Plain.Usage)
		assert.Equal(t, 1, got.OverBudget.Served)
		for _, e := range ents[:4] {
			assert.Equal(t, "translated", e.Rule)
			assert.Equal(t, "local-qwen", e.Backend)
			assert.False(t, e.TokensEstimated)
		}
		var roundTrip string
		for _, b := range local.bodies() {
			if strings.Contains(b, "18C and sunny") {
				roundTrip = b
			}
		}
		assert.Contains(t, roundTrip, `"tool_calls":[{"id":"call_w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`)
		assert.Contains(t, roundTrip, `{"role":"tool","content":"18C and sunny","tool_call_id":"call_w1"}`)
	})

	t.Run("passed through to OpenAI", func(t *testing.T) {
		got := runResponsesSDK(t, node, dir, p, token, "cloud-gpt", "cloud-gpt", "")
		ents := entries(t, 7) // plain, stream, 2 tools, ssn, no token, 1 metered
		common(t, got, ents)
		assert.Equal(t, sdkUsage{20, 4}, got.Plain.Usage)
		assert.Equal(t, 0, got.OverBudget.Served, "the budget was spent by the first run")
		for i, e := range ents[:4] {
			cost := "0.00006" // 20*1/1e6 + 4*10/1e6
			if i == 1 {
				cost = "0.000031" // streamed: 11 and 2
			}
			assert.Equal(t, "everything-else", e.Rule)
			assert.Equal(t, "cloud-gpt", e.Backend)
			assert.False(t, e.TokensEstimated)
			assert.Equal(t, cost, strings.TrimRight(e.CostUSD, "0"))
		}
		bodies := cloud.bodies()
		require.Len(t, bodies, 4, "the SSN call never reached the cloud")
		for _, b := range bodies {
			assert.Contains(t, b, `"model":"gpt-5"`)
			assert.NotContains(t, b, "536-22-8410")
		}
		assert.Contains(t, bodies[3], `"type":"function_call_output","call_id":"call_w1","output":"18C and sunny"`)
	})
}
