// Package routingtest runs routing tests: files of requests and what must
// become of them, judged on every data plane a router compiles for, with
// every router of the input on the same gateway. It is the engine of
// `llmkube-compile test` and `explain`; docs/routing-tests.md describes the
// file format.
package routingtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"sort"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
)

// The test file's version and kind.
const (
	APIVersion = "routing.llmkube.dev/v1alpha1"
	Kind       = "RoutingTest"
)

// File is one RoutingTest document.
type File struct {
	Source string // the file it came from
	Name   string // metadata.name
	// Router is "namespace/name"; a bare name is in namespace "default"
	// (or the CLI's -n).
	Router     string
	DataPlanes []string
	Cases      []Case
}

// Case is one request and what must become of it.
type Case struct {
	Name  string
	Index int
	// Line is the case's line in its file (0: unknown), for failures
	// that point at it.
	Line    int
	Request Request
	// Down are backends of the router that fail every attempt.
	Down []string
	// DataPlanes, when set, are the planes this case runs on (within the
	// test's).
	DataPlanes []string
	Expect     Expect
}

// Request is what the client sends.
type Request struct {
	Model string
	// API is the protocol the client speaks (APIChat, APIMessages,
	// APIResponses; "" is chat): it picks the default path and body.
	API    string
	Path   string
	Method string
	// Host is the request's Host ("" : the router's first hostname, else
	// gateway.example).
	Host    string
	Headers http.Header
	Body    map[string]any
	// Token nil: no token.
	Token *Token
	// APIKey nil: no API key (apikey.go).
	APIKey        *APIKey
	ClientAddress string
	// RateLimited are backends of the router whose provider answers every
	// attempt 429 with Retry-After (the case's rateLimited, beside down).
	RateLimited []string
}

// The protocols a request may speak (request.api).
const (
	APIChat      = "chat"
	APIMessages  = "messages"
	APIResponses = "responses"
)

// apiPaths are each protocol's path, a request's default.
var apiPaths = map[string]string{APIChat: "/v1/chat/completions", APIMessages: "/v1/messages", APIResponses: "/v1/responses"}

// APIFeatures are the capability-table features of the protocols a plane
// may not serve (capability.Features; chat is every plane's).
var apiFeatures = map[string]capability.Feature{APIMessages: capability.MessagesAPI, APIResponses: capability.ResponsesAPI}

// Token is the caller's JWT as claims; Issuer "" means the router's own.
type Token struct {
	Issuer  string
	Claims  map[string]any
	Invalid bool
}

// Expect is what must happen. Unset fields are not checked; Status
// defaults to 200 when Backend is set.
type Expect struct {
	Status  int
	Router  string // "namespace/name" when another router's backend answers
	Backend string
	// AnyOf is backend written as a list: any of these backends may answer
	// (a weighted rule's split, asserted as the set it draws from).
	AnyOf     []string
	Rule      string
	Attempts  []string
	Budgets   []Budget
	Forwarded []string
	// ForwardedValues is forwarded written as a map: each header must reach
	// the backend with that value.
	ForwardedValues map[string]string
	NotForwarded    []string
	// CallerToken, when set, is whether the caller's own bearer token may
	// reach the backend (callerTokenForwarded: false asserts it does not,
	// whatever credential the provider gets in Authorization).
	CallerToken *bool
	// Error is the error code the answer must carry (error.code of the
	// router-proxy's refusal body: model_not_allowed, fail_closed, ...).
	Error string
	// WWWAuthenticate must be contained in the answer's WWW-Authenticate
	// challenge; set to "" it asserts there is none.
	WWWAuthenticate string
	// Refused is a reason the plane must refuse the router for: the case
	// passes when the router does not compile for the plane for it.
	Refused string
	// UpstreamModel is the model the request must reach the backend with:
	// the name the serving backend serves (docs/router-proxy.md, "Upstream
	// requests"), whatever the client asked for.
	UpstreamModel string
	set           map[string]bool
}

// Budget is a budget a request is charged to, with the team key of a
// team budget.
type Budget struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"`
}

// Has reports whether the expectation sets a field.
func (e Expect) Has(field string) bool { return e.set[field] }

