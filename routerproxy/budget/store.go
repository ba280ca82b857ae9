// Store keeps the router-proxy's budget counters in Redis, so
// one count holds across every replica and survives restarts.
//
// Each budget counter (router, rule, or one team of a team budget) is one
// Redis hash, named after the router's namespace and name, with one field
// per sub-window bucket ("t<epoch>" tokens, "u<epoch>" micro-USD): the
// rolling window is BucketsPerWindow buckets of window/BucketsPerWindow,
// as in memory, and the buckets are keyed on Redis's own clock so replicas
// with skewed clocks agree. Admission and settlement are each one atomic Lua
// script per counter:
//
//   - admission sums the live buckets and, under the caps, reserves the
//     request's estimated tokens in the current bucket (refusing, it
//     answers when enough of the window expires);
//   - settlement adds the difference between the usage the response
//     reported and the estimate to the bucket the reservation went to;
//   - a reservation never settled (a replica killed mid-request) leaves the
//     window with its bucket: it expires.
//
// The overshoot of a cap is therefore bounded by the requests in flight
// times the error of their estimates, whatever the number of replicas.

package budget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/routerproxy/internal/tick"
)

// BucketsPerWindow is the rolling window's precision: a window of W is kept
// as this many buckets of W/BucketsPerWindow (the in-memory counters use the
// same).
const BucketsPerWindow = 60

// DefaultTimeout bounds one admission or settlement round trip.
const DefaultTimeout = 100 * time.Millisecond

// ErrUnavailable is the error of a fail-closed admission while the store is down.
var ErrUnavailable = errors.New("the budget store is unavailable")

// microPerPico converts the engine's picodollars to the store's micro-USD.
const microPerPico = 1_000_000

