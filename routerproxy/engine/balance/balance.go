// Package balance places requests on the ready pods of an endpoint-resolution
// backend: round-robin, or LoadAware with optional KV-cache prefix affinity
// and session affinity, plus per-pod passive health (quarantine). It is pure
// logic: no Kubernetes and no HTTP, so the router-proxy and the routing
// simulator (tools/routersim) run the same code. The proxy feeds it the ready
// pod set (from EndpointSlices) and engine metrics (from vLLM's /metrics).
package balance

import (
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Defaults (the compiler fills them; a hand-written config may omit them).
const (
	DefaultBlockBytes   = wellknown.BalancingBlockBytes
	DefaultMaxBlocks    = wellknown.BalancingMaxBlocks
	DefaultSessionIdle  = wellknown.BalancingSessionIdle
	DefaultPrefixWeight = 3.0
	// DefaultBytesPerToken converts the pod's cache geometry (tokens) to
	// prompt bytes: about 4 bytes of request JSON per token.
	DefaultBytesPerToken = 4.0
	// DefaultOutputTokens caps the answer length counted for a request's
	// KV pages (its body's bound, or the answers the backend gave requests
	// without one), and is that length until an answer is observed.
	DefaultOutputTokens = 256
	// answerSamples is the number of answers the learned answer length
	// (Balancer.answer) averages over, as an exponential moving average.
	answerSamples = 32
	// DefaultLoadBound caps each pod's share of recent placements (by
	// prefix Score) at this multiple of the pods' mean, plus one request.
	DefaultLoadBound = 1.05
	// DefaultHardLoadBound: past this multiple of the mean (+1) a pod is
	// over the bound even for a prefix only it holds, if the prefix is
	// among its hottest (lastBound: for every prefix).
	DefaultHardLoadBound = 1.25
	// DefaultRateWindow is the time constant of the pods' placement rates
	// and of the prompt blocks' heat.
	DefaultRateWindow = 20 * time.Second
	// homeShare: a prefix gets another home (spread) while its recent
	// chosen placements (its heat) are at least this share of the mean
	// pod's placements per home it has. A bound session's later turns are
	// not in the heat (about 3/8 of the EPP comparison's requests), so 0.3
	// of the mean pod's placements is about half a mean pod's traffic.
	homeShare = 0.3
	// hottestShare: past the hard bound a pod sheds the prefixes at least
	// this share as hot as its hottest.
	hottestShare = 0.5
	// lastBound: past the hard bound times this, a pod is over the bound
	// for every prefix.
	lastBound = 1.2
	// sustainedBound and sustainedWindows: a pod over the soft bound
	// whose placements over sustainedWindows rate windows (a slower count)
	// are past sustainedBound × their mean + 1 sheds its hottest prefixes
	// as if past the hard bound. A pod that collected several documents
	// only it holds sits between the two bounds for minutes (1.14–1.18 ×
	// the mean over a 60 s cell), since no rule on the 20 s count moves
	// such documents before the hard bound; lowering the hard bound
	// instead made the 20 s count's Poisson spread (about ±12% at
	// moderate load) shed on every burst, a cold prefill each.
	sustainedBound   = 1.15
	sustainedWindows = 2
	// heatTick is the resolution of the blocks' heat clock.
	heatTick = 100 * time.Millisecond
	// MaxSessions bounds the session binding table; beyond it expired
	// bindings are swept and then the oldest-looking ones dropped.
	MaxSessions = 1 << 20
)

// Errors from Pick.
var (
	// ErrNoEndpoint: the backend has no ready pod.
	ErrNoEndpoint = errors.New("no ready endpoint")
	// ErrAllQuarantined: every ready pod is quarantined.
	ErrAllQuarantined = errors.New("every ready endpoint is quarantined")
)

// Config configures a Balancer.
type Config struct {
	// LoadAware turns on load-aware placement; false is round-robin, and
	// prefix and session affinity are ignored (the compiler warns).
	LoadAware bool
	// BlockBytes > 0 turns on prefix affinity with blocks of this size.
	BlockBytes int
	// MaxBlocksPerPod bounds each pod's remembered blocks (LRU).
	MaxBlocksPerPod int
	// SessionHeaders (canonical MIME keys) turn on session affinity.
	SessionHeaders []string
	// SessionIdle is how long an unused binding is kept.
	SessionIdle time.Duration
	// Quarantine is how long a failed pod is skipped.
	Quarantine time.Duration
	// PrefixWeight trades a full prefix match against load: a pod holding the
	// whole prompt is preferred over an empty one until its load, relative
	// to the pods' mean load, exceeds the other's by PrefixWeight (default
	// DefaultPrefixWeight, 3: a cold prefill of a long shared prompt costs
	// more than waiting behind a few running requests).
	PrefixWeight float64
	// BytesPerToken converts a pod's cache geometry (tokens, from
	// EngineMetrics.CacheBlockSize and CacheBlocks) to prompt bytes, which
	// sizes and ages the pod's remembered blocks (default 4).
	BytesPerToken float64
	// LoadBound (with prefix affinity) keeps a pod out of the Score's
	// candidates while its recent placements (a count decaying with
	// RateWindow) exceed LoadBound × the pods' mean + 1, unless every pod
	// does: a popular prefix spills to a second pod, which learns it, instead
	// of making its first pod the busiest. Default DefaultLoadBound; < 0
	// turns it off, and with it the spreading of hot prefixes (spread).
	LoadBound float64
	// HardLoadBound (default DefaultHardLoadBound): between LoadBound and
	// HardLoadBound a pod stays a candidate for requests whose prefix no pod
	// within LoadBound holds as far; past it, for such requests whose
	// prefix is under half as hot as its hottest, up to lastBound ×
	// HardLoadBound.
	HardLoadBound float64
	// RateWindow is the time constant of the placement rates and the
	// blocks' heat (default DefaultRateWindow).
	RateWindow time.Duration
	// IgnoreLoad places by prefix match alone, ties by load (the
	// simulator's prefix-only arm; never set by the proxy).
	IgnoreLoad bool
	// Now is the clock (tests, simulator); nil means time.Now.
	Now func() time.Time
}

// FromEndpoints builds a Config from the runtime contract.
func FromEndpoints(e *proxyapi.Endpoints, quarantine time.Duration) Config {
	c := Config{Quarantine: quarantine}
	if e == nil {
		return c
	}
	bal := e.Balancing
	c.LoadAware = bal.Mode == proxyapi.BalancingLoadAware
	if !c.LoadAware {
		return c
	}
	if pa := bal.PrefixAffinity; pa != nil {
		c.BlockBytes, c.MaxBlocksPerPod = int(pa.BlockBytes), int(pa.MaxBlocksPerEndpoint)
		if c.BlockBytes <= 0 {
			c.BlockBytes = DefaultBlockBytes
		}
		if c.MaxBlocksPerPod <= 0 {
			c.MaxBlocksPerPod = DefaultMaxBlocks
		}
	}
	if sa := bal.SessionAffinity; sa != nil && len(sa.Headers) > 0 {
		c.SessionHeaders = CanonicalHeaders(sa.Headers)
		c.SessionIdle = sa.IdleTimeout.Duration
	}
	return c
}

// Request is what placement needs to know about one request.
type Request struct {
	// Blocks are the prompt's chained block hashes (PromptBlocks).
	Blocks []uint64
	// Session is the hashed session key when HasSession.
	Session    uint64
	HasSession bool
	// PromptBytes is the prompt's length (the bytes Blocks cut, with the
	// tail that fills no whole block); 0 counts the blocks only.
	PromptBytes int
	// OutputTokens bounds the answer (the body's max_completion_tokens or
	// max_tokens; 0 when absent): the pod allocates KV pages for it, which
	// ages what the pod caches. At most DefaultOutputTokens are counted;
	// when absent, the length the backend's answers have had
	// (Pick.Answered).
	OutputTokens int
}

// Result is an attempt's outcome for a pod's passive health.
type Result int

const (
	// Neutral: no verdict (client went away, header timeout).
	Neutral Result = iota
	// Success: the pod answered below 500.
	Success
	// Failure: a 5xx or a network error; two in a row quarantine the pod.
	Failure
	// StreamIdle: the pod's stream went silent; quarantines at once.
	StreamIdle
)

// EngineMetrics is a scrape of a pod's engine (vLLM).
type EngineMetrics struct {
	Running, Waiting float64
	// KVCacheUsage is the fraction (0..1) of KV-cache blocks in use.
	KVCacheUsage float64
	// The cache geometry (vllm:cache_config_info's block_size and
	// num_gpu_blocks; 0 when not published): the pod caches
	// CacheBlockSize*CacheBlocks tokens.
	CacheBlockSize, CacheBlocks float64
}

// Pod is one ready endpoint.
type Pod struct {
	Addr string

	inflight int
	metrics  *EngineMetrics
	// inflight when the metrics were taken: requests this router sent since
	// (or finished since) adjust the engine's numbers until the next scrape.
	inflightAtScrape int

	fails      int
	quarUntil  time.Time
	halfOpen   bool
	trial      bool
	quarantine int // quarantines so far (status)

	blocks *blockLRU
	picks  int64
	// cacheTokens is the pod's KV-cache capacity in tokens (0: unknown);
	// clock counts the tokens the pod was sent to allocate (prompt blocks it
	// did not hold plus the answer). A remembered block whose stamp is more
	// than cacheTokens behind the clock was evicted by the pod (LRU), so it
	// no longer matches.
	cacheTokens int64
	clock       int64
	// rate counts recent placements, decaying with RateWindow since rateAt;
	// slowRate the same with sustainedWindows × RateWindow.
	rate, slowRate float64
	rateAt         time.Time
	// topHeat is the heat of the hottest prefix placed here lately (the
	// heat of a placement's last matched block), decaying like the heat,
	// at topTick.
	topHeat float64
	topTick uint32
	// prefilling is the prompt blocks this router sent the pod that it
	// did not hold (by matched) for requests whose answer has not begun
	// (Pick.Started): the prefill the pod has yet to do before a new
	// request's own, since the engine prefills in arrival order.
	prefilling int
	// relief is the heat of the prefixes this pod shed past a bound, at
	// reliefAt (Balancer.relieve): placements that now go elsewhere but
	// still show in its counts until those decay.
	relief   float64
	reliefAt time.Time
}

type binding struct {
	pod  *Pod
	last time.Time
}

// Balancer places requests on one backend's pods. Safe for concurrent use.
type Balancer struct {
	cfg Config
	now func() time.Time

	mu       sync.Mutex
	synced   bool
	pods     []*Pod // sorted by Addr
	byAddr   map[string]*Pod
	rr       int
	sessions map[uint64]*binding
	picks    int
	moves    int64
	// epoch is the heat clock's zero (see tick).
	epoch time.Time
	// answer is the answer length (tokens) counted for a request whose
	// body does not bound it: the moving average of the answers the
	// backend gave such requests (Pick.Answered), DefaultOutputTokens
	// until the first. Many clients send no max_tokens; assuming the cap
	// for them aged the pods' memory as if every answer were long, and the
	// router forgot prefixes the pods still held.
	answer float64
}

// tick is now on the blocks' heat clock (heatTick units since the epoch;
// wraps after 13 years).
func (b *Balancer) tick(now time.Time) uint32 { return uint32(now.Sub(b.epoch) / heatTick) }

// New returns a Balancer with no pods (Synced is false until SetPods).
func New(cfg Config) *Balancer {
	if cfg.MaxBlocksPerPod <= 0 {
		cfg.MaxBlocksPerPod = DefaultMaxBlocks
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.PrefixWeight <= 0 {
		cfg.PrefixWeight = DefaultPrefixWeight
	}
	if cfg.BytesPerToken <= 0 {
		cfg.BytesPerToken = DefaultBytesPerToken
	}
	if cfg.LoadBound == 0 {
		cfg.LoadBound = DefaultLoadBound
	}
	if cfg.HardLoadBound <= 0 {
		cfg.HardLoadBound = DefaultHardLoadBound
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	if !cfg.LoadAware {
		cfg.BlockBytes, cfg.SessionHeaders = 0, nil
	}
	b := &Balancer{cfg: cfg, now: cfg.Now, byAddr: map[string]*Pod{}, sessions: map[uint64]*binding{}, answer: DefaultOutputTokens}
	if b.now == nil {
		b.now = time.Now
	}
	b.epoch = b.now()
	return b
}

// Config returns the effective configuration.
func (b *Balancer) Config() Config { return b.cfg }

// Features extracts the placement inputs of a request: prompt blocks when
// prefix affinity is on, the session key when session affinity is on.
func (b *Balancer) Features(header map[string][]string, body []byte) Request {
	var r Request
	if b.cfg.BlockBytes > 0 {
		r.Blocks, r.PromptBytes, r.OutputTokens = promptFeatures(body, b.cfg.BlockBytes)
	}
	if len(b.cfg.SessionHeaders) > 0 {
		r.Session, r.HasSession = SessionKey(header, b.cfg.SessionHeaders)
	}
	return r
}

// SetPods replaces the ready pod set ("ip:port" addresses). Pods that stay
// keep their state (load, health, remembered blocks); removed pods are
// forgotten and their sessions placed again on their next request.
func (b *Balancer) SetPods(addrs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.synced = true
	next := make(map[string]*Pod, len(addrs))
	pods := make([]*Pod, 0, len(addrs))
	for _, a := range addrs {
		if _, dup := next[a]; dup {
			continue
		}
		p := b.byAddr[a]
		if p == nil {
			p = &Pod{Addr: a}
		}
		next[a] = p
		pods = append(pods, p)
	}
	slices.SortFunc(pods, func(x, y *Pod) int {
		switch {
		case x.Addr < y.Addr:
			return -1
		case x.Addr > y.Addr:
			return 1
		}
		return 0
	})
	b.pods, b.byAddr = pods, next
}

// Synced reports whether a pod set was ever received.
func (b *Balancer) Synced() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.synced
}

// SetMetrics records a scrape of a pod's engine; nil clears it (the pod is
// then weighed by requests in flight; its cache geometry is kept). A
// published cache geometry sizes the pod's remembered blocks to what the
// pod can hold (at most MaxBlocksPerPod) and turns on their aging.
func (b *Balancer) SetMetrics(addr string, m *EngineMetrics) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byAddr[addr]
	if p == nil {
		return
	}
	if m == nil {
		p.metrics = nil
		return
	}
	c := *m
	p.metrics = &c
	p.inflightAtScrape = p.inflight
	if m.CacheBlockSize > 0 && m.CacheBlocks > 0 {
		tokens := m.CacheBlockSize * m.CacheBlocks
		if tokens < 1<<50 && int64(tokens) != p.cacheTokens {
			p.cacheTokens = int64(tokens)
			if p.blocks != nil {
				p.blocks.Resize(b.maxBlocks(p))
			}
		}
	}
}

// tokensPerBlock is how many engine tokens one prompt block stands for.
func (b *Balancer) tokensPerBlock() float64 {
	return float64(b.cfg.BlockBytes) / b.cfg.BytesPerToken
}

// maxBlocks bounds p's remembered blocks: MaxBlocksPerPod, or fewer when the
// pod's cache holds fewer prompt blocks.
func (b *Balancer) maxBlocks(p *Pod) int {
	n := b.cfg.MaxBlocksPerPod
	if p.cacheTokens > 0 && b.cfg.BlockBytes > 0 {
		fit := int64(float64(p.cacheTokens)/b.tokensPerBlock()) + 1
		if fit < int64(n) {
			n = int(fit)
		}
	}
	return n
}

// Pods returns the current pod addresses.
func (b *Balancer) Pods() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, len(b.pods))
	for i, p := range b.pods {
		out[i] = p.Addr
	}
	return out
}

