package balance

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/stretchr/testify/require"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1_700_000_000, 0)} }
func addrs(n int) (out []string) {
	for i := range n {
		out = append(out, fmt.Sprintf("10.0.0.%d:8000", i+1))
	}
	return
}
func pick(t *testing.T, b *Balancer, r *Request) *Pick {
	t.Helper()
	p, err := b.Pick(r)
	require.NoError(t, err)
	return p
}

func TestRoundRobinDefault(t *testing.T) {
	b := New(FromEndpoints(&proxyapi.Endpoints{Balancing: proxyapi.Balancing{Mode: "RoundRobin",
		PrefixAffinity: &proxyapi.PrefixAffinity{BlockBytes: 256}}}, time.Second))
	require.Zero(t, b.Config().BlockBytes, "prefix affinity is ignored without LoadAware")
	_, err := b.Pick(nil)
	require.ErrorIs(t, err, ErrNoEndpoint)
	require.False(t, b.Synced())
	b.SetPods(addrs(3))
	seen := map[string]int{}
	for range 9 {
		p := pick(t, b, nil)
		seen[p.Addr]++
		p.Done(Success)
	}
	require.Equal(t, map[string]int{"10.0.0.1:8000": 3, "10.0.0.2:8000": 3, "10.0.0.3:8000": 3}, seen)
}

func TestLeastLoadedInflightAndMetrics(t *testing.T) {
	b := New(Config{LoadAware: true})
	b.SetPods(addrs(3))
	p1 := pick(t, b, nil)
	p2 := pick(t, b, nil)
	require.NotEqual(t, p1.Addr, p2.Addr)
	p3 := pick(t, b, nil)
	require.NotEqual(t, p3.Addr, p1.Addr)
	require.NotEqual(t, p3.Addr, p2.Addr)
	p1.Done(Success)
	p4 := pick(t, b, nil)
	require.Equal(t, p1.Addr, p4.Addr, "the pod with nothing in flight")
	for _, p := range []*Pick{p2, p3, p4} {
		p.Done(Success)
	}

	// Engine metrics outweigh this router's (zero) in-flight count.
	b.SetMetrics("10.0.0.1:8000", &EngineMetrics{Running: 8, Waiting: 2})
	b.SetMetrics("10.0.0.2:8000", &EngineMetrics{Running: 1, KVCacheUsage: 0.5})
	b.SetMetrics("10.0.0.3:8000", &EngineMetrics{Running: 3})
	p := pick(t, b, nil)
	require.Equal(t, "10.0.0.2:8000", p.Addr)
	// Requests sent since the scrape count on top of it.
	q := pick(t, b, nil)
	require.Equal(t, "10.0.0.2:8000", q.Addr) // 2.5 vs 3
	r := pick(t, b, nil)
	require.Equal(t, "10.0.0.3:8000", r.Addr) // 3.5 vs 3
	b.SetMetrics("10.0.0.3:8000", nil)
	s := pick(t, b, nil)
	require.Equal(t, "10.0.0.3:8000", s.Addr, "without metrics: 1 in flight")
}

func TestQuarantineTwoFailuresInARow(t *testing.T) {
	c := newClock()
	b := New(Config{Quarantine: 10 * time.Second, Now: c.now})
	b.SetPods(addrs(2))
	bad := "10.0.0.1:8000"
	fail := func() {
		for range 2 { // round-robin: one of the two picks is the bad pod
			p := pick(t, b, nil)
			if p.Addr == bad {
				p.Done(Failure)
			} else {
				p.Done(Success)
			}
		}
	}
	fail()
	require.False(t, b.Status()[0].Quarantined, "one failure does not quarantine")
	fail()
	require.True(t, b.Status()[0].Quarantined)
	for range 5 {
		p := pick(t, b, nil)
		require.NotEqual(t, bad, p.Addr)
		p.Done(Success)
	}
	// pickBad picks until round-robin reaches the bad pod, ending every
	// other pick with Success, and returns the bad pod's pick.
	pickBad := func() *Pick {
		p := pick(t, b, nil)
		for p.Addr != bad {
			p.Done(Success)
			p = pick(t, b, nil)
		}
		return p
	}
	// A success in between resets the count.
	c.add(11 * time.Second)
	p := pickBad() // the half-open trial
	// While the trial is in flight the pod is skipped.
	o := pick(t, b, nil)
	require.NotEqual(t, bad, o.Addr)
	o.Done(Success)
	p.Done(Failure) // failed trial: quarantined again at once
	require.True(t, b.Status()[0].Quarantined)
	c.add(11 * time.Second)
	p = pickBad()
	p.Done(Success)
	require.False(t, b.Status()[0].Quarantined)
	// Failure, success, failure: not in a row.
	for _, r := range []Result{Failure, Success, Failure} {
		p = pickBad()
		p.Done(r)
	}
	require.False(t, b.Status()[0].Quarantined)
	// A silent stream quarantines at once.
	p = pickBad()
	p.Done(StreamIdle)
	require.True(t, b.Status()[0].Quarantined)
	b.SetPods([]string{bad})
	_, err := b.Pick(nil)
	require.ErrorIs(t, err, ErrAllQuarantined)
	p.Done(Success) // a second Done is ignored
}

func chat(system string, turns ...string) []byte {
	msgs := []map[string]string{{"role": "system", "content": system}}
	for i, t := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": t})
	}
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
	return b
}

func TestPromptBlocksChain(t *testing.T) {
	sys := strings.Repeat("s", 3000)
	a := PromptBlocks(chat(sys, "question one "+strings.Repeat("a", 600)), 1024)
	bb := PromptBlocks(chat(sys, "question two "+strings.Repeat("b", 600)), 1024)
	require.Len(t, a, 3)
	require.Equal(t, a[:2], bb[:2], "blocks inside the shared system prompt match")
	require.NotEqual(t, a[2], bb[2])
	// A conversation that grows keeps its earlier blocks.
	long := PromptBlocks(chat(sys, "question one "+strings.Repeat("a", 600), strings.Repeat("r", 2000), "next"), 1024)
	require.Equal(t, a, long[:3])
	// Chained: same block bytes after a different prefix hash differently.
	x := PromptBlocks(chat("x"+sys[1:], "question one "+strings.Repeat("a", 600)), 1024)
	require.NotEqual(t, a[1], x[1])
	// Tools come first and are part of the prefix.
	withTools, _ := json.Marshal(map[string]any{"tools": []string{strings.Repeat("t", 2048)}, "messages": []any{}})
	require.Len(t, PromptBlocks(withTools, 1024), 2)
	require.Nil(t, PromptBlocks([]byte("not json"), 1024))
	require.Nil(t, PromptBlocks(chat("short"), 1024))
}

