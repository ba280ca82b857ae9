package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/llmkube/llmkube-compile/tools/internal/kvcache"
)

// segment is a run of prompt or output tokens with a fixed identity: the
// same segment id always has the same bytes, so equal prefixes are equal
// bytes for the router and equal KV pages for the pods.
type segment struct {
	id     uint64
	tokens int
	role   string // system, user, assistant
}

// request is one call from a simulated client.
type request struct {
	user    int
	session int // -1 without a session
	turn    int
	group   int
	prompt  []segment
	output  segment // the answer; becomes history in the sessions workload
	headers map[string][]string
	// maxTokens, when set, is sent as the body's max_tokens (the answer's
	// length; the router counts it as the pod's allocation).
	maxTokens int

	// filled by the simulation
	arrive, firstTok, done  float64
	pod, prevPod            int // prevPod: the session's previous turn's (-1: none)
	promptTokens, hitTokens int
	prefillLeft, outLeft    int
	pages                   []uint64
	pinned                  []*kvcache.Page
	pick                    *balance.Pick
}

func (r *request) promptLen() int {
	n := 0
	for _, s := range r.prompt {
		n += s.tokens
	}
	return n
}

// workload issues requests for a closed loop of users.
type workload interface {
	// next returns user u's next request, or nil when u is finished.
	next(u int) *request
	// users is the number of concurrent clients.
	users() int
	// think is the pause before user u's next request (seconds).
	think(u int) float64
	// total is how many requests the run issues.
	total() int
}

// warmed is a workload whose first requests are not counted: those arriving
// before warmup (seconds) fill the caches.
type warmed interface {
	warmup() float64
}

const (
	segSystem = 1 << 40
	segUser   = 2 << 40
	segAnswer = 3 << 40
)

// sharedPrefix: groups each share a long context; every request is one group's
// context plus a fresh question (workload a), optionally with a hot tenant
// receiving hotShare of the requests (workload c).
type sharedPrefix struct {
	rng                  *rand.Rand
	groups, ctx, q, out  int
	nUsers, nTotal, sent int
	hotShare             float64
	seq                  uint64
}

func (w *sharedPrefix) users() int        { return w.nUsers }
func (w *sharedPrefix) total() int        { return w.nTotal }
func (w *sharedPrefix) think(int) float64 { return 0 }
func (w *sharedPrefix) next(u int) *request {
	if w.sent >= w.nTotal {
		return nil
	}
	w.sent++
	g := w.rng.IntN(w.groups)
	if w.hotShare > 0 && w.rng.Float64() < w.hotShare {
		g = 0
	}
	w.seq++
	return &request{
		user: u, session: -1, group: g,
		prompt:  []segment{{id: segSystem | uint64(g), tokens: w.ctx, role: "system"}, {id: segUser | w.seq, tokens: w.q, role: "user"}},
		output:  segment{id: segAnswer | w.seq, tokens: w.out, role: "assistant"},
		headers: map[string][]string{"X-User-Id": {fmt.Sprint("user-", u)}},
	}
}

// sessions: multi-turn chats; each turn's prompt is the whole history (a
// shared system prompt, the earlier questions and answers) plus a new
// question. A user runs sessions of `turns` turns one after another.
type sessions struct {
	rng                  *rand.Rand
	sys, q, out, turns   int
	nUsers, nTotal, sent int
	thinkMean            float64
	cur                  []*chat
	nextSession          int
}

type chat struct {
	id      int
	turn    int
	history []segment
}

func (w *sessions) users() int        { return w.nUsers }
func (w *sessions) total() int        { return w.nTotal }
func (w *sessions) think(int) float64 { return w.rng.ExpFloat64() * w.thinkMean }
func (w *sessions) next(u int) *request {
	if w.sent >= w.nTotal {
		return nil
	}
	w.sent++
	if w.cur == nil {
		w.cur = make([]*chat, w.nUsers)
	}
	c := w.cur[u]
	if c == nil || c.turn >= w.turns {
		c = &chat{id: w.nextSession, history: []segment{{id: segSystem, tokens: w.sys, role: "system"}}}
		w.nextSession++
		w.cur[u] = c
	}
	key := uint64(c.id)<<16 | uint64(c.turn)
	c.history = append(c.history, segment{id: segUser | key, tokens: w.q + w.rng.IntN(w.q/2+1), role: "user"})
	r := &request{
		user: u, session: c.id, turn: c.turn,
		prompt:  append([]segment(nil), c.history...),
		output:  segment{id: segAnswer | key, tokens: w.out, role: "assistant"},
		headers: map[string][]string{"X-Session-Id": {fmt.Sprint("chat-", c.id)}, "X-User-Id": {fmt.Sprint("user-", u)}},
	}
	c.history = append(c.history, r.output)
	c.turn++
	return r
}

// texts renders segments as bytes (4 bytes per token) for the router's
// prompt hashing. Contents are deterministic per segment id.
type texts struct {
	cache map[uint64]string
}

