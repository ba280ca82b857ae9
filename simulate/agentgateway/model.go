package agentgateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/simulate"
)

// Listener is one listener of the Gateway: requests whose host matches
// Hostname ("" for any, "*.example.com" for a wildcard) land on it.
type Listener struct {
	Name     string
	Hostname string
}

// Gateway is the agentgateway Gateway the objects attach to.
type Gateway struct {
	Namespace, Name string
	// Labels are the Gateway's labels, which policies select it by
	// (spec.targetSelectors). A Gateway object among the objects given to
	// New supplies them when this is empty.
	Labels map[string]string
	// Listeners default to one listener "http" without hostname.
	Listeners []Listener
}

// Model is one agentgateway Gateway with every object attached to it.
type Model struct {
	gw       Gateway
	routes   []*httpRoute
	policies []*policy
	models   []*agwModel
	pools    map[string]bool // namespace/name of InferencePools
}

const (
	labelRouter          = "inference.llmkube.dev/model-router"
	labelRouterNamespace = "inference.llmkube.dev/model-router-namespace"
	gatewayGroup         = "gateway.networking.k8s.io"
)

// New builds the model from every object of every router on the Gateway
// and any foreign objects. Kinds it does not read are skipped.
func New(gw Gateway, objs []*unstructured.Unstructured) (*Model, error) {
	if len(gw.Listeners) == 0 {
		gw.Listeners = []Listener{{Name: "http"}}
	}
	m := &Model{gw: gw, pools: map[string]bool{}}
	for _, o := range objs {
		var err error
		switch o.GetKind() {
		case "HTTPRoute":
			err = appendDecoded(o, &m.routes)
		case "AgentgatewayPolicy":
			err = appendDecoded(o, &m.policies)
		case "AgentgatewayModel":
			err = appendDecoded(o, &m.models)
		case "InferencePool":
			m.pools[o.GetNamespace()+"/"+o.GetName()] = true
		case "Gateway":
			if o.GetNamespace() == gw.Namespace && o.GetName() == gw.Name && len(m.gw.Labels) == 0 {
				m.gw.Labels = o.GetLabels()
			}
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(m.policies, func(i, j int) bool { return key(m.policies[i].Meta) < key(m.policies[j].Meta) })
	sort.Slice(m.models, func(i, j int) bool { return key(m.models[i].Meta) < key(m.models[j].Meta) })
	return m, nil
}

func key(m meta) string { return m.Namespace + "/" + m.Name }

// flight is one request on its way through the Gateway.
type flight struct {
	req     simulate.Request
	headers http.Header
	body    []byte
	// bodySet: a transformation replaced the body, whose model is then the
	// one sent upstream.
	bodySet  bool
	claims   map[string]any
	listener Listener
	out      *simulate.Outcome
}

func (f *flight) cel() *celContext {
	return newCELContext(f.req.Method, f.req.Path, f.req.Host, f.headers, f.body, f.claims)
}

// Serve answers one request, on the listener its host lands on (an exact
// hostname, then the longest wildcard, then the first listener without
// hostname).
func (m *Model) Serve(r simulate.Request) simulate.Outcome {
	return m.ServeOn("", r)
}

// ServeOn answers one request arriving on the named listener (for example
// another port's); "" picks it by host as Serve does.
func (m *Model) ServeOn(listener string, r simulate.Request) simulate.Outcome {
	r = r.Normalized()
	out := &simulate.Outcome{}
	f := &flight{req: r, headers: r.Headers, out: out}
	if r.Body != nil {
		f.body, _ = json.Marshal(r.Body)
	}
	l, ok := m.listenerFor(r.Host)
	if listener != "" {
		ok = false
		for _, x := range m.gw.Listeners {
			if x.Name == listener {
				l, ok = x, true
			}
		}
	}
	if !ok {
		out.Status = http.StatusNotFound
		out.Tracef("no listener of Gateway %s/%s takes host %q (listener %q)", m.gw.Namespace, m.gw.Name, r.Host, listener)
		return *out
	}
	f.listener = l
	out.Tracef("listener %s", l.Name)

	// PreRouting (agentgateway's gateway phase): listener, then Gateway.
	if st := m.preRouting(f); st != 0 {
		out.Status = st
		return *out
	}

	e, ok := m.selectRoute(f)
	if !ok {
		out.Status = http.StatusNotFound
		out.Tracef("no route matches: 404 (RouteNotFound)")
		return *out
	}
	rt, rule := e.route, &e.route.Spec.Rules[e.rule]
	out.Router = routerOf(rt.Meta)
	out.Rule = rule.Name
	out.Tracef("route %s rule %d (%s) by match %s", key(rt.Meta), e.rule, rule.Name, e.key)

	pol := m.routePolicies(f, rt, rule.Name)
	if st := m.applyRoutePolicies(f, pol); st != 0 {
		out.Status = st
		return *out
	}
	if len(rule.BackendRefs) == 0 {
		out.Status = http.StatusInternalServerError
		out.Tracef("the rule has no backend: 500 (NoValidBackends)")
		return *out
	}
	b := rule.BackendRefs[0]
	switch {
	case b.Kind == "InferencePool":
		if !m.pools[rt.Meta.Namespace+"/"+b.Name] {
			out.Status = http.StatusInternalServerError
			out.Tracef("InferencePool %s/%s not found: 500", rt.Meta.Namespace, b.Name)
			return *out
		}
		out.Backend = "InferencePool/" + b.Name
	case b.Kind == "AgentgatewayModel":
		if st := m.resolveModels(f, rt, b.Name); st != http.StatusOK {
			out.Status = st
			return *out
		}
	default:
		kind := b.Kind
		if kind == "" {
			kind = "Service"
		}
		out.Backend = kind + "/" + b.Name
	}
	out.Attempts = []string{out.Backend}
	if f.req.RateLimited[out.Backend] {
		// No retry or failover on an answer's status: the provider's 429
		// is the client's.
		out.Status = http.StatusTooManyRequests
		out.Header = http.Header{"Retry-After": {simulate.LimitedRetryAfter}}
		out.Tracef("%s answers 429 (rate limited): relayed to the client (agentgateway retries no status and fails over on readiness only)", out.Backend)
		out.Backend = "" // no backend served
		return *out
	}
	if f.req.Down[out.Backend] {
		// The route sends the request to one backend; agentgateway does not
		// fail over to another pool or model at request time.
		out.Status = http.StatusServiceUnavailable
		out.Tracef("%s fails: 503 (the route has no other backend to try; agentgateway fails over when the controller re-renders on readiness)", out.Backend)
		out.Backend = "" // no backend answered
		return *out
	}
	out.Status = http.StatusOK
	out.Upstream = f.headers
	if out.UpstreamModel == "" {
		out.UpstreamModel = f.upstreamModel()
	}
	out.Tracef("forwarded to %s", out.Backend)
	return *out
}

func routerOf(m meta) string {
	name := m.Labels[labelRouter]
	if name == "" {
		return ""
	}
	ns := m.Labels[labelRouterNamespace]
	if ns == "" {
		ns = m.Namespace
	}
	return ns + "/" + name
}

// hostMatches reports whether pattern ("" any, "*.x" wildcard, or exact)
// takes host.
func hostMatches(pattern, host string) bool {
	switch {
	case pattern == "":
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:])
	default:
		return strings.EqualFold(pattern, host)
	}
}

