package budget

// The rate limits' counters in Redis (Store), shared by every replica.
//
// Each counter (one limit, one team or key) is one hash beside the budgets'
// ("<prefix>rl:<limit>:<team:…|key:…>"), one field per second of the window
// and dimension: "r<second>" requests, "t<second>" input tokens,
// "u<second>" output tokens. The token fields are named as a budget's token
// and money fields so that a settlement is the budgets' own once-only
// settleReserved script (input delta as its tokens, output as its money),
// and so is a release (the request and the input estimate given back), and
// the status reads the budgets' usage script.
// Seconds are Redis's clock (TIME), as for the budgets. Admission is one
// script per counter: it sums the live seconds, refuses at a cap (answering
// when enough of the window leaves) and otherwise counts the request and the
// prompt's estimate, records the second under the reservation's key, and
// answers the sums and when each dimension's count falls (the headers).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// rateReserve: KEYS[1] the counter, KEYS[2] the reservation, KEYS[3] the
// limit's subjects (score: last use). ARGV: bucket width (µs), buckets,
// the caps of requests, input and output tokens (0: none), the input
// estimate, the subject. Answers {status, retry µs, requests, input,
// output, reset µs of each}: status 0 admitted (the sums after it), 1 over
// a cap (the sums that refused it); {2} when the reservation is a
// cancellation's tombstone.
var rateReserve = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return {2} end
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local dims = {'r', 't', 'u'}
local cap = {r = tonumber(ARGV[3]), t = tonumber(ARGV[4]), u = tonumber(ARGV[5])}
local addI = tonumber(ARGV[6])
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local ep = math.floor(now / width)
local per = {r = {}, t = {}, u = {}}
local sum = {r = 0, t = 0, u = 0}
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  local f, v = h[i], tonumber(h[i + 1])
  local d, e = string.sub(f, 1, 1), tonumber(string.sub(f, 2))
  if ep - e >= n then
    redis.call('HDEL', KEYS[1], f)
  elseif per[d] then
    per[d][e] = (per[d][e] or 0) + v
    sum[d] = sum[d] + v
  end
end
local function over()
  for _, d in ipairs(dims) do
    if cap[d] > 0 and sum[d] >= cap[d] then return true end
  end
  return false
