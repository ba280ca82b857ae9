package main

import (
	"container/heap"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/llmkube/llmkube-compile/tools/internal/kvcache"
)

// podParams model one vLLM-like engine.
type podParams struct {
	MaxRunning   int     // concurrent sequences (batch)
	KVTokens     int     // KV-cache capacity in tokens
	PageTokens   int     // tokens per KV page
	StepTokens   int     // token budget per engine step (chunked prefill + decode)
	StepBase     float64 // fixed cost of a step (s)
	DecodePerSeq float64 // cost per decoded sequence in a step (s)
	// DecodePerCtx is per token of each decoding sequence's context in a
	// step (s): attention reads the whole KV of every sequence.
	DecodePerCtx    float64
	PrefillPerToken float64 // cost per uncached prompt token (s)
}

// simParams are the fleet and router settings of one run.
type simParams struct {
	Pods           int
	Pod            podParams
	ScrapeInterval float64 // engine metrics scrape period (s)
	BlockBytes     int     // router prefix block size
	MaxBlocks      int     // router blocks remembered per pod
	Seed           uint64
}

// result is one arm's report (the JSON line).
type result struct {
	Workload   string   `json:"workload"`
	Arm        string   `json:"arm"`
	HitRate    float64  `json:"hitRate"`
	Throughput float64  `json:"throughput"`
	TTFTP50    float64  `json:"ttftP50"`
	TTFTP90    float64  `json:"ttftP90"`
	TTFTP99    float64  `json:"ttftP99"`
	MaxQueue   int      `json:"maxQueue"`
	Stickiness *float64 `json:"stickiness,omitempty"`
	// Busiest is the requests of the busiest pod over the pods' mean.
	Busiest float64 `json:"busiestOverMean"`
	// Cold counts requests with less than half their prompt cached;
	// ColdFirst those that were their document's first anywhere (which no
	// arm can avoid).
	Cold       int     `json:"cold"`
	ColdFirst  int     `json:"coldFirst"`
	Requests   int     `json:"requests"`
	SimSeconds float64 `json:"simSeconds"`
}

// Arms, in report order. "prefix+load" is the router-proxy's LoadAware
// balancer with prefix and session affinity.
var arms = []string{"random", "round-robin", "least-loaded", "session-hash", "prefix-only", "prefix+load", "oracle"}

type pod struct {
	i        int
	addr     string
	kv       *kvcache.Cache
	waiting  []*request
	running  []*request
	busy     bool
	maxQueue int
	// the step in progress
	stepDecode  []*request
	stepPrefill map[*request]int
}

// pageIDs names a request's KV pages (prompt then output): page k's id is a
// chain over the segment pieces it covers, like an engine's prefix hash.
func pageIDs(r *request, pageTokens int) []uint64 {
	segs := append(slices.Clip(r.prompt), r.output)
	total := 0
	for _, s := range segs {
		total += s.tokens
	}
	out := make([]uint64, 0, (total+pageTokens-1)/pageTokens)
	h := uint64(0x9e3779b97f4a7c15)
	fill := 0
	for _, s := range segs {
		off := 0
		for off < s.tokens {
			take := min(pageTokens-fill, s.tokens-off)
			h = balance.Mix(h ^ balance.Mix(s.id^uint64(off)<<44^uint64(take)<<32))
			off += take
			fill += take
			if fill == pageTokens {
				out = append(out, h)
				fill = 0
			}
		}
	}
	if fill > 0 {
		out = append(out, h)
	}
	return out
}

type event struct {
	t    float64
	seq  int
	kind int // evArrive, evStep, evScrape
	user int
	pod  *pod
}

const (
	evArrive = iota
	evStep
	evScrape
)

type eventQ []*event

func (q eventQ) Len() int { return len(q) }
func (q eventQ) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q eventQ) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQ) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQ) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type sim struct {
	p     simParams
	arm   string
	w     workload
	rng   *rand.Rand
	pods  []*pod
	bal   *balance.Balancer
	texts texts
	q     eventQ
	seq   int
	now   float64

	done    []*request
	lastPod map[int]int // session -> pod of its previous turn
}

