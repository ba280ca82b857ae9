package routerproxy

import (
	"syscall"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// BenchmarkMessagesHop is BenchmarkHop's setup (20 rules, the 20th
// matching, a router budget, a file audit log) for the three ways a
// request crosses to a cloud provider, in one run: a chat completion passed
// through to an OpenAI backend (the reference), a Messages request passed
// through to an Anthropic backend, and a Messages request translated to a
// chat completion for an OpenAI-compatible one. cpu-µs/op is the process's
// user+system CPU per request (client, proxy and stub upstream in one
// process; the client and the stub cost the same in each case).
func BenchmarkMessagesHop(b *testing.B) {
	const (
		chatBody  = `{"model":"bench-8b","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}`
		msgBody   = `{"model":"bench-8b","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}`
		chatReply = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`
		msgReply  = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":9}}`
	)
	for _, c := range []struct {
		name, provider, path, body, reply string
	}{
		{"chat-to-openai", "openai", "/v1/chat/completions", chatBody, chatReply},
		{"messages-to-anthropic", "anthropic", "/v1/messages", msgBody, msgReply},
		{"messages-translated-to-openai", "openai", "/v1/messages", msgBody, chatReply},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := messagesHopServer(b, c.provider, c.reply)
			start := cpuTime()
			postLoop(b, url+c.path, c.body, nil)
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// messagesHopServer starts a stub provider answering reply and a proxy
// with BenchmarkHop's rules whose two backends are external backends of
// provider on it; it returns the proxy's URL.
func messagesHopServer(b *testing.B, provider, reply string) string {
	cfg := hopConfig(b, stubUpstream(b, reply))
	for i := range cfg.Backends {
		be := &cfg.Backends[i]
		be.Kind, be.Tier, be.Provider, be.Model = proxyapi.KindExternal, "cloud", provider, "provider-model"
		be.Credentials = []proxyapi.Credential{{Purpose: "apiKey", Env: "BENCH_KEY"}}
	}
	return hopProxy(b, cfg, Options{Getenv: func(string) string { return "sk-bench-key-0123456789" }})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
