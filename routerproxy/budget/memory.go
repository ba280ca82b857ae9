package budget

import (
	"fmt"
	"net/textproto"
	"strconv"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
)

const budgetBuckets = 60

// MaxTeamsPerBudget bounds the teams a team-scoped budget tracks; further
// teams share one overflow counter, so a client cannot grow memory without
// bound by inventing team names (and cannot escape the cap either).
const MaxTeamsPerBudget = 10000

// Budgets enforces policy.budgets: token and USD caps over rolling windows,
// kept in 60 buckets per window. It is safe for concurrent use.
type Memory struct {
	now     func() time.Time
	budgets []*budget
}

type budget struct {
	cfg       proxyapi.Budget
	maxTokens int64
	maxUSD    engine.Money
	width     int64 // bucket width in nanoseconds
	teamKey   string

	mu    sync.Mutex
	one   *counter
	teams map[string]*counter
}

type counter struct {
	epoch  [budgetBuckets]int64 // bucket index (time / width) each slot holds
	tokens [budgetBuckets]int64
	usd    [budgetBuckets]engine.Money
}

// NewBudgets compiles the budgets of a config.
func NewMemory(cfg []proxyapi.Budget, now func() time.Time) (*Memory, error) {
	if now == nil {
		now = time.Now
	}
	bs := &Memory{now: now}
	for _, c := range cfg {
		m, err := engine.ParseUSD(c.MaxUSD)
		if err != nil {
			return nil, fmt.Errorf("budget %s: %w", c.Name, err)
		}
		// Window and HeaderKey are set: proxyapi.Config.SetDefaults ran at load.
		b := &budget{cfg: c, maxTokens: c.MaxTokens, maxUSD: m, width: max(int64(c.Window.Duration)/budgetBuckets, 1), teamKey: textproto.CanonicalMIMEHeaderKey(c.HeaderKey)}
		if c.Scope == proxyapi.ScopeTeam {
			b.teams = map[string]*counter{}
		} else {
			b.one = &counter{}
		}
		bs.budgets = append(bs.budgets, b)
	}
	return bs, nil
}

// Len is the number of budgets.
func (bs *Memory) Len() int { return len(bs.budgets) }

// Charge is the set of counters one request is charged to.
type Charge struct {
	bs      *Memory
	keys    []chargeKey
	keysBuf [2]chargeKey // keys' first backing, in the same allocation
}

type chargeKey struct {
	b    *budget
	team string
}

// Exhausted describes a budget that refused a request.
type Exhausted struct {
	Budget     string
	RetryAfter time.Duration
}

// Admit decides whether a request routed by rule (its name; DefaultRuleName
// for the default route) with headers h may proceed. It returns the counters
// to charge once the response's usage is known. Admission checks use against
// the caps before the request runs, so concurrent requests can overshoot a
// cap by at most the usage of the requests in flight when it was reached.
func (bs *Memory) Admit(rule string, h map[string][]string) (*Charge, *Exhausted) {
	if len(bs.budgets) == 0 {
		return nil, nil
	}
	now := bs.now().UnixNano()
	ch := &Charge{bs: bs}
	ch.keys = ch.keysBuf[:0]
	var worst *Exhausted
	for _, b := range bs.budgets {
		k := chargeKey{b: b}
		switch b.cfg.Scope {
		case proxyapi.ScopeRule:
			if rule != b.cfg.RuleName {
				continue
			}
		case proxyapi.ScopeTeam:
			team := first(h[b.teamKey])
			if team == "" {
				continue // a request without a team is not charged to team budgets
			}
			if len(team) > 128 {
				team = team[:128]
			}
			k.team = team
		}
		ch.keys = append(ch.keys, k)
		if ra, over := b.check(k.team, now); over {
			if worst == nil || ra > worst.RetryAfter {
				worst = &Exhausted{Budget: b.cfg.Name, RetryAfter: ra}
			}
		}
	}
	if worst != nil {
		return nil, worst
	}
	return ch, nil
}