func TestSessionKey(t *testing.T) {
	names := CanonicalHeaders([]string{"x-session-id", "X-USER-ID"})
	k1, ok := SessionKey(map[string][]string{"X-User-Id": {"u1"}}, names)
	require.True(t, ok)
	k2, _ := SessionKey(map[string][]string{"X-Session-Id": {""}, "X-User-Id": {"u1"}}, names)
	require.Equal(t, k1, k2, "empty values are skipped")
	k3, _ := SessionKey(map[string][]string{"X-Session-Id": {"u1"}, "X-User-Id": {"u1"}}, names)
	require.NotEqual(t, k1, k3, "the first header wins and the name is part of the key")
	_, ok = SessionKey(map[string][]string{}, names)
	require.False(t, ok)
}

func TestPrefixAffinityAndShedding(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, LoadBound: -1})
	b.SetPods(addrs(4))
	sys := strings.Repeat("p", 4000)
	req := func(q string) *Request {
		r := b.Features(nil, chat(sys, q))
		return &r
	}
	first := pick(t, b, req("q0"))
	first.Done(Success)
	for i := range 10 {
		p := pick(t, b, req(fmt.Sprint("q", i+1)))
		require.Equal(t, first.Addr, p.Addr, "the pod that holds the prefix")
		p.Done(Success)
	}
	// Pile up in-flight work on the prefix pod: it sheds to others.
	var open []*Pick
	shed := 0
	for i := range 20 {
		p := pick(t, b, req(fmt.Sprint("load", i)))
		if p.Addr != first.Addr {
			shed++
		}
		open = append(open, p)
	}
	require.Positive(t, shed, "a hot pod sheds work")
	for _, p := range open {
		p.Done(Success)
	}
	// A different prefix goes to the least loaded (any pod; all idle).
	other := b.Features(nil, chat(strings.Repeat("o", 4000), "x"))
	p := pick(t, b, &other)
	p.Done(Success)
}

func TestSessionAffinity(t *testing.T) {
	c := newClock()
	b := New(Config{LoadAware: true, SessionHeaders: CanonicalHeaders([]string{"x-session-id"}), SessionIdle: time.Minute, Now: c.now})
	b.SetPods(addrs(3))
	h := func(s string) *Request {
		r := b.Features(map[string][]string{"X-Session-Id": {s}}, nil)
		return &r
	}
	// New sessions go to the least-loaded pod.
	busy := pick(t, b, nil) // one request in flight somewhere
	s1 := pick(t, b, h("s1"))
	require.NotEqual(t, busy.Addr, s1.Addr)
	s1.Done(Success)
	home := s1.Addr
	// The session stays while its pod is not queuing, or queuing but not
	// clearly busier (twice the least-loaded pod's work plus two).
	busy.Done(Success)
	for _, a := range addrs(3) {
		b.SetMetrics(a, &EngineMetrics{Running: 5})
	}
	b.SetMetrics(home, &EngineMetrics{Running: 9})
	for range 3 {
		p := pick(t, b, h("s1"))
		require.Equal(t, home, p.Addr, "busier but not queuing")
		p.Done(Success)
	}
	b.SetMetrics(home, &EngineMetrics{Running: 8, Waiting: 3})
	p := pick(t, b, h("s1"))
	require.Equal(t, home, p.Addr, "queuing, 11 < 2*5+2")
	p.Done(Success)
	b.SetMetrics(home, &EngineMetrics{Running: 12, Waiting: 4})
	moved := pick(t, b, h("s1"))
	require.NotEqual(t, home, moved.Addr)
	require.True(t, moved.Moved)
	moved.Done(Success)
	b.SetMetrics(home, nil)
	var load []*Pick
	// ...and then it stays where it moved, even once the old pod is idle.
	b.SetMetrics(home, nil)
	for _, p := range load {
		p.Done(Success)
	}
	for range 5 {
		p := pick(t, b, h("s1"))
		require.Equal(t, moved.Addr, p.Addr)
		p.Done(Success)
	}
	require.EqualValues(t, 1, b.Moves())
	// Idle past the timeout: placed again by load.
	c.add(2 * time.Minute)
	x := pick(t, b, h("s1"))
	x.Done(Success)
	// A removed pod's sessions are placed again.
	b.SetPods([]string{"10.0.0.9:8000"})
	y := pick(t, b, h("s1"))
	require.Equal(t, "10.0.0.9:8000", y.Addr)
	y.Done(Success)
}

func TestLRUEvictsLeastRecent(t *testing.T) {
	l := newBlockLRU(100, 0)
	for i := range uint64(100) {
		l.Touch(i)
	}
	l.Touch(0) // 0 becomes most recent
	l.Touch(1000)
	require.True(t, l.Contains(0))
	require.False(t, l.Contains(1), "1 was the least recently used")
	require.Equal(t, 100, l.Len())
	// Random workload against a reference model.
	r := rand.New(rand.NewPCG(1, 2))
	ref := []uint64{}
	l = newBlockLRU(64, 0)
	for range 20000 {
		h := uint64(r.IntN(200))
		if r.IntN(3) == 0 {
			require.Equal(t, refContains(ref, h), l.Contains(h))
			continue
		}
		l.Touch(h)
		ref = refTouch(ref, h, 64)
	}
	require.Equal(t, len(ref), l.Len())
	for _, h := range ref {
		require.True(t, l.Contains(h))
	}
}

func refContains(ref []uint64, h uint64) bool {
	for _, x := range ref {
		if x == h {
			return true
		}
	}
	return false
}

func refTouch(ref []uint64, h uint64, max int) []uint64 {
	for i, x := range ref {
		if x == h {
			ref = append(ref[:i], ref[i+1:]...)
			break
		}
	}
	ref = append([]uint64{h}, ref...)
	if len(ref) > max {
		ref = ref[:max]
	}
	return ref
}

