package routerproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatchingConditions(t *testing.T) {
	a, b, c, d, e := newStub(t, "a", nil), newStub(t, "b", nil), newStub(t, "c", nil), newStub(t, "d", nil), newStub(t, "e", nil)
	cfg := config(backend("a", a.URL), backend("b", b.URL), backend("c", c.URL), backend("d", d.URL), backend("e", e.URL))
	rModels := rule("models", "primary-fallback", "b")
	rModels.Match.Models = []string{"qwen3-*", "org/*-coder"}
	rHeader := rule("header", "primary-fallback", "c")
	rHeader.Match.Headers = []proxyapi.HeaderMatch{{Name: "x-agent-mode", Value: "on"}}
	rClass := rule("class", "primary-fallback", "d")
	rClass.Match.DataClassification = []string{"internal"}
	rTask := rule("task", "primary-fallback", "e")
	rTask.Match.TaskComplexity = "complex"
	// Shadowed by "models": first match wins.
	rLater := rule("later", "primary-fallback", "c")
	rLater.Match.Models = []string{"qwen3-8b"}
	cfg.Rules = []proxyapi.Rule{rModels, rHeader, rClass, rTask, rLater}
	h := start(t, cfg)

	cases := []struct {
		name, model string
		hdr         []string
		want, rule  string
	}{
		{"glob", "qwen3-8b", nil, "b", "models"},
		{"glob crosses slash", "org/team/x-coder", nil, "b", "models"},
		{"glob no match", "llama", nil, "a", engine.DefaultRuleName},
		{"header name case-insensitive", "llama", []string{"X-AGENT-MODE", "on"}, "c", "header"},
		{"header value exact", "llama", []string{"x-agent-mode", "ON"}, "a", engine.DefaultRuleName},
		{"classification header", "llama", []string{"X-LLMKube-Classification", "Internal"}, "d", "class"},
		{"task complexity", "llama", []string{"x-llmkube-task-complexity", "complex"}, "e", "task"},
		{"first match wins", "qwen3-8b", []string{"x-agent-mode", "on"}, "b", "models"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := h.okChat(t, chat(tc.model), tc.hdr...)
			assert.Equal(t, tc.want, servedBy(t, body))
			assert.Equal(t, tc.rule, h.last(t).Rule)
		})
	}
}

func TestRequiredCapabilitiesNeverTried(t *testing.T) {
	vision := newStub(t, "vision", statusHandler(500))
	plain := newStub(t, "plain", nil)
	bv := backend("vision", vision.URL)
	bv.Capabilities = []string{"vision"}
	cfg := config(bv, backend("plain", plain.URL))
	// A hand-written config that lists an incapable backend: the engine
	// filters it anyway.
	r := rule("needs-vision", "primary-fallback", "vision", "plain")
	r.Match.RequiredCapabilities = []string{"vision"}
	cfg.Rules = []proxyapi.Rule{r}
	cfg.Default.Backend = "plain"
	h := start(t, cfg)
	code, body, _ := h.post(t, chat("m"))
	// vision fails (500); plain lacks the capability so is not a fallback.
	require.Equal(t, http.StatusBadGateway, code, body)
	assert.Equal(t, int64(1), vision.hits.Load())
	assert.Equal(t, int64(0), plain.hits.Load())

	// A rule none of whose backends is capable never matches.
	cfg2 := config(bv, backend("plain", plain.URL))
	r2 := rule("needs-tools", "primary-fallback", "plain")
	r2.Match.RequiredCapabilities = []string{"tools"}
	cfg2.Rules = []proxyapi.Rule{r2}
	cfg2.Default.Backend = "plain"
	h2 := start(t, cfg2)
	code, _, _ = h2.post(t, chat("m"))
	require.Equal(t, 200, code)
	assert.Equal(t, engine.DefaultRuleName, h2.last(t).Rule)
}

func TestDefaultRouteStrategies(t *testing.T) {
	a, b := newStub(t, "a", nil), newStub(t, "b", nil)
	ba, bb := backend("a", a.URL), backend("b", b.URL)
	bb.ModelID = "pretty-b" // displayName
	cfg := config(ba, bb)
	cfg.Default = proxyapi.DefaultRoute{Strategy: "BackendNameMatch", Backend: "a"}
	h := start(t, cfg)
	_, body, _ := h.post(t, chat("pretty-b"))
	assert.Equal(t, "b", servedBy(t, body), "BackendNameMatch resolves displayName")
	_, body, _ = h.post(t, chat("b"))
	assert.Equal(t, "a", servedBy(t, body), "the k8s name is not the published id when displayName is set")
	_, body, _ = h.post(t, chat("unknown"))
	assert.Equal(t, "a", servedBy(t, body), "falls back to defaultRoute")

	// Static ignores the model.
	cfg2 := config(backend("a", a.URL), backend("b", b.URL))
	h2 := start(t, cfg2)
	_, body, _ = h2.post(t, chat("b"))
	assert.Equal(t, "a", servedBy(t, body))

	// No rule, no default backend: 503.
	cfg3 := config(backend("a", a.URL))
	cfg3.Default = proxyapi.DefaultRoute{Strategy: "Static"}
	h3 := start(t, cfg3)
	code, body, _ := h3.post(t, chat("x"))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	_, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "no_route", c)
}

