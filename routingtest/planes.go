package routingtest

import (
	"cmp"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/simulate"
	models "github.com/llmkube/llmkube-compile/simulate/builtin"
	"github.com/llmkube/llmkube-compile/targets"
)

// DefaultRule is how a request served by the default route, or by
// BackendNameMatch, is named in results and expectations: the label the
// router-proxy gives it.
const DefaultRule = simulate.DefaultRule

// Router is one ModelRouter as compiled for one data plane, with what
// serves its requests there.
type Router struct {
	Key string // namespace/name
	IR  *ir.Router
	// Refused is why the plane cannot serve the router (the compiler's
	// errors); nil when it can.
	Refused diag.List
	// Warnings are the compiler's warnings for the router on this plane.
	Warnings diag.List
	serve    func(simulate.Request) simulate.Outcome
	// backendID names a backend of the router as the plane's outcome does;
	// name maps an outcome's backend back to router and backend.
	backendID func(backend string) string
	name      func(id string) (router, backend string)
	// rule maps the plane's rule label to the ModelRouter's vocabulary.
	rule func(string) string
	// host is the Host a request for the router carries by default.
	host string
}

// Plane is every router of the input compiled for one data plane, on
// shared gateways.
type Plane struct {
	Name    ir.DataPlane
	Routers map[string]*Router
	// build compiles the input again with some InferenceServices not
	// ready (AgentGateway, where a backend down is a backend not ready);
	// downPlanes caches those planes by the services down.
	build      func(notReady map[string]bool) (*Plane, error)
	downPlanes map[string]*Plane
	// ModelsRefusals is true when the plane's model reproduces its
	// refusals' bodies and headers (the router-proxy runs itself); on
	// the others, a case asserting an error code or a challenge is skipped
	// with the reason, never passed.
	ModelsRefusals bool
	// downIsNotReady: the plane fails over on readiness, not per request
	// (simulate.PlaneModel.DownIsNotReady).
	downIsNotReady bool
	// table is the plane's capability table: whether it serves a
	// request's API (request.api) is its feature rows' verdict.
	table capability.Table
}

