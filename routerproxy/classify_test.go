package routerproxy

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

// TestClassificationIsOneValue: in hybrid mode a request is classified once,
// from its header and its body, and that one classification routes it and
// is what its audit line and the detection counter say. A request refused
// before its body was read and found JSON is classified by its header
// alone, and its audit line still says how the client labelled it.
func TestClassificationIsOneValue(t *testing.T) {
	local, cloud := newStub(t, "local", nil), newStub(t, "cloud", nil)
	cfg := config(backend("cloud", cloud.URL), backend("local", local.URL))
	sensitive := rule("sensitive", proxyapi.StrategyPrimaryFallback, "local")
	sensitive.FailClosed = true
	sensitive.Match.DataClassification = []string{"pii", "phi"}
	public := rule("public", proxyapi.StrategyPrimaryFallback, "cloud")
	public.Match.DataClassification = []string{"public"}
	cfg.Rules = []proxyapi.Rule{public, sensitive}
	cfg.Policy.Classification.Mode = proxyapi.ClassificationHybrid
	h := start(t, cfg)

	// Labelled public by the client, an SSN in the text: the detector's
	// finding wins, the public rule never sees it.
	body := h.okChat(t, `{"model":"m","messages":[{"role":"user","content":"SSN 536-22-8410"}]}`, "X-LLMKube-Classification", "public")
	assert.Equal(t, "local", servedBy(t, body))
	e := h.last(t)
	assert.Equal(t, "sensitive", e.Rule)
	assert.Equal(t, "pii", e.Classification)
	assert.Equal(t, "header,detector", e.ClassificationSource)
	assert.Equal(t, []string{classifier.USSSN.Name()}, e.Detectors)
	assert.Equal(t, 1.0, testutil.ToFloat64(h.srv.m.detections[classifier.USSSN]), "counted once")

	// Not JSON: refused before the classifier reads it, classified by the
	// header.
	code, body, _ := h.post(t, `{"model":`, "X-LLMKube-Classification", "PHI, public")
	require.Equal(t, 400, code, body)
	e = h.last(t)
	assert.Equal(t, "phi", e.Classification)
	assert.Equal(t, "header", e.ClassificationSource)
	assert.Empty(t, e.Detectors)
	assert.Equal(t, 1.0, testutil.ToFloat64(h.srv.m.detections[classifier.USSSN]), "nothing more was detected")
}