// Decode reads every RoutingTest document of a file; documents of other
// kinds are skipped (a test file may sit beside routers). Diagnostics name
// the file, the test and the field path.
func Decode(source string, data []byte) ([]*File, diag.List) {
	var out []*File
	var diags diag.List
	var lines map[string][]int
	for dd := range documents(data) {
		doc, m := dd.n, dd.obj
		if dd.err != nil {
			diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: source, Object: fmt.Sprintf("document %d", doc), Reason: "TestFileInvalid", Message: dd.err.Error()})
			continue
		}
		if m == nil || m["kind"] != Kind {
			if av, _ := m["apiVersion"].(string); strings.HasPrefix(av, "routing.llmkube.dev/") {
				// Our group, another kind: a misspelt RoutingTest, not a
				// router's neighbour to skip.
				diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: source, Object: fmt.Sprintf("document %d", doc), Field: "kind", Reason: "UnknownKind",
					Message: fmt.Sprintf("%s has no kind %q; the test kind is %s", av, m["kind"], Kind)})
			}
			continue
		}
		d := &decoder{file: source, object: fmt.Sprintf("%s (document %d)", Kind, doc)}
		f := d.file1(m)
		f.Source = source
		if lines == nil {
			lines = caseLines(data)
		}
		if ls := lines[f.Name]; len(ls) == len(f.Cases) {
			for i := range f.Cases {
				f.Cases[i].Line = ls[i]
			}
		}
		diags = append(diags, d.diags...)
		if !d.diags.HasErrors() {
			out = append(out, f)
		}
	}
	return out, diags
}

type decoder struct {
	file, object string
	diags        diag.List
}

// errorf reports a problem at the field path p (nil: the document).
func (d *decoder) errorf(p *field.Path, reason, format string, args ...any) {
	d.diags = append(d.diags, diag.Diagnostic{Severity: diag.Error, File: d.file, Object: d.object, Field: diag.FieldString(p), Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// fields checks that m holds only known keys and the required ones; path is
// nil for the document's top level.
func (d *decoder) fields(path *field.Path, m map[string]any, known []string, required ...string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, kn := range known {
			found = found || k == kn
		}
		if !found {
			d.errorf(path.Child(k), "UnknownField", "unknown field %q (known: %s)", k, strings.Join(known, ", "))
			if k == "" {
				// field.Path prints an empty name as path[]; an empty key
				// has always been reported at "path." (or the document).
				d.diags[len(d.diags)-1].Field = strings.TrimPrefix(diag.FieldString(path)+".", ".")
			}
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			d.errorf(path.Child(k), "RequiredField", "%s is required", k)
		}
	}
}

func (d *decoder) objectAt(path *field.Path, v any) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(path, "WrongType", "must be an object, not %s", typeName(v))
	}
	return m
}

func (d *decoder) str(path *field.Path, v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.errorf(path, "WrongType", "must be a string, not %s", typeName(v))
	}
	return s
}

func (d *decoder) strs(path *field.Path, v any) []string {
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		d.errorf(path, "WrongType", "must be a list of strings, not %s", typeName(v))
		return nil
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		out = append(out, d.str(path.Index(i), e))
	}
	return out
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, int64, int:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func (d *decoder) file1(m map[string]any) *File {
	f := &File{}
	if meta, ok := m["metadata"].(map[string]any); ok {
		if n, ok := meta["name"].(string); ok && n != "" {
			d.object = Kind + "/" + n
		}
	}
	d.fields(nil, m, []string{"apiVersion", "kind", "metadata", "spec"}, "apiVersion", "metadata", "spec")
	if v := d.str(field.NewPath("apiVersion"), m["apiVersion"]); v != "" && v != APIVersion {
		d.errorf(field.NewPath("apiVersion"), "UnsupportedVersion", "apiVersion %q is not supported; this llmkube-compile reads %s", v, APIVersion)
	}
	metaPath, specPath := field.NewPath("metadata"), field.NewPath("spec")
	meta := d.objectAt(metaPath, m["metadata"])
	d.fields(metaPath, meta, []string{"name"}, "name")
	f.Name = d.str(metaPath.Child("name"), meta["name"])
	spec := d.objectAt(specPath, m["spec"])
	d.fields(specPath, spec, []string{"router", "dataPlanes", "cases"}, "router", "cases")
	f.Router = d.str(specPath.Child("router"), spec["router"])
	f.DataPlanes = d.strs(specPath.Child("dataPlanes"), spec["dataPlanes"])
	cases, ok := spec["cases"].([]any)
	if spec["cases"] != nil && !ok {
		d.errorf(specPath.Child("cases"), "WrongType", "must be a list of cases, not %s", typeName(spec["cases"]))
	}
	if ok && len(cases) == 0 {
		d.errorf(specPath.Child("cases"), "RequiredField", "a test needs at least one case")
	}
	seen := map[string]bool{}
	for i, c := range cases {
		p := specPath.Child("cases").Index(i)
		tc := d.case1(p, d.objectAt(p, c))
		tc.Index = i
		if tc.Name != "" && seen[tc.Name] {
			d.errorf(p.Child("name"), "DuplicateCase", "case %q is named twice", tc.Name)
		}
		seen[tc.Name] = true
		f.Cases = append(f.Cases, tc)
	}
	return f
}

