package aigateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// compileYAML runs the frontend and this target on one input.
func compileYAML(t *testing.T, data string) (*ir.Router, *targets.Result, diag.List) {
	t.Helper()
	in := &compiler.Inputs{}
	d := in.Decode("input.yaml", []byte(data))
	require.False(t, d.HasErrors(), "%v", d.Err())
	require.Len(t, in.Routers, 1)
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{DataPlane: ir.DataPlaneGateway})
	require.False(t, diags.HasErrors(), "frontend refused: %v", diags.Err())
	res, tdiags := New().Compile(r)
	return r, res, append(diags, tdiags...)
}

// request is one request shape: lowercased header name -> value, with the
// body's model under x-ai-eg-model (the gateway copies it there).
type request map[string]string

// firstMatchWins is the ModelRouter's semantics (the router-proxy's engine):
// rules in declaration order, first match wins, then BackendNameMatch, then
// the default route. Every backend is healthy.
func firstMatchWins(r *ir.Router, req request) string {
	model := req[ModelHeader]
	for _, rule := range r.Rules {
		if len(rule.Candidates) == 0 {
			continue
		}
		m := rule.Match
		if len(m.Models) > 0 {
			ok := false
			for _, g := range m.Models {
				ok = ok || wellknown.Glob(g, model)
			}
			if !ok {
				continue
			}
		}
		ok := true
		for _, h := range m.Headers {
			v, present := req[h.Name]
			ok = ok && present && v == h.Value
		}
		if len(m.DataClassification) > 0 {
			v, present := req[r.Policy.Classification.HeaderKey]
			in := false
			for _, c := range m.DataClassification {
				in = in || (present && strings.ToLower(strings.TrimSpace(v)) == c)
			}
			ok = ok && in
		}
		if m.TaskComplexity != "" {
			v, present := req[wellknown.TaskComplexityHeader]
			ok = ok && present && strings.ToLower(strings.TrimSpace(v)) == m.TaskComplexity
		}
		if ok {
			return "rule:" + rule.Name
		}
	}
	if r.Default.Strategy == ir.DefaultBackendNameMatch {
		for _, b := range r.Backends {
			if b.ModelID == model {
				return "name:" + b.Name
			}
		}
	}
	if r.Default.Backend != "" {
		return "default"
	}
	return "none"
}

type gwMatch struct {
	m       match
	outcome string
	route   int
}

// gatewayRoutes reads the emitted AIGatewayRoutes back into matches, in
// HTTPRoute order, each route followed by the controller's path-only
// route-not-found rule.
func gatewayRoutes(t *testing.T, res *targets.Result) []gwMatch {
	t.Helper()
	var out []gwMatch
	ri := 0
	for _, o := range res.Objects {
		if o.GetKind() != "AIGatewayRoute" {
			continue
		}
		data, err := json.Marshal(o.Object)
		require.NoError(t, err)
		var route AIGatewayRoute
		require.NoError(t, json.Unmarshal(data, &route))
		for _, rule := range route.Spec.Rules {
			outcome := "rule:" + strings.SplitN(rule.Name, partSeparator, 2)[0]
			switch {
			case strings.HasPrefix(rule.Name, nameMatchPrefix):
				outcome = "name:" + strings.TrimPrefix(rule.Name, nameMatchPrefix)
			case rule.Name == defaultRuleName:
				outcome = "default"
			}
			for _, m := range rule.Matches {
				var cm match
				for _, h := range m.Headers {
					if h.Type == MatchExact {
						cm = append(cm, exactC(h.Name, h.Value))
					} else {
						cm = append(cm, patternC(h.Name, h.Value))
					}
				}
				out = append(out, gwMatch{m: cm, outcome: outcome, route: ri})
			}
		}
		out = append(out, gwMatch{m: match{}, outcome: "none", route: ri})
		ri++
	}
	return out
}