// StoreOptions configure a Store.
type StoreOptions struct {
	// URL is redis://[user:password@]host:port/db.
	URL string
	// Password, when set, overrides the URL's (read from a Secret).
	Password string
	// Failure is what admission does when Redis is unreachable or slower
	// than the admission timeout: wellknown.BudgetStoreFailClosed (the
	// default) refuses with 503; wellknown.BudgetStoreFailOpen serves,
	// counts in memory per replica, and adds those counts to Redis once it
	// answers again.
	Failure string
	// Timeout bounds each round trip (default DefaultTimeout).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Store enforces a router's budgets on a shared Redis count.
type Store struct {
	rdb     *redis.Client
	prefix  string // "llmkube:{ns/router}:budget:"
	budgets []storeBudget
	// rates are policy.rateLimits (ratestore.go); localRate counts them
	// while the store is down (fail open).
	rates     []rateLimit
	localRate *RateMemory
	timeout   time.Duration
	failOpen  bool
	log       *slog.Logger

	// local counts what is served while Redis is down (fail open), and
	// pending what it has not been told yet.
	local   *Memory
	mu      sync.Mutex
	pending map[string]*pendingDelta
	healthy atomic.Bool
	lastErr atomic.Value // string
	// failures counts round trips that failed in a row (see failed).
	failures atomic.Int32
	// idPrefix and nextID make settlement ids: unique per process and
	// settlement, cheap to make.
	idPrefix string
	nextID   atomic.Uint64
}

// DownAfterFailures is how many round trips in a row must fail before the
// store is taken as down (admissions then answer at once, without asking
// it, until the probe succeeds). One slow reply (a GC pause, a busy node)
// fails only its own admission. The client cannot tell a slow store from
// an unreachable one: it retries a refused dial until the round trip's
// deadline, so both end in a timeout.
const DownAfterFailures = 3

// failed records a round trip that failed.
func (s *Store) failed(err error) {
	s.lastErr.Store(err.Error())
	if s.failures.Add(1) >= DownAfterFailures {
		s.markDown(err)
	}
}

// answered records a round trip that succeeded.
func (s *Store) answered() {
	s.failures.Store(0)
	s.up()
}

// settlementID names one settlement for the settle script's once-only key.
func (s *Store) settlementID() string {
	return s.idPrefix + strconv.FormatUint(s.nextID.Add(1), 36)
}

type storeBudget struct {
	cfg       proxyapi.Budget
	maxTokens int64
	maxMicro  int64
	widthUS   int64
	teamKey   string
}

type pendingDelta struct {
	storeBudget int
	team        string
	tokens      int64
	micro       int64
	at          time.Time
	// id is the settlement's id once it has been sent: a retry sends the
	// same id, which the settle script applies at most once. With
	// reserved, it is the reservation's key (settleReserved).
	id       string
	reserved bool
}

// NewStore connects to Redis (lazily: a store that is down at start is retried
// on every request) for the budgets of cfg.
func NewStore(cfg *proxyapi.Config, o StoreOptions) (*Store, error) {
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("--budget-store %q: %w", o.URL, err)
	}
	if o.Password != "" {
		ro.Password = o.Password
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	ro.MaxRetries = -1 // a slow store is failed over by the caller, not retried into the request
	ro.ContextTimeoutEnabled = true
	switch o.Failure {
	case "", wellknown.BudgetStoreFailClosed, wellknown.BudgetStoreFailOpen:
	default:
		return nil, fmt.Errorf("--budget-store-failure %q: must be %s or %s", o.Failure, wellknown.BudgetStoreFailClosed, wellknown.BudgetStoreFailOpen)
	}
	local, err := NewMemory(cfg.Policy.Budgets, nil)
	if err != nil {
		return nil, err
	}
	s := &Store{
		rdb:      redis.NewClient(ro),
		prefix:   "llmkube:{" + cfg.Router.Namespace + "/" + cfg.Router.Name + "}:budget:",
		timeout:  o.Timeout,
		failOpen: o.Failure == wellknown.BudgetStoreFailOpen,
		log:      o.Logger,
		local:    local,
		pending:  map[string]*pendingDelta{},
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	s.idPrefix = s.prefix + "settled:" + hex.EncodeToString(rnd[:]) + ":"
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, b := range cfg.Policy.Budgets {
		m, err := engine.ParseUSD(b.MaxUSD)
		if err != nil {
			return nil, fmt.Errorf("budget %s: %w", b.Name, err)
		}
		s.budgets = append(s.budgets, storeBudget{cfg: b, maxTokens: b.MaxTokens, maxMicro: ceilDiv(int64(m), microPerPico),
			widthUS: max(b.Window.Microseconds()/BucketsPerWindow, 1), teamKey: textproto.CanonicalMIMEHeaderKey(b.HeaderKey)})
	}
	s.rates, s.localRate = compileRateLimits(cfg.Policy.RateLimits), NewRateMemory(cfg.Policy.RateLimits, nil)
	s.healthy.Store(true)
	return s, nil
}

// Close releases the connections.
func (s *Store) Close() error { return s.rdb.Close() }

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// counterKey names one counter's hash.
func (s *Store) counterKey(b *storeBudget, team string) string {
	if team == "" {
		return s.prefix + b.cfg.Name
	}
	return s.prefix + b.cfg.Name + ":team:" + team
}

// teamsKey names the sorted set of a team budget's teams (score: last use).
func (s *Store) teamsKey(b *storeBudget) string { return s.prefix + b.cfg.Name + ":teams" }

// reserve checks one counter (KEYS[1]) and, under its caps, adds the
// reservation to the current bucket and records that bucket under the
// reservation's own key (KEYS[2], kept for a window), which its settlement
// reads. It returns the bucket, or the time until the window frees enough
// when over. A reservation key already there is the tombstone of a
// cancellation that ran first (the admission's reply was lost and the
// proxy cancelled it; see settleReserved): nothing is reserved.
var reserve = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return {2, 0, 0} end
local width = tonumber(ARGV[1])
local maxT, maxU = tonumber(ARGV[2]), tonumber(ARGV[3])
local addT, addU = tonumber(ARGV[4]), tonumber(ARGV[5])
local n = tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ep = math.floor(now / width)
local h = redis.call('HGETALL', KEYS[1])
local tok, usd, sumT, sumU = {}, {}, 0, 0
for i = 1, #h, 2 do
  local f, v = h[i], tonumber(h[i + 1])
  local e = tonumber(string.sub(f, 2))
  if ep - e >= n then
    redis.call('HDEL', KEYS[1], f)
  elseif string.sub(f, 1, 1) == 't' then
    tok[e] = (tok[e] or 0) + v
    sumT = sumT + v
  else
    usd[e] = (usd[e] or 0) + v
    sumU = sumU + v
  end
end
local function over(a, b) return (maxT > 0 and a >= maxT) or (maxU > 0 and b >= maxU) end
if over(sumT, sumU) then
  for age = n - 1, 0, -1 do
    local e = ep - age
    sumT = sumT - (tok[e] or 0)
    sumU = sumU - (usd[e] or 0)
    if not over(sumT, sumU) then return {1, (e + n) * width - now, ep} end
  end
  return {1, width, ep}
end
if addT ~= 0 then redis.call('HINCRBY', KEYS[1], 't' .. ep, addT) end
if addU ~= 0 then redis.call('HINCRBY', KEYS[1], 'u' .. ep, addU) end
redis.call('PEXPIRE', KEYS[1], math.ceil(width * n / 1000) + 1000)
redis.call('SET', KEYS[2], ep, 'PX', math.ceil(width * n / 1000) + 1000)
if KEYS[3] then
  redis.call('ZADD', KEYS[3], now, ARGV[7])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - width * n)
  redis.call('PEXPIRE', KEYS[3], math.ceil(width * n / 1000) + 1000)
end
return {0, 0, ep}
`)

// settleReserved settles a reservation (KEYS[2]) once: it adds the deltas
// (ARGV[3] to field t, ARGV[4] to u, and ARGV[5], when given, to r: a
// rate limit's release gives its request back) to the bucket the
// reservation went to (if still inside the window) and leaves a tombstone,
// so a retry whose first try was applied does nothing. A reservation not
// there (its admission's reply was lost, and the proxy cancels it with the
// estimate's negative) may not have run yet: the tombstone stops it from
// running later. So an admission whose reply is lost is never counted,
// whichever arrives first. Budgets and rate limits settle through it.
var settleReserved = redis.NewScript(`
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local dT, dU, dR = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]) or 0
local ttl = math.ceil(width * n / 1000) + 1000
local v = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], 'x', 'PX', ttl)
if not v or v == 'x' then return 2 end
local ep = tonumber(v)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if math.floor(now / width) - ep >= n then return 0 end
if dR ~= 0 then redis.call('HINCRBY', KEYS[1], 'r' .. ep, dR) end
if dT ~= 0 then redis.call('HINCRBY', KEYS[1], 't' .. ep, dT) end
if dU ~= 0 then redis.call('HINCRBY', KEYS[1], 'u' .. ep, dU) end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