func (d *decoder) case1(p *field.Path, m map[string]any) Case {
	c := Case{}
	d.fields(p, m, []string{"name", "dataPlanes", "request", "down", "rateLimited", "expect"}, "name", "request", "expect")
	c.Name = d.str(p.Child("name"), m["name"])
	c.Down = d.strs(p.Child("down"), m["down"])
	c.DataPlanes = d.strs(p.Child("dataPlanes"), m["dataPlanes"])
	c.Request = d.request(p.Child("request"), d.objectAt(p.Child("request"), m["request"]))
	c.Request.RateLimited = d.strs(p.Child("rateLimited"), m["rateLimited"])
	for i, b := range c.Request.RateLimited {
		if slices.Contains(c.Down, b) {
			d.errorf(p.Child("rateLimited").Index(i), "ConflictingExpectation", "backend %q is both down and rate limited; a backend that fails every attempt never answers 429", b)
		}
	}
	c.Expect = d.expect(p.Child("expect"), d.objectAt(p.Child("expect"), m["expect"]))
	if c.Request.API == APIMessages && c.Expect.Has("error") {
		// Anthropic's error object has a type, no code: the case would
		// fail for a code the answer cannot carry.
		d.errorf(p.Child("expect", "error"), "ConflictingExpectation", "a Messages refusal has Anthropic's error shape, which carries no error.code; assert status instead")
	}
	return c
}

func (d *decoder) request(p *field.Path, m map[string]any) Request {
	r := Request{Headers: http.Header{}}
	d.fields(p, m, []string{"model", "api", "path", "method", "host", "headers", "body", "token", "apiKey", "clientAddress"})
	r.Model = d.str(p.Child("model"), m["model"])
	r.API = d.str(p.Child("api"), m["api"])
	if _, ok := apiPaths[r.API]; !ok && r.API != "" {
		d.errorf(p.Child("api"), "UnknownAPI", "unknown api %q (known: chat, messages, responses)", r.API)
	}
	r.Host = d.str(p.Child("host"), m["host"])
	if strings.Contains(r.Host, "/") {
		d.errorf(p.Child("host"), "InvalidHost", "a host is a name with an optional :port, not a URL")
	}
	r.Path = d.str(p.Child("path"), m["path"])
	if want, ok := apiPaths[r.API]; ok && r.API != APIChat && r.Path != "" && r.Path != want && !strings.HasPrefix(r.Path, want+"/") {
		// The router-proxy takes a protocol by its path: another path
		// would test another protocol than the case says.
		d.errorf(p.Child("path"), "PathNotOfAPI", "api %s is served at %s (and below it), not %s; drop path or api", r.API, want, r.Path)
	}
	r.Method = d.str(p.Child("method"), m["method"])
	r.ClientAddress = d.str(p.Child("clientAddress"), m["clientAddress"])
	hs := d.objectAt(p.Child("headers"), m["headers"])
	for k, v := range hs {
		hp := p.Child("headers").Key(k)
		switch x := v.(type) {
		case []any:
			for _, s := range d.strs(hp, x) {
				r.Headers.Add(k, s)
			}
		default:
			r.Headers.Add(k, d.str(hp, v))
		}
		if strings.EqualFold(k, "Authorization") {
			d.errorf(hp, "UseToken", "send a caller's JWT with request.token (claims), or an API key with request.apiKey, not an Authorization header")
		}
		if strings.EqualFold(k, "Host") {
			d.errorf(hp, "UseHost", "set the request's host with request.host, not a Host header")
		}
	}
	if b := d.objectAt(p.Child("body"), m["body"]); b != nil {
		r.Body = b
		if _, ok := b["model"]; ok && r.Model != "" {
			d.errorf(p.Child("body", "model"), "DuplicateModel", "the model is given twice: request.model and request.body.model")
		}
	}
	if tv, ok := m["token"]; ok {
		tm := d.objectAt(p.Child("token"), tv)
		d.fields(p.Child("token"), tm, []string{"issuer", "claims", "invalid"})
		t := &Token{Issuer: d.str(p.Child("token", "issuer"), tm["issuer"]), Claims: d.objectAt(p.Child("token", "claims"), tm["claims"])}
		if iv, ok := tm["invalid"]; ok {
			b, isBool := iv.(bool)
			if !isBool {
				d.errorf(p.Child("token", "invalid"), "WrongType", "must be a boolean, not %s", typeName(iv))
			}
			t.Invalid = b
		}
		r.Token = t
	}
	if kv, ok := m["apiKey"]; ok {
		r.APIKey = d.apiKey(p.Child("apiKey"), kv)
		if r.Token != nil {
			d.errorf(p.Child("apiKey"), "OneCredential", "a request sends one credential: request.token or request.apiKey, not both")
		}
	}
	return r
}