// gatewayPrecedence is Gateway API semantics over the generated routes: of
// the matches a request satisfies, the one with the most header matches
// wins; a tie goes to the earlier rule of the same route. A tie between
// different routes is decided by creation time, which the compiler does not
// control, so it is reported as ambiguous unless both mean the same.
func gatewayPrecedence(ms []gwMatch, req request) string {
	best := -1
	ambiguous := false
	for i, g := range ms {
		if !g.m.satisfiedBy(req) {
			continue
		}
		// Envoy Gateway's order: header count, then Exact count, then the
		// stable input order (so the first of full ties wins).
		switch {
		case best < 0 || g.m.rank().above(ms[best].m.rank()):
			best, ambiguous = i, false
		case g.m.rank() == ms[best].m.rank() && g.route != ms[best].route && g.outcome != ms[best].outcome:
			ambiguous = true
		}
	}
	if ambiguous {
		return "ambiguous"
	}
	return ms[best].outcome
}

// shapes enumerates request shapes: every header any rule reads, absent or
// with each value a rule names (in other letter cases where the router
// lowercases), a value no rule names, and for globs a value they match. The
// model is always present (the gateway routes on it).
func shapes(r *ir.Router) []request {
	values := map[string]map[string]bool{}
	add := func(h, v string) {
		if values[h] == nil {
			values[h] = map[string]bool{}
		}
		values[h][v] = true
	}
	add(ModelHeader, "unknown-model")
	for _, b := range r.Backends {
		add(ModelHeader, b.ModelID)
	}
	for _, rule := range r.Rules {
		for _, g := range rule.Match.Models {
			add(ModelHeader, g)
			add(ModelHeader, strings.NewReplacer("*", "x-y/z", "?", "q").Replace(g))
			add(ModelHeader, strings.NewReplacer("*", "", "?", "Q").Replace(g))
		}
		for _, h := range rule.Match.Headers {
			add(h.Name, h.Value)
			add(h.Name, "other")
		}
		for _, c := range rule.Match.DataClassification {
			add(r.Policy.Classification.HeaderKey, c)
			add(r.Policy.Classification.HeaderKey, strings.ToUpper(c))
			add(r.Policy.Classification.HeaderKey, "other")
		}
		if tc := rule.Match.TaskComplexity; tc != "" {
			add(wellknown.TaskComplexityHeader, tc)
			add(wellknown.TaskComplexityHeader, strings.ToUpper(tc))
			add(wellknown.TaskComplexityHeader, "other")
		}
	}
	names := make([]string, 0, len(values))
	for h := range values {
		names = append(names, h)
	}
	sort.Strings(names)
	out := []request{{}}
	for _, h := range names {
		var next []request
		vs := make([]string, 0, len(values[h]))
		for v := range values[h] {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		for _, base := range out {
			if h != ModelHeader {
				next = append(next, base)
			}
			for _, v := range vs {
				cp := request{}
				for k, x := range base {
					cp[k] = x
				}
				cp[h] = v
				next = append(next, cp)
			}
		}
		out = next
	}
	return out
}

// assertSameRouting compares both semantics on every request shape.
func assertSameRouting(t *testing.T, r *ir.Router, res *targets.Result) int {
	t.Helper()
	ms := gatewayRoutes(t, res)
	all := shapes(r)
	require.Less(t, len(all), 500000, "too many shapes to enumerate")
	for _, req := range all {
		want := firstMatchWins(r, req)
		got := gatewayPrecedence(ms, req)
		if !assert.Equal(t, want, got, "request %v: first-match-wins picks %s, Gateway API precedence picks %s", req, want, got) {
			return len(all)
		}
	}
	return len(all)
}

// TestGoldenGatewayCasesKeepRuleOrder enumerates request shapes for every
// valid Gateway case and requires the generated routes to pick, under
// Gateway API precedence, exactly what first-match-wins picks.
func TestGoldenGatewayCasesKeepRuleOrder(t *testing.T) {
	files, err := filepath.Glob("../../testdata/gateway-*/input.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 15)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			r, res, diags := compileYAML(t, string(data))
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			n := assertSameRouting(t, r, res)
			assert.Positive(t, n)
		})
	}
}

const orderHeader = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: r, namespace: ns}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - {name: a, inferenceServiceRef: {name: a}}
    - {name: b, inferenceServiceRef: {name: b}}
    - {name: c, inferenceServiceRef: {name: c}, displayName: model-c}