// work is the pod's load in request units: with engine metrics, running +
// waiting corrected by what this router sent or finished since the scrape,
// never below its own in-flight count, plus KV-cache use (at most one
// request's worth, so memory pressure breaks ties); otherwise in-flight.
func (p *Pod) work() float64 {
	w := float64(p.inflight)
	if m := p.metrics; m != nil {
		est := m.Running + m.Waiting + float64(p.inflight-p.inflightAtScrape)
		w = max(w, est) + m.KVCacheUsage
	}
	return w
}

// queuing: the engine reports waiting requests or a full KV cache; without
// metrics, more than one request in flight.
func (p *Pod) queuing() bool {
	if m := p.metrics; m != nil {
		return m.Waiting > 0 || m.KVCacheUsage >= 0.98
	}
	return p.inflight > 1
}

// clearlyBusier: at least two requests more than the other and at least
// twice its load.
func clearlyBusier(w, other float64) bool { return w >= 2*other+2 }

func (b *Balancer) eligible(p *Pod, now time.Time) bool {
	if now.Before(p.quarUntil) {
		return false
	}
	return !(p.halfOpen && p.trial)
}

// Pick chooses a pod for the request and counts it in flight; the caller
// must call Done on the returned Pick exactly once.
func (b *Balancer) Pick(req *Request) (*Pick, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if len(b.pods) == 0 {
		return nil, ErrNoEndpoint
	}
	cands := make([]*Pod, 0, len(b.pods))
	n := len(b.pods)
	start := b.rr % n
	b.rr++
	for i := range n { // rotated, so ties go round-robin
		p := b.pods[(start+i)%n]
		if b.eligible(p, now) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil, ErrAllQuarantined
	}
	var p *Pod
	// stayed: a bound session's turn stayed on its pod, which no rule
	// chose (its prompt does not count in the blocks' heat, see remember).
	moved, stayed := false, false
	switch {
	case !b.cfg.LoadAware:
		p = cands[0]
	case req != nil && req.HasSession:
		p, moved, stayed = b.pickSession(req, cands, now)
	default:
		p = b.pickLoad(req, cands, now)
	}
	// Only prefix affinity counts answers; without it Answered stays off
	// the lock.
	pk := &Pick{b: b, pod: p, Addr: p.Addr, Moved: moved, unbounded: req != nil && req.OutputTokens <= 0 && b.cfg.BlockBytes > 0}
	if req != nil && b.cfg.BlockBytes > 0 {
		pk.miss = len(req.Blocks) - b.remember(p, req, now, !stayed)
		pk.owed = pk.miss
		p.prefilling += pk.miss
	}
	if p.halfOpen {
		p.trial, pk.trial = true, true
	}
	p.inflight++
	p.picks++
	p.rate, p.slowRate = b.rateOf(p, now)+1, b.slowRateOf(p, now)+1
	p.rateAt = now
	b.picks++
	if b.picks&1023 == 0 {
		b.sweepSessions(now)
	}
	return pk, nil
}