// Add charges the usage and cost to every counter of the request.
func (c *Charge) Add(tokens int64, usd engine.Money) {
	if c == nil || (tokens == 0 && usd == 0) {
		return
	}
	now := c.bs.now().UnixNano()
	for _, k := range c.keys {
		b := k.b
		b.mu.Lock()
		ctr := b.counterFor(k.team, true, now)
		slot, ep := b.slot(now)
		if ctr.epoch[slot] != ep {
			ctr.epoch[slot], ctr.tokens[slot], ctr.usd[slot] = ep, 0, 0
		}
		ctr.tokens[slot] += tokens
		ctr.usd[slot] += usd
		b.mu.Unlock()
	}
}

func (b *budget) slot(now int64) (int, int64) {
	ep := now / b.width
	return int(ep % budgetBuckets), ep
}

func (b *budget) counterFor(team string, create bool, now int64) *counter {
	if b.one != nil {
		return b.one
	}
	if !create {
		return b.teams[team]
	}
	ep := now / b.width
	return boundedCounter(b.teams, team, func(c *counter) bool {
		t, u := c.sum(ep)
		return t == 0 && u == 0
	})
}

// boundedCounter is m's counter of key, made on first use. Past
// MaxTeamsPerBudget keys, the idle ones (nothing left in the window) are
// dropped first; if the map is still full, every further key shares one
// overflow counter.
func boundedCounter[C any](m map[string]*C, key string, idle func(*C) bool) *C {
	if c := m[key]; c != nil {
		return c
	}
	if len(m) >= MaxTeamsPerBudget {
		for k, c := range m {
			if idle(c) {
				delete(m, k)
			}
		}
	}
	if len(m) >= MaxTeamsPerBudget {
		key = "\x00overflow"
		if c := m[key]; c != nil {
			return c
		}
	}
	c := new(C)
	m[key] = c
	return c
}

// sum totals the buckets still inside the window ending at epoch ep.
func (c *counter) sum(ep int64) (int64, engine.Money) {
	var t int64
	var u engine.Money
	for i := range budgetBuckets {
		if ep-c.epoch[i] < budgetBuckets {
			t += c.tokens[i]
			u += c.usd[i]
		}
	}
	return t, u
}

// check reports whether the counter is at or over a cap and, if so, how
// long until enough of the window expires to bring it under.
func (b *budget) check(team string, now int64) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.counterFor(team, false, now)
	if c == nil {
		return 0, false
	}
	_, ep := b.slot(now)
	t, u := c.sum(ep)
	over := func(t int64, u engine.Money) bool {
		return (b.maxTokens > 0 && t >= b.maxTokens) || (b.maxUSD > 0 && u >= b.maxUSD)
	}
	if !over(t, u) {
		return 0, false
	}
	// Walk the live buckets oldest first until the remainder is under the caps.
	for age := int64(budgetBuckets - 1); age >= 0; age-- {
		e := ep - age
		i := int(e % budgetBuckets)
		if c.epoch[i] != e {
			continue
		}
		t -= c.tokens[i]
		u -= c.usd[i]
		if !over(t, u) {
			// Bucket e leaves the window when epoch e+budgetBuckets begins.
			return time.Duration((e+budgetBuckets)*b.width - now), true
		}
	}
	return time.Duration(b.width), true
}

// Status reports every budget's use over its window.
func (bs *Memory) Status() []proxyapi.BudgetStatus {
	now := bs.now().UnixNano()
	out := make([]proxyapi.BudgetStatus, 0, len(bs.budgets))
	for _, b := range bs.budgets {
		b.mu.Lock()
		_, ep := b.slot(now)
		var tokens int64
		var usd engine.Money
		var util float64
		add := func(c *counter) {
			t, u := c.sum(ep)
			tokens += t
			usd += u
			f := 0.0
			if b.maxTokens > 0 {
				f = float64(t) / float64(b.maxTokens)
			}
			if b.maxUSD > 0 {
				f = max(f, float64(u)/float64(b.maxUSD))
			}
			util = max(util, f)
		}
		if b.one != nil {
			add(b.one)
		}
		for _, c := range b.teams {
			add(c)
		}
		b.mu.Unlock()
		out = append(out, proxyapi.BudgetStatus{Name: b.cfg.Name, TokensUsed: tokens, USDUsed: usd.String(), Utilization: strconv.FormatFloat(min(util, 1), 'f', 6, 64)})
	}
	return out
}

// Settler settles an admitted request with the usage its response reported.
// *Charge is the in-memory one; a shared store has its own.
type Settler interface {
	Add(tokens int64, usd engine.Money)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
