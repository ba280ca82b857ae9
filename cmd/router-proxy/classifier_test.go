// Binary test of the content classifier (policy.classification.mode
// detector and hybrid): the real router-proxy, the config the real compiler
// renders, upstreams on loopback.
package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

func userChat(text string) string {
	b, _ := json.Marshal(map[string]any{"model": "qwen3-32b", "messages": []map[string]string{{"role": "user", "content": text}}})
	return string(b)
}

// TestContentClassifierEndToEnd: nobody labels the requests. An SSN is
// served by the local backend, and with every local backend down gets 503
// while the cloud backend sees nothing; a benign prompt with an order
// number goes to the cloud; a header cannot take a detection away; a body
// too large to read is sensitive. The audit says which detectors fired,
// never what they matched, and /metrics counts them.
func TestContentClassifierEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/classification-detector/input.yaml")
	require.Equal(t, proxyapi.ClassificationHybrid, cfg.Policy.Classification.Mode)
	ups, env := loopbackBackends(t, cfg)
	local, cloud := ups["local-qwen"], ups["cloud-gpt"]
	require.NotNil(t, local)
	require.NotNil(t, cloud)
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Policy.Audit.Sink, cfg.Policy.Audit.FilePath = "file", auditPath
	p := startProxyEnv(t, cfg, env)

	const ssn = "536-22-8410"
	code, body := p.post(t, userChat("My SSN is "+ssn+", can you update my account?"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local-qwen", served(t, body), "an unlabelled SSN stays in the cluster")

	code, body = p.post(t, userChat("Where is order 4111111111111112? Tracking 1Z999AA10123456784."))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "cloud-gpt", served(t, body), "a benign prompt with an order number takes the default path")

	code, body = p.post(t, userChat("Pay with 4539 1488 0343 6467 today."), "x-llmkube-classification", "public")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local-qwen", served(t, body), "a client's public cannot remove the card the detector found")

	code, body = p.post(t, userChat("Summarize the note."), "x-llmkube-classification", "phi")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local-qwen", served(t, body), "in hybrid mode the client can add a classification")

	big := `{"model":"qwen3-32b","messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", (4<<20)/12+1) + `"}]}`
	code, body = p.post(t, big)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "local-qwen", served(t, body), "a body over the classifier's limit is sensitive, never skipped")

	cloudBefore := cloud.hits.Load()
	local.fail.Store(true)
	code, body = p.post(t, userChat("Email me at jane.roe@example.com with my SSN "+ssn+"."))
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Equal(t, cloudBefore, cloud.hits.Load(), "the cloud backend saw nothing of the sensitive request")

	resp, err := http.Get("http://" + p.admin + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(metrics), `llmkube_router_classifier_detections_total{detector="us-ssn",router="support-chat"} 2`)
	assert.Contains(t, string(metrics), `llmkube_router_classifier_detections_total{detector="payment-card",router="support-chat"} 1`)
	assert.Contains(t, string(metrics), `llmkube_router_classifier_detections_total{detector="iban",router="support-chat"} 0`)

	// The audit: one line per request, the classification and its source,
	// the detectors by name, never the matched text.
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-p.done
	raw, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), ssn)
	assert.NotContains(t, string(raw), "jane.roe")
	entries := auditEntries(t, raw)
	require.Len(t, entries, 6)
	assert.Equal(t, "pii", entries[0].Classification)
	assert.Equal(t, "detector", entries[0].ClassificationSource)
	assert.Equal(t, []string{"us-ssn"}, entries[0].Detectors)
	assert.Equal(t, "sensitive-local-only", entries[0].Rule)
	assert.Empty(t, entries[1].Classification)
	assert.Empty(t, entries[1].Detectors)
	assert.Equal(t, "header,detector", entries[2].ClassificationSource)
	assert.Equal(t, "pii", entries[2].Classification, "public is dropped beside a sensitive class")
	assert.Equal(t, "header", entries[3].ClassificationSource)
	assert.Equal(t, []string{"body-over-limit"}, entries[4].Detectors)
	assert.Equal(t, "phi,pii", entries[4].Classification)
	assert.Equal(t, 503, entries[5].Status)
	assert.Equal(t, proxyapi.OutcomeFailClosed, entries[5].Outcome)
	assert.Equal(t, []string{"us-ssn", "email"}, entries[5].Detectors)
}