// lruBytesPerBlock fills n LRUs of capacity max to the brim and returns the
// heap bytes per remembered block.
func lruBytesPerBlock(n, max int) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ls := make([]*blockLRU, n)
	h := uint64(1)
	for i := range ls {
		ls[i] = newBlockLRU(max, 0)
		for range max + max/2 { // past capacity: evictions too
			h = h*6364136223846793005 + 1442695040888963407
			ls[i].Touch(h)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ls)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n*max)
}

func TestLRUMemoryPerBlock(t *testing.T) {
	per := lruBytesPerBlock(4, DefaultMaxBlocks)
	t.Logf("%.1f bytes per remembered block", per)
	require.LessOrEqual(t, per, 64.0)
}

// BenchmarkLRUMemory reports bytes per remembered block for a full
// default-size LRU (maxBlocksPerEndpoint 16384) and at the maximum (262144).
func BenchmarkLRUMemory(b *testing.B) {
	for _, max := range []int{DefaultMaxBlocks, 262144} {
		b.Run(fmt.Sprint(max), func(b *testing.B) {
			var per float64
			for range b.N {
				per = lruBytesPerBlock(1, max)
			}
			b.ReportMetric(per, "bytes/block")
		})
	}
}

func BenchmarkPick(b *testing.B) {
	bal := New(Config{LoadAware: true, BlockBytes: 1024, MaxBlocksPerPod: DefaultMaxBlocks})
	bal.SetPods(addrs(8))
	body := chat(strings.Repeat("s", 24000), strings.Repeat("q", 4800))
	b.ReportAllocs()
	for b.Loop() {
		r := bal.Features(nil, body)
		p, _ := bal.Pick(&r)
		p.Done(Success)
	}
}

// chatMax is chat with a max_tokens bound.
func chatMax(maxTokens int, system string, turns ...string) []byte {
	var m map[string]any
	if err := json.Unmarshal(chat(system, turns...), &m); err != nil {
		panic(err)
	}
	m["max_tokens"] = maxTokens
	out, _ := json.Marshal(m)
	return out
}

// A new session is placed by Score like any other request: its first turn
// goes where its prefix is cached although that pod carries a little more
// load (before, a new session went to the least-loaded pod and the prefix
// only broke ties, so first turns landed on cold pods).
func TestNewSessionPlacedByScore(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, LoadBound: -1,
		SessionHeaders: CanonicalHeaders([]string{"x-session-id"})})
	b.SetPods(addrs(2))
	doc := strings.Repeat("d", 4000)
	warm := b.Features(nil, chat(doc, "first"))
	home := pick(t, b, &warm)
	home.Done(Success)
	// One request in flight on the prefix pod: it is the busier one.
	busy := b.Features(nil, chat(doc, "busy"))
	inflight := pick(t, b, &busy)
	require.Equal(t, home.Addr, inflight.Addr)
	for i := range 4 {
		s := b.Features(map[string][]string{"X-Session-Id": {fmt.Sprint("s", i)}}, chat(doc, fmt.Sprint("turn 1 of ", i)))
		p := pick(t, b, &s)
		require.Equal(t, home.Addr, p.Addr, "a new session goes where its prefix is cached")
		p.Done(Success)
	}
	inflight.Done(Success)
	// A new session without a cached prefix still goes to the least loaded.
	other := pick(t, b, nil)
	s := b.Features(map[string][]string{"X-Session-Id": {"cold"}}, chat(strings.Repeat("c", 4000), "q"))
	p := pick(t, b, &s)
	require.NotEqual(t, other.Addr, p.Addr)
	p.Done(Success)
	other.Done(Success)
}

// The pod's published cache geometry bounds its remembered blocks: a pod
// holding 640 tokens remembers 640/64+1 blocks of 256 bytes (4 bytes per
// token), not MaxBlocksPerPod; a pod without geometry keeps the bound; a
// geometry learned after the blocks shrinks the memory to its most recent.
func TestMemorySizedFromCacheGeometry(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024})
	b.SetPods(addrs(1))
	long := b.Features(nil, chat(strings.Repeat("g", 256*40), "q"))
	require.GreaterOrEqual(t, len(long.Blocks), 40)
	pick(t, b, &long).Done(Success)
	require.Equal(t, len(long.Blocks), b.Status()[0].Blocks, "no geometry: the configured bound")
	b.SetMetrics(addrs(1)[0], &EngineMetrics{CacheBlockSize: 16, CacheBlocks: 40})
	st := b.Status()[0]
	require.EqualValues(t, 640, st.CacheTokens)
	require.Equal(t, 11, st.Blocks, "resized to what the pod holds")
	// The most recent blocks are kept: the prompt's head (touched last).
	require.Equal(t, 11, b.matched(b.byAddr[addrs(1)[0]], long.Blocks))
	other := b.Features(nil, chat(strings.Repeat("h", 256*40), "q"))
	pick(t, b, &other).Done(Success)
	require.Equal(t, 11, b.Status()[0].Blocks)
	// A failed scrape keeps the geometry.
	b.SetMetrics(addrs(1)[0], nil)
	require.EqualValues(t, 640, b.Status()[0].CacheTokens)
}