end
-- standing: the sums and, per dimension, when its oldest counted second
-- leaves the window (0: nothing counted)
local function standing(status, retry)
  local out = {status, retry, sum.r, sum.t, sum.u}
  for _, d in ipairs(dims) do
    local reset = 0
    for age = n - 1, 0, -1 do
      local e = ep - age
      if (per[d][e] or 0) ~= 0 then
        reset = (e + n) * width - now
        break
      end
    end
    out[#out + 1] = reset
  end
  return out
end
if over() then
  local refused = standing(1, width)
  for age = n - 1, 0, -1 do
    local e = ep - age
    for _, d in ipairs(dims) do sum[d] = sum[d] - (per[d][e] or 0) end
    if not over() then
      refused[2] = (e + n) * width - now
      break
    end
  end
  return refused
end
local ttl = math.ceil(width * n / 1000) + 1000
redis.call('HINCRBY', KEYS[1], 'r' .. ep, 1)
if addI ~= 0 then redis.call('HINCRBY', KEYS[1], 't' .. ep, addI) end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[2], ep, 'PX', ttl)
redis.call('ZADD', KEYS[3], now, ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - width * n)
redis.call('PEXPIRE', KEYS[3], ttl)
per.r[ep] = (per.r[ep] or 0) + 1
per.t[ep] = (per.t[ep] or 0) + addI
sum.r, sum.t = sum.r + 1, sum.t + addI
return standing(0, 0)
`)

var rateWidthUS = rateWidth.Microseconds()

func (s *Store) rateKey(l *rateLimit, subject string) string {
	return s.prefix + "rl:" + l.cfg.Name + ":" + subject
}

func (s *Store) rateSubjectsKey(l *rateLimit) string {
	return s.prefix + "rl:" + l.cfg.Name + ":subjects"
}

// storeRateCharge is an admitted request's reservations in Redis; local is
// set instead for a fail-open admission while the store was down.
type storeRateCharge struct {
	s        *Store
	res      []rateReservation
	estInput int64
	local    RateCharge
}

// rateReservation is one limit's admission of a request; tokens: the
// limit caps tokens, so its settlement matters (a requests-only limit's is
// skipped: it would be a round trip per request that changes no decision).
type rateReservation struct {
	key, id string
	tokens  bool
}

// AdmitRate implements Limiter on the shared count. While the store is down
// it fails closed (ErrUnavailable) or open: this replica's own count, which
// is not added to the shared one later (the window is a minute).
func (s *Store) AdmitRate(ctx context.Context, who Subject, estInput int64) (RateCharge, Quota, *Limited, error) {
	var q Quota
	if len(s.rates) == 0 {
		return nil, q, nil, nil
	}
	if !s.healthy.Load() {
		msg, _ := s.lastErr.Load().(string)
		return s.rateDown(ctx, errors.New(msg), who, estInput)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ch := &storeRateCharge{s: s, estInput: estInput}
	for i := range s.rates {
		l := &s.rates[i]
		subj, ok := l.subject(who)
		if !ok {
			continue
		}
		res := rateReservation{key: s.rateKey(l, subj), id: s.settlementID(), tokens: l.caps[DimInputTokens] > 0 || l.caps[DimOutputTokens] > 0}
		r, err := rateReserve.Run(ctx, s.rdb, []string{res.key, res.id, s.rateSubjectsKey(l)},
			rateWidthUS, RateBuckets, l.caps[DimRequests], l.caps[DimInputTokens], l.caps[DimOutputTokens], estInput, subj).Int64Slice()
		if err != nil || len(r) == 0 || (r[0] != 2 && len(r) < 8) {
			if err == nil {
				err = fmt.Errorf("rate limit %s: unexpected answer %v", l.cfg.Name, r)
			}
			// The reply is lost, not necessarily the admission: release
			// it with the others (settleReserved is right whichever runs first).
			ch.res = append(ch.res, res)
			go ch.Release()
			return s.rateDown(ctx, err, who, estInput)
		}
		if r[0] == 2 {
			continue // cannot happen for a fresh id
		}
		us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
		sums, resets := [numDims]int64{r[2], r[3], r[4]}, [numDims]time.Duration{us(r[5]), us(r[6]), us(r[7])}
		if r[0] == 1 {
			s.answered()
			ch.Release()
			lim := &Limited{Limit: l.cfg.Name, RetryAfter: us(r[1])}
			lim.Quota.tighten(l.caps, sums, resets)
			return nil, Quota{}, lim, nil
		}
		ch.res = append(ch.res, res)
		q.tighten(l.caps, sums, resets)
	}
	s.answered()
	if len(ch.res) == 0 {
		return nil, q, nil, nil
	}
	return ch, q, nil, nil
}

// rateDown answers an admission the store could not: refused with
// ErrUnavailable (fail closed), or counted on this replica (fail open).
func (s *Store) rateDown(ctx context.Context, err error, who Subject, estInput int64) (RateCharge, Quota, *Limited, error) {
	if s.healthy.Load() {
		s.failed(err)
	}
	if !s.failOpen {
		return nil, Quota{}, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	ch, q, lim, err := s.localRate.AdmitRate(ctx, who, estInput)
	if ch == nil {
		return nil, q, lim, err
	}
	return &storeRateCharge{s: s, local: ch}, q, lim, err
}

// Settle replaces the input estimate with the reported prompt tokens and
// adds the output tokens, once per reservation (settleReserved). A
// settlement the store does not answer is not retried: it would land in a
// window that has mostly passed.
func (c *storeRateCharge) Settle(input, output int64) {
	if c == nil {
		return
	}
	if c.local != nil {
		c.local.Settle(input, output)
		return
	}
	for _, r := range c.res {
		if !r.tokens {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.s.timeout)
		err := settleReserved.Run(ctx, c.s.rdb, []string{r.key, r.id}, rateWidthUS, RateBuckets, input-c.estInput, output).Err()
		cancel()
		if err != nil {
			c.s.failed(err)
		}
	}
	c.res = nil
}

// Release gives the admissions back: each one's request and input
// estimate, through the settlement of its reservation.
func (c *storeRateCharge) Release() {
	if c == nil {
		return
	}
	if c.local != nil {
		c.local.Release()
		return
	}
	for _, r := range c.res {
		ctx, cancel := context.WithTimeout(context.Background(), c.s.timeout)
		err := settleReserved.Run(ctx, c.s.rdb, []string{r.key, r.id}, rateWidthUS, RateBuckets, -c.estInput, 0, -1).Err()
		cancel()
		if err != nil {
			c.s.failed(err)
		}
	}
	c.res = nil
}

// maxStatusSubjects bounds the counters one limit's status reads.
const maxStatusSubjects = 1000

// RateStatus reports every limit from the shared count (every replica
// reports the same); while the store is down, from the local count.
func (s *Store) RateStatus() []proxyapi.RateLimitStatus {
	return sharedStatus(s, s.rates, s.rateStatus, s.localRate.RateStatus)
}

// rateStatus is l's standing from the shared count: the subjects counting
// and the highest utilization among them.
func (s *Store) rateStatus(ctx context.Context, l *rateLimit) (proxyapi.RateLimitStatus, error) {
	subjects, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.rateSubjectsKey(l), Start: 0, Stop: maxStatusSubjects - 1, Rev: true}).Result()
	if err != nil {
		return proxyapi.RateLimitStatus{}, err
	}
	st := proxyapi.RateLimitStatus{Name: l.cfg.Name}
	util := 0.0
	for _, subj := range subjects {
		r, err := usage.Run(ctx, s.rdb, []string{s.rateKey(l, subj)}, rateWidthUS, RateBuckets).Int64Slice()
		if err != nil {
			return proxyapi.RateLimitStatus{}, err
		}
		sums := [numDims]int64{r[0], r[1], r[2]}
		if sums == [numDims]int64{} {
			continue
		}
		st.Counting++
		util = max(util, l.utilization(sums))
	}
	st.Utilization = formatUtilization(util)
	return st, nil
}