// remember records that p was sent the request's prompt. With the pod's
// cache geometry known, the pod's clock first advances by what the pod must
// allocate for it (the prompt blocks it does not hold and the answer), and
// the blocks are stamped with the new clock. The blocks' heat counts the
// placement only when chosen: a bound session's later turns stay on their
// pod whatever the rules say, so they are not traffic another home of the
// prefix could take, and counting them (a 4-turn session is a burst of four
// on its document) made documents with a third of a mean pod's movable
// traffic look hot enough for a further home on every session burst. It
// returns how many of the prompt's leading blocks the pod held (matched,
// before the touch).
func (b *Balancer) remember(p *Pod, req *Request, now time.Time, chosen bool) int {
	if p.blocks == nil && len(req.Blocks) > 0 {
		p.blocks = newBlockLRU(b.maxBlocks(p), b.heatWindow())
	}
	m := b.matched(p, req.Blocks)
	if p.cacheTokens > 0 {
		out := int(b.answer + 0.5)
		if req.OutputTokens > 0 {
			out = min(DefaultOutputTokens, req.OutputTokens)
		}
		// What the pod must allocate: the prompt past what it holds, and
		// the answer. The prompt's new whole blocks stand for its new
		// bytes: the tail that fills no whole block is partly shared (the
		// pod caches at a finer grain than our blocks) and is counted when
		// a later prompt's block completes it, so each new block counts as
		// many bytes as it adds on average. Counting the tail on every
		// request aged a warm pod's blocks about twice as fast as the pod
		// evicts them. A prompt shorter than one block counts its bytes.
		miss := float64(req.PromptBytes)
		if len(req.Blocks) > 0 {
			miss = float64((len(req.Blocks) - m) * b.cfg.BlockBytes)
		}
		p.clock += int64(miss/b.cfg.BytesPerToken) + int64(out)
	}
	// Last block first: the prefix ends up most recent, so the shared head
	// of a prompt outlives its tail (as in the engine's cache).
	tick := b.tick(now)
	for i := len(req.Blocks) - 1; i >= 0; i-- {
		p.blocks.TouchAt(req.Blocks[i], p.clock, tick, chosen)
	}
	if m > 0 {
		p.topHeat = max(b.topHeat(p, tick), p.blocks.Heat(req.Blocks[m-1], tick))
		p.topTick = tick
	}
	return m
}

