// Binary test of the content classifier (policy.classification.mode
// detector and hybrid): the real router-proxy, the config the real compiler
// renders, upstreams on loopback.
package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

func userChat(text string) string { return chatFor("qwen3-32b", text) }

// TestContentClassifierEndToEnd: nobody labels the requests. An SSN is
// served by the local backend, and with every local backend down gets 503
// while the cloud backend sees nothing; a benign prompt with an order
// number goes to the cloud; a header cannot take a detection away; a body
// too large to read is sensitive. The audit says which detectors fired,
// never what they matched, and /metrics counts them.
func TestContentClassifierEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/classification-detector/input.yaml")
	require.Equal(t, proxyapi.ClassificationHybrid, cfg.Policy.Classification.Mode)
	p, ups, auditPath := serveOnLoopback(t, cfg)
	local, cloud := ups["local-qwen"], ups["cloud-gpt"]
	require.NotNil(t, local)
	require.NotNil(t, cloud)

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

	metrics := p.metrics(t)
	assert.Contains(t, metrics, `llmkube_router_classifier_detections_total{detector="us-ssn",router="support-chat"} 2`)
	assert.Contains(t, metrics, `llmkube_router_classifier_detections_total{detector="payment-card",router="support-chat"} 1`)
	assert.Contains(t, metrics, `llmkube_router_classifier_detections_total{detector="iban",router="support-chat"} 0`)

	// The audit: one line per request, the classification and its source,
	// the detectors by name, never the matched text.
	entries, raw := stopForAudit(t, p, auditPath)
	assert.NotContains(t, raw, ssn)
	assert.NotContains(t, raw, "jane.roe")
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

// streamedModel is the backend named by the first event of a chat stream
// (its id, as served reads it).
func streamedModel(t *testing.T, body string) string {
	t.Helper()
	first, _, ok := strings.Cut(strings.TrimPrefix(body, "data: "), "\n")
	require.True(t, ok && strings.HasPrefix(body, "data: "), "not an event stream: %q", body)
	return served(t, first)
}

// TestClassifierClinicalNotesEndToEnd: a hospital team's notes, unlabelled,
// under mode detector, through the built router-proxy. A note streamed as a
// chat, a clinic note handed back as a tool result, and a note an agent
// writes into tool-call arguments are all served by the local backend; a
// de-identified population question goes to the cloud. The audit names the
// detector that fired for its own reason (an NHS number after its cue is
// nhs-number, not phone), never the text.
func TestClassifierClinicalNotesEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/classification-detector/input.yaml")
	// The router compiled for hybrid, run in detector mode: the header is
	// ignored, only the text classifies.
	cfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	ups, env := loopbackBackends(t, cfg)
	require.Contains(t, ups, "local-qwen")
	require.Contains(t, ups, "cloud-gpt")
	auditPath := fileAudit(t, cfg)
	p := startProxyEnv(t, cfg, env)

	chat := func(stream bool, messages ...map[string]any) string {
		return mustJSON(t, map[string]any{"model": "qwen3-32b", "stream": stream, "messages": messages})
	}
	const (
		handoff = "Pt John Smith, 67M, admitted with pneumonia overnight. Started ceftriaxone 1 g daily and azithromycin; " +
			"O2 sats 91% on 2L. Plan: repeat CXR in the morning, wean O2 as tolerated."
		clinicNote = "Record date: 2026-03-02\n\nNAME: Osei, David    Med rec no. 5512093\n\nCARDIOLOGY CLINIC NOTE\n\n" +
			"HPI: 76 yo male with atrial fibrillation on warfarin, INR 2.4 today. No bleeding. Continue current dose."
		nhsNote     = "Mr. David Osei, DOB 11/02/1949, on warfarin. NHS No: 943 476 5919. Referred to the anticoagulation clinic."
		populationQ = "What share of adults over 65 with atrial fibrillation in England were on warfarin rather than a DOAC between 2019 and 2023?"
	)
	cases := []struct {
		name, body string
		stream     bool
		backend    string
		detectors  []string // must fire (when the classifier has them)
		not        []string // must not
	}{
		{name: "a handoff note streamed as a chat", stream: true, backend: "local-qwen",
			body:      chat(true, map[string]any{"role": "user", "content": "Turn this into a handoff summary:\n" + handoff}),
			detectors: []string{"health-term-with-identifier"}},
		{name: "a clinic note in a tool result", backend: "local-qwen",
			body: chat(false,
				map[string]any{"role": "user", "content": "Summarize the latest cardiology note."},
				map[string]any{"role": "assistant", "tool_calls": []map[string]any{{"id": "c1", "type": "function",
					"function": map[string]any{"name": "fetch_note", "arguments": `{"department":"cardiology","latest":true}`}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "content": clinicNote}),
			detectors: []string{"medical-record-number"}},
		{name: "a note in tool-call arguments, streamed", stream: true, backend: "local-qwen",
			body: chat(true,
				map[string]any{"role": "user", "content": "File the referral."},
				map[string]any{"role": "assistant", "tool_calls": []map[string]any{{"id": "c2", "type": "function",
					"function": map[string]any{"name": "save_referral", "arguments": mustJSON(t, map[string]string{"note": nhsNote})}}}},
				map[string]any{"role": "tool", "tool_call_id": "c2", "content": `{"ok":true}`}),
			detectors: []string{"nhs-number"}, not: []string{"phone"}},
		{name: "a de-identified population question", backend: "cloud-gpt",
			body: chat(false, map[string]any{"role": "user", "content": populationQ})},
	}
	known := map[string]bool{}
	for _, d := range classifier.All() {
		known[d.Name()] = true
	}
	for _, c := range cases {
		before := ups[c.backend].posts.Load()
		code, body := p.post(t, c.body)
		require.Equal(t, 200, code, "%s: %s", c.name, body)
		if c.stream {
			assert.Equal(t, c.backend, streamedModel(t, body), c.name)
			assert.True(t, strings.HasSuffix(body, "data: [DONE]\n\n"), "%s: the whole stream reaches the client", c.name)
		} else {
			assert.Equal(t, c.backend, served(t, body), c.name)
		}
		assert.Equal(t, before+1, ups[c.backend].posts.Load(), "%s: served by %s", c.name, c.backend)
	}
	assert.Equal(t, int64(1), ups["cloud-gpt"].posts.Load(), "the cloud saw the population question and nothing else")

	entries, raw := stopForAudit(t, p, auditPath)
	for _, secret := range []string{"John Smith", "5512093", "943 476 5919", "Osei"} {
		assert.NotContains(t, raw, secret, "the audit never holds the text")
	}
	require.Len(t, entries, len(cases))
	for i, c := range cases {
		e := entries[i]
		if c.backend == "cloud-gpt" {
			assert.Empty(t, e.Detectors, c.name)
			assert.Empty(t, e.Classification, c.name)
			continue
		}
		assert.Equal(t, "sensitive-local-only", e.Rule, c.name)
		assert.Equal(t, "detector", e.ClassificationSource, c.name)
		assert.NotEmpty(t, e.Detectors, c.name)
		for _, d := range c.detectors {
			if !known[d] {
				t.Logf("%s: detector %s not in this classifier yet; fired %v", c.name, d, e.Detectors)
				continue
			}
			assert.Contains(t, e.Detectors, d, c.name)
		}
		if known["nhs-number"] { // phone is right until the NHS number has its own detector
			for _, d := range c.not {
				assert.NotContains(t, e.Detectors, d, c.name)
			}
		}
	}
}