// A non-failClosed rule none of whose backends is eligible falls through to
// the following rules and then the default route.
func TestNonFailClosedFallsThrough(t *testing.T) {
	down, next, def := newStub(t, "down", nil), newStub(t, "next", nil), newStub(t, "def", nil)
	cfg := config(backend("def", def.URL), backend("down", down.URL), backend("next", next.URL))
	r1 := rule("first", "primary-fallback", "down")
	r2 := rule("second", "primary-fallback", "next")
	r2.Match.Headers = []proxyapi.HeaderMatch{{Name: "x-second", Value: "1"}}
	cfg.Rules = []proxyapi.Rule{r1, r2}
	h := start(t, cfg)
	probeDown(h.srv.Engine(), "down")

	_, body, _ := h.post(t, chat("m"), "x-second", "1")
	assert.Equal(t, "next", servedBy(t, body))
	_, body, _ = h.post(t, chat("m"))
	assert.Equal(t, "def", servedBy(t, body))
	assert.Equal(t, int64(0), down.hits.Load())
}

func TestFailClosed(t *testing.T) {
	local, def := newStub(t, "local", statusHandler(500)), newStub(t, "def", nil)
	cfg := config(backend("def", def.URL), backend("local", local.URL))
	r := rule("phi", "primary-fallback", "local")
	r.Match.DataClassification = []string{"phi"}
	r.FailClosed = true
	cfg.Rules = []proxyapi.Rule{r}
	h := start(t, cfg)

	// Runtime failure of every backend: 503, nothing else tried.
	code, body, _ := h.post(t, chat("m"), "x-llmkube-classification", "phi")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	_, c, _ := providertest.OpenAIError(t, body)
	assert.Equal(t, "fail_closed", c)
	assert.Equal(t, int64(1), local.hits.Load())
	// Now quarantined: no backend eligible, 503 without trying anything.
	code, _, _ = h.post(t, chat("m"), "x-llmkube-classification", "phi")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, int64(1), local.hits.Load())
	assert.Equal(t, int64(0), def.hits.Load(), "fail-closed never reaches the default route")
	assert.Equal(t, proxyapi.OutcomeFailClosed, h.last(t).Outcome)
}

func TestModelsEndpoint(t *testing.T) {
	a := newStub(t, "a", nil)
	ba := backend("a", a.URL)
	ba.ModelID = "display-a"
	ba.ModelInfo = proxyapi.ModelInfo{ContextLength: 8192, InputModalities: []string{"text", "image"}, OutputModalities: []string{"text"}}
	bb := backend("b", a.URL)
	bb.Capabilities = []string{"vision"}
	bb.ModelInfo = proxyapi.ModelInfo{}
	bc := backend("c", a.URL)
	bc.Kind, bc.Tier, bc.Provider, bc.Model = proxyapi.KindExternal, "cloud", "openai", "gpt-5"
	h := start(t, config(ba, bb, bc))
	resp, err := h.front.Client().Get(h.front.URL + "/v1/models")
	require.NoError(t, err)
	defer resp.Body.Close()
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID            string `json:"id"`
			Object        string `json:"object"`
			OwnedBy       string `json:"owned_by"`
			ContextLength int64  `json:"context_length"`
			Architecture  struct {
				In  []string `json:"input_modalities"`
				Out []string `json:"output_modalities"`
			} `json:"architecture"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Len(t, got.Data, 3)
	assert.Equal(t, "list", got.Object)
	assert.Equal(t, "display-a", got.Data[0].ID)
	assert.Equal(t, int64(8192), got.Data[0].ContextLength)
	assert.Equal(t, []string{"text", "image"}, got.Data[0].Architecture.In)
	assert.Equal(t, []string{"text", "image"}, got.Data[1].Architecture.In, "vision capability defaults to text+image")
	assert.Equal(t, []string{"text"}, got.Data[1].Architecture.Out)
	assert.Equal(t, "c", got.Data[2].ID, "displayName || name, never the provider model")
	assert.Equal(t, "openai", got.Data[2].OwnedBy)
}

func TestHealthAndAdmin(t *testing.T) {
	a := newStub(t, "a", nil)
	cfg := config(backend("a", a.URL))
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 100, Window: dur(3600e9)}}
	h := start(t, cfg)
	resp, err := http.Get(h.front.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	code, _, _ := h.post(t, chat("m"))
	require.Equal(t, 200, code)
	h.settle(t)

	admin := httptest.NewServer(h.srv.AdminHandler())
	defer admin.Close()
	for path, want := range map[string]int{"/ready": 200, "/metrics": 200, wellknown.StatusPath: 200} {
		resp, err := http.Get(admin.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	resp, err = http.Get(admin.URL + wellknown.StatusPath)
	require.NoError(t, err)
	var st proxyapi.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	resp.Body.Close()
	assert.Equal(t, "r", st.Router.Name)
	require.Len(t, st.Backends, 1)
	assert.True(t, st.Backends[0].Healthy)
	require.Len(t, st.Budgets, 1)
	assert.Equal(t, int64(15), st.Budgets[0].TokensUsed)
	assert.Equal(t, "0.150000", st.Budgets[0].Utilization)

	resp, err = http.Get(admin.URL + "/metrics")
	require.NoError(t, err)
	var sb [1 << 16]byte
	n, _ := ioReadFull(resp, sb[:])
	resp.Body.Close()
	m := string(sb[:n])
	assert.Contains(t, m, `llmkube_router_requests_total{backend="a",code="200",outcome="ok",router="r",rule="(default)"} 1`)
	assert.Contains(t, m, `llmkube_router_budget_utilization{budget="all",router="r"} 0.15`)

	h.srv.SetReady(false)
	resp, err = http.Get(admin.URL + "/ready")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func ioReadFull(resp *http.Response, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := resp.Body.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, fmt.Errorf("buffer full")
}