func newSim(p simParams, arm string, w workload) *sim {
	s := &sim{p: p, arm: arm, w: w, rng: rand.New(rand.NewPCG(p.Seed, 7)), lastPod: map[int]int{}}
	addrs := make([]string, p.Pods)
	for i := range p.Pods {
		addrs[i] = fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
		s.pods = append(s.pods, &pod{i: i, addr: addrs[i], kv: kvcache.New(p.Pod.KVTokens / p.Pod.PageTokens)})
	}
	epoch := time.Unix(0, 0)
	clock := func() time.Time { return epoch.Add(time.Duration(s.now * float64(time.Second))) }
	cfg := balance.Config{Now: clock, Quarantine: 15 * time.Second}
	switch arm {
	case "round-robin":
	case "least-loaded":
		cfg.LoadAware = true
	case "prefix-only":
		cfg.LoadAware, cfg.BlockBytes, cfg.MaxBlocksPerPod, cfg.IgnoreLoad = true, p.BlockBytes, p.MaxBlocks, true
	case "prefix+load":
		cfg.LoadAware, cfg.BlockBytes, cfg.MaxBlocksPerPod = true, p.BlockBytes, p.MaxBlocks
		cfg.SessionHeaders = balance.CanonicalHeaders([]string{"x-session-id"})
	}
	switch arm {
	case "round-robin", "least-loaded", "prefix-only", "prefix+load":
		s.bal = balance.New(cfg)
		s.bal.SetPods(addrs)
	}
	return s
}

func (s *sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.q, e)
}

func (s *sim) run() result {
	for u := range s.w.users() {
		// Stagger the start so the first wave is not one instant.
		s.push(&event{t: s.rng.Float64() * 0.5, kind: evArrive, user: u})
	}
	if s.bal != nil && s.p.ScrapeInterval > 0 {
		s.push(&event{t: s.p.ScrapeInterval, kind: evScrape})
	}
	total := s.w.total()
	for s.q.Len() > 0 {
		e := heap.Pop(&s.q).(*event)
		s.now = e.t
		switch e.kind {
		case evArrive:
			r := s.w.next(e.user)
			if r == nil {
				continue
			}
			r.arrive = s.now
			s.route(r)
		case evStep:
			s.finishStep(e.pod)
		case evScrape:
			for _, p := range s.pods {
				s.bal.SetMetrics(p.addr, &balance.EngineMetrics{
					Running: float64(len(p.running)), Waiting: float64(len(p.waiting)),
					KVCacheUsage:   p.kv.Usage(),
					CacheBlockSize: float64(s.p.Pod.PageTokens), CacheBlocks: float64(p.kv.Capacity()),
				})
			}
			if len(s.done) < total {
				s.push(&event{t: s.now + s.p.ScrapeInterval, kind: evScrape})
			}
		}
	}
	return s.report()
}

// route places a request with the arm's policy and queues it on the pod.
func (s *sim) route(r *request) {
	r.promptTokens = r.promptLen()
	r.pages = pageIDs(r, s.p.Pod.PageTokens)
	var p *pod
	switch s.arm {
	case "random":
		p = s.pods[s.rng.IntN(len(s.pods))]
	case "session-hash":
		key := first(r.headers, "X-Session-Id", "X-User-Id")
		h := fnv.New64a()
		h.Write([]byte(key))
		p = s.pods[h.Sum64()%uint64(len(s.pods))]
	case "oracle":
		p = s.oracle(r)
	default:
		var req balance.Request
		if cfg := s.bal.Config(); cfg.BlockBytes > 0 || len(cfg.SessionHeaders) > 0 {
			var body []byte
			if cfg.BlockBytes > 0 {
				body = s.texts.body(r)
			}
			req = s.bal.Features(r.headers, body)
		}
		pk, err := s.bal.Pick(&req)
		if err != nil {
			panic(err)
		}
		r.pick = pk
		for _, q := range s.pods {
			if q.addr == pk.Addr {
				p = q
			}
		}
	}
	r.pod, r.prevPod = p.i, -1
	if r.session >= 0 {
		if prev, ok := s.lastPod[r.session]; ok {
			r.prevPod = prev
		}
		s.lastPod[r.session] = p.i
	}
	p.waiting = append(p.waiting, r)
	p.maxQueue = max(p.maxQueue, len(p.waiting))
	if !p.busy {
		s.startStep(p)
	}
}

