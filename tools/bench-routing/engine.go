package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/tools/internal/kvcache"
)

// engineParams model one vLLM replica (a small GPU, scaled so that prefill
// dominates like a long-context deployment). Times are real: the engine
// sleeps through its steps.
type engineParams struct {
	MaxRunning   int           // sequences in the batch
	CacheBlocks  int           // KV-cache pages (vllm:cache_config_info num_gpu_blocks)
	BlockTokens  int           // tokens per page (block_size)
	StepTokens   int           // token budget per step (chunked prefill + decode)
	StepBase     time.Duration // fixed cost of a step
	DecodePerSeq time.Duration // per decoding sequence in a step
	// DecodePerCtx is per token of context of each decoding sequence in a
	// step: attention reads every sequence's whole KV (shared prefix pages
	// too), so a big batch of long conversations decodes slowly.
	DecodePerCtx    time.Duration
	PrefillPerToken time.Duration // per uncached prompt token
	// AnswerTokens is the answer's length when the request sets no
	// max_tokens (the model stops there by itself).
	AnswerTokens int
}

// bytesPerToken is the fake tokenizer: 4 bytes of text per token.
const bytesPerToken = 4

type seq struct {
	pages       []uint64
	prompt      int // tokens
	hit         int // cached prompt tokens
	prefillLeft int
	outLeft     int
	out         int
	pinned      []*kvcache.Page
	first       chan struct{}
	done        chan struct{}
	waitingAt   int // queue length seen at arrival
}

// engine is one fake vLLM pod: continuous batching over a paged KV cache
// with prefix caching (pages named by a chained hash of their tokens) and
// LRU eviction of unreferenced pages; FIFO admission.
type engine struct {
	name string
	p    engineParams

	mu       sync.Mutex
	wake     chan struct{}
	kv       *kvcache.Cache
	waiting  []*seq
	running  []*seq
	queries  int64 // prompt tokens
	hits     int64 // cached prompt tokens
	served   int64
	maxQueue int
}

func newEngine(name string, p engineParams) *engine {
	e := &engine{name: name, p: p, wake: make(chan struct{}, 1), kv: kvcache.New(p.CacheBlocks)}
	go e.loop()
	return e
}

// reset empties the cache and the counters (between runs; the engine must
// be idle).
func (e *engine) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.kv = kvcache.New(e.p.CacheBlocks)
	e.queries, e.hits, e.served, e.maxQueue = 0, 0, 0, 0
}

func (e *engine) waitingLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.waiting)
}

// pageIDs chains FNV-1a over the text in pages of BlockTokens tokens; the
// last partial page gets an id of its own (never shared).
func pageIDs(text string, blockTokens int) []uint64 {
	pb := blockTokens * bytesPerToken
	out := make([]uint64, 0, len(text)/pb+1)
	h := uint64(14695981039346656037)
	for i := 0; i < len(text); i += pb {
		end := min(i+pb, len(text))
		for j := i; j < end; j++ {
			h ^= uint64(text[j])
			h *= 1099511628211
		}
		if end-i < pb {
			out = append(out, h^0x9e3779b97f4a7c15^uint64(end-i)<<56)
			break
		}
		out = append(out, h)
	}
	return out
}

// admit moves waiting sequences into the batch while the batch and the
// cache have room (the head of the queue blocks the rest).
func (e *engine) admit() {
	for len(e.waiting) > 0 && len(e.running) < e.p.MaxRunning {
		s := e.waiting[0]
		if !e.kv.Fits(s.pages) {
			if len(e.running) == 0 { // never fits: fail it rather than wedge
				e.waiting = e.waiting[1:]
				close(s.first)
				close(s.done)
				continue
			}
			return
		}
		e.waiting = e.waiting[1:]
		promptPages := s.prompt / e.p.BlockTokens
		hitPages := min(e.kv.CachedPrefix(s.pages[:promptPages]), promptPages)
		s.pinned = e.kv.PinAll(s.pages)
		s.hit = min(hitPages*e.p.BlockTokens, s.prompt-1)
		s.prefillLeft = s.prompt - s.hit
		e.queries += int64(s.prompt)
		e.hits += int64(s.hit)
		e.running = append(e.running, s)
	}
}