func (d *decoder) expect(p *field.Path, m map[string]any) Expect {
	e := Expect{set: map[string]bool{}}
	d.fields(p, m, []string{"status", "router", "backend", "rule", "attempts", "budgets", "forwarded", "notForwarded", "callerTokenForwarded", "error", "wwwAuthenticate", "upstreamModel", "refused"})
	if len(m) == 0 {
		d.errorf(p, "RequiredField", "say what must happen: status, backend, rule, attempts, budgets, forwarded, notForwarded, callerTokenForwarded, error, wwwAuthenticate, upstreamModel or refused")
	}
	e.UpstreamModel = d.str(p.Child("upstreamModel"), m["upstreamModel"])
	if _, ok := m["upstreamModel"]; ok && e.UpstreamModel == "" {
		d.errorf(p.Child("upstreamModel"), "RequiredField", "name the model the backend must be sent")
	}
	e.Error = d.str(p.Child("error"), m["error"])
	if _, ok := m["error"]; ok && e.Error == "" {
		d.errorf(p.Child("error"), "RequiredField", "name the error code the answer carries (model_not_allowed, fail_closed, ...)")
	}
	e.WWWAuthenticate = d.str(p.Child("wwwAuthenticate"), m["wwwAuthenticate"])
	e.Refused = d.str(p.Child("refused"), m["refused"])
	if e.Refused != "" && len(m) > 1 {
		d.errorf(p.Child("refused"), "ConflictingExpectation", "a refused router serves no request: refused stands alone")
	}
	for k := range m {
		e.set[k] = true
	}
	if v, ok := m["status"]; ok {
		n, isNum := v.(float64)
		if !isNum || n != float64(int(n)) || n < 100 || n > 599 {
			d.errorf(p.Child("status"), "WrongType", "must be an HTTP status code (100-599), not %v", v)
		}
		e.Status = int(n)
	}
	e.Router = d.str(p.Child("router"), m["router"])
	if l, isList := m["backend"].([]any); isList {
		e.AnyOf = d.strs(p.Child("backend"), l)
		if len(e.AnyOf) == 0 {
			d.errorf(p.Child("backend"), "RequiredField", "a backend list needs at least one backend")
		}
	} else {
		e.Backend = d.str(p.Child("backend"), m["backend"])
	}
	e.Rule = d.str(p.Child("rule"), m["rule"])
	e.Attempts = d.strs(p.Child("attempts"), m["attempts"])
	if fm, isMap := m["forwarded"].(map[string]any); isMap {
		e.ForwardedValues = map[string]string{}
		for k, v := range fm {
			e.ForwardedValues[k] = d.str(p.Child("forwarded").Key(k), v)
		}
	} else {
		e.Forwarded = d.strs(p.Child("forwarded"), m["forwarded"])
	}
	if v, ok := m["callerTokenForwarded"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			d.errorf(p.Child("callerTokenForwarded"), "WrongType", "must be a boolean, not %s", typeName(v))
		}
		e.CallerToken = &b
	}
	e.NotForwarded = d.strs(p.Child("notForwarded"), m["notForwarded"])
	if bv, ok := m["budgets"]; ok {
		l, isList := bv.([]any)
		if !isList {
			d.errorf(p.Child("budgets"), "WrongType", "must be a list of {name, key}, not %s", typeName(bv))
		}
		for i, b := range l {
			bp := p.Child("budgets").Index(i)
			bm := d.objectAt(bp, b)
			d.fields(bp, bm, []string{"name", "key"}, "name")
			e.Budgets = append(e.Budgets, Budget{Name: d.str(bp.Child("name"), bm["name"]), Key: d.str(bp.Child("key"), bm["key"])})
		}
	}
	if len(e.Backends()) > 0 && !e.set["status"] {
		e.Status = http.StatusOK
		e.set["status"] = true
	}
	return e
}

