package aigateway

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// ModelHeader is the header the AI Gateway fills from the request body's
// "model" before routing.
const ModelHeader = "x-ai-eg-model"

// constraint is one header condition of a match: an exact value, or an RE2
// pattern the whole value must match.
type constraint struct {
	name  string
	exact bool
	value string // the exact value, or the pattern source
	re    *regexp.Regexp
	// foldCase is set for a pattern that applies to the whole value in any
	// letter case ("(?i)..."): it accepts a value iff it accepts every
	// case variant of it. literal is set when the pattern is
	// caseInsensitive(v): it accepts exactly the case variants of v, and
	// holds v.
	foldCase bool
	literal  *string
}

func exactC(name, value string) constraint { return constraint{name: name, exact: true, value: value} }

func patternC(name, pattern string) constraint {
	c := constraint{name: name, value: pattern, re: regexp.MustCompile(`^(?:` + pattern + `)$`)}
	if rest, ok := strings.CutPrefix(pattern, "(?i)"); ok {
		c.foldCase = true
		if v := unquoteMeta(rest); regexp.QuoteMeta(v) == rest {
			c.literal = &v
		}
	}
	return c
}

// unquoteMeta undoes regexp.QuoteMeta (a backslash quotes the next byte).
func unquoteMeta(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// accepts reports whether a concrete header value satisfies the constraint.
func (c constraint) accepts(v string) bool {
	if c.exact {
		return v == c.value
	}
	return c.re.MatchString(v)
}

func (c constraint) equal(o constraint) bool {
	return c.name == o.name && c.exact == o.exact && c.value == o.value
}

// meet is the conjunction of two constraints on the same header: ok is false
// when no value satisfies both; known is false when that cannot be decided
// or expressed as one header match (two different patterns).
func meet(a, b constraint) (c constraint, ok, known bool) {
	switch {
	case a.equal(b):
		return a, true, true
	case a.exact && b.exact:
		return a, false, true
	case a.exact:
		return a, b.accepts(a.value), true
	case b.exact:
		return b, a.accepts(b.value), true
	case a.literal != nil && b.literal != nil:
		// Two case-insensitive literals (classification or task-complexity
		// values): they meet only when they are the same word.
		return a, strings.EqualFold(*a.literal, *b.literal), true
	case a.literal != nil && b.foldCase:
		// b ignores case, so it accepts every case variant of a's word or
		// none: a ∧ b is a, or nothing.
		return a, b.accepts(*a.literal), true
	case b.literal != nil && a.foldCase:
		return b, a.accepts(*b.literal), true
	default:
		return a, true, false
	}
}

// implies reports whether every value satisfying c satisfies d.
func implies(c, d constraint) bool {
	if c.equal(d) {
		return true
	}
	if c.literal != nil && d.foldCase {
		return d.accepts(*c.literal)
	}
	return c.exact && d.accepts(c.value)
}

// match is a conjunction of header constraints, at most one per header,
// sorted by header name. Gateway API ranks a match by its header count.
type match []constraint

func (m match) get(name string) (constraint, bool) {
	for _, c := range m {
		if c.name == name {
			return c, true
		}
	}
	return constraint{}, false
}

// and conjoins two matches. ok is false when they can never both hold;
// known is false when the conjunction cannot be decided or expressed.
func and(a, b match) (out match, ok, known bool) {
	out = append(match(nil), a...)
	for _, c := range b {
		prev, found := out.get(c.name)
		if !found {
			out = append(out, c)
			continue
		}
		m, ok, known := meet(prev, c)
		if !known || !ok {
			return nil, ok, known
		}
		for i := range out {
			if out[i].name == c.name {
				out[i] = m
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, true, true
}

// impliedBy reports whether every request satisfying by satisfies m.
func (m match) impliedBy(by match) bool {
	for _, c := range m {
		d, ok := by.get(c.name)
		if !ok || !implies(d, c) {
			return false
		}
	}
	return true
}

// satisfiedBy evaluates the match on a concrete request (header -> value;
// absent headers are missing from the map).
func (m match) satisfiedBy(req map[string]string) bool {
	for _, c := range m {
		v, ok := req[c.name]
		if !ok || !c.accepts(v) {
			return false
		}
	}
	return true
}

func (m match) String() string {
	parts := make([]string, len(m))
	for i, c := range m {
		op := "="
		if !c.exact {
			op = "~"
		}
		parts[i] = c.name + op + c.value
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (m match) headers() []HeaderMatch {
	out := make([]HeaderMatch, len(m))
	for i, c := range m {
		t := MatchExact
		if !c.exact {
			t = MatchRegex
		}
		out[i] = HeaderMatch{Name: c.name, Type: t, Value: c.value}
	}
	return out
}

// globPattern translates a ModelRouter model glob (wellknown.Glob: '*' any run
// of bytes, '?' one byte, everything else literal) into an RE2 pattern.
// ok is false for a glob the gateway cannot match the same way: outside
// printable ASCII, RE2 matches runes where the router-proxy matches bytes.
func globPattern(glob string) (pattern string, isGlob, ok bool) {
	if !wellknown.IsGlob(glob) {
		return glob, false, true
	}
	for i := 0; i < len(glob); i++ {
		if c := glob[i]; c < 0x20 || c > 0x7e {
			return "", true, false
		}
	}
	return "(?s)" + wellknown.GlobRE2(glob), true, true
}

// caseInsensitive is an RE2 pattern matching v in any letter case, for the
// headers the router-proxy lowercases before comparing (classification,
// task complexity).
func caseInsensitive(v string) string { return "(?i)" + regexp.QuoteMeta(v) }

// listElement matches v, in any letter case, as one element of a
// comma-separated list. Envoy matches a repeated header on its values
// joined by "," (and a client may send "public, pii" as one value), while
// the router-proxy counts every value: a request carrying a sensitive value
// anywhere must meet the sensitive rule. Non-sensitive values keep the
// whole-value match, so "public,pii" never meets a rule for public data.
//
// The optional whitespace is written as the escapes \x20 and \t: the
// HTTPRoute the AI Gateway generates must pass Gateway API's header value
// pattern (^[!-~]+([\t ]?[!-~]+)*$), which refused the literal " \t" (two
// whitespace characters in a row), so the AI Gateway could not create the
// route (egctl x translate v1.9.1 said so).
func listElement(v string) string {
	return `(?i)(?:.*,)?[\x20\t]*` + regexp.QuoteMeta(v) + `[\x20\t]*(?:,.*)?`
}

// Origins of generated rules that come from no spec rule (a spec rule's
// origin is its index, never negative).
const (
	originBackendNameMatch = -1
	originDefaultRoute     = -2
)

// genRule is one generated AIGatewayRoute rule before limits are applied.
type genRule struct {
	name string
	// origin says what it came from, for diagnostics and tests: the spec
	// rule index, or originBackendNameMatch or originDefaultRoute.
	origin  int
	label   string // "rule <name>", "BackendNameMatch <backend>", "defaultRoute"
	matches []match
	refs    []RouteBackendRef
	// backends are the router backends behind refs, in order.
	backends []string
	// per-try response-header timeout and retries for its traffic policy
	headerTimeout string
	numRetries    int32
	ruleBudgets   []int
}

// orderConflict is a pair of rules whose first-match-wins order Gateway API
// precedence would invert and that could not be rewritten.
type orderConflict struct {
	earlier, later int // indexes into the rule list
	a, b           match
}

// maxRewrites bounds the rewrite loop (it always terminates; this guards
// against pathological inputs growing past every CRD limit anyway).
const maxRewrites = 4096

// rank is a match's precedence as Envoy Gateway sorts routes with equal
// paths (internal/gatewayapi/sort.go, v1.8.1 and v1.9.1): more header
// matches first, then, among equal counts, more Exact header matches
// (numberOfExactMatches); the sort is stable, so full ties keep the input
// (declaration) order. Counting headers alone let an earlier rule with a
// RegularExpression condition (dataClassification, taskComplexity, a model
// glob) lose to a later overlapping rule with Exact ones: a fail-closed leak.
type rank struct{ headers, exact int }

func (m match) rank() rank {
	r := rank{headers: len(m)}
	for _, c := range m {
		if c.exact {
			r.exact++
		}
	}
	return r
}

// above reports whether r sorts strictly before o.
func (r rank) above(o rank) bool {
	return r.headers > o.headers || (r.headers == o.headers && r.exact > o.exact)
}

// preserveOrder rewrites the rules' matches so that Envoy Gateway's
// precedence (rank; full ties go to the earlier rule) selects, for every
// request, the rule first-match-wins selects. For each earlier match a and
// later match b that ranks above it and that one request can satisfy
// together, it adds a∧b to the earlier rule: a∧b has every header of b, each
// Exact where b's is (the meet of an Exact constraint stays Exact), so it
// ranks at least as high as b and the earlier rule wins the tie. It repeats until no pair remains. It returns
// the conflicts it cannot rewrite (two different patterns on one header).
func preserveOrder(rules []*genRule) []orderConflict {
	var conflicts []orderConflict
	seen := map[[2]int]bool{}
	added := 0
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(rules); i++ {
			for j := i + 1; j < len(rules); j++ {
				for ai := 0; ai < len(rules[i].matches); ai++ {
					a := rules[i].matches[ai]
					for _, b := range rules[j].matches {
						if !b.rank().above(a.rank()) {
							continue
						}
						u, ok, known := and(a, b)
						if !ok {
							continue
						}
						if !known {
							if !seen[[2]int{i, j}] {
								seen[[2]int{i, j}] = true
								conflicts = append(conflicts, orderConflict{earlier: i, later: j, a: a, b: b})
							}
							continue
						}
						if covered(rules[i].matches, u, b.rank()) {
							continue
						}
						rules[i].matches = append(rules[i].matches, u)
						changed = true
						if added++; added > maxRewrites {
							return append(conflicts, orderConflict{earlier: i, later: j, a: a, b: b})
						}
					}
				}
			}
		}
	}
	return conflicts
}

// covered reports whether some match of a rule holds whenever u holds and
// ranks at least r.
func covered(ms []match, u match, r rank) bool {
	for _, m := range ms {
		if !r.above(m.rank()) && m.impliedBy(u) {
			return true
		}
	}
	return false
}

func (c orderConflict) describe(rules []*genRule) string {
	return fmt.Sprintf("%s (match %s) comes first, but %s (match %s) has more header conditions, or as many with more Exact ones, and Envoy Gateway ranks it higher for a request meeting both; the two patterns on one header cannot be combined into a match that keeps the declared order",
		rules[c.earlier].label, c.a, rules[c.later].label, c.b)
}