// The remembered blocks age the way the pod evicts: every request sent to
// the pod allocates the prompt past the blocks it holds and the answer, and a block
// not re-sent within the pod's cache size of allocations is gone, although
// the count bound would still hold it. A re-sent prefix is refreshed (LRU).
func TestEvictionAgesRememberedBlocks(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024})
	a := addrs(2)
	b.SetPods(a[:1])
	// 656 tokens: 10.25 blocks of 64 tokens.
	b.SetMetrics(a[0], &EngineMetrics{CacheBlockSize: 16, CacheBlocks: 41})
	doc := strings.Repeat("p", 4*256-60)
	send := func(body []byte) {
		r := b.Features(nil, body)
		pick(t, b, &r).Done(Success)
	}
	prefix := b.Features(nil, chatMax(1, doc, "q"))
	require.Len(t, prefix.Blocks, 4)
	require.Equal(t, 1025, prefix.PromptBytes)
	require.Equal(t, 1, prefix.OutputTokens)
	send(chatMax(1, doc, "q")) // 4 new blocks = 256 tokens, + 1: clock 257
	filler := func(i int) []byte { return chatMax(4096, fmt.Sprintf("%03d%s", i, strings.Repeat("f", 200)), "x") }
	pod := b.byAddr[a[0]]
	send(filler(1))            // 1 new block = 64 tokens + 256 answer tokens (capped at DefaultOutputTokens): 577
	send(chatMax(1, doc, "q")) // no new block + 1 token: 578, the prefix refreshed
	send(filler(2))
	send(filler(3))
	require.Equal(t, 4, b.matched(pod, prefix.Blocks), "refreshed, 640 tokens allocated since")
	send(filler(4))
	require.Zero(t, b.matched(pod, prefix.Blocks), "960 tokens allocated since: evicted")
	require.Less(t, b.Status()[0].Blocks, 11, "the count bound alone would still hold it")
	// So a second pod wins the prefix over the pod that lost it and is busier.
	b.SetPods(a)
	busy := pick(t, b, nil)
	if busy.Addr != a[0] {
		busy.Done(Success)
		busy = pick(t, b, nil)
	}
	require.Equal(t, a[0], busy.Addr)
	p := pick(t, b, &prefix)
	require.Equal(t, a[1], p.Addr)
	p.Done(Success)
	busy.Done(Success)
}

// cachedPod is a prefix-affinity balancer over one pod that publishes a
// cache of `blocks` pages of 16 tokens.
func cachedPod(blocks float64) (*Balancer, *Pod) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024})
	a := addrs(1)
	b.SetPods(a)
	b.SetMetrics(a[0], &EngineMetrics{CacheBlockSize: 16, CacheBlocks: blocks})
	return b, b.byAddr[a[0]]
}

// A warm request ages the pod's memory by the blocks it adds, not by the
// tail past its last whole block: that tail is mostly the shared prompt's
// (the pod caches it at a finer grain) and is counted when a later block
// completes it. Ten warm requests for one document leave another document
// matched; counting each request's tail (about 230 bytes = 57 tokens here)
// aged it out after them although the pod allocated only their answers.
func TestWarmRequestsAgeByNewBlocks(t *testing.T) {
	b, pod := cachedPod(40) // 640 tokens
	send := func(body []byte) Request {
		r := b.Features(nil, body)
		pick(t, b, &r).Done(Success)
		return r
	}
	docA := send(chatMax(1, strings.Repeat("a", 1180), "q"))
	require.Len(t, docA.Blocks, 4)
	require.EqualValues(t, 4*64+1, pod.clock, "a cold prompt: its new blocks and the answer")
	docB := strings.Repeat("b", 1180) // 4 blocks and a tail of about 230 bytes
	for i := range 10 {
		r := send(chatMax(1, docB, fmt.Sprintf("question %d?", i)))
		require.Len(t, r.Blocks, 4, "the question stays in the tail")
	}
	require.EqualValues(t, 2*(4*64+1)+9, pod.clock, "nine warm requests: their answers")
	require.Equal(t, 4, b.matched(pod, docA.Blocks), "docA still held")
	// A prompt shorter than a block counts its bytes.
	before := pod.clock
	short := send(chatMax(1, "s", "hi"))
	require.Empty(t, short.Blocks)
	require.EqualValues(t, before+int64(short.PromptBytes/4)+1, pod.clock)
}

// A request whose body sets no max_tokens ages the pod's memory by the
// answers the backend has given such requests, not by the cap: with short
// answers, the prefix a pod evicts only after many requests is not
// forgotten after a few. A bounded request's answer teaches nothing.
func TestUnboundedRequestsAgeByLearnedAnswers(t *testing.T) {
	b, pod := cachedPod(100) // 1600 tokens
	// send places one request (its prompt shorter than a block, so the
	// same prompt bytes each time) and reports its answer; it returns how
	// far the pod's clock moved for it.
	send := func(body []byte, answer int64) int64 {
		before := pod.clock
		r := b.Features(nil, body)
		pk := pick(t, b, &r)
		pk.Done(Success)
		pk.Answered(answer)
		return pod.clock - before
	}
	require.InDelta(t, DefaultOutputTokens, b.AnswerTokens(), 0, "the cap until an answer is seen")
	bounded := send(chatMax(8, "x", "q"), 8)
	for range 20 {
		send(chatMax(8, "x", "q"), 8) // a bounded request's answer teaches nothing
	}
	require.InDelta(t, DefaultOutputTokens, b.AnswerTokens(), 0)
	unbounded := send(chat("x", "q"), 8)
	require.EqualValues(t, DefaultOutputTokens-8, unbounded-bounded, "counted at the cap before any answer was learned")
	for range 200 {
		send(chat("x", "q"), 8)
	}
	require.InDelta(t, 8, b.AnswerTokens(), 1, "learned from 200 answers of 8 tokens")
	require.InDelta(t, bounded, send(chat("x", "q"), 8), 1, "an unbounded request now counts as a bounded one")
	send(chat("x", "q"), 5000)
	require.InDelta(t, 8+float64(DefaultOutputTokens-8)/answerSamples, b.AnswerTokens(), 1, "an answer counts at most the cap")

	// A document of 5 blocks behind 40 short unbounded requests is still
	// remembered: counting each answer at the cap would have aged it out
	// of 1600 tokens after 6 of them.
	doc := b.Features(nil, chat(strings.Repeat("d", 1300), "q"))
	require.Len(t, doc.Blocks, 5)
	pick(t, b, &doc).Done(Success)
	for range 40 {
		send(chat("x", "q"), 8)
	}
	require.Equal(t, len(doc.Blocks), b.matched(pod, doc.Blocks), "the document is still remembered")
}