// listenerFor picks the listener a host lands on: an exact hostname, then
// the longest wildcard, then one without hostname.
func (m *Model) listenerFor(host string) (Listener, bool) {
	best, rank := Listener{}, -1
	for _, l := range m.gw.Listeners {
		if !hostMatches(l.Hostname, host) {
			continue
		}
		r := 0
		switch {
		case l.Hostname == "":
		case strings.HasPrefix(l.Hostname, "*."):
			r = len(l.Hostname)
		default:
			r = 1 << 20
		}
		if r > rank {
			best, rank = l, r
		}
	}
	return best, rank >= 0
}

// targetsGateway: the policy attaches to the Gateway (section "") or to one
// of its listeners.
func (m *Model) targetsGateway(p *policy, section string) bool {
	return p.attaches("Gateway", meta{Namespace: m.gw.Namespace, Name: m.gw.Name, Labels: m.gw.Labels}, section)
}

// Ambiguities lists, for a listener, the PreRouting transformations
// agentgateway picks between in HashSet order (more than one at the level
// that wins): with them the outcome can differ between replicas and
// restarts.
func (m *Model) Ambiguities(listener string) []string {
	for _, section := range []string{listener, ""} {
		var at []string
		for _, p := range m.policies {
			if p.preRouting() && p.Spec.Traffic.Transformation != nil && m.targetsGateway(p, section) {
				at = append(at, key(p.Meta))
			}
		}
		if len(at) > 1 {
			return at
		}
		if len(at) == 1 {
			return nil
		}
	}
	return nil
}