// topHeat is p's hottest recent prefix heat decayed to tick.
func (b *Balancer) topHeat(p *Pod, tick uint32) float64 {
	return decayTicks(p.topHeat, p.topTick, tick, b.heatWindow())
}

// pendingPrefill is the prefill p has yet to do for others before req's
// own (Pod.prefilling), as a fraction of req's prompt, at most one whole
// prompt: the engine prefills in arrival order, so a request sent to a pod
// that is prefilling another's uncached document waits for it as for a
// prefill of its own. The Score weighs it like the request's own missing
// prefix (PrefixWeight), so a warm request goes to another home of its
// prefix rather than behind a cold prefill (the moderate-load TTFT tail of
// the EPP comparison, docs/measurements/2026-12-pod-balancing-report.md), while a prefix with one home still
// waits there (a cold pod costs the same wait and a cold prefill more).
func (b *Balancer) pendingPrefill(p *Pod, req *Request) float64 {
	return min(1, float64(p.prefilling)/float64(len(req.Blocks)))
}

// heatWindow is RateWindow in heat ticks.
func (b *Balancer) heatWindow() float64 { return float64(b.cfg.RateWindow / heatTick) }

// matched counts the request's leading blocks remembered for p and, when
// the pod's cache size is known, not aged out: a block stamped more than the
// cache's tokens ago has been evicted by the pod.
func (b *Balancer) matched(p *Pod, blocks []uint64) int {
	if p.blocks == nil {
		return 0
	}
	for i, h := range blocks {
		st, ok := p.blocks.Stamp(h)
		if !ok || (p.cacheTokens > 0 && p.clock-st > p.cacheTokens) {
			return i
		}
	}
	return len(blocks)
}

