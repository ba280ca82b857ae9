package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// allowing is a MayUse for an allowlist entry's models.
func allowing(models ...string) func(...string) bool {
	return func(names ...string) bool { return wellknown.AllowlistAllows(models, names...) }
}

func allowlistConfig() *proxyapi.Config {
	return &proxyapi.Config{APIVersion: proxyapi.APIVersion, Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{
			{Name: "local-medgemma", ModelNames: []string{"local-medgemma", "medgemma", "medgemma-27b"}, Kind: proxyapi.KindLocal, Tier: "local", URL: "http://m", Weight: 1},
			{Name: "local-qwen", ModelID: "qwen3", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://q", Weight: 1},
			{Name: "cloud-gpt", ModelID: "gpt-4.1", Kind: proxyapi.KindExternal, Provider: "openai", Model: "gpt-4.1", Tier: "cloud", URL: "http://g", Weight: 1},
			{Name: "cloud-mini", Kind: proxyapi.KindExternal, Provider: "openai", Model: "gpt-4.1-mini", Tier: "cloud", URL: "http://g", Weight: 1},
		},
		Rules: []proxyapi.Rule{
			{Name: "sensitive", Backends: []string{"local-medgemma"}, Strategy: "primary-fallback", FailClosed: true, Match: proxyapi.Match{DataClassification: []string{"phi"}}},
			{Name: "weighted", Backends: []string{"local-medgemma", "cloud-gpt", "cloud-mini"}, Strategy: "weighted", Match: proxyapi.Match{Headers: []proxyapi.HeaderMatch{{Name: "x-pick", Value: "weighted"}}}},
			{Name: "shadow", Backends: []string{"cloud-gpt", "local-medgemma", "cloud-mini"}, Strategy: "shadow", Match: proxyapi.Match{Headers: []proxyapi.HeaderMatch{{Name: "x-pick", Value: "shadow"}}}},
			{Name: "open", Backends: []string{"local-qwen"}, Strategy: "primary-fallback", Match: proxyapi.Match{Models: []string{"qwen*"}}},
		},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "cloud-gpt"},
		Policy:  proxyapi.Policy{Classification: proxyapi.Classification{Mode: proxyapi.ClassificationHeaderOnly, HeaderKey: wellknown.ClassificationHeader, Sensitive: []string{"phi"}}},
	}
}

// tried is every backend a route yields, in order.
func tried(rt *Route) []string {
	var out []string
	for a := rt.Next(); a != nil; a = rt.Next() {
		out = append(out, a.Backend.Name())
	}
	slices.Sort(out)
	return out
}

// TestAllowlistFiltersCandidates: a caller's allowlist filters the
// backends of the rule its request matched before any strategy, failover or
// shadow sees them; a rule that leaves none refuses the request
// (ErrNotAllowed), never falling through to a later rule or the default
// route, whatever label chose it.
func TestAllowlistFiltersCandidates(t *testing.T) {
	e, err := New(allowlistConfig(), Options{})
	require.NoError(t, err)
	billing := allowing("gpt-4.1")
	hdr := func(kv ...string) map[string][]string {
		h := map[string][]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = append(h[kv[i]], kv[i+1])
		}
		return h
	}

	// A label billing adds takes it to the sensitive rule, whose one backend
	// it may not use: refused, not served by the default route.
	rt, err := routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr("X-Llmkube-Classification", "phi"), MayUse: billing})
	require.ErrorIs(t, err, ErrNotAllowed)
	assert.Equal(t, "sensitive", rt.RuleName)
	assert.Nil(t, rt.Next(), "nothing to try")

	// Clinical may use the local model by its InferenceService's name.
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr("X-Llmkube-Classification", "phi"), MayUse: allowing("gpt-4.1", "medgemma")})
	require.NoError(t, err)
	assert.Equal(t, []string{"local-medgemma"}, tried(rt))

	// Without an allowlist nothing changes.
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr("X-Llmkube-Classification", "phi")})
	require.NoError(t, err)
	assert.Equal(t, []string{"local-medgemma"}, tried(rt))

	// Weighted: only the backends billing may use are ever picked (the
	// external model gpt-4.1-mini by a glob).
	for range 20 {
		rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr("X-Pick", "weighted"), MayUse: allowing("gpt-4.1*")})
		require.NoError(t, err)
		assert.Equal(t, []string{"cloud-gpt", "cloud-mini"}, tried(rt))
	}

	// Shadow: the mirror copies go only to backends the caller may use.
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr("X-Pick", "shadow"), MayUse: allowing("gpt-4.1*")})
	require.NoError(t, err)
	first := rt.Next()
	require.NotNil(t, first)
	assert.Equal(t, "cloud-gpt", first.Backend.Name())
	var mirrored []string
	for _, b := range rt.ShadowTargets(first.Backend) {
		mirrored = append(mirrored, b.Name())
	}
	assert.Equal(t, []string{"cloud-mini"}, mirrored, "local-medgemma gets no copy of billing's request")

	// A rule matched by its model that offers only a backend outside the
	// allowlist refuses, even though it is not failClosed.
	rt, err = routeByHeader(e, &Request{Model: "qwen3", Header: hdr(), MayUse: billing})
	require.ErrorIs(t, err, ErrNotAllowed)
	assert.Equal(t, "open", rt.RuleName)

	// The default route: served by gpt-4.1 when allowed, refused otherwise.
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr(), MayUse: billing})
	require.NoError(t, err)
	assert.Equal(t, []string{"cloud-gpt"}, tried(rt))
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: hdr(), MayUse: allowing("medgemma")})
	require.ErrorIs(t, err, ErrNotAllowed)
	assert.Equal(t, DefaultRuleName, rt.RuleName)
}