func (m *Model) preRouting(f *flight) int {
	var transform, jwt *policy
	var authz []*authorization
	for _, section := range []string{f.listener.Name, ""} {
		for _, p := range m.policies {
			if !p.preRouting() || !m.targetsGateway(p, section) {
				continue
			}
			t := p.Spec.Traffic
			if t.Transformation != nil {
				if transform == nil {
					transform = p
				} else {
					f.out.Tracef("PreRouting transformation %s is not run: agentgateway runs one transformation per request (listener before Gateway; HashSet order within a level)", key(p.Meta))
				}
			}
			if t.JWTAuthentication != nil && jwt == nil {
				jwt = p
			}
			if t.Authorization != nil {
				authz = append(authz, t.Authorization)
			}
		}
	}
	if jwt != nil {
		if st := m.jwt(f, jwt); st != 0 {
			return st
		}
	}
	if len(authz) > 0 && !authorize(f, authz) {
		f.out.Tracef("PreRouting authorization denied: 403")
		return http.StatusForbidden
	}
	if transform != nil {
		f.out.Tracef("PreRouting transformation %s", key(transform.Meta))
		transformRequest(f, transform)
	}
	return 0
}

func transformRequest(f *flight, p *policy) {
	t := p.Spec.Traffic.Transformation
	if t.Request == nil {
		return
	}
	for _, s := range t.Request.Set {
		if v, ok := f.cel().evalHeader(s.Value); ok {
			f.headers.Set(s.Name, v)
			f.out.Tracef("set %s: %q", s.Name, v)
		} else {
			f.headers.Del(s.Name)
			f.out.Tracef("%s removed: %s does not evaluate", s.Name, s.Value)
		}
	}
	for _, s := range t.Request.Add {
		if v, ok := f.cel().evalHeader(s.Value); ok {
			f.headers.Add(s.Name, v)
		}
	}
	for _, n := range t.Request.Remove {
		f.headers.Del(n)
	}
	if t.Request.Body != "" {
		transformBody(f, t.Request.Body)
	}
}

// transformBody replaces the body with expr's value, after the headers as
// upstream (transformation_cel.rs apply): a string or bytes as they are,
// another value as JSON, and an empty body when the expression fails ("If
// it fails, set an empty body").
func transformBody(f *flight, expr string) {
	f.bodySet = true
	b, err := f.cel().evalBody(expr)
	if err != nil {
		f.body = []byte{}
		f.out.Tracef("body set empty: %s does not evaluate (%v)", expr, err)
		return
	}
	f.body = b
	f.out.Tracef("body replaced (%d bytes)", len(b))
}

// upstreamModel is the model the backend is sent: the body's, after any
// transformation that replaced it ("" when the body it is sent has none).
func (f *flight) upstreamModel() string {
	if !f.bodySet {
		return f.req.Model() // nothing rewrote the body
	}
	var body struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(f.body, &body) != nil {
		return ""
	}
	return body.Model
}

// routePolicies are the PostRouting policies of the route in merge order:
// Gateway, listener, route, rule.
func (m *Model) routePolicies(f *flight, rt *httpRoute, rule string) []*policy {
	var out []*policy
	for _, section := range []string{"", f.listener.Name} {
		for _, p := range m.policies {
			if p.Spec.Traffic != nil && !p.preRouting() && m.targetsGateway(p, section) {
				out = append(out, p)
			}
		}
	}
	levels := []string{""}
	if rule != "" {
		levels = append(levels, rule)
	}
	for _, section := range levels {
		for _, p := range m.policies {
			if p.Spec.Traffic != nil && !p.preRouting() && p.attaches("HTTPRoute", rt.Meta, section) {
				out = append(out, p)
			}
		}
	}
	return out
}

// merged is the route's effective policy (store/binds.rs route_policies).
type merged struct {
	jwt, transform, direct *policy
	authz                  []*authorization
}

