package proxyapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() *Config {
	return &Config{
		APIVersion: APIVersion,
		Router:     RouterInfo{Name: "chat", Namespace: "ns"},
		Timeouts:   Timeouts{ResponseHeader: Duration{2 * time.Minute}, StreamIdle: Duration{5 * time.Minute}, Quarantine: Duration{15 * time.Second}},
		Backends: []Backend{
			{Name: "a", ModelID: "a", Kind: KindLocal, Tier: "local", URL: "http://a.ns.svc.cluster.local:8080", Weight: 1},
			{Name: "b", ModelID: "b", Kind: KindExternal, Tier: "cloud", Provider: "bedrock", Weight: 1},
		},
		Rules:   []Rule{{Name: "r", Backends: []string{"a"}, Strategy: "primary-fallback", Timeout: Duration{5 * time.Second}}},
		Default: DefaultRoute{Strategy: "Static", Backend: "a"},
		Policy:  Policy{Budgets: []Budget{{Name: "x", Scope: "rule", RuleName: "r", MaxTokens: 10, Window: Duration{time.Hour}}}},
	}
}

func TestRoundTrip(t *testing.T) {
	b, err := Marshal(sample())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"responseHeader": "2m0s"`, "durations are strings, not nanoseconds")
	assert.NotContains(t, string(b), `"latencySLO"`, "unset durations are omitted")
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	c, err := Load(p)
	require.NoError(t, err)
	want := sample()
	want.SetDefaults()
	assert.Equal(t, want, c)
}

// TestSetDefaults: a hand-written config may omit the headers and windows;
// Load applies the contract's defaults once and leaves set values alone.
func TestSetDefaults(t *testing.T) {
	c := sample()
	c.Policy.Budgets = append(c.Policy.Budgets, Budget{Name: "t", Scope: "team", MaxTokens: 1})
	c.Policy.Classification.HeaderKey = ""
	c.SetDefaults()
	assert.Equal(t, wellknown.ClassificationHeader, c.Policy.Classification.HeaderKey)
	assert.Equal(t, "", c.Policy.Budgets[0].HeaderKey, "a rule budget has no team header")
	assert.Equal(t, time.Hour, c.Policy.Budgets[0].Window.Duration, "set window kept")
	assert.Equal(t, wellknown.TeamHeader, c.Policy.Budgets[1].HeaderKey)
	assert.Equal(t, wellknown.BudgetWindow, c.Policy.Budgets[1].Window.Duration)

	// A backend with no probe interval or timeout gets the compiler's.
	c.Backends[0].HealthCheck = HealthCheck{Path: "/health", Timeout: Duration{Duration: 5 * time.Second}}
	c.SetDefaults()
	assert.Equal(t, wellknown.HealthInterval, c.Backends[0].HealthCheck.Interval.Duration)
	assert.Equal(t, 5*time.Second, c.Backends[0].HealthCheck.Timeout.Duration, "set timeout kept")
	c.Backends[0].HealthCheck.Timeout.Duration = 0
	c.SetDefaults()
	assert.Equal(t, wellknown.HealthTimeout, c.Backends[0].HealthCheck.Timeout.Duration)
}

// TestErrorJSON: the OpenAI error body is JSON even for control bytes and
// never HTML-escaped.
func TestErrorJSON(t *testing.T) {
	b := AppendErrorJSON([]byte("data: "), "invalid_request_error", "", "bad \x00 <model>")
	assert.Equal(t, "data: {\"error\":{\"message\":\"bad \\u0000 <model>\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}\n", string(b))
	var v map[string]any
	require.NoError(t, json.Unmarshal(b[len("data: "):], &v))
}

func TestParseIsStrict(t *testing.T) {
	b, _ := Marshal(sample())
	bad := strings.Replace(string(b), `"router": {`, `"routr": {}, "router": {`, 1)
	_, err := Parse(strings.NewReader(bad))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "routr")

	_, err = Parse(strings.NewReader(string(b) + "{}"))
	require.Error(t, err)
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := sample()
	c.APIVersion = "router-proxy.llmkube.dev/v0"
	c.Backends = append(c.Backends, Backend{Name: "a", Kind: "weird", Tier: "moon"})
	c.Rules[0].Backends = []string{"ghost"}
	c.Rules[0].Strategy = "random"
	c.Default.Backend = "nobody"
	c.Policy.Budgets[0].RuleName = "none"
	c.Policy.Audit.CallerHeader = "authorization"
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{"apiVersion", "duplicated", "kind", "tier", "url is required", "unknown backend \"ghost\"", "strategy", "defaultRoute", "unknown rule", "callerHeader"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestDurationRejectsNumbers(t *testing.T) {
	var d Duration
	require.Error(t, d.UnmarshalJSON([]byte("120000000000")))
	require.Error(t, d.UnmarshalJSON([]byte(`"soon"`)))
	require.NoError(t, d.UnmarshalJSON([]byte(`"1m30s"`)))
	assert.Equal(t, 90*time.Second, d.Duration)
}