func (e *engine) loop() {
	for {
		e.mu.Lock()
		e.admit()
		if len(e.running) == 0 {
			e.mu.Unlock()
			<-e.wake
			continue
		}
		budget := e.p.StepTokens
		var decode []*seq
		prefill := map[*seq]int{}
		ctxTokens := 0
		for _, s := range e.running {
			if s.prefillLeft == 0 {
				decode = append(decode, s)
				ctxTokens += s.prompt + s.out - s.outLeft
				budget--
			}
		}
		tokens := 0
		for _, s := range e.running {
			if s.prefillLeft > 0 && budget > 0 {
				n := min(s.prefillLeft, budget)
				prefill[s] = n
				budget -= n
				tokens += n
			}
		}
		e.mu.Unlock()
		time.Sleep(e.p.StepBase + time.Duration(len(decode))*e.p.DecodePerSeq + time.Duration(ctxTokens)*e.p.DecodePerCtx +
			time.Duration(tokens)*e.p.PrefillPerToken)
		e.mu.Lock()
		for _, s := range decode {
			s.outLeft--
		}
		for s, n := range prefill {
			s.prefillLeft -= n
			if s.prefillLeft == 0 {
				s.outLeft--
				close(s.first)
			}
		}
		kept := e.running[:0]
		for _, s := range e.running {
			if s.prefillLeft == 0 && s.outLeft <= 0 {
				e.kv.Unpin(s.pinned)
				s.pinned = nil
				e.served++
				close(s.done)
				continue
			}
			kept = append(kept, s)
		}
		clear(e.running[len(kept):])
		e.running = kept
		e.mu.Unlock()
	}
}

// chatRequest is the part of an OpenAI chat request the engine reads.
type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Messages  []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// render is the fake chat template: the engine's token stream.
func render(role, content string) string { return "<|" + role + "|>" + content }

// answerText is the deterministic answer of n tokens to a prompt.
func answerText(promptPages []uint64, n int) string {
	var b strings.Builder
	h := uint64(7)
	if len(promptPages) > 0 {
		h = promptPages[len(promptPages)-1]
	}
	for b.Len() < n*bytesPerToken {
		h = h*6364136223846793005 + 1442695040888963407
		fmt.Fprintf(&b, "%08x", uint32(h>>32))
	}
	return b.String()[:n*bytesPerToken]
}

func (e *engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/metrics":
		e.metrics(w)
		return
	case "/health", "/v1/models":
		_, _ = io.WriteString(w, "{}")
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var text strings.Builder
	for _, m := range req.Messages {
		text.WriteString(render(m.Role, m.Content))
	}
	prompt := text.String()
	out := req.MaxTokens
	if out <= 0 {
		out = e.p.AnswerTokens
	}
	out = max(out, 1)
	promptIDs := pageIDs(prompt, e.p.BlockTokens)
	answer := answerText(promptIDs, out)
	// The sequence's pages: prompt and answer as one stream, so the next
	// turn, which resends the answer, reuses the answer's pages.
	full := prompt + render("assistant", answer)
	s := &seq{pages: pageIDs(full, e.p.BlockTokens), prompt: (len(prompt) + bytesPerToken - 1) / bytesPerToken,
		outLeft: out, out: out, first: make(chan struct{}), done: make(chan struct{})}
	e.mu.Lock()
	s.waitingAt = len(e.waiting)
	e.waiting = append(e.waiting, s)
	e.maxQueue = max(e.maxQueue, len(e.waiting))
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Pod", e.name)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	<-s.first
	fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q}}]}\n\n", req.Model, answer[:bytesPerToken])
	if fl != nil {
		fl.Flush()
	}
	<-s.done
	fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":\"length\"}],"+
		"\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}},\"x_pod\":%q,\"x_queue\":%d}\n\ndata: [DONE]\n\n",
		req.Model, answer[bytesPerToken:], s.prompt, out, s.prompt+out, s.hit, e.name, s.waitingAt)
}

// metrics is vLLM's Prometheus exposition (the families pickers read).
func (e *engine) metrics(w http.ResponseWriter) {
	e.mu.Lock()
	run, wait, usage := len(e.running), len(e.waiting), e.kv.Usage()
	q, h := e.queries, e.hits
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="bench-model"} %d.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="bench-model"} %d.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="bench-model"} %g
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="%d",cache_dtype="auto",enable_prefix_caching="True",engine="0",num_gpu_blocks="%d"} 1.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="bench-model"} %d.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="bench-model"} %d.0
`, run, wait, usage, e.p.BlockTokens, e.p.CacheBlocks, q, h)
}

// stats is a pod's counters for a run.
func (e *engine) stats() (queries, hits, served int64, maxQueue int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queries, e.hits, e.served, e.maxQueue
}

// servePod listens on addr and serves the engine until the process ends.
func servePod(addr string, e *engine) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, e) }()
	return nil
}
