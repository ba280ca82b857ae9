package engine

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSanitizeCaller(t *testing.T) {
	assert.Equal(t, "svc-a", SanitizeCaller("svc-a"))
	assert.Equal(t, "a?b??", SanitizeCaller("a\x00b\xc3\xa9"))
	assert.Len(t, SanitizeCaller(strings.Repeat("z", 500)), 128)
}

func TestClientAddress(t *testing.T) {
	tr, err := ParseTrusted([]string{"10.0.0.0/8", "192.168.1.1", "::ffff:172.16.0.0/108"})
	require.NoError(t, err)
	p := netip.MustParseAddr
	assert.Equal(t, "8.8.8.8", ClientAddress(p("8.8.8.8"), []string{"1.1.1.1"}, tr), "untrusted peer: XFF ignored")
	assert.Equal(t, "1.1.1.1", ClientAddress(p("10.1.1.1"), []string{"6.6.6.6, 1.1.1.1", "10.2.2.2"}, tr))
	assert.Equal(t, "1.1.1.1", ClientAddress(p("::ffff:10.1.1.1"), []string{"1.1.1.1, 192.168.1.1"}, tr), "IPv4-mapped peers")
	assert.Equal(t, "172.16.0.5", ClientAddress(p("10.1.1.1"), []string{"garbage, 172.16.0.5"}, tr), "an unparsable hop stops the walk at the last trusted one")
	assert.Equal(t, "10.1.1.1", ClientAddress(p("10.1.1.1"), nil, tr))
	assert.Equal(t, "10.1.1.1", ClientAddress(p("10.1.1.1"), []string{"1.1.1.1"}, nil), "no trusted proxies: always the peer")
}

func TestStreamScanner(t *testing.T) {
	var s StreamScanner
	body := "data: {\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n: comment\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":6,\"total_tokens\":10}}\r\n\r\ndata: [DONE]\n\n"
	// Feed in awkward pieces.
	for i := 0; i < len(body); i += 7 {
		_, _ = s.Write([]byte(body[i:min(i+7, len(body))]))
	}
	u, ok := s.Usage()
	require.True(t, ok)
	assert.Equal(t, int64(10), u.Tokens())
	assert.Equal(t, int64(len(body)), s.Bytes)

	var none StreamScanner
	_, _ = none.Write([]byte("data: {\"x\":1}\n\n"))
	_, ok = none.Usage()
	assert.False(t, ok)
	assert.Equal(t, int64(1), EstimateUsage(0, 0).Tokens(), "never zero")
	assert.Equal(t, int64(3+2), EstimateUsage(12, 5).Tokens())
}

func TestMoney(t *testing.T) {
	m, err := ParseUSD("0.03")
	require.NoError(t, err)
	assert.Equal(t, "0.03", m.String())
	p, err := ParsePrice(&proxyapi.Cost{PromptUSD: "3", CompletionUSD: "0.0000001"})
	require.NoError(t, err)
	assert.Equal(t, Money(3e6), p.Prompt)
	assert.Equal(t, Money(1), p.Completion, "rounded up, never zero")
	_, err = ParseUSD("-1")
	assert.Error(t, err)
}

// routeByHeader routes req classified as intake classifies a request whose
// body the classifier does not read: by its header.
func routeByHeader(e *Engine, req *Request) (*Route, error) {
	return e.Route(req, e.Classify(req.Header, nil))
}

func TestRouteFallThroughAndFailClosed(t *testing.T) {
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{
			{Name: "a", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://a", Weight: 1},
			{Name: "b", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://b", Weight: 1},
		},
		Rules: []proxyapi.Rule{
			{Name: "closed", Backends: []string{"a"}, Strategy: "primary-fallback", FailClosed: true, Match: proxyapi.Match{DataClassification: []string{"pii"}}},
			{Name: "open", Backends: []string{"a"}, Strategy: "primary-fallback"},
		},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "b"},
	}
	e, err := New(cfg, Options{})
	require.NoError(t, err)
	for range ProbesFailedToUnhealthy {
		e.ReportProbe(e.Backend("a"), false, "down")
	}
	rt, err := routeByHeader(e, &Request{Model: "m", Header: map[string][]string{"X-Llmkube-Classification": {"PII"}}})
	assert.ErrorIs(t, err, ErrFailClosed)
	assert.Equal(t, "closed", rt.RuleName)
	rt, err = routeByHeader(e, &Request{Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, DefaultRuleName, rt.RuleName)
	assert.Equal(t, []string{"open"}, rt.Skipped)
	assert.Equal(t, "b", rt.Next().Backend.Name())
	assert.Nil(t, rt.Next())
}

// benchConfig is 20 rules; the request matches only the last one.
func benchConfig() *proxyapi.Config {
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Default: proxyapi.DefaultRoute{Strategy: "BackendNameMatch", Backend: "b0"}}
	for i := range 4 {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: fmt.Sprintf("b%d", i), ModelID: fmt.Sprintf("model-%d", i), Kind: proxyapi.KindLocal, Tier: "local", URL: "http://x", Weight: int32(i + 1), Capabilities: []string{"tools"}})
	}
	for i := range 19 {
		cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: fmt.Sprintf("r%d", i), Backends: []string{"b1", "b2"}, Strategy: "primary-fallback",
			Match: proxyapi.Match{Models: []string{fmt.Sprintf("family-%d-*", i)}, Headers: []proxyapi.HeaderMatch{{Name: "x-tenant", Value: fmt.Sprintf("t%d", i)}}, RequiredCapabilities: []string{"tools"}}})
	}
	cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: "last", Backends: []string{"b0", "b1", "b2", "b3"}, Strategy: "weighted",
		Match: proxyapi.Match{Models: []string{"target-*"}, Headers: []proxyapi.HeaderMatch{{Name: "x-tenant", Value: "gold"}}, TaskComplexity: "complex"}})
	return cfg
}

