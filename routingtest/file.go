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
	"fmt"
	"net/http"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

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
	Name    string
	Index   int
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
	Model   string
	Path    string
	Method  string
	Headers http.Header
	Body    map[string]any
	// Token nil: no token.
	Token         *Token
	ClientAddress string
}

// Token is the caller's JWT as claims; Issuer "" means the router's own.
type Token struct {
	Issuer  string
	Claims  map[string]any
	Invalid bool
}

// Expect is what must happen. Unset fields are not checked; Status
// defaults to 200 when Backend is set.
type Expect struct {
	Status       int
	Router       string // "namespace/name" when another router's backend answers
	Backend      string
	Rule         string
	Attempts     []string
	Budgets      []Budget
	Forwarded    []string
	NotForwarded []string
	// Refused is a reason the plane must refuse the router for: the case
	// passes when the router does not compile for the plane for it.
	Refused string
	set     map[string]bool
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
	r := utilyaml.NewYAMLReader(bufioReader(data))
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if err != nil {
			break
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: source, Object: fmt.Sprintf("document %d", doc), Reason: "TestFileInvalid", Message: err.Error()})
			continue
		}
		if m == nil || m["kind"] != Kind {
			continue
		}
		d := &decoder{file: source, object: fmt.Sprintf("%s (document %d)", Kind, doc)}
		f := d.file1(m)
		f.Source = source
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

