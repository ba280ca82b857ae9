package engine

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// classifiedConfig: a catch-all rule to the cloud first, the sensitive rule
// after it, the default route to the cloud.
func classifiedConfig(mode string) *proxyapi.Config {
	d := proxyapi.Duration{Duration: time.Minute}
	return &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Timeouts:   proxyapi.Timeouts{ResponseHeader: d},
		Backends: []proxyapi.Backend{
			{Name: "local", Kind: proxyapi.KindLocal, Tier: "local", URL: "http://local"},
			{Name: "cloud", Kind: proxyapi.KindLocal, Tier: "cloud", URL: "http://cloud"},
		},
		Rules: []proxyapi.Rule{
			{Name: "catch-all", Strategy: proxyapi.StrategyPrimaryFallback, Backends: []string{"cloud"}},
			{Name: "sensitive", Strategy: proxyapi.StrategyPrimaryFallback, FailClosed: true, Backends: []string{"local"}, Match: proxyapi.Match{DataClassification: []string{"pii", "phi"}}},
			{Name: "public", Strategy: proxyapi.StrategyPrimaryFallback, Backends: []string{"cloud"}, Match: proxyapi.Match{DataClassification: []string{"public"}}},
		},
		Default: proxyapi.DefaultRoute{Strategy: proxyapi.DefaultStatic, Backend: "cloud"},
		Policy:  proxyapi.Policy{Classification: proxyapi.Classification{Mode: mode, Sensitive: []string{"pii", "phi"}}},
	}
}

func TestClassificationModes(t *testing.T) {
	const ssn = `{"model":"m","messages":[{"role":"user","content":"SSN 536-22-8410"}]}`
	const benign = `{"model":"m","messages":[{"role":"user","content":"order 4111111111111112"}]}`
	route := func(mode, body, header string) (rule string, classes []string, source string, err error) {
		e, nerr := New(classifiedConfig(mode), Options{})
		require.NoError(t, nerr)
		h := http.Header{}
		if header != "" {
			h.Set("X-Llmkube-Classification", header)
		}
		cls := e.Classify(h, []byte(body))
		rt, err := e.Route(&Request{Model: "m", Header: h}, cls)
		return rt.RuleName, cls.Classes, cls.Source, err
	}
	for _, c := range []struct {
		mode, body, header string
		rule               string
		classes            []string
		source             string
	}{
		{"header-only", ssn, "", "catch-all", nil, ""},
		{"header-only", benign, "pii", "catch-all", []string{"pii"}, "header"}, // the reference's first match, unchanged
		{"detector", ssn, "", "sensitive", []string{"pii"}, "detector"},
		{"detector", ssn, "public", "sensitive", []string{"pii"}, "detector"},
		{"detector", benign, "pii", "catch-all", nil, ""}, // detector ignores the header
		{"hybrid", ssn, "public", "sensitive", []string{"pii"}, "header,detector"},
		{"hybrid", benign, "phi", "sensitive", []string{"phi"}, "header"},
		{"hybrid", benign, "", "catch-all", nil, ""},
	} {
		rule, classes, source, err := route(c.mode, c.body, c.header)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, c.rule, rule, "%+v", c)
		assert.Equal(t, c.classes, classes, "%+v", c)
		assert.Equal(t, c.source, source, "%+v", c)
	}
}

// A sensitive request with no rule for its classes is refused, never
// served by the default route.
func TestSensitiveRequestNeverTakesTheDefaultRoute(t *testing.T) {
	cfg := classifiedConfig("detector")
	cfg.Rules = cfg.Rules[:1]
	e, err := New(cfg, Options{})
	require.NoError(t, err)
	rt, err := e.Route(&Request{Model: "m", Header: http.Header{}}, e.Classify(http.Header{}, []byte(`{"model":"m","input":"jane@example.com"}`)))
	assert.ErrorIs(t, err, ErrFailClosed)
	assert.ErrorIs(t, err, ErrSensitiveUnrouted)
	assert.Equal(t, DefaultRuleName, rt.RuleName)
	assert.Nil(t, rt.Next(), "no backend to try")
}