func merge(ps []*policy) merged {
	var out merged
	var jwtLocked, transformLocked, directLocked, authzLocked bool
	for _, p := range ps {
		t, lock := p.Spec.Traffic, p.override()
		if t.JWTAuthentication != nil && !jwtLocked {
			out.jwt, jwtLocked = p, lock
		}
		if t.Transformation != nil && !transformLocked {
			out.transform, transformLocked = p, lock
		}
		if t.DirectResponse != nil && !directLocked {
			out.direct, directLocked = p, lock
		}
		if t.Authorization != nil && !authzLocked {
			out.authz = append(out.authz, t.Authorization)
			authzLocked = lock
		}
	}
	return out
}

func (m *Model) applyRoutePolicies(f *flight, ps []*policy) int {
	pol := merge(ps)
	if pol.jwt != nil {
		f.out.Tracef("jwtAuthentication of %s", key(pol.jwt.Meta))
		if st := m.jwt(f, pol.jwt); st != 0 {
			return st
		}
	}
	if len(pol.authz) > 0 {
		if !authorize(f, pol.authz) {
			f.out.Tracef("authorization denied: 403")
			return http.StatusForbidden
		}
		f.out.Tracef("authorization allowed")
	}
	if pol.transform != nil {
		f.out.Tracef("transformation of %s", key(pol.transform.Meta))
		transformRequest(f, pol.transform)
	}
	if pol.direct != nil {
		d := pol.direct.Spec.Traffic.DirectResponse
		f.out.Tracef("direct response %d of %s", d.Status, key(pol.direct.Meta))
		return d.Status
	}
	return 0
}

// jwt runs a jwtAuthentication policy: Strict needs a valid token,
// Optional refuses only an invalid one, Permissive never refuses. A token
// it verified is removed from the request (crates/agentgateway/src/http/
// jwt.rs Jwt::apply); one it let through unverified stays.
func (m *Model) jwt(f *flight, p *policy) int {
	j := p.Spec.Traffic.JWTAuthentication
	tok := f.req.Token
	if tok == nil {
		if j.Mode == "Strict" {
			f.out.Tracef("no token, Strict: 401")
			return http.StatusUnauthorized
		}
		return 0
	}
	trusted := false
	for _, pr := range j.Providers {
		// Provider::from_jwks: the issuer, and the audiences when set.
		if pr.Issuer == tok.Issuer && (len(pr.Audiences) == 0 || tok.NamesAudience(pr.Audiences)) {
			trusted = true
		}
	}
	if !trusted || tok.Invalid {
		if j.Mode == "Permissive" {
			return 0
		}
		f.out.Tracef("token not valid for %s: 401", key(p.Meta))
		return http.StatusUnauthorized
	}
	claims := map[string]any{"iss": tok.Issuer}
	for k, v := range tok.Claims {
		claims[k] = v
	}
	f.claims = claims
	// Jwt::apply removes the token it verified from where it read it (the
	// Authorization header, its default location).
	f.headers.Del("Authorization")
	f.out.Tracef("token verified; Authorization removed")
	return 0
}

// authorize is RuleSets::validate over the merged authorizations.
func authorize(f *flight, as []*authorization) bool {
	c := f.cel()
	hasAllow, allowed := false, false
	for _, a := range as {
		for _, x := range a.Policy.MatchExpressions {
			ok := c.evalBool(x)
			switch a.Action {
			case "Deny":
				if ok {
					return false
				}
			case "Require":
				if !ok {
					return false
				}
			default:
				hasAllow = true
				allowed = allowed || ok
			}
		}
	}
	return allowed || !hasAllow
}

// routeEntry is one match of one rule of one route, in agentgateway's
// route table.
type routeEntry struct {
	route *httpRoute
	rule  int
	key   string
	match routeMatch
}

func pathOf(m routeMatch) (string, string) {
	if m.Path == nil {
		return "PathPrefix", "/"
	}
	t := m.Path.Type
	if t == "" {
		t = "PathPrefix"
	}
	return t, m.Path.Value
}

func pathRank(t string) int {
	switch t {
	case "Exact":
		return 3
	case "PathPrefix":
		return 2
	default:
		return 1
	}
}