func (d *decoder) errorf(field, reason, format string, args ...any) {
	d.diags = append(d.diags, diag.Diagnostic{Severity: diag.Error, File: d.file, Object: d.object, Field: field, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// fields checks that m holds only known keys and the required ones.
func (d *decoder) fields(path string, m map[string]any, known []string, required ...string) {
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
			d.errorf(join(path, k), "UnknownField", "unknown field %q (known: %s)", k, strings.Join(known, ", "))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			d.errorf(join(path, k), "RequiredField", "%s is required", k)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func (d *decoder) objectAt(path string, v any) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(path, "WrongType", "must be an object, not %s", typeName(v))
	}
	return m
}

func (d *decoder) str(path string, v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.errorf(path, "WrongType", "must be a string, not %s", typeName(v))
	}
	return s
}

func (d *decoder) strs(path string, v any) []string {
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
		out = append(out, d.str(fmt.Sprintf("%s[%d]", path, i), e))
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
	d.fields("", m, []string{"apiVersion", "kind", "metadata", "spec"}, "apiVersion", "metadata", "spec")
	if v := d.str("apiVersion", m["apiVersion"]); v != "" && v != APIVersion {
		d.errorf("apiVersion", "UnsupportedVersion", "apiVersion %q is not supported; this llmkube-compile reads %s", v, APIVersion)
	}
	meta := d.objectAt("metadata", m["metadata"])
	d.fields("metadata", meta, []string{"name"}, "name")
	f.Name = d.str("metadata.name", meta["name"])
	spec := d.objectAt("spec", m["spec"])
	d.fields("spec", spec, []string{"router", "dataPlanes", "cases"}, "router", "cases")
	f.Router = d.str("spec.router", spec["router"])
	f.DataPlanes = d.strs("spec.dataPlanes", spec["dataPlanes"])
	cases, ok := spec["cases"].([]any)
	if spec["cases"] != nil && !ok {
		d.errorf("spec.cases", "WrongType", "must be a list of cases, not %s", typeName(spec["cases"]))
	}
	if ok && len(cases) == 0 {
		d.errorf("spec.cases", "RequiredField", "a test needs at least one case")
	}
	seen := map[string]bool{}
	for i, c := range cases {
		p := fmt.Sprintf("spec.cases[%d]", i)
		tc := d.case1(p, d.objectAt(p, c))
		tc.Index = i
		if tc.Name != "" && seen[tc.Name] {
			d.errorf(p+".name", "DuplicateCase", "case %q is named twice", tc.Name)
		}
		seen[tc.Name] = true
		f.Cases = append(f.Cases, tc)
	}
	return f
}

func (d *decoder) case1(p string, m map[string]any) Case {
	c := Case{}
	d.fields(p, m, []string{"name", "dataPlanes", "request", "down", "expect"}, "name", "request", "expect")
	c.Name = d.str(p+".name", m["name"])
	c.Down = d.strs(p+".down", m["down"])
	c.DataPlanes = d.strs(p+".dataPlanes", m["dataPlanes"])
	c.Request = d.request(p+".request", d.objectAt(p+".request", m["request"]))
	c.Expect = d.expect(p+".expect", d.objectAt(p+".expect", m["expect"]))
	return c
}

func (d *decoder) request(p string, m map[string]any) Request {
	r := Request{Headers: http.Header{}}
	d.fields(p, m, []string{"model", "path", "method", "headers", "body", "token", "clientAddress"})
	r.Model = d.str(p+".model", m["model"])
	r.Path = d.str(p+".path", m["path"])
	r.Method = d.str(p+".method", m["method"])
	r.ClientAddress = d.str(p+".clientAddress", m["clientAddress"])
	hs := d.objectAt(p+".headers", m["headers"])
	for k, v := range hs {
		hp := p + ".headers[" + k + "]"
		switch x := v.(type) {
		case []any:
			for _, s := range d.strs(hp, x) {
				r.Headers.Add(k, s)
			}
		default:
			r.Headers.Add(k, d.str(hp, v))
		}
		if strings.EqualFold(k, "Authorization") {
			d.errorf(hp, "UseToken", "send a caller's JWT with request.token (claims), not an Authorization header")
		}
	}
	if b := d.objectAt(p+".body", m["body"]); b != nil {
		r.Body = b
		if _, ok := b["model"]; ok && r.Model != "" {
			d.errorf(p+".body.model", "DuplicateModel", "the model is given twice: request.model and request.body.model")
		}
	}
	if tv, ok := m["token"]; ok {
		tm := d.objectAt(p+".token", tv)
		d.fields(p+".token", tm, []string{"issuer", "claims", "invalid"})
		t := &Token{Issuer: d.str(p+".token.issuer", tm["issuer"]), Claims: d.objectAt(p+".token.claims", tm["claims"])}
		if iv, ok := tm["invalid"]; ok {
			b, isBool := iv.(bool)
			if !isBool {
				d.errorf(p+".token.invalid", "WrongType", "must be a boolean, not %s", typeName(iv))
			}
			t.Invalid = b
		}
		r.Token = t
	}
	return r
}

func (d *decoder) expect(p string, m map[string]any) Expect {
	e := Expect{set: map[string]bool{}}
	d.fields(p, m, []string{"status", "router", "backend", "rule", "attempts", "budgets", "forwarded", "notForwarded", "refused"})
	if len(m) == 0 {
		d.errorf(p, "RequiredField", "say what must happen: status, backend, rule, attempts, budgets, forwarded, notForwarded or refused")
	}
	e.Refused = d.str(p+".refused", m["refused"])
	if e.Refused != "" && len(m) > 1 {
		d.errorf(p+".refused", "ConflictingExpectation", "a refused router serves no request: refused stands alone")
	}
	for k := range m {
		e.set[k] = true
	}
	if v, ok := m["status"]; ok {
		n, isNum := v.(float64)
		if !isNum || n != float64(int(n)) || n < 100 || n > 599 {
			d.errorf(p+".status", "WrongType", "must be an HTTP status code (100-599), not %v", v)
		}
		e.Status = int(n)
	}
	e.Router = d.str(p+".router", m["router"])
	e.Backend = d.str(p+".backend", m["backend"])
	e.Rule = d.str(p+".rule", m["rule"])
	e.Attempts = d.strs(p+".attempts", m["attempts"])
	e.Forwarded = d.strs(p+".forwarded", m["forwarded"])
	e.NotForwarded = d.strs(p+".notForwarded", m["notForwarded"])
	if bv, ok := m["budgets"]; ok {
		l, isList := bv.([]any)
		if !isList {
			d.errorf(p+".budgets", "WrongType", "must be a list of {name, key}, not %s", typeName(bv))
		}
		for i, b := range l {
			bp := fmt.Sprintf("%s.budgets[%d]", p, i)
			bm := d.objectAt(bp, b)
			d.fields(bp, bm, []string{"name", "key"}, "name")
			e.Budgets = append(e.Budgets, Budget{Name: d.str(bp+".name", bm["name"]), Key: d.str(bp+".key", bm["key"])})
		}
	}
	if e.Backend != "" && !e.set["status"] {
		e.Status = http.StatusOK
		e.set["status"] = true
	}
	return e
}

// MarshalJSON lets results carry the expectation as written.
func (e Expect) MarshalJSON() ([]byte, error) {
	type plain struct {
		Status       int      `json:"status,omitempty"`
		Router       string   `json:"router,omitempty"`
		Backend      string   `json:"backend,omitempty"`
		Rule         string   `json:"rule,omitempty"`
		Attempts     []string `json:"attempts,omitempty"`
		Budgets      []Budget `json:"budgets,omitempty"`
		Forwarded    []string `json:"forwarded,omitempty"`
		NotForwarded []string `json:"notForwarded,omitempty"`
		Refused      string   `json:"refused,omitempty"`
	}
	return json.Marshal(plain{e.Status, e.Router, e.Backend, e.Rule, e.Attempts, e.Budgets, e.Forwarded, e.NotForwarded, e.Refused})
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
