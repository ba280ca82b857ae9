package routingtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// CaseResult is one case on one plane.
type CaseResult struct {
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"` // the case's line in File
	Test     string   `json:"test"`
	Case     string   `json:"case"`
	Plane    string   `json:"dataPlane"`
	Passed   bool     `json:"passed"`
	Skipped  string   `json:"skipped,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Got      Result   `json:"got"`
	Expect   Expect   `json:"expect"`
}

// Disagreement is a case the planes answer differently.
type Disagreement struct {
	Test, Case string
	ByPlane    map[string]string
}

// Coverage is what of one router no case exercised.
type Coverage struct {
	Router                      string
	Rules, Backends, Budgets    []string
	MissedRules, MissedBackends []string
	MissedBudgets               []string
	// Teams are the teams the router's allowlists name, covered when some
	// case's caller is that team; Allowlists its entries ("team" or
	// "team: model, ..."), covered when such a caller asked for a model the
	// entry lists (any, for an entry without models), allowed or refused.
	Teams, MissedTeams           []string
	Allowlists, MissedAllowlists []string
	Total, Covered               int
}

// allowlistName names an allowlist entry in coverage.
func allowlistName(e ir.Allowlist) string {
	if len(e.Models) == 0 {
		return e.Team
	}
	return e.Team + ": " + strings.Join(e.Models, ", ")
}

// callerCoverage is what a case's request exercises of the router's
// allowlists: its caller's team (the verified claim of a valid token) and
// the entries that decide its model.
func callerCoverage(r *ir.Router, req Request) []string {
	a := r.Policy.Auth
	team := keyTeam(r, req.APIKey)
	if team == "" && (a == nil || a.JWT == nil || req.Token == nil || req.Token.Invalid || req.Token.Issuer != "" && req.Token.Issuer != a.JWT.Issuer) {
		return nil
	}
	if team == "" {
		team, _ = req.Token.Claims[a.JWT.TeamClaim].(string)
	}
	if team == "" {
		return nil
	}
	model := req.Model
	if m, ok := req.Body["model"].(string); ok && model == "" {
		model = m
	}
	out := []string{"team:" + team}
	for _, e := range a.Allowlists {
		if e.Team == team && (len(e.Models) == 0 || slices.ContainsFunc(e.Models, func(g string) bool { return wellknown.Glob(g, model) })) {
			out = append(out, "allowlist:"+allowlistName(e))
		}
	}
	return out
}

// Percent is the covered share of rules, backends, budgets, teams and
// allowlist entries.
func (c Coverage) Percent() float64 {
	if c.Total == 0 {
		return 100
	}
	return 100 * float64(c.Covered) / float64(c.Total)
}

// Report is a whole run.
type Report struct {
	Results       []CaseResult
	Disagreements []Disagreement
	Coverage      []Coverage
	// FailUnder is --fail-under: a router whose coverage is below it fails
	// the run (0: no threshold).
	FailUnder float64
}

// CoverageFailures says, per router below FailUnder, that it is.
func (r *Report) CoverageFailures() []string {
	var out []string
	for _, c := range r.Coverage {
		if r.FailUnder > 0 && c.Percent() < r.FailUnder {
			out = append(out, fmt.Sprintf("coverage of %s is %.0f%%, below --fail-under %.0f%%", c.Router, c.Percent(), r.FailUnder))
		}
	}
	return out
}

// Failed counts failing case runs.
func (r *Report) Failed() int {
	n := 0
	for _, c := range r.Results {
		if !c.Passed && c.Skipped == "" {
			n++
		}
	}
	return n
}

// Check resolves each test's router and the names its cases use; problems
// are diagnostics with the file, the test and the field path.
func Check(files []*File, planes []*Plane, namespace string) diag.List {
	var diags diag.List
	for _, f := range files {
		c := checker{f: f, planes: planes, key: routerRef(f.Router, namespace), diags: &diags}
		c.file(routerIR(planes, c.key))
	}
	return diags
}

// routerIR is the compiled router of key on the last plane that has it.
func routerIR(planes []*Plane, key string) *ir.Router {
	var r *ir.Router
	for _, p := range planes {
		if rt := p.Routers[key]; rt != nil && rt.IR != nil {
			r = rt.IR
		}
	}
	return r
}

// checker checks one test file against its router.
type checker struct {
	f      *File
	planes []*Plane
	key    string // the router, "namespace/name"
	diags  *diag.List
	// The names the router declares.
	backends, rules, budgets map[string]bool
}

func (c *checker) errorf(p *field.Path, reason, format string, args ...any) {
	*c.diags = append(*c.diags, diag.Diagnostic{Severity: diag.Error, File: c.f.Source, Object: Kind + "/" + c.f.Name, Field: diag.FieldString(p), Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) tested(dp string) bool {
	return slices.ContainsFunc(c.planes, func(p *Plane) bool { return string(p.Name) == dp })
}

func (c *checker) file(r *ir.Router) {
	spec := field.NewPath("spec")
	for i, dp := range c.f.DataPlanes {
		if !c.tested(dp) {
			c.errorf(spec.Child("dataPlanes").Index(i), "UnknownDataPlane", "data plane %q is not one this run tests (%s)", dp, planeNames(c.planes))
		}
	}
	if r == nil {
		c.errorf(spec.Child("router"), "UnknownRouter", "the input has no ModelRouter %s", c.key)
		return
	}
	c.backends = map[string]bool{}
	for _, b := range r.Backends {
		c.backends[b.Name] = true
	}
	c.rules = map[string]bool{DefaultRule: true}
	for _, rl := range r.Rules {
		c.rules[rl.Name] = true
	}
	c.budgets = map[string]bool{}
	for _, b := range r.Policy.Budgets {
		c.budgets[b.Name] = true
	}
	for _, tc := range c.f.Cases {
		p := spec.Child("cases").Index(tc.Index)
		c.caseDataPlanes(p, tc)
		for i, b := range tc.Down {
			if !c.backends[b] {
				c.errorf(p.Child("down").Index(i), "UnknownBackend", "ModelRouter %s has no backend %q", c.key, b)
			}
		}
		for i, b := range tc.Request.RateLimited {
			if !c.backends[b] {
				c.errorf(p.Child("rateLimited").Index(i), "UnknownBackend", "ModelRouter %s has no backend %q", c.key, b)
			}
		}
		c.expect(p.Child("expect"), tc.Expect)
	}
}

func (c *checker) caseDataPlanes(p *field.Path, tc Case) {
	for i, dp := range tc.DataPlanes {
		switch {
		case !c.tested(dp):
			c.errorf(p.Child("dataPlanes").Index(i), "UnknownDataPlane", "data plane %q is not one this run tests (%s)", dp, planeNames(c.planes))
		case len(c.f.DataPlanes) > 0 && !slices.Contains(c.f.DataPlanes, dp):
			c.errorf(p.Child("dataPlanes").Index(i), "DataPlaneNotInTest", "data plane %q is not among the test's spec.dataPlanes (%s): the case would run on no plane", dp, strings.Join(c.f.DataPlanes, ", "))
		}
	}
}

// expect checks the names an expectation uses; those of another router
// (expect.router) are that router's to know, except budgets.
func (c *checker) expect(p *field.Path, e Expect) {
	for i, b := range e.Backends() {
		if e.Router == "" && !c.backends[b] {
			at := p.Child("backend")
			if len(e.AnyOf) > 0 {
				at = at.Index(i)
			}
			c.errorf(at, "UnknownBackend", "ModelRouter %s has no backend %q (set expect.router for another router's)", c.key, b)
		}
	}
	for i, b := range e.Attempts {
		if e.Router == "" && !c.backends[b] {
			c.errorf(p.Child("attempts").Index(i), "UnknownBackend", "ModelRouter %s has no backend %q", c.key, b)
		}
	}
	if e.Rule != "" && e.Router == "" && !c.rules[e.Rule] {
		c.errorf(p.Child("rule"), "UnknownRule", "ModelRouter %s has no rule %q (the default route and BackendNameMatch are %q)", c.key, e.Rule, DefaultRule)
	}
	for i, b := range e.Budgets {
		if !c.budgets[b.Name] {
			c.errorf(p.Child("budgets").Index(i).Child("name"), "UnknownBudget", "ModelRouter %s has no budget %q", c.key, b.Name)
		}
	}
}

func planeNames(ps []*Plane) string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.Name))
	}
	return strings.Join(out, ", ")
}

// routerRef is "namespace/name" for a test's router field.
func routerRef(s, namespace string) string {
	if strings.Contains(s, "/") {
		return s
	}
	if namespace == "" {
		namespace = "default"
	}
	return namespace + "/" + s
}

// Run runs every case of every file on each plane the file allows.
func Run(files []*File, planes []*Plane, namespace string) *Report {
	rep := &Report{}
	ex := exercised{}
	for _, f := range files {
		key := routerRef(f.Router, namespace)
		for _, c := range f.Cases {
			answers := map[string]string{}
			for _, p := range planes {
				if !runsOn(f, c, p) {
					continue
				}
				cr, answer := runCase(f, c, p, key, ex)
				if answer != "" {
					answers[string(p.Name)] = answer
				}
				rep.Results = append(rep.Results, cr)
			}
			if distinct(answers) > 1 {
				rep.Disagreements = append(rep.Disagreements, Disagreement{Test: f.Name, Case: c.Name, ByPlane: answers})
			}
		}
	}
	rep.Coverage = coverage(files, planes, namespace, ex)
	return rep
}

// exercised is, per router, what the cases reached: "rule:x",
// "backend:y", "budget:z", "team:t", "allowlist:e".
type exercised map[string]map[string]bool

func (ex exercised) mark(router, what string) {
	if ex[router] == nil {
		ex[router] = map[string]bool{}
	}
	ex[router][what] = true
}

// answered marks what a case that ran reached: the caller's allowlists on
// the tested router, and the backends, rule and budgets of the router
// that answered.
func (ex exercised) answered(p *Plane, key string, req Request, got Result) {
	if rt := p.Routers[key]; rt != nil && rt.IR != nil {
		for _, k := range callerCoverage(rt.IR, req) {
			ex.mark(key, k)
		}
	}
	if got.Router == "" {
		return
	}
	ex.mark(got.Router, "backend:"+got.Backend)
	for _, b := range got.Draw { // a weighted rule: each may answer
		ex.mark(got.Router, "backend:"+b)
	}
	if got.Rule != "" {
		ex.mark(got.Router, "rule:"+got.Rule)
	}
	for _, b := range got.Budgets {
		ex.mark(got.Router, "budget:"+b.Name)
	}
}

// runsOn says whether the test and the case allow plane p.
func runsOn(f *File, c Case, p *Plane) bool {
	return (len(f.DataPlanes) == 0 || slices.Contains(f.DataPlanes, string(p.Name))) &&
		(len(c.DataPlanes) == 0 || slices.Contains(c.DataPlanes, string(p.Name)))
}

// runCase runs one case on one plane; answer is the plane's answer for the
// DIFF report, "" when the case was refused or skipped.
func runCase(f *File, c Case, p *Plane, key string, ex exercised) (cr CaseResult, answer string) {
	got := p.Serve(key, c.Request, c.Down)
	cr = CaseResult{File: f.Source, Line: c.Line, Test: f.Name, Case: c.Name, Plane: string(p.Name), Got: got, Expect: c.Expect, Skipped: got.Skipped}
	if want := c.Expect.Refused; want != "" {
		cr.Skipped = ""
		switch {
		case got.Skipped == "":
			cr.Failures = []string{fmt.Sprintf("the router compiles for %s, want it refused (%s)", p.Name, want)}
		case !slices.Contains(got.RefusedFor, want):
			cr.Failures = []string{fmt.Sprintf("%s, want it refused for %s", got.Skipped, want)}
		}
		cr.Passed = len(cr.Failures) == 0
		return cr, ""
	}
	if got.Skipped == "" && !p.ModelsRefusals && (c.Expect.Has("error") || c.Expect.Has("wwwAuthenticate")) {
		cr.Skipped = fmt.Sprintf("the %s model does not reproduce the data plane's refusal bodies and headers (error, wwwAuthenticate): assert status there, or limit the case to Proxy", p.Name)
		got.Skipped = cr.Skipped
	}
	if got.Skipped != "" {
		return cr, ""
	}
	cr.Failures = judge(c.Expect, got, key)
	if f := byChance(c, got, p.Routers[got.Router]); f != "" {
		cr.Failures = append(cr.Failures, f)
	}
	cr.Passed = len(cr.Failures) == 0
	ex.answered(p, key, c.Request, got)
	return cr, summary(got, c.Expect)
}

// byChance is the failure of a case that asserts one backend of a weighted
// rule that draws among several: which one serves is chance (the
// router-proxy draws in proportion to weight; a gateway may pick by its own
// order), so such a case would pass or fail from run to run and plane to
// plane. It must assert the set ("backend: [a, b]") or mark the others
// down.
func byChance(c Case, got Result, rt *Router) string {
	if got.Rule == "" || got.Rule == DefaultRule || rt == nil || rt.IR == nil || len(c.Expect.Backends()) != 1 || c.Expect.Router != "" {
		return ""
	}
	for _, rule := range rt.IR.Rules {
		if rule.Name != got.Rule || rule.Strategy != ir.StrategyWeighted {
			continue
		}
		var draw []string
		for _, n := range rule.Candidates {
			if b, ok := rt.IR.Backend(n); ok && b.Weight > 0 && !slices.Contains(c.Down, n) {
				draw = append(draw, n)
			}
		}
		if len(draw) > 1 {
			return fmt.Sprintf("rule %q is weighted over %s: which one serves is chance, so this case would pass or fail by run and plane; expect backend: [%s] (any of them), or mark the others down", got.Rule, strings.Join(draw, ", "), strings.Join(draw, ", "))
		}
	}
	return ""
}

// summary is a plane's answer, as the DIFF report compares them: a backend
// within the expectation's set counts as the set.
func summary(r Result, e Expect) string {
	s := fmt.Sprintf("%d", r.Status)
	if len(r.Draw) > 1 && slices.Contains(r.Draw, r.Backend) {
		// A weighted rule's draw is the same answer whichever it picked.
		s += " from one of " + strings.Join(r.Draw, "|")
		if r.Rule != "" {
			s += " (rule " + r.Rule + ")"
		}
		return s
	}
	if len(e.AnyOf) > 1 && slices.Contains(e.AnyOf, r.Backend) {
		s += " from one of " + strings.Join(e.AnyOf, "|")
		if r.Rule != "" {
			s += " (rule " + r.Rule + ")"
		}
		return s
	}
	if r.Backend != "" {
		s += " from " + r.Backend
		if r.Rule != "" {
			s += " (rule " + r.Rule + ")"
		}
	}
	return s
}

func distinct(m map[string]string) int {
	seen := map[string]bool{}
	for _, v := range m {
		seen[v] = true
	}
	return len(seen)
}

// judge compares what happened with what must happen.
func judge(e Expect, got Result, router string) []string {
	var fails []string
	if e.Has("status") && got.Status != e.Status {
		fails = append(fails, fmt.Sprintf("status %d, want %d", got.Status, e.Status))
	}
	fails = append(fails, judgeBackend(e, got, router)...)
	if e.Has("error") && got.Error != e.Error {
		fails = append(fails, fmt.Sprintf("error code %q, want %q", got.Error, e.Error))
	}
	if e.Has("wwwAuthenticate") {
		switch {
		case e.WWWAuthenticate == "" && got.WWWAuthenticate != "":
			fails = append(fails, fmt.Sprintf("WWW-Authenticate %q, want none", got.WWWAuthenticate))
		case e.WWWAuthenticate != "" && !strings.Contains(got.WWWAuthenticate, e.WWWAuthenticate):
			fails = append(fails, fmt.Sprintf("WWW-Authenticate %q, want it to contain %q", got.WWWAuthenticate, e.WWWAuthenticate))
		}
	}
	if e.Rule != "" && got.Rule != e.Rule {
		fails = append(fails, fmt.Sprintf("rule %q, want %q", got.Rule, e.Rule))
	}
	if e.Has("attempts") && got.Weighted {
		fails = append(fails, fmt.Sprintf("rule %q is weighted: the order of attempts is a draw; assert the backend (a list when several may answer) instead", got.Rule))
	} else if e.Has("attempts") && !slices.Equal(got.Attempts, e.Attempts) {
		fails = append(fails, fmt.Sprintf("attempts %v, want %v", got.Attempts, e.Attempts))
	}
	if e.Has("budgets") {
		g, w := budgetSet(got.Budgets), budgetSet(e.Budgets)
		if !slices.Equal(g, w) {
			fails = append(fails, fmt.Sprintf("budgets charged %v, want %v", g, w))
		}
	}
	return append(fails, judgeUpstream(e, got)...)
}

// judgeBackend compares the backend (and its router) that answered with
// the expected one or set.
func judgeBackend(e Expect, got Result, router string) []string {
	want := e.Backends()
	if len(want) == 0 {
		return nil
	}
	wantRouter := router
	if e.Router != "" {
		wantRouter = e.Router
	}
	if len(got.Draw) > 0 && got.Router == wantRouter {
		// A weighted rule's draw: judged by every backend it may pick, not
		// by the one this run drew, so the verdict is the same every run
		// (one backend is byChance's failure).
		if len(want) == 1 {
			return nil
		}
		for _, b := range got.Draw {
			if !slices.Contains(want, b) {
				return []string{fmt.Sprintf("rule %q draws from %s; backend %s may answer, want %s", got.Rule, strings.Join(got.Draw, ", "), b, strings.Join(want, " or "))}
			}
		}
		return nil
	}
	if slices.Contains(want, got.Backend) && got.Router == wantRouter {
		return nil
	}
	w := strings.Join(want, " or ")
	if got.Backend == "" {
		return []string{fmt.Sprintf("no backend answered, want %s", w)}
	}
	return []string{fmt.Sprintf("backend %s of %s answered, want %s of %s", got.Backend, got.Router, w, wantRouter)}
}

// judgeUpstream compares what reached the backend (headers, their values,
// the caller's token) with what must and must not.
func judgeUpstream(e Expect, got Result) []string {
	var fails []string
	for _, h := range e.Forwarded {
		if !slices.Contains(got.Upstream, strings.ToLower(h)) {
			fails = append(fails, fmt.Sprintf("header %s does not reach the backend", h))
		}
	}
	for _, h := range e.NotForwarded {
		if slices.Contains(got.Upstream, strings.ToLower(h)) {
			fails = append(fails, fmt.Sprintf("header %s reaches the backend", h))
		}
	}
	names := make([]string, 0, len(e.ForwardedValues))
	for h := range e.ForwardedValues {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		want := e.ForwardedValues[h]
		if got := got.UpstreamValues.Values(h); !slices.Contains(got, want) {
			if len(got) == 0 {
				fails = append(fails, fmt.Sprintf("header %s does not reach the backend, want %q", h, want))
			} else {
				fails = append(fails, fmt.Sprintf("header %s reaches the backend as %q, want %q", h, got, want))
			}
		}
	}
	if e.UpstreamModel != "" && got.UpstreamModel != e.UpstreamModel {
		if got.Status >= 300 {
			fails = append(fails, fmt.Sprintf("no backend was sent the request, want model %q sent", e.UpstreamModel))
		} else {
			fails = append(fails, fmt.Sprintf("the backend was sent model %q, want %q", got.UpstreamModel, e.UpstreamModel))
		}
	}
	if e.CallerToken != nil && *e.CallerToken != got.CallerToken {
		if got.CallerToken {
			fails = append(fails, "the caller's bearer token reaches the backend")
		} else {
			fails = append(fails, "the caller's bearer token does not reach the backend")
		}
	}
	return fails
}

func budgetSet(bs []Budget) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		s := b.Name
		if b.Key != "" {
			s += "[" + b.Key + "]"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func coverage(files []*File, planes []*Plane, namespace string, exercised exercised) []Coverage {
	tested := map[string]bool{}
	for _, f := range files {
		tested[routerRef(f.Router, namespace)] = true
	}
	var keys []string
	for k := range tested {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Coverage
	for _, k := range keys {
		r := routerIR(planes, k)
		if r == nil {
			continue
		}
		c := Coverage{Router: k}
		ex := exercised[k]
		check := func(kind, name string, all, missed *[]string) {
			*all = append(*all, name)
			c.Total++
			if ex[kind+":"+name] {
				c.Covered++
			} else {
				*missed = append(*missed, name)
			}
		}
		for _, rl := range r.Rules {
			check("rule", rl.Name, &c.Rules, &c.MissedRules)
		}
		if r.Default.Backend != "" || r.Default.Strategy == ir.DefaultBackendNameMatch {
			check("rule", DefaultRule, &c.Rules, &c.MissedRules)
		}
		for _, b := range r.Backends {
			check("backend", b.Name, &c.Backends, &c.MissedBackends)
		}
		for _, b := range r.Policy.Budgets {
			check("budget", b.Name, &c.Budgets, &c.MissedBudgets)
		}
		if a := r.Policy.Auth; a != nil {
			seen := map[string]bool{}
			for _, e := range a.Allowlists {
				if !seen[e.Team] {
					seen[e.Team] = true
					check("team", e.Team, &c.Teams, &c.MissedTeams)
				}
			}
			for _, e := range a.Allowlists {
				check("allowlist", allowlistName(e), &c.Allowlists, &c.MissedAllowlists)
			}
		}
		out = append(out, c)
	}
	return out
}