`

// TestRuleOrderScenarios covers the ways Gateway API ranking differs from
// first-match-wins: without the rewrite each of these routers would route
// some request to a later rule. The test also checks the naive translation
// (matches as declared, no rewrite) really disagrees, so the scenarios
// exercise the rewrite.
func TestRuleOrderScenarios(t *testing.T) {
	cases := map[string]string{
		"more headers later": `  rules:
    - {name: broad, failClosed: true, match: {models: [m1]}, route: {backends: [a]}}
    - {name: narrow, failClosed: true, match: {models: [m1], headers: {x-team: t}}, route: {backends: [b]}}
`,
		"catch-all first, default and names after": `  rules:
    - {name: all, failClosed: true, route: {backends: [a]}}
    - {name: team, failClosed: true, match: {headers: {x-team: t}}, route: {backends: [b]}}
  defaultRoute: c
  defaultRouteStrategy: BackendNameMatch
`,
		"glob before exact with header": `  rules:
    - {name: family, failClosed: true, match: {models: ["m*"]}, route: {backends: [a]}}
    - {name: special, failClosed: true, match: {models: [m2], headers: {x-tier: gold}}, route: {backends: [b]}}
    - {name: other, failClosed: true, match: {models: [n1], headers: {x-tier: gold}}, route: {backends: [c]}}
`,
		"classification before model rule": `  rules:
    - {name: confidential, failClosed: true, match: {dataClassification: [confidential]}, route: {backends: [a]}}
    - {name: complex, failClosed: true, match: {models: [m1], taskComplexity: complex}, route: {backends: [b]}}
  defaultRoute: c
`,
		// Envoy Gateway breaks header-count ties by Exact matches (issue 20):
		// an earlier RegularExpression condition must not lose to a later
		// Exact one with as many headers.
		"fail-closed classification before an exact model": `  rules:
    - {name: pii, failClosed: true, match: {dataClassification: [pii]}, route: {backends: [a]}}
    - {name: gpt, match: {models: [m1]}, route: {backends: [b]}}
  defaultRoute: c
`,
		"glob before exact, same header count": `  rules:
    - {name: family, failClosed: true, match: {models: ["m*"]}, route: {backends: [a]}}
    - {name: exact, failClosed: true, match: {models: [m1]}, route: {backends: [b]}}
  defaultRoute: c
`,
		"task before model": `  rules:
    - {name: simple, failClosed: true, match: {taskComplexity: simple}, route: {backends: [a]}}
    - {name: llama, failClosed: true, match: {models: [m1]}, route: {backends: [b]}}
  defaultRoute: c
`,
		"chain of three": `  rules:
    - {name: one, failClosed: true, match: {headers: {x-a: "1"}}, route: {backends: [a]}}
    - {name: two, failClosed: true, match: {headers: {x-b: "1", x-c: "1"}}, route: {backends: [b]}}
    - {name: three, failClosed: true, match: {headers: {x-a: "1", x-b: "1", x-c: "1", x-d: "1"}}, route: {backends: [c]}}
  defaultRoute: c
`,
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			r, res, diags := compileYAML(t, orderHeader+spec)
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			assertSameRouting(t, r, res)

			// The naive translation (no rewrite) must disagree somewhere.
			e := &emitter{r: r}
			naive := e.buildRules(aiBackends{})
			var ms []gwMatch
			for _, g := range naive {
				outcome := "rule:" + g.name
				if strings.HasPrefix(g.name, nameMatchPrefix) {
					outcome = "name:" + strings.TrimPrefix(g.name, nameMatchPrefix)
				} else if g.name == defaultRuleName {
					outcome = "default"
				}
				for _, m := range g.matches {
					ms = append(ms, gwMatch{m: m, outcome: outcome})
				}
			}
			ms = append(ms, gwMatch{m: match{}, outcome: "none"})
			differs := false
			for _, req := range shapes(r) {
				differs = differs || firstMatchWins(r, req) != gatewayPrecedence(ms, req)
			}
			assert.True(t, differs, "the scenario does not need a rewrite; it tests nothing")
		})
	}
}

// TestRuleOrderRefusedWhenNotRewritable: two different model patterns cannot
// be combined into one header match, so the target refuses, naming both rules.
func TestRuleOrderRefusedWhenNotRewritable(t *testing.T) {
	_, res, diags := compileYAML(t, orderHeader+`  rules:
    - {name: qwen, failClosed: true, match: {models: ["qwen-*"]}, route: {backends: [a]}}
    - {name: instruct, failClosed: true, match: {models: ["*-instruct"], headers: {x-a: "1"}}, route: {backends: [b]}}