// Planes compiles every router of the input for each data plane and builds
// what serves it: the plane's request-path model (simulate.PlaneModel,
// listed in simulate/builtin): the router-proxy itself, or the model of the
// gateway all routers share.
//
// foreign are objects of the input that no router generated (another
// team's HTTPRoute or policy on the same gateway); they sit on the gateway
// models, created before the routers' objects.
func Planes(in *compiler.Inputs, reg *targets.Registry, opts pipeline.Options, planes []ir.DataPlane, foreign []*unstructured.Unstructured) ([]*Plane, error) {
	var out []*Plane
	for _, dp := range planes {
		p, err := buildPlane(in, reg, opts, dp, foreign)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func routerKey(r *ir.Router) string { return r.Namespace + "/" + r.Name }

func buildPlane(in *compiler.Inputs, reg *targets.Registry, opts pipeline.Options, dp ir.DataPlane, foreign []*unstructured.Unstructured) (*Plane, error) {
	opts.Compile.DataPlane = dp
	p := &Plane{Name: dp, Routers: map[string]*Router{}, table: reg.Capabilities()(dp)}
	model, ok := models.Get(dp)
	p.ModelsRefusals, p.downIsNotReady = model.ModelsRefusals, model.DownIsNotReady
	if model.DownIsNotReady {
		p.build = func(notReady map[string]bool) (*Plane, error) {
			return buildPlane(withNotReady(in, notReady), reg, opts, dp, foreign)
		}
	}
	// Cross-router refusals (a shared Gateway) come from the whole run.
	_, all := pipeline.Run(in, reg, opts)
	refusedBy := map[string]diag.List{}
	for _, d := range all.Errors() {
		refusedBy[d.Object] = append(refusedBy[d.Object], d)
	}
	var order []*Router
	objects := map[string][]*unstructured.Unstructured{}
	for _, src := range in.Routers {
		r, diags := compiler.Compile(src.Router, in, opts.Compile)
		if r == nil {
			key := src.Router.Namespace + "/" + src.Router.Name
			p.Routers[key] = &Router{Key: key, Refused: append(diags.Errors(), refusedBy["ModelRouter/"+src.Router.Name]...).WithObject(src.File, "ModelRouter/"+src.Router.Name)}
			continue
		}
		rt := &Router{Key: routerKey(r), IR: r, Warnings: diags.Warnings().WithObject(src.File, "ModelRouter/"+src.Router.Name)}
		p.Routers[rt.Key] = rt
		order = append(order, rt)
		if refused := refusedBy["ModelRouter/"+src.Router.Name]; len(refused) > 0 || diags.HasErrors() {
			rt.Refused = append(diags.Errors(), refused...).WithObject(src.File, "ModelRouter/"+src.Router.Name)
			continue
		}
		objs, more := pipeline.CompileRouter(src, in, reg, opts)
		rt.Warnings = append(rt.Warnings, more.Warnings().WithObject(src.File, "ModelRouter/"+src.Router.Name)...)
		if more.HasErrors() {
			rt.Refused = more.Errors()
			continue
		}
		objects[rt.Key] = objs
	}
	if !ok {
		for _, rt := range order {
			if rt.Refused == nil {
				rt.Refused = diag.List{{Severity: diag.Error, Reason: "NoModel", Message: fmt.Sprintf("no executable model of the %s data plane in this build", dp)}}
			}
		}
		return p, nil
	}
	var compiled []simulate.Compiled
	for _, rt := range order {
		if rt.Refused == nil {
			compiled = append(compiled, simulate.Compiled{Key: rt.Key, IR: rt.IR, Objects: objects[rt.Key]})
		}
	}
	served, err := model.Serve(compiled, foreign)
	if err != nil {
		return nil, err
	}
	for _, rt := range order {
		if s, ok := served[rt.Key]; ok {
			rt.serve, rt.backendID, rt.name, rt.rule, rt.host = s.Serve, s.BackendID, s.Name, s.Rule, s.Host
		}
	}
	return p, nil
}

// withNotReady is a copy of the inputs where the InferenceServices
// notReady ("namespace/name") report Ready=False; one absent from the input
// (assumed ready) is added with that status.
func withNotReady(in *compiler.Inputs, notReady map[string]bool) *compiler.Inputs {
	out := *in
	out.InferenceServices = nil
	seen := map[string]bool{}
	unready := func(s *v1.InferenceService) *v1.InferenceService {
		c := s.DeepCopy()
		c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "RoutingTestDown", Message: "down in a routing test"}}
		return c
	}
	for _, s := range in.InferenceServices {
		k := s.Namespace + "/" + s.Name
		seen[k] = true
		if notReady[k] {
			s = unready(s)
		}
		out.InferenceServices = append(out.InferenceServices, s)
	}
	keys := make([]string, 0, len(notReady))
	for k := range notReady {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !seen[k] {
			ns, name, _ := strings.Cut(k, "/")
			out.InferenceServices = append(out.InferenceServices, unready(&v1.InferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
		}
	}
	return &out
}

// downAsNotReady is the plane a case with backends down runs on, on a plane
// that fails over on readiness (AgentGateway: agentgateway does not fail
// over per request; the controller compiles against the InferenceServices'
// readiness and routes each rule to its first ready backend). A local backend down is therefore its
// InferenceService not ready, and the router is compiled again so. why is
// set when the case cannot be expressed so.
func (p *Plane) downAsNotReady(rt *Router, down []string) (*Plane, string) {
	notReady := map[string]bool{}
	for _, name := range down {
		if b, ok := rt.IR.Backend(name); ok && b.Local != nil {
			notReady[rt.IR.Namespace+"/"+b.Local.InferenceService] = true
		}
	}
	if len(notReady) == 0 {
		return p, ""
	}
	// Readiness is per InferenceService: a backend up whose service is down
	// cannot be expressed.
	for _, b := range rt.IR.Backends {
		if b.Local != nil && notReady[rt.IR.Namespace+"/"+b.Local.InferenceService] && !slices.Contains(down, b.Name) {
			return nil, fmt.Sprintf("not expressible on %s: backend %s is up but shares InferenceService %s with a backend down, and readiness is per InferenceService (add %s to down)", p.Name, b.Name, b.Local.InferenceService, b.Name)
		}
	}
	keys := make([]string, 0, len(notReady))
	for k := range notReady {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	id := strings.Join(keys, ",")
	if dp := p.downPlanes[id]; dp != nil {
		return dp, ""
	}
	dp, err := p.build(notReady)
	if dp != nil {
		dp.build = nil // its backends are down already
	}
	if err != nil {
		return nil, fmt.Sprintf("not expressible on %s: compiling with %s not ready: %v", p.Name, id, err)
	}
	if p.downPlanes == nil {
		p.downPlanes = map[string]*Plane{}
	}
	p.downPlanes[id] = dp
	return dp, ""
}

// weighted marks an answer of the router's own weighted rule: the order of
// attempts is then a draw (dropped), and Draw lists the backends the draw
// may pick (a capable candidate with a positive weight, not down), sorted,
// when there are several: the same on every plane and every run, whichever
// backend this plane's draw (or its model's fixed pick) sent the request to.
// A backend outside the draw answering is left as it is, so a plane that
// really routes elsewhere still differs.
func (res *Result) weighted(r *ir.Router, down []string) {
	if res.Status >= 300 || res.Backend == "" || res.Rule == "" || res.Rule == DefaultRule || r == nil || res.Router != routerKey(r) {
		return
	}
	var rule *ir.Rule
	for i := range r.Rules {
		if r.Rules[i].Name == res.Rule {
			rule = &r.Rules[i]
		}
	}
	if rule == nil || rule.Strategy != ir.StrategyWeighted {
		return
	}
	var set []string
	for _, name := range rule.Candidates {
		if b, ok := r.Backend(name); ok && b.Weight > 0 && !slices.Contains(down, name) {
			set = append(set, name)
		}
	}
	if !slices.Contains(set, res.Backend) {
		return
	}
	res.Weighted, res.Attempts = true, nil
	if len(set) > 1 {
		sort.Strings(set)
		res.Draw = set
	}
}

// Result is what one plane made of one request, in ModelRouter terms.
type Result struct {
	Plane    ir.DataPlane `json:"dataPlane"`
	Status   int          `json:"status,omitempty"`
	Router   string       `json:"router,omitempty"`
	Backend  string       `json:"backend,omitempty"`
	Rule     string       `json:"rule,omitempty"`
	Attempts []string     `json:"attempts,omitempty"`
	// Draw, when the router's weighted rule answered and more than one of
	// its backends may, are those backends, sorted: which one answered is
	// a draw. Weighted is set whenever a weighted rule answered (Attempts,
	// whose order is a draw, are then empty).
	Draw     []string `json:"draw,omitempty"`
	Weighted bool     `json:"weighted,omitempty"`
	Budgets  []Budget `json:"budgets,omitempty"`
	Upstream []string `json:"upstreamHeaders,omitempty"` // header names reaching the backend, lowercased
	// UpstreamModel is the model the request reached the backend with.
	UpstreamModel string `json:"upstreamModel,omitempty"`
	// UpstreamValues are those headers with their values (not reported:
	// they may hold credentials); CallerToken is whether the caller's own
	// bearer token reached the backend.
	UpstreamValues http.Header `json:"-"`
	CallerToken    bool        `json:"callerTokenForwarded,omitempty"`
	// Error is the refusal's error code and WWWAuthenticate its challenge,
	// on a plane whose model reproduces refusals (Plane.ModelsRefusals).
	Error           string   `json:"error,omitempty"`
	WWWAuthenticate string   `json:"wwwAuthenticate,omitempty"`
	Trace           []string `json:"trace,omitempty"`
	// Skipped, when set, says why the case did not run on the plane;
	// RefusedFor are the reasons the plane refused the router.
	Skipped    string   `json:"skipped,omitempty"`
	RefusedFor []string `json:"refusedFor,omitempty"`
}

// Serve runs one request for router key on the plane.
func (p *Plane) Serve(key string, req Request, down []string) Result {
	rt := p.Routers[key]
	res := Result{Plane: p.Name}
	if rt == nil {
		res.Skipped = "the input has no ModelRouter " + key
		return res
	}
	if rt.Refused != nil {
		res.refused(p.Name, rt.Refused)
		return res
	}
	if f, ok := apiFeatures[req.API]; ok {
		if row, no := p.table.Refusal(f); no {
			// The router compiles; the plane does not serve a client of
			// this protocol under its rules: the case says so, never passes.
			res.RefusedFor = []string{row.Reason}
			res.Skipped = fmt.Sprintf("refused on %s (%s): %s", p.Name, row.Reason, row.Message)
			return res
		}
	}
	if p.build != nil && len(down) > 0 {
		if res, done := p.serveRecompiled(rt, key, req, down); done {
			return res
		}
	}
	// One meaning of down on every plane: a backend whose InferenceService
	// the input reports not ready is down on the planes that find out per
	// request too (AgentGateway's compile already routed around it).
	var unready []string
	if !p.downIsNotReady && rt.IR != nil {
		unready = notReadyBesides(rt.IR, down)
		down = append(slices.Clip(down), unready...)
	}
	o := rt.serve(rt.request(req, down))
	res.outcome(rt, o, down)
	if len(unready) > 0 {
		res.Trace = append([]string{fmt.Sprintf("down %v: their InferenceServices are not ready in the input", unready)}, res.Trace...)
	}
	return res
}

// refused is the result of a case on a plane that refused the router.
func (res *Result) refused(plane ir.DataPlane, refusals diag.List) {
	var reasons []string
	for _, d := range refusals {
		reasons = append(reasons, d.Reason)
	}
	sort.Strings(reasons)
	res.RefusedFor = slices.Compact(reasons)
	res.Skipped = fmt.Sprintf("refused on %s (%s)", plane, strings.Join(res.RefusedFor, ", "))
}

// serveRecompiled serves the request on the plane compiled again with the
// backends down as not ready, on a plane that fails over by readiness.
// done is false when that plane is this one (nothing down changes the
// compile) and the request is served here.
func (p *Plane) serveRecompiled(rt *Router, key string, req Request, down []string) (res Result, done bool) {
	dp, why := p.downAsNotReady(rt, down)
	if why != "" {
		return Result{Plane: p.Name, Skipped: why}, true
	}
	if dp == p {
		return Result{}, false
	}
	res = dp.Serve(key, req, down)
	if res.Skipped != "" {
		res.Skipped = fmt.Sprintf("with %s down: %s", strings.Join(down, ", "), res.Skipped)
	}
	res.Trace = append([]string{fmt.Sprintf("down %v: their InferenceServices are not ready, so the router is compiled again as the controller would (agentgateway fails over by readiness, not per request)", down)}, res.Trace...)
	return res, true
}

// notReadyBesides are the router's backends whose InferenceService is not
// ready and that are not already down.
func notReadyBesides(r *ir.Router, down []string) []string {
	var out []string
	for _, b := range r.Backends {
		if b.Local != nil && !b.Local.Ready && !slices.Contains(down, b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}

// request is the case's request as the plane's model takes it: the body
// with its model and a default message, the token with the router's
// issuer unless the case names one, and the backends down by the plane's
// names.
func (rt *Router) request(req Request, down []string) simulate.Request {
	sr := simulate.Request{Method: req.Method, Path: cmp.Or(req.Path, apiPaths[req.API]), Host: cmp.Or(req.Host, rt.host), Headers: req.Headers, ClientAddr: req.ClientAddress}
	body := map[string]any{}
	for k, v := range req.Body {
		body[k] = v
	}
	if req.Model != "" {
		body["model"] = req.Model
	}
	if len(body) > 0 {
		defaultBody(req.API, body)
	}
	if len(body) > 0 {
		sr.Body = body
	}
	if t := req.Token; t != nil {
		sr.Token = &simulate.Token{Issuer: rt.issuer(t.Issuer), Claims: rt.claims(t.Claims), Invalid: t.Invalid}
	}
	if k := req.APIKey; k != nil {
		sr.APIKey = k.simulated()
	}
	if len(down) > 0 {
		sr.Down = map[string]bool{}
		for _, b := range down {
			sr.Down[rt.backendID(b)] = true
		}
	}
	if len(req.RateLimited) > 0 {
		sr.RateLimited = map[string]bool{}
		for _, b := range req.RateLimited {
			sr.RateLimited[rt.backendID(b)] = true
		}
	}
	return sr
}

// defaultBody fills in what a request of the protocol needs and the case
// did not give: a user's "hello" (and, for Messages, the max_tokens the
// protocol requires).
func defaultBody(api string, body map[string]any) {
	switch api {
	case APIResponses:
		if _, ok := body["input"]; !ok {
			body["input"] = "hello"
		}
		return
	case APIMessages:
		if _, ok := body["max_tokens"]; !ok {
			body["max_tokens"] = 256
		}
	}
	if _, ok := body["messages"]; !ok {
		body["messages"] = []any{map[string]any{"role": "user", "content": "hello"}}
	}
}

// issuer is the issuer of a case's token: the one it names, else the
// router's JWT issuer, else one no router trusts.
func (rt *Router) issuer(named string) string {
	if named != "" {
		return named
	}
	if a := rt.IR.Policy.Auth; a != nil && a.JWT != nil {
		return a.JWT.Issuer
	}
	return "https://issuer.routing-test.invalid"
}

// claims are a case's token claims and, when the case names no aud, the
// router's own audience: a token meant for the router, as its issuer is
// (a case tests another audience by naming it, none with aud: null).
func (rt *Router) claims(named map[string]any) map[string]any {
	aud := rt.audience()
	if _, ok := named["aud"]; ok || aud == "" {
		return named
	}
	out := map[string]any{"aud": aud}
	for k, v := range named {
		out[k] = v
	}
	return out
}

// audience is the first audience the router accepts on its HTTP API:
// policy.auth.jwt.audiences, else the MCP resource URL ("" when it
// checks none).
func (rt *Router) audience() string {
	if a := rt.IR.Policy.Auth; a != nil && a.JWT != nil && len(a.JWT.Audiences) > 0 {
		return a.JWT.Audiences[0]
	}
	if rt.IR.MCP != nil {
		return rt.IR.MCP.ResourceURL
	}
	return ""
}

// outcome fills the result from the model's outcome, in the router's
// vocabulary.
func (res *Result) outcome(rt *Router, o simulate.Outcome, down []string) {
	res.Status, res.Trace = o.Status, o.Trace
	res.Error, res.WWWAuthenticate = o.ErrorCode, o.Header.Get("WWW-Authenticate")
	res.Rule = o.Rule
	if rt.rule != nil {
		res.Rule = rt.rule(o.Rule)
	}
	if o.Backend != "" {
		res.Router, res.Backend = rt.name(o.Backend)
		if res.Router == "" { // a foreign route's backend: its route and the object's name
			res.Router = o.Router
			if i := strings.LastIndex(res.Backend, "/"); i >= 0 {
				res.Backend = res.Backend[i+1:]
			}
		}
	}
	for _, a := range o.Attempts {
		_, b := rt.name(a)
		res.Attempts = append(res.Attempts, b)
		if a == o.Backend {
			break
		}
	}
	res.weighted(rt.IR, down)
	for _, c := range o.Charges {
		res.Budgets = append(res.Budgets, Budget{Name: c.Budget, Key: c.Key})
	}
	if o.Status < 300 {
		res.Upstream = simulate.HeaderNames(o.Upstream)
		res.UpstreamValues = o.Upstream
		res.CallerToken = carriesCallerToken(o.Upstream)
		res.UpstreamModel = o.UpstreamModel
	}
}

// Uncompilable are the refusals of every router that no plane compiles,
// as the first plane reports them.
func Uncompilable(planes []*Plane) diag.List {
	if len(planes) == 0 {
		return nil
	}
	var out diag.List
	var keys []string
	for k := range planes[0].Routers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		compiles := false
		for _, p := range planes {
			if rt := p.Routers[k]; rt != nil && rt.Refused == nil {
				compiles = true
			}
		}
		if !compiles {
			out = append(out, planes[0].Routers[k].Refused...)
		}
	}
	return out
}

// Warnings are the compiler's warnings for the routers the planes compiled,
// each once, in order (a warning every plane gives is shown once).
func Warnings(planes []*Plane) diag.List {
	var out diag.List
	seen := map[string]bool{}
	for _, p := range planes {
		var keys []string
		for k := range p.Routers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, w := range p.Routers[k].Warnings {
				if s := w.String(); !seen[s] {
					seen[s] = true
					out = append(out, w)
				}
			}
		}
	}
	return out
}

// jwtShape is a compact JWS: the caller's token (a provider's key is not
// one).
var jwtShape = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.`)

// carriesCallerToken reports whether a header reaching the backend holds
// the caller's bearer token: a JWT (the router-proxy plane signs real ones)
// or the models' stand-in value.
func carriesCallerToken(h http.Header) bool {
	for _, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, (&simulate.Token{}).RawValue()) || jwtShape.MatchString(v) || strings.Contains(v, simulate.KeyPrefix) {
				return true
			}
		}
	}
	return false
}