func (t *texts) get(s segment) string {
	if v, ok := t.cache[s.id]; ok && len(v) == 4*s.tokens {
		return v
	}
	r := rand.New(rand.NewPCG(s.id, 0x5eed))
	var b strings.Builder
	b.Grow(4 * s.tokens)
	const letters = "abcdefghijklmnopqrstuvwxyz     "
	for range 4 * s.tokens {
		b.WriteByte(letters[r.IntN(len(letters))])
	}
	v := b.String()
	if s.id>>40 == segSystem>>40 { // shared contexts are reused; cache them
		if t.cache == nil {
			t.cache = map[uint64]string{}
		}
		t.cache[s.id] = v
	}
	return v
}

// body is the OpenAI chat request the router sees.
func (t *texts) body(r *request) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","messages":[`)
	for i, s := range r.prompt {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"` + s.role + `","content":"`)
		b.WriteString(t.get(s))
		b.WriteString(`"}`)
	}
	b.WriteString(`],"stream":true`)
	if r.maxTokens > 0 {
		fmt.Fprintf(&b, `,"max_tokens":%d`, r.maxTokens)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

// documents mirrors tools/bench-routing's workload (the EPP comparison) in
// simulated time: shared documents with Zipf popularity, each request one
// document plus a fresh question, a share of the conversations multi-turn
// sessions whose turns resend the history. Conversations start as a
// (nearly) Poisson process: many users, each pausing an exponential time
// between conversations. Requests arriving before warmup are not counted,
// so the report covers a fleet whose caches have filled, as in the bench.
type documents struct {
	rng                  *rand.Rand
	docs                 []int     // tokens of each document
	cdf                  []float64 // popularity, cumulative
	q, out, turns        int
	bounded              bool    // requests carry max_tokens (the answer's length)
	sessionShare         float64 // of conversations
	turnThink, gap       float64 // mean pauses (s): between turns, between conversations
	nUsers, nTotal, sent int
	warm                 float64
	cur                  []*conversation
	nextSession          int
	seq                  uint64
}

type conversation struct {
	doc, session, turn, turns int
	history                   []segment
}

// newDocuments: nDocs documents of about docTokens (±10%), Zipf (s = 1)
// over a random order of the documents, at rate requests per second.
// Half of the requests belong to sessions of `turns` turns: with one
// request per single conversation, a conversation is a session with
// probability 1/(turns+1).
func newDocuments(rng *rand.Rand, rate float64, warm, measured float64) *documents {
	const nDocs, docTokens, users, turns = 48, 3000, 128, 4
	w := &documents{rng: rng, q: 150, out: 32, turns: turns, bounded: true, sessionShare: 1 / float64(turns+1),
		turnThink: 1, nUsers: users, warm: warm}
	order := rng.Perm(nDocs)
	weights := make([]float64, nDocs)
	sum := 0.0
	for rank, d := range order {
		weights[d] = 1 / float64(rank+1)
		sum += weights[d]
	}
	acc := 0.0
	for d := range nDocs {
		w.docs = append(w.docs, docTokens*9/10+rng.IntN(docTokens/5+1))
		acc += weights[d] / sum
		w.cdf = append(w.cdf, acc)
	}
	// Requests per conversation and the time a conversation takes besides
	// the pause before it (the turns' pauses; answers take about 0.1 s).
	perConv := w.sessionShare*turns + (1 - w.sessionShare)
	busy := w.sessionShare*(turns-1)*w.turnThink + perConv*0.1
	w.gap = max(float64(users)*perConv/rate-busy, 0.01)
	w.nTotal = int(rate * (warm + measured))
	return w
}

func (w *documents) users() int      { return w.nUsers }
func (w *documents) total() int      { return w.nTotal }
func (w *documents) warmup() float64 { return w.warm }
func (w *documents) think(u int) float64 {
	if c := w.cur[u]; c != nil && c.turn < c.turns {
		return w.rng.ExpFloat64() * w.turnThink
	}
	return w.rng.ExpFloat64() * w.gap
}

func (w *documents) next(u int) *request {
	if w.sent >= w.nTotal {
		return nil
	}
	w.sent++
	if w.cur == nil {
		w.cur = make([]*conversation, w.nUsers)
	}
	c := w.cur[u]
	if c == nil || c.turn >= c.turns {
		doc, _ := slices.BinarySearch(w.cdf, w.rng.Float64())
		doc = min(doc, len(w.docs)-1)
		c = &conversation{doc: doc, session: -1, turns: 1,
			history: []segment{{id: segSystem | uint64(doc), tokens: w.docs[doc], role: "system"}}}
		if w.rng.Float64() < w.sessionShare {
			c.session, c.turns = w.nextSession, w.turns
			w.nextSession++
		}
		w.cur[u] = c
	}
	w.seq++
	c.history = append(c.history, segment{id: segUser | w.seq, tokens: w.q, role: "user"})
	r := &request{
		user: u, session: c.session, turn: c.turn, group: c.doc,
		prompt:  append([]segment(nil), c.history...),
		output:  segment{id: segAnswer | w.seq, tokens: w.out, role: "assistant"},
		headers: map[string][]string{"X-User-Id": {fmt.Sprint("user-", u)}},
	}
	if w.bounded {
		r.maxTokens = w.out
	}
	if c.session >= 0 {
		r.headers["X-Session-Id"] = []string{fmt.Sprint("chat-", c.session)}
	}
	c.history = append(c.history, r.output)
	c.turn++
	return r
}