// rateOf is p's placement count decayed to now.
func (b *Balancer) rateOf(p *Pod, now time.Time) float64 {
	return decayed(p.rate, now.Sub(p.rateAt), b.cfg.RateWindow)
}

// slowRateOf is p's slower placement count decayed to now.
func (b *Balancer) slowRateOf(p *Pod, now time.Time) float64 {
	return decayed(p.slowRate, now.Sub(p.rateAt), sustainedWindows*b.cfg.RateWindow)
}

// decayed is a count decayed over dt with time constant window.
func decayed(count float64, dt, window time.Duration) float64 {
	if dt <= 0 || count == 0 {
		return count
	}
	return count * math.Exp(-float64(dt)/float64(window))
}

// bounded drops the pods over the load bound from the candidates (all of
// them stay when every pod is over it). A pod whose recent placements
// exceed LoadBound × the mean + 1 is over it when a pod within the bound
// holds at least as much of the prompt (the request loses no cache by going
// there; spread gave a hot prefix that other home beforehand), past
// HardLoadBound × the mean + 1 when the prefix is among the pod's hottest
// (amongHottest), and past lastBound times that for every prefix. A pod
// over the soft bound whose slower count is past sustainedBound × its
// mean + 1 (sustained) is treated as past the hard bound. Both the hard
// and the sustained check leave out what the pod has already shed (relieve).
// rates are the candidates' placement counts (rateOf), filtered alongside.
func (b *Balancer) bounded(cands []*Pod, matched []int, rates []float64, req *Request, now time.Time) ([]*Pod, []int, []float64) {
	if b.cfg.LoadBound <= 0 || len(cands) < 2 {
		return cands, matched, rates
	}
	mean := meanOf(rates)
	soft := b.cfg.LoadBound*mean + 1
	hard := max(b.cfg.LoadBound, b.cfg.HardLoadBound)*mean + 1
	last := max(b.cfg.LoadBound, b.cfg.HardLoadBound)*mean*lastBound + 1
	bestIn := -1 // the best match among the pods within the soft bound
	for i := range cands {
		if rates[i] < soft {
			bestIn = max(bestIn, matched[i])
		}
	}
	if bestIn < 0 {
		return cands, matched, rates
	}
	sustained := b.sustained(cands, now)
	return keepPods(cands, matched, rates, func(i int) bool {
		keep := rates[i] < soft || matched[i] > bestIn
		// Both checks need the soft bound passed (hard ≥ soft), so a pod
		// within it costs no relief lookup.
		if keep && rates[i] >= soft && (rates[i]-b.reliefOf(cands[i], now, b.cfg.RateWindow) >= hard || sustained(i)) {
			// Past the hard bound the pod sheds its hottest prefixes (a
			// rare one would cost a cold prefill and relieve little),
			// and everything past the last bound.
			keep = rates[i] < last && !b.amongHottest(cands[i], req, matched[i], now)
			if !keep && matched[i] > 0 {
				b.relieve(cands[i], req.Blocks[matched[i]-1], now)
			}
		}
		return keep
	})
}