// benchEngine is the engine of benchConfig and the classification of req.
func benchEngine(b *testing.B, req *Request) (*Engine, Classification) {
	b.Helper()
	e, err := New(benchConfig(), Options{})
	require.NoError(b, err)
	return e, e.Classify(req.Header, nil)
}

func BenchmarkRoute20Rules(b *testing.B) {
	req := &Request{Model: "target-large", Header: map[string][]string{"X-Tenant": {"gold"}, "X-Llmkube-Task-Complexity": {"complex"}}}
	e, cls := benchEngine(b, req)
	b.ReportAllocs()
	for b.Loop() {
		rt, err := e.Route(req, cls)
		if err != nil || rt.Next() == nil {
			b.Fatal("no route")
		}
	}
}

func BenchmarkRouteDefault(b *testing.B) {
	req := &Request{Model: "model-3", Header: map[string][]string{}}
	e, cls := benchEngine(b, req)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Route(req, cls); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRouteParallel(b *testing.B) {
	req := &Request{Model: "target-large", Header: map[string][]string{"X-Tenant": {"gold"}, "X-Llmkube-Task-Complexity": {"complex"}}}
	e, cls := benchEngine(b, req)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rt, _ := e.Route(req, cls)
			rt.Next()
		}
	})
}

func TestImplausibleUsageIsMissing(t *testing.T) {
	for _, body := range []string{
		`{"usage":{"prompt_tokens":-1000000000,"completion_tokens":5,"total_tokens":5}}`,
		`{"usage":{"prompt_tokens":-1e9,"completion_tokens":5}}`,
		`{"usage":{"prompt_tokens":99999999999999999999,"completion_tokens":5}}`,
		`{"usage":{"prompt_tokens":2000000000000,"completion_tokens":5}}`,
	} {
		_, ok := ParseUsage([]byte(body))
		assert.False(t, ok, body)
	}
	u, ok := ParseUsage([]byte(`{"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`))
	assert.True(t, ok)
	assert.EqualValues(t, 15, u.Tokens())
}

func TestParseUsageTail(t *testing.T) {
	u, ok := ParseUsageTail([]byte(`..., 0.25]}],"model":"e5","usage":{"prompt_tokens":15,"total_tokens":15}}`))
	assert.True(t, ok)
	assert.EqualValues(t, 15, u.Tokens())
	_, ok = ParseUsageTail([]byte(`"text":"say \"usage\": {\"prompt_tokens\":9}"}`))
	assert.False(t, ok, "an escaped usage inside a string is not usage")
	_, ok = ParseUsageTail([]byte(`"usage":{"prompt_tokens":-5}}`))
	assert.False(t, ok)
}

// A backend turns unhealthy at the ProbesFailedToUnhealthy-th failed probe in
// a row, not before, and healthy at the first passing one; each change is
// reported once, so the prober logs transitions, not every probe.
func TestProbeFailuresInARowJudgeHealth(t *testing.T) {
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{{Name: "a", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://a", Weight: 1}},
		Default:  proxyapi.DefaultRoute{Strategy: "Static", Backend: "a"},
	}
	e, err := New(cfg, Options{})
	require.NoError(t, err)
	b := e.Backend("a")
	for i := 1; i < ProbesFailedToUnhealthy; i++ {
		assert.Equal(t, ProbeHealthUnchanged, e.ReportProbe(b, false, "timeout"))
		assert.True(t, e.Eligible(b), "failure %d of %d keeps it eligible", i, ProbesFailedToUnhealthy)
		assert.Equal(t, fmt.Sprintf("last probe failed (%d of %d in a row before the backend is judged unhealthy): timeout", i, ProbesFailedToUnhealthy), e.Status(b).Message)
	}
	assert.Equal(t, ProbeTurnedUnhealthy, e.ReportProbe(b, false, "timeout"))
	assert.False(t, e.Eligible(b))
	assert.False(t, e.Status(b).Healthy)
	assert.Equal(t, "timeout", e.Status(b).Message)
	assert.Equal(t, ProbeHealthUnchanged, e.ReportProbe(b, false, "refused"), "still unhealthy")
	assert.Equal(t, ProbeTurnedHealthy, e.ReportProbe(b, true, ""))
	assert.True(t, e.Eligible(b))
	assert.Empty(t, e.Status(b).Message)
	assert.Equal(t, ProbeHealthUnchanged, e.ReportProbe(b, false, "timeout"), "the count starts again after a pass")
	assert.True(t, e.Eligible(b))
}