func first(h map[string][]string, names ...string) string {
	for _, n := range names {
		if v := h[n]; len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return ""
}

// oracle knows every pod's cache and queue exactly and trades them with the
// same score as the balancer (balance.Choose), so the only difference from
// prefix+load is perfect information.
func (s *sim) oracle(r *request) *pod {
	n := len(s.pods)
	works := make([]float64, n)
	hits := make([]float64, n)
	start := s.rng.IntN(n)
	order := make([]*pod, n)
	promptPages := r.promptTokens / s.p.Pod.PageTokens
	for i := range n {
		p := s.pods[(start+i)%n]
		order[i] = p
		works[i] = float64(len(p.running) + len(p.waiting))
		if promptPages > 0 {
			hits[i] = float64(min(p.kv.CachedPrefix(r.pages[:promptPages]), promptPages)) / float64(promptPages)
		}
	}
	return order[balance.Choose(works, hits, balance.DefaultPrefixWeight)]
}

// admit moves waiting requests into the batch while there is room in it and
// in the KV cache (first come, first served: the head blocks the rest).
func (s *sim) admit(p *pod) {
	for len(p.waiting) > 0 && len(p.running) < s.p.Pod.MaxRunning {
		r := p.waiting[0]
		promptPages := r.promptTokens / s.p.Pod.PageTokens // whole pages only
		hit := min(p.kv.CachedPrefix(r.pages[:promptPages]), promptPages)
		if !p.kv.Fits(r.pages) {
			break
		}
		p.waiting = p.waiting[1:]
		r.pinned = p.kv.PinAll(r.pages)
		r.hitTokens = min(hit*s.p.Pod.PageTokens, r.promptTokens-1)
		r.prefillLeft = r.promptTokens - r.hitTokens
		r.outLeft = r.output.tokens
		p.running = append(p.running, r)
	}
}

// startStep plans one engine step: every decoding sequence emits a token,
// the rest of the token budget prefills admitted requests in order.
func (s *sim) startStep(p *pod) {
	s.admit(p)
	if len(p.running) == 0 {
		p.busy = false
		return
	}
	p.busy = true
	p.stepDecode = p.stepDecode[:0]
	if p.stepPrefill == nil {
		p.stepPrefill = map[*request]int{}
	}
	clear(p.stepPrefill)
	budget := s.p.Pod.StepTokens
	for _, r := range p.running {
		if r.prefillLeft == 0 {
			p.stepDecode = append(p.stepDecode, r)
			budget--
		}
	}
	prefill := 0
	for _, r := range p.running {
		if r.prefillLeft > 0 && budget > 0 {
			n := min(r.prefillLeft, budget)
			p.stepPrefill[r] = n
			budget -= n
			prefill += n
		}
	}
	ctx := 0
	for _, r := range p.stepDecode {
		ctx += r.promptTokens + r.output.tokens - r.outLeft
	}
	d := s.p.Pod.StepBase + s.p.Pod.DecodePerSeq*float64(len(p.stepDecode)) + s.p.Pod.PrefillPerToken*float64(prefill) +
		s.p.Pod.DecodePerCtx*float64(ctx)
	s.push(&event{t: s.now + d, kind: evStep, pod: p})
}

func (s *sim) finishStep(p *pod) {
	for _, r := range p.stepDecode {
		r.outLeft--
	}
	for r, n := range p.stepPrefill {
		r.prefillLeft -= n
		if r.prefillLeft == 0 {
			// The step that finishes the prompt samples the first token.
			r.firstTok = s.now
			r.outLeft--
			if r.pick != nil {
				r.pick.Started() // the proxy sees the answer's first byte
			}
		}
	}
	kept := p.running[:0]
	for _, r := range p.running {
		if r.prefillLeft == 0 && r.outLeft <= 0 {
			s.complete(p, r)
			continue
		}
		kept = append(kept, r)
	}
	clear(p.running[len(kept):])
	p.running = kept
	s.startStep(p)
}

func (s *sim) complete(p *pod, r *request) {
	r.done = s.now
	p.kv.Unpin(r.pinned)
	r.pinned = nil
	if r.pick != nil {
		r.pick.Done(balance.Success)
		r.pick.Answered(int64(r.output.tokens)) // the response's usage
	}
	s.done = append(s.done, r)
	s.push(&event{t: s.now + s.w.think(r.user), kind: evArrive, user: r.user})
}