// The load bound: a popular prefix on an idle fleet would go to its pod
// every time (a full match beats an empty pod); carrying every placement,
// it gets more homes (spread), which learn it, and the soft bound shares
// it between them, so the placements even out. Without the bound one pod
// takes all of them.
func TestLoadBoundSpillsPopularPrefix(t *testing.T) {
	c := newClock()
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, Now: c.now})
	require.InDelta(t, DefaultLoadBound, b.Config().LoadBound, 0)
	b.SetPods(addrs(4))
	doc := strings.Repeat("z", 4000)
	count := map[string]int{}
	for i := range 200 {
		r := b.Features(nil, chat(doc, fmt.Sprint("q", i)))
		p := pick(t, b, &r)
		count[p.Addr]++
		p.Done(Success)
		c.add(250 * time.Millisecond)
	}
	busiest := 0
	for _, n := range count {
		busiest = max(busiest, n)
	}
	require.Len(t, count, 4, "every pod takes a share")
	require.LessOrEqual(t, float64(busiest), 1.3*200/4, "busiest pod within 1.3x the mean: %v", count)
	// Later requests of the prefix hit: the pods that took the spill hold it.
	for _, a := range addrs(4) {
		r := b.Features(nil, chat(doc, "again"))
		require.Equal(t, len(r.Blocks), b.matched(b.byAddr[a], r.Blocks), a)
	}
	// Off (LoadBound < 0): the prefix's pod takes everything.
	off := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, Now: c.now, LoadBound: -1})
	off.SetPods(addrs(4))
	seen := map[string]bool{}
	for i := range 50 {
		r := off.Features(nil, chat(doc, fmt.Sprint("q", i)))
		p := pick(t, off, &r)
		seen[p.Addr] = true
		p.Done(Success)
		c.add(250 * time.Millisecond)
	}
	require.Len(t, seen, 1)
}

// boundFixture is four pods with prefix affinity; rates(first) gives the
// first pod first recent placements and the others 8 each, and place picks
// a pod for a request and ends the attempt.
type boundFixture struct {
	c *clock
	b *Balancer
	a []string
}

func newBoundFixture() *boundFixture {
	c := newClock()
	f := &boundFixture{c: c, b: New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, Now: c.now}), a: addrs(4)}
	f.b.SetPods(f.a)
	return f
}

// newSheddingFixture is a bound fixture whose first pod alone holds a
// rare prefix (one placement) and a hot one (five, its hottest).
func newSheddingFixture() (f *boundFixture, rare, hot Request) {
	f = newBoundFixture()
	rare, hot = f.prompt("r"), f.prompt("h")
	f.touch(f.a[0], &rare, 1)
	f.touch(f.a[0], &hot, 5)
	return f, rare, hot
}

func (f *boundFixture) rates(first float64) { f.ratesOf(first, 8) }

// ratesOf gives the first pod first recent placements and the others
// others; the slower count is others on every pod (a burst, not a
// sustained excess).
func (f *boundFixture) ratesOf(first, others float64) {
	for i, addr := range f.a {
		p := f.b.byAddr[addr]
		p.rate, p.slowRate, p.rateAt = others, others, f.c.now()
		if i == 0 {
			p.rate = first
		}
	}
}

func (f *boundFixture) place(t *testing.T, r Request) string {
	p := pick(t, f.b, &r)
	p.Done(Success)
	return p.Addr
}

// touch records n placements of r on the pod at addr.
func (f *boundFixture) touch(addr string, r *Request, n int) {
	for range n {
		f.b.remember(f.b.byAddr[addr], r, f.b.now(), true)
	}
}

func (f *boundFixture) prompt(fill string) Request {
	return f.b.Features(nil, chat(strings.Repeat(fill, 4000), "q"))
}

// A prompt no pod holds, on pods with nothing running (equal Scores), goes
// to the pod placed least lately whichever pod the rotation starts at, not
// to the first idle one: otherwise new documents pile up on a pod that is
// idle this instant though busy over the window.
func TestScoreTieGoesToLeastPlaced(t *testing.T) {
	f := newBoundFixture()
	for i := range 8 {
		for j, addr := range f.a {
			p := f.b.byAddr[addr]
			p.rate, p.rateAt = 6, f.c.now() // mean 5.25: all within the soft bound (6.51)
			if j == 2 {
				p.rate = 3
			}
		}
		require.Equal(t, f.a[2], f.place(t, f.prompt(fmt.Sprint(i))), "rotation %d", i)
	}
}

// Between LoadBound and HardLoadBound a pod stays a candidate for a prefix
// no pod within the bound holds as far (spilling it would cost a cold
// prefill); a prefix another pod within the bound holds goes there; past
// HardLoadBound the pod is left out even for its own prefix.
func TestLoadBoundSoftAndHard(t *testing.T) {
	f := newBoundFixture()
	a := f.a
	rare, shared := f.prompt("r"), f.prompt("s")
	f.touch(a[0], &rare, 1)
	f.touch(a[0], &shared, 1)
	f.touch(a[1], &shared, 1)
	// Mean 9: soft bound 10.45, hard bound 12.25.
	f.rates(12)
	require.Equal(t, a[0], f.place(t, rare), "over the soft bound, but only it holds the prefix")
	f.rates(12)
	require.Equal(t, a[1], f.place(t, shared), "another pod within the bound holds it as far")
	// Mean 9.25: hard bound 12.56.
	f.rates(13)
	require.NotEqual(t, a[0], f.place(t, rare), "past the hard bound the prefix spills")
}

// A prefix gets another home as soon as its traffic calls for one, before
// its pod is over the load bound: a rare prefix keeps its only home, a hot
// one (at least homeShare of the mean pod's recent placements per home)
// gets a second, which learns it, and from then on the two share it
// without a cold prefill. The heat decays with the rate window.
func TestHotPrefixSpreadsBeforeItsPodIsBusy(t *testing.T) {
	f := newBoundFixture()
	b, a := f.b, f.a
	rare, hot := f.prompt("r"), f.prompt("h")
	f.touch(a[0], &rare, 1)
	f.touch(a[0], &hot, 3) // 3 recent placements: over 0.3 × the mean pod's 8
	// Every pod at 8 recent placements: all within the soft bound (9.4).
	f.rates(8)
	require.Equal(t, a[0], f.place(t, rare), "a rare prefix keeps its only home")
	f.rates(8)
	second := f.place(t, hot)
	require.NotEqual(t, a[0], second, "a hot prefix gets a second home while its pod is within the bound")
	require.Equal(t, len(hot.Blocks), b.matched(b.byAddr[second], hot.Blocks), "the second home learns the prefix")
	f.rates(8)
	require.Contains(t, []string{a[0], second}, f.place(t, hot), "4 placements on 2 homes < 2 × 0.3 × the mean pod's 8: no third home")
	// Mean 9: soft bound 10.45; 5 placements on 2 homes < 5.4.
	f.rates(12)
	require.Equal(t, second, f.place(t, hot), "with the first home over the soft bound, the soft bound shares it with the second home")

	// Heat decays: two windows later the prefix (touched 3 times there) no
	// longer carries 0.3 of a mean pod's placements.
	f.c.add(2 * DefaultRateWindow)
	b.byAddr[second].blocks = nil
	f.rates(8)
	require.Equal(t, a[0], f.place(t, hot), "a prefix that cooled down keeps its only home")

	// Without the load bound nothing spreads.
	off := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, Now: f.c.now, LoadBound: -1})
	off.SetPods(a)
	for range 3 {
		off.remember(off.byAddr[a[0]], &hot, off.now(), true)
	}
	pk := pick(t, off, &hot)
	pk.Done(Success)
	require.Equal(t, a[0], pk.Addr, "LoadBound < 0 turns spreading off")
}

