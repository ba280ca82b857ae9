package routerproxy

import (
	"testing"
)

// Arbitrary answers never panic the Messages usage reader, however the
// bytes are split, and what it reports is plausible.
func FuzzMessagesUsage(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":15}}\n\n", 7)
	f.Add(`{"usage":{"input_tokens":-1,"output_tokens":3}}`, 0)
	f.Add(`{"usage":{"input_tokens":1e99}}`, 3)
	f.Fuzz(func(t *testing.T, in string, split int) {
		var m messagesUsage
		if split > 0 && split < len(in) {
			m.Write([]byte(in[:split]))
			m.Write([]byte(in[split:]))
		} else {
			m.Write([]byte(in))
		}
		for _, u := range []func() (int64, int64, bool){
			func() (int64, int64, bool) { u, ok := m.streamUsage(); return u.PromptTokens, u.CompletionTokens, ok },
			func() (int64, int64, bool) {
				u, ok := (&messagesUsage{}).bodyUsage([]byte(in), false)
				return u.PromptTokens, u.CompletionTokens, ok
			},
			func() (int64, int64, bool) {
				u, ok := (&messagesUsage{}).bodyUsage([]byte(in), true)
				return u.PromptTokens, u.CompletionTokens, ok
			},
		} {
			p, c, ok := u()
			if ok && (p < 0 || c < 0 || p+c <= 0) {
				t.Fatalf("implausible usage %d+%d from %q", p, c, in)
			}
		}
	})
}
