package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// TestAllowlistHoldsOnTheServingBackend drives the real binary with the
// config the compiler renders for testdata/proxy-allowlist-serving: billing
// may use gpt-4.1 only, and a request the classifier finds pii in, or that
// billing labels phi itself, matches the rule whose only backend is the
// local clinical model. Billing is refused 403 model_not_allowed with
// nothing sent upstream; clinical is served locally; billing's ordinary
// prompt is served by gpt-4.1.
func TestAllowlistHoldsOnTheServingBackend(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/proxy-allowlist-serving/input.yaml")
	require.Equal(t, proxyapi.ClassificationHybrid, cfg.Policy.Classification.Mode)
	is := trustIssuer(t, cfg)
	p, ups, auditPath := serveOnLoopback(t, cfg)
	local, cloud := ups["local-medgemma"], ups["cloud-gpt"]
	require.NotNil(t, local)
	require.NotNil(t, cloud)
	posts := func() int64 { return local.posts.Load() + cloud.posts.Load() }

	const mrn = "Patient Jane Roe, MRN 483920117, SSN 536-22-8410: summarize her last visit."
	before := posts()
	code, body := p.post(t, chatFor("gpt-4.1", mrn), "Authorization", bearer(t, is, "billing"))
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, `"code":"model_not_allowed"`)
	assert.Equal(t, before, posts(), "billing's sensitive prompt reached no backend")

	code, body = p.post(t, chatFor("gpt-4.1", "Write a haiku about invoices"), "Authorization", bearer(t, is, "billing"), "x-llmkube-classification", "phi")
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, `"code":"model_not_allowed"`)
	assert.Equal(t, before, posts(), "a label billing adds narrows, never widens: nothing was sent")

	code, body = p.post(t, chatFor("gpt-4.1", mrn), "Authorization", bearer(t, is, "clinical"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "local-medgemma", served(t, body), "clinical's sensitive prompt is served locally")

	code, body = p.post(t, chatFor("gpt-4.1", "Write a haiku about invoices"), "Authorization", bearer(t, is, "billing"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "cloud-gpt", served(t, body), "billing's ordinary prompt is served by gpt-4.1")
	assert.Equal(t, int64(1), local.posts.Load())
	assert.Equal(t, int64(1), cloud.posts.Load())

	entries, _ := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 4)
	for _, e := range entries[:2] {
		assert.Equal(t, proxyapi.OutcomeForbidden, e.Outcome)
		assert.Equal(t, "billing", e.Team)
		assert.Equal(t, "phi-pii-stays-local", e.Rule, "the audit names the rule whose backends billing may not use")
		assert.Empty(t, e.Backend)
	}
	assert.Equal(t, "local-medgemma", entries[2].Backend)
	assert.Equal(t, "cloud-gpt", entries[3].Backend)
}

// TestAllowlistOutageIsUnavailableNotForbidden drives the real binary with
// testdata/proxy-allowlist-serving's router given a cloud rule with a local
// fallback and a local default route, the cloud down: billing, allowed
// gpt-4.1, finds its one backend down and falls through to the default
// route, which serves it nothing it may use. That is an outage for billing:
// 503 no_route, which a client retries, not 403 model_not_allowed, which it
// does not and which sends an operator after a permission that is there.
// Nothing reaches the local model; clinical is served by it.
func TestAllowlistOutageIsUnavailableNotForbidden(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/proxy-allowlist-serving/input.yaml")
	is := trustIssuer(t, cfg)
	ups, env := loopbackBackends(t, cfg)
	local := ups["local-medgemma"]
	down := refusedURL() // the cloud is down: connection refused
	for i := range cfg.Backends {
		if cfg.Backends[i].Name == "cloud-gpt" {
			cfg.Backends[i].URL = down
		}
	}
	cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: "cloud-chat", Match: proxyapi.Match{Models: []string{"gpt-4.1"}},
		Backends: []string{"cloud-gpt", "local-medgemma"}, Strategy: proxyapi.StrategyPrimaryFallback, PoolActivation: cfg.Rules[0].PoolActivation})
	cfg.Default.Backend = "local-medgemma"
	cfg.Timeouts.Quarantine = proxyapi.Duration{Duration: time.Hour} // down for the whole test
	auditPath := fileAudit(t, cfg)
	p := startProxyEnv(t, cfg, env)
	haiku := chatFor("gpt-4.1", "Write a haiku about invoices")

	// The first request finds the cloud down (502 when it tried it, 503 when
	// its probes had already judged it): either way it is out from now on.
	code, body := p.post(t, haiku, "Authorization", bearer(t, is, "billing"))
	require.Contains(t, []int{http.StatusBadGateway, http.StatusServiceUnavailable}, code, body)
	code, body = p.post(t, haiku, "Authorization", bearer(t, is, "billing"))
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, `"code":"no_route"`)
	assert.NotContains(t, body, "model_not_allowed")
	assert.Equal(t, int64(0), local.posts.Load(), "billing is never served by the clinical model")

	code, body = p.post(t, haiku, "Authorization", bearer(t, is, "clinical"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "local-medgemma", served(t, body), "clinical falls back to the local model")

	entries, _ := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 3)
	assert.Equal(t, http.StatusServiceUnavailable, entries[1].Status)
	assert.Equal(t, proxyapi.OutcomeNoRoute, entries[1].Outcome)
	assert.Equal(t, "billing", entries[1].Team)
	assert.Contains(t, entries[1].Error, "serves none it may use")
}
