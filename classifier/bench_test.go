package classifier_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmkube/llmkube-compile/classifier"
)

// chatBody is a chat request of about n bytes of ordinary prose with
// numbers in it (dates, versions, amounts), nothing sensitive.
func chatBody(n int) []byte {
	const para = "The deployment on 2026-12-05 moved 3 services to v2.14.3; latency fell 12% and the p99 is now 180 ms. Order 88123 shipped on Tuesday, and we expect 1,250 units in Q3. "
	text := strings.Repeat(para, n/len(para)+1)[:n]
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