// settle adds a delta counted without a reservation (fail open: what a
// replica served while the store was down) to the current bucket, once per
// settlement id (KEYS[2], kept for a window): a settlement whose reply
// timed out may have been applied, and its retry must not apply it again.
var settle = redis.NewScript(`
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local dT, dU = tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ep = math.floor(now / width)
if not redis.call('SET', KEYS[2], 1, 'NX', 'PX', math.ceil(width * n / 1000) + 1000) then return 2 end
if dT ~= 0 then redis.call('HINCRBY', KEYS[1], 't' .. ep, dT) end
if dU ~= 0 then redis.call('HINCRBY', KEYS[1], 'u' .. ep, dU) end
redis.call('PEXPIRE', KEYS[1], math.ceil(width * n / 1000) + 1000)
return 1
`)

// usage sums one counter's live buckets by field: {r, t, u} (a budget's
// counter holds tokens in t and micro-USD in u; a rate limit's, requests,
// input and output tokens).
var usage = redis.NewScript(`
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local ep = math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2])) / width)
local sum = {r = 0, t = 0, u = 0}
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  local d, e = string.sub(h[i], 1, 1), tonumber(string.sub(h[i], 2))
  if ep - e < n and sum[d] then sum[d] = sum[d] + tonumber(h[i + 1]) end
end
return {sum.r, sum.t, sum.u}
`)

// reservation is one counter's share of an admitted request.
type reservation struct {
	key    string // the counter
	id     string // the reservation's own key (settleReserved)
	b      int
	team   string
	tokens int64
}

// Charge settles one admitted request.
type storeCharge struct {
	s   *Store
	res []reservation
	// local is set for a fail-open admission while the store was down: the
	// request is counted in memory and its usage sent to Redis later.
	local *Charge
}