// relieve records that p shed the prefix ending in block last: its heat
// (its chosen placements over RateWindow) now goes to another home, so the
// bounds stop counting it against p at once rather than as p's counts
// decay. Without it a pod past a bound shed each of its hottest prefixes in
// turn until its counts caught up: in the EPP comparison's seed-2 cell two
// documents 0.1 s apart where one brought the pod back under the bound, a
// cold prefill each.
func (b *Balancer) relieve(p *Pod, last uint64, now time.Time) {
	p.relief = b.reliefOf(p, now, b.cfg.RateWindow) + p.blocks.Heat(last, b.tick(now))
	p.reliefAt = now
}

// reliefOf is p's relief as a count with time constant window: it decays
// with that window from reliefAt, as the shed placements leave that count,
// and a prefix's share of a count grows with the count's window (its heat
// is over RateWindow).
func (b *Balancer) reliefOf(p *Pod, now time.Time, window time.Duration) float64 {
	return decayed(p.relief, now.Sub(p.reliefAt), window) * float64(window) / float64(b.cfg.RateWindow)
}

// sustained reports whether candidate i's slower placement count is past
// sustainedBound × the candidates' mean + 1.
func (b *Balancer) sustained(cands []*Pod, now time.Time) func(i int) bool {
	slow := make([]float64, len(cands))
	for i, p := range cands {
		slow[i] = b.slowRateOf(p, now)
	}
	bound := sustainedBound*meanOf(slow) + 1
	return func(i int) bool {
		return slow[i]-b.reliefOf(cands[i], now, sustainedWindows*b.cfg.RateWindow) >= bound
	}
}

// keepPods returns the candidates for which keep(i) holds, with their
// matches and rates, in new slices (cands is the caller's).
func keepPods(cands []*Pod, matched []int, rates []float64, keep func(i int) bool) ([]*Pod, []int, []float64) {
	var out []*Pod
	var outM []int
	var outR []float64
	for i, p := range cands {
		if keep(i) {
			out = append(out, p)
			outM = append(outM, matched[i])
			outR = append(outR, rates[i])
		}
	}
	return out, outM, outR
}

// meanOf is the mean of xs (0 for none).
func meanOf(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(max(len(xs), 1))
}

// spread drops the homes of a hot prefix from the candidates, so the
// request gives it one more home (one cold prefill there, which learns it):
// the prefix is the longest any candidate holds of the prompt, its homes
// the candidates holding it, and it is hot when its recent chosen
// placements (the heat of its last block, summed over its homes) are at
// least homeShare of the mean pod's placements per home. So a popular
// prefix gets as many homes as its movable traffic fills, and the load bound
// then shares it between them by load at no cache cost; a rare one keeps
// its only home. Homes are made as soon as the traffic calls for them, not
// when a pod has already passed the load bound: a prefix whose only home is
// full has nowhere to go but a cold pod at every burst, while one with
// several homes is shed for free. (Replicating only once the pod was over
// the bound made the homes mid-burst and more often: over 64 simulated
// seeds of the EPP comparison's workload, 9.7 cold requests per 180 s
// against 6.6, and the busiest pod no better; measured at 6a19740, in
// docs/routing.md's history: git log -p -- docs/routing.md.)
func (b *Balancer) spread(cands []*Pod, matched []int, rates []float64, req *Request, now time.Time) ([]*Pod, []int, []float64) {
	if b.cfg.LoadBound <= 0 || len(cands) < 2 {
		return cands, matched, rates
	}
	m := slices.Max(matched)
	if m == 0 {
		return cands, matched, rates
	}
	last, tick := req.Blocks[m-1], b.tick(now)
	heat, homes := 0.0, 0
	for i, p := range cands {
		if matched[i] == m {
			heat += p.blocks.Heat(last, tick)
			homes++
		}
	}
	if homes == len(cands) || heat < float64(homes)*homeShare*meanOf(rates) {
		return cands, matched, rates
	}
	return keepPods(cands, matched, rates, func(i int) bool { return matched[i] < m })
}

// amongHottest: the prefix the request shares with p is at least half as
// hot as p's hottest recent prefix.
func (b *Balancer) amongHottest(p *Pod, req *Request, m int, now time.Time) bool {
	if m == 0 || p.blocks == nil {
		return false
	}
	tick := b.tick(now)
	return p.blocks.Heat(req.Blocks[m-1], tick) >= hottestShare*b.topHeat(p, tick)
}

// pickLoad: least work, or with prefix affinity the best Score among the
// pods within the load bound.
func (b *Balancer) pickLoad(req *Request, cands []*Pod, now time.Time) *Pod {
	return b.pickScore(req, cands, now, !b.cfg.IgnoreLoad)
}