// Past the hard bound a pod sheds its hottest prefixes, not whichever
// request comes next: a rare prefix (under half as hot as the pod's
// hottest) stays, since moving it would cost a cold prefill and relieve
// little; past 1.2 × the hard bound everything spills.
func TestHardBoundShedsHottestFirst(t *testing.T) {
	f, rare, hot := newSheddingFixture()
	a := f.a
	// Mean 18.25: hard bound 23.81, last bound 28.38; a further home needs
	// 0.3 × 18.25 = 5.475 placements, which neither prefix has (so what
	// moves here is the hard bound's doing, not spread's). Heat: rare 1,
	// hot 5 (the pod's hottest).
	f.ratesOf(25, 16)
	require.Equal(t, a[0], f.place(t, rare), "a rare prefix stays past the hard bound")
	f.ratesOf(25, 16)
	require.NotEqual(t, a[0], f.place(t, hot), "the hottest prefix leaves")
	// Mean 18.75: last bound 1.5 × 18.75 + 1 = 29.13; rare's heat 2, under
	// half the hottest's 5.
	f.ratesOf(27, 16)
	require.Equal(t, a[0], f.place(t, rare), "still under the last bound")
	f.ratesOf(31, 16)
	require.NotEqual(t, a[0], f.place(t, rare), "past the last bound every prefix spills")
}

// Every placement counts in the pod's two placement counts, which decay
// with the rate window and with sustainedWindows of it.
func TestPlacementCountsDecay(t *testing.T) {
	c := newClock()
	b := New(Config{LoadAware: true, Now: c.now})
	b.SetPods(addrs(1))
	for range 10 {
		pick(t, b, &Request{}).Done(Success)
	}
	p := b.pods[0]
	require.InDelta(t, 10, b.rateOf(p, c.now()), 1e-9)
	require.InDelta(t, 10, b.slowRateOf(p, c.now()), 1e-9)
	c.add(DefaultRateWindow)
	require.InDelta(t, 10/math.E, b.rateOf(p, c.now()), 1e-9)
	require.InDelta(t, 10/math.Sqrt(math.E), b.slowRateOf(p, c.now()), 1e-9, "the slower count decays over %d windows", sustainedWindows)
}

// A pod that stays over the soft bound (its slower, 40 s count past
// sustainedBound × the mean + 1) sheds its hottest prefixes as if past the
// hard bound: a pod that collected several documents only it holds would
// otherwise sit between the bounds for minutes. A burst on the 20 s count
// alone sheds nothing below the hard bound, and within the soft bound a
// sustained count sheds nothing either.
func TestSustainedExcessShedsHottest(t *testing.T) {
	f, rare, hot := newSheddingFixture()
	a := f.a
	sustain := func(first, slow float64) {
		f.ratesOf(first, 32)
		f.b.byAddr[a[0]].slowRate = slow
	}
	// Mean 35: soft bound 37.75, hard bound 44.75; a further home needs
	// 0.3 × 35 = 10.5 placements, which neither prefix gets here. The
	// slower count's bound at 44 on the first pod: 1.15 × 35 + 1 = 41.25.
	sustain(44, 32)
	require.Equal(t, a[0], f.place(t, hot), "a burst over the soft bound keeps even the hottest prefix")
	sustain(44, 44)
	require.Equal(t, a[0], f.place(t, rare), "a rare prefix (heat 2, the hottest 6) stays")
	// Mean 32.5: soft bound 35.13.
	sustain(34, 44)
	require.Equal(t, a[0], f.place(t, hot), "within the soft bound nothing is shed")
	sustain(44, 44)
	require.NotEqual(t, a[0], f.place(t, hot), "a sustained excess sheds the hottest prefix")
}

// A shed relieves its pod at once: the shed prefix's heat stops counting
// against the bounds, so a pod whose excess one shed covers keeps its other
// hot prefixes instead of shedding each in turn (a cold prefill each) until
// its counts catch up. A larger excess still sheds the next, and the relief
// decays as the shed placements leave the counts.
func TestShedRelievesItsPod(t *testing.T) {
	setup := func() (*boundFixture, Request, Request) {
		f := newBoundFixture()
		one, two := f.prompt("1"), f.prompt("2")
		f.touch(f.a[0], &one, 5) // equally hot: both among the hottest
		f.touch(f.a[0], &two, 5)
		return f, one, two
	}
	// Past the hard bound: mean (47 + 3 × 32) / 4 = 35.75, hard bound
	// 45.69; a further home needs 0.3 × 35.75 = 10.7 placements, which
	// neither prefix has. One shed takes 5 off: 42, under it.
	f, one, two := setup()
	a := f.a
	f.ratesOf(47, 32)
	require.NotEqual(t, a[0], f.place(t, one), "past the hard bound the hottest prefix leaves")
	f.ratesOf(47, 32)
	require.Equal(t, a[0], f.place(t, two), "the first shed covers the excess: the other hot prefix stays")
	f.c.add(5 * DefaultRateWindow)
	f.ratesOf(47, 32)
	require.NotEqual(t, a[0], f.place(t, two), "once the relief has decayed, an excess that is still there sheds again")

	// The sustained excess: the slower count's bound is 1.15 × its mean +
	// 1; a shed takes twice the prefix's heat off that count (its window
	// is twice as long).
	sustain := func(f *boundFixture, slow float64) {
		f.ratesOf(44, 32)
		f.b.byAddr[f.a[0]].slowRate = slow
	}
	f, one, two = setup()
	sustain(f, 44) // slow mean 35, bound 41.25
	require.NotEqual(t, a[0], f.place(t, one), "a sustained excess sheds the hottest prefix")
	sustain(f, 44)
	require.Equal(t, a[0], f.place(t, two), "44 - 2 × 5 is under the bound: the other stays")
	f, one, two = setup()
	sustain(f, 60) // slow mean 39, bound 45.85
	require.NotEqual(t, a[0], f.place(t, one))
	sustain(f, 60)
	require.NotEqual(t, a[0], f.place(t, two), "60 - 2 × 5 is still over the bound: the next hot prefix leaves too")
}