// less is compare_route: the entry that agentgateway tries first.
func less(a, b routeEntry) bool {
	at, av := pathOf(a.match)
	bt, bv := pathOf(b.match)
	if pathRank(at) != pathRank(bt) {
		return pathRank(at) > pathRank(bt)
	}
	if len(av) != len(bv) {
		return len(av) > len(bv)
	}
	if (a.match.Method != "") != (b.match.Method != "") {
		return a.match.Method != ""
	}
	if len(a.match.Headers) != len(b.match.Headers) {
		return len(a.match.Headers) > len(b.match.Headers)
	}
	if len(a.match.QueryParams) != len(b.match.QueryParams) {
		return len(a.match.QueryParams) > len(b.match.QueryParams)
	}
	return a.key < b.key
}

// attached returns the route's key suffix for this listener, and whether
// the route attaches to it.
func (m *Model) attached(rt *httpRoute, listener string) (string, bool) {
	for _, p := range rt.Spec.ParentRefs {
		ns := p.Namespace
		if ns == "" {
			ns = rt.Meta.Namespace
		}
		if (p.Kind != "" && p.Kind != "Gateway") || (p.Group != "" && p.Group != gatewayGroup) || p.Name != m.gw.Name || ns != m.gw.Namespace {
			continue
		}
		if p.SectionName == "" {
			return "", true
		}
		if p.SectionName == listener {
			return "." + p.SectionName, true
		}
	}
	return "", false
}

// hostLevels are HostnameMatch::all_matches: the host, its wildcard
// suffixes from the longest, then routes without hostnames.
func hostLevels(host string) []string {
	host = strings.ToLower(host)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	out := []string{host}
	for i := 0; i < len(host); i++ {
		if host[i] == '.' {
			out = append(out, "*"+host[i:])
		}
	}
	return append(out, "")
}

func (m *Model) selectRoute(f *flight) (routeEntry, bool) {
	for _, level := range hostLevels(f.req.Host) {
		var table []routeEntry
		for _, rt := range m.routes {
			suffix, ok := m.attached(rt, f.listener.Name)
			if !ok {
				continue
			}
			onLevel := len(rt.Spec.Hostnames) == 0 && level == ""
			for _, h := range rt.Spec.Hostnames {
				if level != "" && strings.EqualFold(h, level) {
					onLevel = true
				}
			}
			if !onLevel {
				continue
			}
			for i, rule := range rt.Spec.Rules {
				k := fmt.Sprintf("%s/%s.%02d%s", rt.Meta.Namespace, rt.Meta.Name, i, suffix)
				matches := rule.Matches
				if len(matches) == 0 {
					matches = []routeMatch{{}}
				}
				for _, mt := range matches {
					table = append(table, routeEntry{route: rt, rule: i, key: k, match: mt})
				}
			}
		}
		sort.SliceStable(table, func(i, j int) bool { return less(table[i], table[j]) })
		for _, e := range table {
			if matchesRequest(e.match, f) {
				return e, true
			}
		}
	}
	return routeEntry{}, false
}

func matchesRequest(m routeMatch, f *flight) bool {
	t, v := pathOf(m)
	path := f.req.Path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	switch t {
	case "Exact":
		if path != v {
			return false
		}
	case "PathPrefix":
		p := strings.TrimRight(v, "/")
		rest, ok := strings.CutPrefix(strings.TrimRight(path, "/"), p)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			return false
		}
	default:
		if !fullMatch(v, path) {
			return false
		}
	}
	if m.Method != "" && m.Method != f.req.Method {
		return false
	}
	for _, h := range m.Headers {
		found := false
		for _, have := range f.headers.Values(h.Name) {
			if h.Type == "RegularExpression" {
				found = found || (visibleASCII(have) && fullMatch(h.Value, have))
			} else {
				found = found || have == h.Value
			}
		}
		if !found {
			return false
		}
	}
	return len(m.QueryParams) == 0 // the model's requests carry no query matches
}

func fullMatch(re, s string) bool {
	r, err := regexp.Compile(re)
	if err != nil {
		return false
	}
	loc := r.FindStringIndex(s)
	return loc != nil && loc[0] == 0 && loc[1] == len(s)
}

// visibleASCII is what http::HeaderValue::to_str accepts: tab and bytes
// 0x20..0x7e. A regular expression never matches any other value.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\t' && (c < 0x20 || c > 0x7e) {
			return false
		}
	}
	return true
}