// pickScore is pickLoad with the load bound applied or not.
func (b *Balancer) pickScore(req *Request, cands []*Pod, now time.Time, bound bool) *Pod {
	if b.cfg.BlockBytes == 0 || req == nil || len(req.Blocks) == 0 {
		return leastLoaded(cands)
	}
	matched := make([]int, len(cands))
	rates := make([]float64, len(cands))
	for i, p := range cands {
		matched[i], rates[i] = b.matched(p, req.Blocks), b.rateOf(p, now)
	}
	if bound {
		cands, matched, rates = b.spread(cands, matched, rates, req, now)
		cands, matched, rates = b.bounded(cands, matched, rates, req, now)
	}
	works := make([]float64, len(cands))
	hits := make([]float64, len(cands))
	for i, p := range cands {
		works[i] = p.work()
		hits[i] = float64(matched[i]) / float64(len(req.Blocks))
	}
	if b.cfg.IgnoreLoad {
		best := 0
		for i := range cands {
			if hits[i] > hits[best] || (hits[i] == hits[best] && works[i] < works[best]) {
				best = i
			}
		}
		return cands[best]
	}
	// A pod's pending prefill counts when another candidate holds as much
	// of the prompt (it costs no cache to go there); a prefix's only home
	// is waited for, since a cold pod costs the same wait in its own
	// prefill and loses the cache (counting it there too sent warm
	// requests to cold pods: on the simulator, 7.7 cold requests per 60 s
	// window against 4.9).
	best, atBest := slices.Max(matched), 0
	for _, m := range matched {
		if m == best {
			atBest++
		}
	}
	for i, p := range cands {
		if matched[i] < best || atBest > 1 {
			hits[i] -= b.pendingPrefill(p, req)
		}
	}
	// Ties go to the pod placed least lately: at light load many pods
	// have no request running, and a new prefix (or one moving) sent to
	// whichever idle pod comes first piles up on pods that are busy over
	// the window though idle this instant.
	return cands[choose(works, hits, rates, b.cfg.PrefixWeight)]
}

// Choose returns the index minimising Score over pods with the given work
// and prefix hit fractions; the first wins ties. Exported so the simulator's
// oracle scores its true cache contents with the same trade-off.
func Choose(works, hits []float64, weight float64) int { return choose(works, hits, nil, weight) }

// choose is Choose with ties going to the lowest rate (when rates is not
// nil), then to the first.
func choose(works, hits, rates []float64, weight float64) int {
	mean := meanOf(works)
	best, bestScore := 0, 0.0
	for i := range works {
		s := Score(works[i], mean, hits[i], weight)
		if i == 0 || s < bestScore || (s == bestScore && rates != nil && rates[i] < rates[best]) {
			best, bestScore = i, s
		}
	}
	return best
}

// Score is a pod's placement cost: its load relative to the mean load
// (+1 so an idle fleet compares absolute counts) plus weight times the
// fraction of the prompt it would have to prefill. Lower is better.
func Score(work, meanWork, hit, weight float64) float64 {
	return work/(meanWork+1) + weight*(1-hit)
}

func leastLoaded(cands []*Pod) *Pod {
	best := cands[0]
	bw := best.work()
	for _, p := range cands[1:] {
		if w := p.work(); w < bw {
			best, bw = p, w
		}
	}
	return best
}

// pickSession: a bound session stays on its pod unless that pod is queuing
// and clearly busier than the least-loaded one; then it moves there and the
// binding follows. A new (or expired, or orphaned) session is placed like a
// request without a session (pickLoad: the best Score when prefix affinity
// is on, so its first turn lands where its prefix is cached).
//
// It returns the pod, whether the session moved, and whether it stayed on
// its bound pod (no rule chose it).
func (b *Balancer) pickSession(req *Request, cands []*Pod, now time.Time) (p *Pod, moved, stayed bool) {
	bd := b.sessions[req.Session]
	if bd != nil && now.Sub(bd.last) <= b.cfg.SessionIdle && b.byAddr[bd.pod.Addr] == bd.pod && slices.Contains(cands, bd.pod) {
		p = bd.pod
		bd.last = now
		least := leastLoaded(cands)
		if p != least && p.queuing() && clearlyBusier(p.work(), least.work()) {
			// Move to the best of the others by Score: a pod that holds
			// the session's shared prefix re-prefills only its own turns.
			others := make([]*Pod, 0, len(cands)-1)
			for _, c := range cands {
				if c != p {
					others = append(others, c)
				}
			}
			// Not bounded: a pod that holds the conversation's prefix is
			// worth more than an even spread here.
			to := b.pickScore(req, others, now, false)
			// A move re-prefills what the new pod lacks: it must win by
			// Score, which prices that prefill against the load left
			// behind (to a pod without the conversation's shared prefix,
			// about PrefixWeight fleet-mean loads).
			if !b.worthMoving(req, p, to, cands) {
				return p, false, true
			}
			bd.pod = to
			b.moves++
			return to, true, false
		}
		return p, false, true
	}
	p = b.pickLoad(req, cands, now)
	if bd != nil {
		bd.pod, bd.last = p, now
	} else {
		b.sessions[req.Session] = &binding{pod: p, last: now}
	}
	return p, false, false
}