// A prefix gets another home only while its traffic (its heat summed over
// its homes) is at least homeShare of the mean pod's per home it has: a
// prefix on two busy pods whose traffic would not fill more stays on them.
func TestLoadBoundHomesFollowTraffic(t *testing.T) {
	f := newBoundFixture()
	b, a := f.b, f.a
	doc := f.prompt("d")
	f.touch(a[0], &doc, 3)
	f.touch(a[1], &doc, 2)
	rates := func() { // mean 10: soft bound 11.5, hard bound 13.5
		f.rates(12)
		b.byAddr[a[1]].rate = 12
	}
	rates()
	got := f.place(t, doc)
	require.Contains(t, a[:2], got, "5 placements on 2 homes < 2 × 0.3 × the mean pod's 10: no third home")
	f.touch(a[1], &doc, 2)
	rates()
	got = f.place(t, doc)
	require.Contains(t, a[2:], got, "8 placements on 2 homes: a third home")
}

// sessionBalancer is a balancer with prefix and session affinity
// (x-session-id) on n pods, on clock c.
func sessionBalancer(c *clock, n int) (*Balancer, []string) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, Now: c.now,
		SessionHeaders: CanonicalHeaders([]string{"x-session-id"})})
	a := addrs(n)
	b.SetPods(a)
	return b, a
}

// A bound session's later turns stay on their pod whatever the rules say,
// so they are not traffic another home could take and do not make their
// prefix hot: a document whose recent traffic is one session's six turns
// keeps its only home for the next request, while six placements the
// balancer chose give it a second.
func TestSessionTurnsDoNotHeatTheirPrefix(t *testing.T) {
	c := newClock()
	b, a := sessionBalancer(c, 4)
	doc := strings.Repeat("d", 4000)
	turns := []string{"q1"}
	home := ""
	for i := range 6 {
		r := b.Features(map[string][]string{"X-Session-Id": {"s1"}}, chat(doc, turns...))
		p := pick(t, b, &r)
		p.Done(Success)
		if i == 0 {
			home = p.Addr
		}
		require.Equal(t, home, p.Addr, "turn %d stays on the session's pod", i+1)
		turns = append(turns, fmt.Sprint("a", i+1), fmt.Sprint("q", i+2))
	}
	// Every pod at 8 recent placements: a further home needs 0.3 × 8 =
	// 2.4 on the one home; the session's first turn is 1.
	rates := func() {
		for _, addr := range a {
			p := b.byAddr[addr]
			p.rate, p.slowRate, p.rateAt = 8, 8, c.now()
		}
	}
	plain := b.Features(nil, chat(doc, "other"))
	rates()
	got := pick(t, b, &plain)
	got.Done(Success)
	require.Equal(t, home, got.Addr, "the session's turns do not make the document hot")
	for range 4 {
		b.remember(b.byAddr[home], &plain, c.now(), true)
	}
	rates()
	got = pick(t, b, &plain)
	got.Done(Success)
	require.NotEqual(t, home, got.Addr, "six chosen placements do")
}

// A session moved off a hot pod goes to the best other pod by Score, one
// that holds the conversation's shared prefix, not to the least-loaded pod
// (which would re-prefill the whole conversation).
func TestSessionMovesToPrefixHolder(t *testing.T) {
	c := newClock()
	b, a := sessionBalancer(c, 3)
	doc := strings.Repeat("d", 4000)
	sess := func(turns ...string) *Request {
		r := b.Features(map[string][]string{"X-Session-Id": {"s1"}}, chat(doc, turns...))
		return &r
	}
	home := pick(t, b, sess("q1"))
	home.Done(Success)
	// The shared prefix also reaches a second pod.
	holder := ""
	b.byAddr[a[1]].blocks = nil
	other := b.Features(nil, chat(doc, "other"))
	b.remember(b.byAddr[a[1]], &other, b.now(), true)
	holder = a[1]
	if home.Addr == holder {
		t.Fatalf("setup: the session landed on %s", holder)
	}
	cold := a[2]
	if home.Addr == cold {
		cold = a[0]
	}
	b.SetMetrics(home.Addr, &EngineMetrics{Running: 12, Waiting: 4})
	b.SetMetrics(holder, &EngineMetrics{Running: 2})
	b.SetMetrics(cold, &EngineMetrics{})
	turn := sess("q1", "a1", "q2")
	shared := 0 // the blocks the turn shares with what the holder was sent
	for shared < min(len(turn.Blocks), len(other.Blocks)) && turn.Blocks[shared] == other.Blocks[shared] {
		shared++
	}
	require.Positive(t, shared)
	heat := func() float64 { return b.byAddr[holder].blocks.Heat(other.Blocks[shared-1], b.tick(b.now())) }
	before := heat()
	moved := pick(t, b, turn)
	require.True(t, moved.Moved)
	require.Equal(t, holder, moved.Addr, "the pod with the shared prefix, not the least-loaded %s", cold)
	moved.Done(Success)
	require.InDelta(t, before+1, heat(), 1e-6, "a moved turn was chosen: it counts in the prefix's heat")
}