// Admit reserves estTokens on every counter the request is charged to and
// returns the charge to settle with the response's usage. A budget over its
// cap refuses the request (the other reservations are released). While the
// store is down it fails closed (ErrUnavailable) or open (local counts).
func (s *Store) Admit(ctx context.Context, rule string, h map[string][]string, estTokens int64) (Settler, *Exhausted, error) {
	if len(s.budgets) == 0 {
		return nil, nil, nil
	}
	if !s.healthy.Load() {
		// Known down: answer at once instead of every request waiting for
		// the timeout; Reconcile's probe (every second) brings it back.
		msg, _ := s.lastErr.Load().(string)
		return s.down(errors.New(msg), rule, h)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ch := &storeCharge{s: s}
	var worst *Exhausted
	for i := range s.budgets {
		b := &s.budgets[i]
		team, ok := s.applies(b, rule, h)
		if !ok {
			continue
		}
		key := s.counterKey(b, team)
		res := reservation{key: key, id: s.settlementID(), b: i, team: team, tokens: estTokens}
		keys := []string{key, res.id}
		if team != "" {
			keys = append(keys, s.teamsKey(b))
		}
		r, err := reserve.Run(ctx, s.rdb, keys, b.widthUS, b.maxTokens, b.maxMicro, estTokens, 0, BucketsPerWindow, team).Int64Slice()
		if err != nil {
			// The reply is lost, not necessarily the reservation: Redis may
			// have applied it. Cancel it with the others; settleReserved
			// makes the cancellation right whichever runs first.
			ch.res = append(ch.res, res)
			ch.cancelLater()
			return s.down(err, rule, h)
		}
		if r[0] == 1 {
			ra := time.Duration(r[1]) * time.Microsecond
			if worst == nil || ra > worst.RetryAfter {
				worst = &Exhausted{Budget: b.cfg.Name, RetryAfter: ra}
			}
			continue
		}
		ch.res = append(ch.res, res)
	}
	s.answered()
	if worst != nil {
		ch.release()
		return nil, worst, nil
	}
	return ch, nil, nil
}

// applies reports whether budget b counts the request, and for which team.
func (s *Store) applies(b *storeBudget, rule string, h map[string][]string) (string, bool) {
	switch b.cfg.Scope {
	case proxyapi.ScopeRule:
		return "", rule == b.cfg.RuleName
	case proxyapi.ScopeTeam:
		v := h[b.teamKey]
		if len(v) == 0 || v[0] == "" {
			return "", false
		}
		team := v[0]
		if len(team) > 128 {
			team = team[:128]
		}
		return team, true
	}
	return "", true
}

// cancelLater queues the cancellation of every reservation of a request
// whose admission failed: the store has just failed a round trip, so the
// request asks it nothing more; the next flush (after the probe) sends them.
func (c *storeCharge) cancelLater() {
	for _, r := range c.res {
		c.s.retryLater(&pendingDelta{storeBudget: r.b, team: r.team, tokens: -r.tokens, at: time.Now(), id: r.id, reserved: true})
	}
	c.res = nil
}

// release gives back the reservations of a refused request.
func (c *storeCharge) release() {
	for _, r := range c.res {
		c.s.correct(r, -r.tokens, 0)
	}
	c.res = nil
}

// Add settles the request with the usage the response reported: the
// estimate is replaced by it.
func (c *storeCharge) Add(tokens int64, usd engine.Money) {
	if c == nil {
		return
	}
	micro := ceilDiv(int64(usd), microPerPico)
	if c.local != nil {
		c.local.Add(tokens, usd)
		for _, r := range c.res {
			c.s.addPending(r.b, r.team, tokens, micro)
		}
		return
	}
	for _, r := range c.res {
		c.s.correct(r, tokens-r.tokens, micro)
	}
}

// correct settles a reservation with a delta to its bucket (a zero delta
// too: the settlement retires the reservation's key); when the store cannot
// be reached it waits in pending and is retried.
func (s *Store) correct(r reservation, dTokens, dMicro int64) {
	b := &s.budgets[r.b]
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := settleReserved.Run(ctx, s.rdb, []string{r.key, r.id}, b.widthUS, BucketsPerWindow, dTokens, dMicro).Err(); err != nil {
		s.failed(err)
		s.retryLater(&pendingDelta{storeBudget: r.b, team: r.team, tokens: dTokens, micro: dMicro, at: time.Now(), id: r.id, reserved: true})
		return
	}
	s.answered()
}

// retryLater keeps a settlement that was sent and not confirmed, under its
// id, apart from the deltas not sent yet: its retry must carry the same id
// and the same amounts.
func (s *Store) retryLater(p *pendingDelta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending["id\x00"+p.id] = p
}

// down handles an admission the store could not answer: refused with
// ErrUnavailable (fail closed), or admitted against this replica's own
// count and remembered for Redis (fail open).
func (s *Store) down(err error, rule string, h map[string][]string) (Settler, *Exhausted, error) {
	if s.healthy.Load() {
		s.failed(err)
	}
	if !s.failOpen {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	local, ex := s.local.Admit(rule, h)
	if ex != nil {
		return nil, ex, nil
	}
	ch := &storeCharge{s: s, local: local}
	for i := range s.budgets {
		if team, ok := s.applies(&s.budgets[i], rule, h); ok {
			ch.res = append(ch.res, reservation{b: i, team: team})
		}
	}
	return ch, nil, nil
}

func (s *Store) addPending(b int, team string, tokens, micro int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strconv.Itoa(b) + "\x00" + team
	p := s.pending[k]
	if p == nil {
		p = &pendingDelta{storeBudget: b, team: team, at: time.Now()}
		s.pending[k] = p
	}
	p.tokens += tokens
	p.micro += micro
}

func (s *Store) markDown(err error) {
	if s.healthy.Swap(false) {
		s.log.Warn("budget store unavailable", "error", err.Error(), "failure", map[bool]string{true: wellknown.BudgetStoreFailOpen, false: wellknown.BudgetStoreFailClosed}[s.failOpen])
	}
	s.lastErr.Store(err.Error())
}

func (s *Store) up() {
	if !s.healthy.Swap(true) {
		s.log.Info("budget store available again")
	}
}

// Failure is the store's failure mode.
func (s *Store) Failure() string {
	if s.failOpen {
		return wellknown.BudgetStoreFailOpen
	}
	return wellknown.BudgetStoreFailClosed
}

// Healthy reports whether the last round trip succeeded, and the last error.
func (s *Store) Healthy() (bool, string) {
	msg, _ := s.lastErr.Load().(string)
	return s.healthy.Load(), msg
}

// Reconcile flushes what was counted while the store was down (fail open,
// or settlements that could not be sent) and probes the store, every
// interval until ctx ends.
func (s *Store) Reconcile(ctx context.Context, interval time.Duration) {
	tick.Every(ctx, interval, func() {
		pctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := s.rdb.Ping(pctx).Err()
		cancel()
		if err != nil {
			s.failed(err)
			return
		}
		s.answered()
		s.flush(ctx)
	})
}

func (s *Store) flush(ctx context.Context) {
	s.mu.Lock()
	pending := s.pending
	s.pending = map[string]*pendingDelta{}
	s.mu.Unlock()
	for _, p := range pending {
		b := &s.budgets[p.storeBudget]
		if time.Since(p.at) >= b.cfg.Window.Duration {
			continue // it has left the window
		}
		if p.id == "" {
			p.id = s.settlementID()
		}
		script := settle
		if p.reserved {
			script = settleReserved
		}
		fctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := script.Run(fctx, s.rdb, []string{s.counterKey(b, p.team), p.id}, b.widthUS, BucketsPerWindow, p.tokens, p.micro).Err()
		cancel()
		if err != nil {
			s.failed(err)
			s.retryLater(p)
		}
	}
}

// Status reports every budget's use from the shared count (every replica
// reports the same); while the store is down, from the local count.
func (s *Store) Status() []proxyapi.BudgetStatus {
	return sharedStatus(s, s.budgets, s.budgetStatus, s.local.Status)
}

// sharedStatus is the status of each of items (budgets, rate limits), read
// by shared from the shared count; if the store does not answer, local's
// status from this replica's count instead.
func sharedStatus[C, S any](s *Store, items []C, shared func(context.Context, *C) (S, error), local func() []S) []S {
	ctx, cancel := context.WithTimeout(context.Background(), 5*s.timeout)
	defer cancel()
	out := make([]S, 0, len(items))
	for i := range items {
		st, err := shared(ctx, &items[i])
		if err != nil {
			return local()
		}
		out = append(out, st)
	}
	return out
}

// budgetStatus is b's use from the shared count.
func (s *Store) budgetStatus(ctx context.Context, b *storeBudget) (proxyapi.BudgetStatus, error) {
	keys := []string{s.counterKey(b, "")}
	if b.cfg.Scope == proxyapi.ScopeTeam {
		teams, err := s.rdb.ZRange(ctx, s.teamsKey(b), 0, -1).Result()
		if err != nil {
			return proxyapi.BudgetStatus{}, err
		}
		keys = keys[:0]
		for _, t := range teams {
			keys = append(keys, s.counterKey(b, t))
		}
	}
	var tokens, micro int64
	util := 0.0
	for _, k := range keys {
		r, err := usage.Run(ctx, s.rdb, []string{k}, b.widthUS, BucketsPerWindow).Int64Slice()
		if err != nil {
			return proxyapi.BudgetStatus{}, err
		}
		tokens += r[1]
		micro += r[2]
		f := 0.0
		if b.maxTokens > 0 {
			f = float64(r[1]) / float64(b.maxTokens)
		}
		if b.maxMicro > 0 {
			f = max(f, float64(r[2])/float64(b.maxMicro))
		}
		util = max(util, f)
	}
	return proxyapi.BudgetStatus{Name: b.cfg.Name, TokensUsed: tokens, USDUsed: engine.Money(micro * microPerPico).String(),
		Utilization: strconv.FormatFloat(min(util, 1), 'f', 6, 64)}, nil
}