`)
	assert.Nil(t, res)
	require.Len(t, diags.Errors(), 1)
	d := diags.Errors()[0]
	assert.Equal(t, "RuleOrderNotPreserved", d.Reason)
	assert.Equal(t, "spec.rules[0]", d.Field)
	assert.Contains(t, d.Message, `rule "qwen"`)
	assert.Contains(t, d.Message, `rule "instruct"`)
}

// TestRuleOrderNotRefusedWithoutOverlap: rules that no request can meet
// together need no rewrite, even when the later one ranks higher and both
// put patterns on one header. Two case-insensitive words (simple, complex)
// or a word and a sensitive value's list pattern (public, pii) never meet;
// these were refused as RuleOrderNotPreserved. The compiled routes still
// route every request shape as first-match-wins does.
func TestRuleOrderNotRefusedWithoutOverlap(t *testing.T) {
	r, res, diags := compileYAML(t, orderHeader+`  rules:
    - {name: simple, failClosed: true, match: {taskComplexity: simple}, route: {backends: [a]}}
    - {name: complex-team, failClosed: true, match: {taskComplexity: complex, headers: {x-a: "1"}}, route: {backends: [b]}}
    - {name: pii, failClosed: true, match: {dataClassification: [pii]}, route: {backends: [a]}}
    - {name: public-team, failClosed: true, match: {dataClassification: [public], headers: {x-a: "1"}}, route: {backends: [b]}}
`)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	require.NotNil(t, res)
	assertSameRouting(t, r, res)
	// A word the later pattern does accept still meets it: rewritten, not refused.
	r, res, diags = compileYAML(t, orderHeader+`  rules:
    - {name: public, failClosed: true, match: {dataClassification: [public]}, route: {backends: [a]}}
    - {name: any-team, failClosed: true, match: {dataClassification: [PUBLIC], headers: {x-a: "1"}}, route: {backends: [b]}}
`)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assertSameRouting(t, r, res)
}

func TestPreserveOrderUnit(t *testing.T) {
	rules := []*genRule{
		{label: "r0", matches: []match{{exactC("x-a", "1")}}},
		{label: "r1", matches: []match{{exactC("x-a", "2"), exactC("x-b", "1")}}},
		{label: "r2", matches: []match{{exactC("x-a", "1"), exactC("x-b", "1")}}},
	}
	require.Empty(t, preserveOrder(rules))
	// r1 can never meet r0 (x-a differs); r2 can, so r0 gains r0∧r2.
	require.Len(t, rules[0].matches, 2)
	assert.Equal(t, "{x-a=1, x-b=1}", rules[0].matches[1].String())
	assert.Len(t, rules[1].matches, 1)
}

// TestSensitiveClassificationMatchesAnyListElement: Envoy matches a repeated
// header on its values joined by ","; the generated pattern for a sensitive
// classification meets "public,pii" and "pii, phi", and a non-sensitive one
// never meets a list holding a sensitive value.
func TestSensitiveClassificationMatchesAnyListElement(t *testing.T) {
	sens := patternC("x-llmkube-classification", listElement("pii"))
	for _, v := range []string{"pii", "PII", "public,pii", "pii, phi", "public, Pii ,x"} {
		assert.True(t, sens.accepts(v), v)
	}
	for _, v := range []string{"public", "piix", "xpii", "public,notpii"} {
		assert.False(t, sens.accepts(v), v)
	}
	public := patternC("x-llmkube-classification", caseInsensitive("public"))
	assert.False(t, public.accepts("public,pii"))
}