// worthMoving: with prefix affinity, a session moves from p to to only when
// to's Score (its load and what it must re-prefill of the conversation) is
// lower than p's; without it, always (p is already clearly busier). Loads
// are relative to the mean of the pods the session could move to (p's own
// load left out: in a small fleet it would inflate the mean it is judged
// by, so a pod could never be busy enough to shed a session).
func (b *Balancer) worthMoving(req *Request, p, to *Pod, cands []*Pod) bool {
	if b.cfg.BlockBytes == 0 || len(req.Blocks) == 0 {
		return true
	}
	mean := 0.0
	for _, c := range cands {
		if c != p {
			mean += c.work()
		}
	}
	mean /= float64(max(len(cands)-1, 1))
	n := float64(len(req.Blocks))
	stay := Score(p.work(), mean, float64(b.matched(p, req.Blocks))/n, b.cfg.PrefixWeight)
	move := Score(to.work(), mean, float64(b.matched(to, req.Blocks))/n, b.cfg.PrefixWeight)
	return move < stay
}

func (b *Balancer) sweepSessions(now time.Time) {
	for k, bd := range b.sessions {
		if now.Sub(bd.last) > b.cfg.SessionIdle || b.byAddr[bd.pod.Addr] != bd.pod {
			delete(b.sessions, k)
		}
	}
	for k := range b.sessions {
		if len(b.sessions) <= MaxSessions {
			break
		}
		delete(b.sessions, k)
	}
}

// Sessions is the number of bindings held (expired ones until swept).
func (b *Balancer) Sessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// Moves counts sessions moved off a busy pod.
func (b *Balancer) Moves() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.moves
}

// Pick is one placement; Done must be called once when the attempt ends.
type Pick struct {
	b     *Balancer
	pod   *Pod
	trial bool
	done  bool
	// miss is the prompt blocks the pod did not hold, counted in its
	// prefilling until the answer begins (Started) or the attempt ends;
	// owed is its value at Pick, never changed, so Started skips the lock
	// for a warm request (most of them) without reading miss.
	miss, owed int
	// unbounded: the request's body set no answer bound, so its answer
	// teaches the balancer the backend's answer length (Answered).
	unbounded bool
	// Addr is the chosen pod's "ip:port".
	Addr string
	// Moved is true when a session left its busy pod for this one.
	Moved bool
}

// Done ends the attempt: the pod's in-flight count drops and its passive
// health is updated. Two Failures in a row quarantine the pod, a
// StreamIdle at once, a failed half-open trial at once again; a Success
// closes the breaker. Later calls are ignored.
func (pk *Pick) Done(r Result) {
	if pk == nil {
		return
	}
	b := pk.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if pk.done {
		return
	}
	pk.done = true
	p := pk.pod
	p.inflight--
	p.prefilling -= pk.miss
	pk.miss = 0
	if pk.trial {
		p.trial = false
	}
	switch r {
	case Success:
		p.fails, p.halfOpen = 0, false
	case Failure:
		p.fails++
		if p.fails >= 2 || pk.trial {
			b.quarantine(p)
		}
	case StreamIdle:
		b.quarantine(p)
	}
}

// Started reports that the pod began answering (the first byte of the
// answer's body): it has prefilled the prompt, which no longer delays the
// requests placed after it (Pod.prefilling). Later calls, and calls after
// Done, are no-ops.
func (pk *Pick) Started() {
	if pk == nil || pk.owed == 0 {
		return
	}
	b := pk.b
	b.mu.Lock()
	defer b.mu.Unlock()
	pk.pod.prefilling -= pk.miss
	pk.miss = 0
}

// Answered reports the answer's length in tokens (the response's usage),
// before or after Done. An answer to a request without a bound moves the
// answer length counted for the next such requests (capped at
// DefaultOutputTokens); others are ignored.
func (pk *Pick) Answered(tokens int64) {
	if pk == nil || !pk.unbounded || tokens < 0 {
		return
	}
	b := pk.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answer += (min(float64(tokens), DefaultOutputTokens) - b.answer) / answerSamples
}

// AnswerTokens is the answer length counted for a request whose body does
// not bound it (tests read it).
func (b *Balancer) AnswerTokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answer
}

func (b *Balancer) quarantine(p *Pod) {
	p.quarUntil = b.now().Add(b.cfg.Quarantine)
	p.halfOpen = true
	p.fails = 0
	p.quarantine++
}

// PodStatus is a pod's state for status pages and tests.
type PodStatus struct {
	Addr        string  `json:"addr"`
	InFlight    int     `json:"inFlight"`
	Work        float64 `json:"work"`
	Quarantined bool    `json:"quarantined"`
	Quarantines int     `json:"quarantines"`
	Blocks      int     `json:"blocks"`
	Picks       int64   `json:"picks"`
	// CacheTokens is the pod's published KV-cache size (0: unknown).
	CacheTokens int64 `json:"cacheTokens,omitempty"`
	// Prefilling is the prompt blocks sent to the pod uncached whose
	// answer has not begun (the prefill it owes; Pick.Started).
	Prefilling int `json:"prefilling,omitempty"`
}

// Status lists the pods.
func (b *Balancer) Status() []PodStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	out := make([]PodStatus, 0, len(b.pods))
	for _, p := range b.pods {
		s := PodStatus{Addr: p.Addr, InFlight: p.inflight, Work: p.work(), Quarantined: !b.eligible(p, now), Quarantines: p.quarantine, Picks: p.picks, CacheTokens: p.cacheTokens, Prefilling: p.prefilling}
		if p.blocks != nil {
			s.Blocks = p.blocks.Len()
		}
		out = append(out, s)
	}
	return out
}