// The prefix weight is 3: a pod holding the whole prompt keeps it against
// idle pods while its load is under about three fleet-mean loads (a cold
// prefill of a long prompt costs more than a short wait); past that it
// sheds.
func TestPrefixWeightKeepsPrefixOverShortQueue(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, LoadBound: -1})
	require.InDelta(t, 3.0, b.Config().PrefixWeight, 0)
	a := addrs(8)
	b.SetPods(a)
	doc := strings.Repeat("w", 4000)
	warm := b.Features(nil, chat(doc, "q"))
	home := pick(t, b, &warm)
	home.Done(Success)
	for _, addr := range a {
		b.SetMetrics(addr, &EngineMetrics{})
	}
	// 4 running, the others idle: 4/(0.5+1) = 2.67 < 3.
	b.SetMetrics(home.Addr, &EngineMetrics{Running: 4})
	r := b.Features(nil, chat(doc, "again"))
	p := pick(t, b, &r)
	require.Equal(t, home.Addr, p.Addr)
	p.Done(Success)
	// 8 running: 8/(1+1) = 4 > 3.
	b.SetMetrics(home.Addr, &EngineMetrics{Running: 8})
	r = b.Features(nil, chat(doc, "more"))
	p = pick(t, b, &r)
	require.NotEqual(t, home.Addr, p.Addr)
	p.Done(Success)
}

// A session on a queuing, clearly busier pod does not move to a pod that
// lacks its conversation's shared prefix (the move would re-prefill the whole
// conversation, which costs more than the queue) unless the move wins by
// Score: its pod's load exceeds the other's by PrefixWeight (3) times the
// other pods' mean load + 1.
func TestSessionStaysRatherThanColdMove(t *testing.T) {
	c := newClock()
	b, a := sessionBalancer(c, 3)
	doc := strings.Repeat("c", 4000)
	sess := func(turns ...string) *Request {
		r := b.Features(map[string][]string{"X-Session-Id": {"s1"}}, chat(doc, turns...))
		return &r
	}
	home := pick(t, b, sess("q1"))
	home.Done(Success)
	for _, addr := range a {
		b.SetMetrics(addr, &EngineMetrics{Running: 2})
	}
	// Queuing and clearly busier (8 >= 2*2+2); Score: stay 8/(2+1) = 2.67,
	// move 2/3 + 3 = 3.67.
	b.SetMetrics(home.Addr, &EngineMetrics{Running: 6, Waiting: 2})
	p := pick(t, b, sess("q1", "a1", "q2"))
	require.Equal(t, home.Addr, p.Addr, "no other pod holds the conversation")
	require.False(t, p.Moved)
	p.Done(Success)
	// One idle pod beside busy ones does not make a cold move worth it:
	// the others at 0, 3, 6 (mean 3), home 10 and queuing: stay 10/4 = 2.5
	// against move 0/4 + 3 = 3. (A rule against the least-loaded pod
	// alone, 10 >= 4×0+4, moved it.)
	b4, a4 := sessionBalancer(c, 4)
	r4 := func(turns ...string) *Request {
		r := b4.Features(map[string][]string{"X-Session-Id": {"s4"}}, chat(doc, turns...))
		return &r
	}
	h4 := pick(t, b4, r4("q1"))
	h4.Done(Success)
	others := []float64{0, 3, 6}
	for _, addr := range a4 {
		if addr != h4.Addr {
			b4.SetMetrics(addr, &EngineMetrics{Running: others[0]})
			others = others[1:]
		}
	}
	b4.SetMetrics(h4.Addr, &EngineMetrics{Running: 8, Waiting: 2})
	p = pick(t, b4, r4("q1", "a1", "q2"))
	require.Equal(t, h4.Addr, p.Addr, "a cold move to the one idle pod costs more than the queue")
	p.Done(Success)

	// 16 running and waiting: stay 16/3 = 5.33 > 3.67, it moves.
	b.SetMetrics(home.Addr, &EngineMetrics{Running: 14, Waiting: 2})
	p = pick(t, b, sess("q1", "a1", "q2", "a2", "q3"))
	require.NotEqual(t, home.Addr, p.Addr)
	require.True(t, p.Moved)
	p.Done(Success)
}

// A pod prefilling another request's uncached prompt delays every request
// placed after it by that prefill: a warm request goes to another home of
// its prefix meanwhile, a prefix's only home still gets it (a cold pod
// would cost the same wait and lose the cache), and once the answer has
// begun (Started) the pod is preferred again.
func TestPendingPrefillSendsToAnotherHome(t *testing.T) {
	b := New(Config{LoadAware: true, BlockBytes: 256, MaxBlocksPerPod: 1024, LoadBound: -1})
	a := addrs(4)
	b.SetPods(a)
	shared, only := b.Features(nil, chat(strings.Repeat("s", 4000), "q")), b.Features(nil, chat(strings.Repeat("o", 4000), "q"))
	b.remember(b.byAddr[a[0]], &shared, b.now(), true)
	b.remember(b.byAddr[a[1]], &shared, b.now(), true)
	b.remember(b.byAddr[a[0]], &only, b.now(), true)
	b.SetMetrics(a[0], &EngineMetrics{})
	b.SetMetrics(a[1], &EngineMetrics{Running: 2})
	b.SetMetrics(a[2], &EngineMetrics{Running: 1})
	b.SetMetrics(a[3], &EngineMetrics{Running: 1})
	place := func(r Request) string {
		p := pick(t, b, &r)
		p.Done(Success)
		return p.Addr
	}
	require.Equal(t, a[0], place(shared), "the least loaded home")

	// A document no pod holds goes to the idle pod and is prefilling there.
	cold := b.Features(nil, chat(strings.Repeat("c", 4000), "q"))
	pk := pick(t, b, &cold)
	require.Equal(t, a[0], pk.Addr)
	require.Equal(t, len(cold.Blocks), b.byAddr[a[0]].prefilling)

	require.Equal(t, a[1], place(shared), "another home of the prefix, not behind the cold prefill")
	require.Equal(t, a[0], place(only), "the prefix's only home is waited for")

	pk.Started()
	require.Zero(t, b.byAddr[a[0]].prefilling)
	require.Equal(t, a[0], place(shared), "the prefill is done: the least loaded home again")
	pk.Done(Success)
	pk.Started()
	require.Zero(t, b.byAddr[a[0]].prefilling, "Done after Started counts the prefill once")

	// An attempt that ends before its answer begins ends its prefill too.
	other := b.Features(nil, chat(strings.Repeat("d", 4000), "q"))
	pk = pick(t, b, &other)
	require.Equal(t, len(other.Blocks), b.byAddr[pk.Addr].prefilling)
	pk.Done(Failure)
	require.Zero(t, b.byAddr[pk.Addr].prefilling)
}
