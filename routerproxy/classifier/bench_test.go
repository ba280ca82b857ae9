package classifier_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

// chatBody is a chat request of about n bytes of ordinary prose with
// numbers in it (dates, versions, amounts), nothing sensitive.
func chatBody(n int) []byte {
	const para = "The deployment on 2026-12-05 moved 3 services to v2.14.3; latency fell 12% and the p99 is now 180 ms. Order 88123 shipped on Tuesday, and we expect 1,250 units in Q3. "
	return chatRequest(repeatTo(para, n))
}

func repeatTo(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

func chatRequest(text string) []byte {
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": text}}})
	return b
}

func BenchmarkBody4KiB(b *testing.B)  { benchBody(b, 4<<10) }
func BenchmarkBody64KiB(b *testing.B) { benchBody(b, 64<<10) }

func benchBody(b *testing.B, n int) {
	body := chatBody(n)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if !classifier.Body(body).Empty() {
			b.Fatal("benign body classified")
		}
	}
}

// The texts of a realistic mix of bodies: what agents and chat clients
// send, none of it sensitive. Each has the capitals, names of things,
// numbers, identifiers and punctuation the scanner stops at.
const (
	mixProse = "Thanks for the summary. Could you rewrite the onboarding guide for the Platform Team so that new engineers in Berlin and Toronto " +
		"can set up their laptops on day one? Keep the section on Kubernetes contexts, but move the VPN steps (Cisco AnyConnect 5.1) to an appendix. " +
		"Also mention that the staging cluster was upgraded to 1.31 on March 3, 2026, and that the on-call rotation changes every Monday at 09:00 UTC. " +
		"Our budget for Q2 is 48,500 EUR, and the last invoice (INV-2026-0412) is still open. What would a good title be? "
	mixCode = "func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)\n" +
		"\tdefer cancel()\n\tid := r.Header.Get(\"X-Request-ID\")\n\tif err := s.store.Put(ctx, id, 1700000000123); err != nil {\n" +
		"\t\thttp.Error(w, err.Error(), http.StatusInternalServerError) // 500\n\t\treturn\n\t}\n\tfmt.Fprintf(w, \"%s %d\\n\", id, 0x7fffffff)\n}\n" +
		"def test_parse():\n    assert parse(\"v1.2.3-rc.1\") == Version(1, 2, 3)\n    assert sha256(b\"abc\").hexdigest()[:12] == \"ba7816bf8f01\"\n"
	mixLog = "2026-12-07T18:36:48.123Z INFO  http request method=POST path=/v1/chat/completions status=200 dur=182ms bytes=4096 " +
		"req=550e8400-e29b-41d4-a716-446655440000 ip=10.42.3.17 ua=\"python-httpx/0.27.0\" trace=4bf92f3577b34da6a3ce929d0e0e4736\n" +
		"2026-12-07T18:36:49.004Z WARN  upstream slow backend=cloud-gpt latency_ms=2140 retries=1 pool=gpu-a100-40g node=ip-10-0-12-7\n" +
		"2026-12-07T18:36:50.551Z ERROR cache miss key=tenant:8842:model:qwen3-32b ttl=300 err=\"context deadline exceeded\"\n"
	mixGuideline = "Adults with type 2 diabetes should be offered metformin as first-line therapy unless contraindicated (eGFR below 30). " +
		"If HbA1c remains above 58 mmol/mol after 3 months, add an SGLT2 inhibitor for patients with heart failure or chronic kidney disease. " +
		"Screen for diabetic retinopathy every 12 months; refer to ophthalmology within 6 weeks for maculopathy. Blood pressure target: below 140/90 mmHg. " +
		"Consider statins for primary prevention when the 10-year cardiovascular risk exceeds 10% (QRISK3). "
)

// toolCallBody is an agent's turn: a tool call whose arguments hold JSON
// (escaped in the body) and the tool's result.
func toolCallBody(n int) []byte {
	args, _ := json.Marshal(map[string]any{"query": "SELECT region, count(*) FROM orders WHERE created_at > '2026-11-01' GROUP BY region", "limit": 500, "explain": true})
	result := repeatTo(`{"region":"EMEA","count":18244,"p95_ms":412,"updated":"2026-12-07T18:00:00Z"},`, n)
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "user", "content": "How many orders per region since November?"},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "run_sql", "arguments": string(args)}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "[" + result + "]"},
	}})
	return b
}

// BenchmarkRealisticMix: the classifier alone over a mix of realistic
// bodies (chat prose, code, logs, a tool call and its JSON result, a
// clinical guideline), 4 KiB and 32 KiB each; reports the throughput of
// the mix.
func BenchmarkRealisticMix(b *testing.B) {
	var bodies [][]byte
	for _, n := range []int{4 << 10, 32 << 10} {
		bodies = append(bodies,
			chatRequest(repeatTo(mixProse, n)),
			chatRequest("Review this code:\n"+repeatTo(mixCode, n)),
			chatRequest("Why do these logs show errors?\n"+repeatTo(mixLog, n)),
			toolCallBody(n),
			chatRequest("Summarize this guideline for a leaflet:\n"+repeatTo(mixGuideline, n)),
		)
	}
	total := 0
	for _, body := range bodies {
		total += len(body)
		if got := classifier.Body(body); !got.Empty() {
			b.Fatalf("benign body classified %v: %.80s", got.Names(), body)
		}
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			classifier.Body(body)
		}
	}
}