// Backends are the backends the expectation allows: Backend, or AnyOf.
func (e Expect) Backends() []string {
	if e.Backend != "" {
		return []string{e.Backend}
	}
	return e.AnyOf
}

// MarshalJSON lets results carry the expectation as written.
func (e Expect) MarshalJSON() ([]byte, error) {
	type plain struct {
		Status       int      `json:"status,omitempty"`
		Router       string   `json:"router,omitempty"`
		Backend      any      `json:"backend,omitempty"`
		Rule         string   `json:"rule,omitempty"`
		Attempts     []string `json:"attempts,omitempty"`
		Budgets      []Budget `json:"budgets,omitempty"`
		Forwarded    []string `json:"forwarded,omitempty"`
		NotForwarded []string `json:"notForwarded,omitempty"`
		Upstream     string   `json:"upstreamModel,omitempty"`
		Refused      string   `json:"refused,omitempty"`
	}
	var backend any
	if e.Backend != "" {
		backend = e.Backend
	} else if len(e.AnyOf) > 0 {
		backend = e.AnyOf
	}
	return json.Marshal(plain{e.Status, e.Router, backend, e.Rule, e.Attempts, e.Budgets, e.Forwarded, e.NotForwarded, e.UpstreamModel, e.Refused})
}

// document is one YAML document of a file.
type document struct {
	n   int            // its number, from 1
	obj map[string]any // nil when it is empty or not YAML
	err error          // why it is not YAML
}

// documents yields the YAML documents of data in order; a YAML error
// names the file's lines, not its document's.
func documents(data []byte) iter.Seq[document] {
	return func(yield func(document) bool) {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		starts := compiler.DocumentStarts(data)
		for n := 1; ; n++ {
			raw, err := r.Read()
			if err != nil {
				return
			}
			d := document{n: n}
			d.err = yaml.Unmarshal(raw, &d.obj)
			if d.err != nil {
				d.obj = nil
				if n <= len(starts) {
					d.err = errors.New(compiler.FileLines(d.err, starts[n-1]))
				}
			}
			if !yield(d) {
				return
			}
		}
	}
}

// KindsIn lists the kinds of a file's documents, for a message ("none"
// when it has none).
func KindsIn(data []byte) string {
	var kinds []string
	for d := range documents(data) {
		m := d.obj
		if m == nil {
			continue
		}
		k, _ := m["kind"].(string)
		if k == "" {
			k = "(no kind)"
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, ", ")
}

// OtherKinds lists the documents of a file that are not RoutingTests, as
// "document N (KIND)": in a file given with --tests each is a mistake.
func OtherKinds(data []byte) []string {
	var out []string
	for d := range documents(data) {
		doc, m := d.n, d.obj
		if m == nil || m["kind"] == Kind {
			continue
		}
		k, _ := m["kind"].(string)
		if k == "" {
			k = "no kind"
		}
		out = append(out, fmt.Sprintf("document %d (%s)", doc, k))
	}
	return out
}

// caseLines finds the line of each case of each RoutingTest of a file, by
// the test's name; a JSON file or one yaml.v3 cannot read gives none.
func caseLines(data []byte) map[string][]int {
	out := map[string][]int{}
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var doc yamlv3.Node
		if err := dec.Decode(&doc); err != nil {
			return out
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if value(root, "kind") == nil || value(root, "kind").Value != Kind {
			continue
		}
		name := value(value(root, "metadata"), "name")
		cases := value(value(root, "spec"), "cases")
		if name == nil || cases == nil || cases.Kind != yamlv3.SequenceNode {
			continue
		}
		var ls []int
		for _, c := range cases.Content {
			ls = append(ls, c.Line)
		}
		out[name.Value] = ls
	}
}

// value is the value of key in a mapping node, nil when absent.
func value(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