// TestAllowlistOnBackendNameMatch: the backend BackendNameMatch picks is
// held to the allowlist too, and refusal does not fall to the static
// default.
func TestAllowlistOnBackendNameMatch(t *testing.T) {
	cfg := allowlistConfig()
	cfg.Rules = nil
	cfg.Default = proxyapi.DefaultRoute{Strategy: proxyapi.DefaultBackendNameMatch, Backend: "cloud-gpt"}
	e, err := New(cfg, Options{})
	require.NoError(t, err)
	_, err = routeByHeader(e, &Request{Model: "qwen3", Header: map[string][]string{}, MayUse: allowing("gpt-4.1")})
	require.ErrorIs(t, err, ErrNotAllowed)
	rt, err := routeByHeader(e, &Request{Model: "qwen3", Header: map[string][]string{}, MayUse: allowing("qwen3")})
	require.NoError(t, err)
	assert.Equal(t, []string{"local-qwen"}, tried(rt))
}

// TestAllowNames: a backend goes by the names the compiler wrote, else its
// name, published id and external model.
func TestAllowNames(t *testing.T) {
	b := proxyapi.Backend{Name: "cloud-gpt", ModelID: "gpt-4.1", Model: "gpt-4.1"}
	assert.Equal(t, []string{"cloud-gpt", "gpt-4.1"}, b.AllowNames())
	b.ModelNames = []string{"x"}
	assert.Equal(t, []string{"x"}, b.AllowNames())
}

// TestAllowlistRefusalAfterAnOutageIsUnavailable: a team whose matched rule
// offers it backends it may use, all down, falls through as any request
// does; a later route its allowlist leaves nothing is then an outage for it
// (ErrNoRoute, 503), not a refusal of what it asked for (ErrNotAllowed,
// 403): billing may use gpt-4.1, and is told so by a retryable answer.
func TestAllowlistRefusalAfterAnOutageIsUnavailable(t *testing.T) {
	cfg := allowlistConfig()
	cfg.Rules = []proxyapi.Rule{{Name: "cloud-chat", Backends: []string{"cloud-gpt", "local-medgemma"}, Strategy: "primary-fallback", Match: proxyapi.Match{Models: []string{"gpt-4.1"}}}}
	cfg.Default = proxyapi.DefaultRoute{Strategy: "Static", Backend: "local-medgemma"}
	cfg.Timeouts.Quarantine = proxyapi.Duration{Duration: time.Hour} // cloud-gpt stays down for the test
	e, err := New(cfg, Options{})
	require.NoError(t, err)
	billing := allowing("gpt-4.1")
	rt, err := routeByHeader(e, &Request{Model: "gpt-4.1", Header: map[string][]string{}, MayUse: billing})
	require.NoError(t, err)
	assert.Equal(t, []string{"cloud-gpt"}, tried(rt))

	e.Quarantine(e.Backend("cloud-gpt"))
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: map[string][]string{}, MayUse: billing})
	require.ErrorIs(t, err, ErrNoRoute)
	assert.NotErrorIs(t, err, ErrNotAllowed)
	assert.Equal(t, []string{"cloud-chat"}, rt.Skipped)
	assert.Nil(t, rt.Next(), "nothing to try")

	// Clinical, allowed the local model too, is served by the fallback.
	rt, err = routeByHeader(e, &Request{Model: "gpt-4.1", Header: map[string][]string{}, MayUse: allowing("gpt-4.1", "medgemma-27b")})
	require.NoError(t, err)
	assert.Equal(t, []string{"local-medgemma"}, tried(rt))

	// A model billing may not ask for at all is still refused 403.
	_, err = routeByHeader(e, &Request{Model: "medgemma-27b", Header: map[string][]string{}, MayUse: billing})
	require.ErrorIs(t, err, ErrNotAllowed)
}
