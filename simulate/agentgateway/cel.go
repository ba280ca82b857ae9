package agentgateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/llmkube/llmkube-compile/simulate"
)

// CELRequestFields are the fields of agentgateway's `request` CEL variable
// as upstream defines it, declared here on their own (the target declares
// its copy in targets/agentgateway; a test compares the two): RequestRef in
// crates/agentgateway/src/cel/types.rs at 75b4e6c, a cel::DynamicType whose
// field names are serde's rename_all = "camelCase" (the cel-derive macro
// reads serde's renames: crates/cel-fork/cel-derive/src/lib.rs,
// get_rename_all):
//
//   - method, host, scheme, version: strings (to_value_str,
//     to_value_str_opt, version_to_value); uri and pathAndQuery: strings
//     (query.rs QueryAccessor); path: &str.
//   - headers: Headers, in HeadersMode::First unless join(), raw() or
//     split() is called: a header sent once is its string, a header sent
//     more than once the list of its values (Headers::default_value), so
//     the map's values are dyn. The member functions (join(), raw(),
//     split(), redacted(), cookie()) are not declared: nothing this model
//     evaluates calls them.
//   - body, bodyPrefix: bytes (BodyExtensionOrDirect::materialize gives
//     Value::Bytes, or null when nothing was buffered).
//   - startTime, endTime: timestamps (RequestTime::materialize gives
//     Value::Timestamp). The model has no clock: it binds neither, so an
//     expression reading them fails.
//
// agentgateway's CEL is not type-checked upstream (the cel crate
// evaluates dynamically), so the model declares `request` as a map of these
// keys, as agentgateway resolves them at run time.
var CELRequestFields = map[string]*cel.Type{
	"method":       cel.StringType,
	"uri":          cel.StringType,
	"path":         cel.StringType,
	"pathAndQuery": cel.StringType,
	"host":         cel.StringType,
	"scheme":       cel.StringType,
	"version":      cel.StringType,
	"headers":      cel.MapType(cel.StringType, cel.DynType),
	"body":         cel.BytesType,
	"bodyPrefix":   cel.BytesType,
	"startTime":    cel.TimestampType,
	"endTime":      cel.TimestampType,
}

// CELMapVars are the other root variables of agentgateway's Executor
// (crates/agentgateway/src/cel/types.rs, struct Executor, rename_all =
// "camelCase" with the explicit renames apiKey, basicAuth, llmRequest,
// mcpGuardrails), each declared as a map of string to dyn: their own
// shapes (jwt's claims, the proxy and source contexts, ...) are read by
// key.
var CELMapVars = []string{"response", "proxy", "env", "source", "destination", "jwt", "apiKey", "basicAuth",
	"llm", "llmRequest", "mcp", "mcpGuardrails", "backend", "extauthz", "extproc", "metadata"}

// CELVariables declares agentgateway's request-time variables: request
// (a map with CELRequestFields' keys) and CELMapVars.
func CELVariables() []cel.EnvOption {
	opts := []cel.EnvOption{cel.Variable("request", cel.MapType(cel.StringType, cel.DynType))}
	for _, v := range CELMapVars {
		opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
	}
	return opts
}

// Env is the CEL environment of agentgateway's request-time expressions
// (authorization, transformation, direct response) as cel-go declares it:
// the variables above and the functions of crates/celx/src/general.rs the
// emitters' expressions call, bound with upstream's semantics:
//   - json(string|bytes) -> dyn (json_parse): parses JSON with serde_json,
//     failing on anything else (an empty body included); an integer stays
//     an integer (i64, else u64), any other number is a double.
//   - toJson(dyn) -> string (to_json): the value as JSON (Value::json in
//     crates/cel-fork/cel/src/json.rs: bytes as base64, map keys as their
//     string, object keys sorted as serde_json's map keeps them).
//   - map.merge(map) -> map (map_merge): the receiver's entries, then the
//     argument's, which win on a key both have; a non-map fails.
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		anyMap := cel.MapType(cel.DynType, cel.DynType)
		opts := append(CELVariables(),
			cel.Function("json",
				cel.Overload("json_string", []*cel.Type{cel.StringType}, cel.DynType,
					cel.UnaryBinding(func(v ref.Val) ref.Val { return parseJSON([]byte(v.(types.String))) })),
				cel.Overload("json_bytes", []*cel.Type{cel.BytesType}, cel.DynType,
					cel.UnaryBinding(func(v ref.Val) ref.Val { return parseJSON([]byte(v.(types.Bytes))) }))),
			cel.Function("toJson",
				cel.Overload("toJson_dyn", []*cel.Type{cel.DynType}, cel.StringType,
					cel.UnaryBinding(toJSON))),
			cel.Function("merge",
				cel.MemberOverload("map_merge", []*cel.Type{anyMap, anyMap}, anyMap,
					cel.BinaryBinding(mergeMaps))),
		)
		env, envErr = cel.NewEnv(opts...)
	})
	return env, envErr
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

func parseJSON(b []byte) ref.Val {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return types.NewErr("json: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return types.NewErr("json: trailing data after the value")
	}
	return types.DefaultTypeAdapter.NativeToValue(numbers(v))
}

// numbers turns json.Number into what serde_json parses a number as: i64,
// else u64, else f64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

func mergeMaps(this, other ref.Val) ref.Val {
	a, ok := this.(traits.Mapper)
	b, ok2 := other.(traits.Mapper)
	if !ok || !ok2 {
		return types.NewErr("merge: expected map, got %s and %s", this.Type(), other.Type())
	}
	out := map[ref.Val]ref.Val{}
	for _, m := range []traits.Mapper{a, b} {
		for it := m.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			out[k] = m.Get(k)
		}
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}

func toJSON(v ref.Val) ref.Val {
	native, err := jsonValue(v)
	if err != nil {
		return types.NewErr("toJson: %v", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // serde_json escapes only what JSON requires
	if err := enc.Encode(native); err != nil {
		return types.NewErr("toJson: %v", err)
	}
	return types.String(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// jsonValue is Value::json: a CEL value as the Go value encoding/json
// writes the same JSON for.
func jsonValue(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.String:
		return string(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil // serde_json: a non-finite float is null
		}
		return f, nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(x), nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			val, err := jsonValue(x.Get(k))
			if err != nil {
				val = nil // Value::json: a value that fails is null
			}
			out[fmt.Sprint(k.Value())] = val
		}
		return out, nil
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			val, err := jsonValue(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no JSON for %s", v.Type())
}

// Check parses and type-checks expr in Env.
func Check(expr string) (*cel.Ast, error) {
	e, err := Env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("CEL %q: %w", expr, iss.Err())
	}
	// request is bound as a map: a field RequestRef does not have is
	// refused here, as it fails (no such key) in agentgateway.
	var unknown []string
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.SelectKind {
			return
		}
		sel := x.AsSelect()
		if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == "request" && CELRequestFields[sel.FieldName()] == nil {
			unknown = append(unknown, sel.FieldName())
		}
	}))
	if len(unknown) > 0 {
		return nil, fmt.Errorf("CEL %q: agentgateway's request has no field %s", expr, strings.Join(unknown, ", "))
	}
	return ast, nil
}

// celContext is what an expression sees of one request.
type celContext struct {
	req map[string]any
	jwt map[string]any
}

func newCELContext(method, path, host string, h http.Header, body []byte, claims map[string]any) *celContext {
	// Headers::default_value: one value is a string, more a list.
	hs := map[string]any{}
	for k, vs := range h {
		if len(vs) == 1 {
			hs[strings.ToLower(k)] = vs[0]
		} else if len(vs) > 1 {
			hs[strings.ToLower(k)] = append([]string(nil), vs...)
		}
	}
	req := map[string]any{"method": method, "uri": "http://" + host + path, "path": path, "pathAndQuery": path, "host": host,
		"scheme": "http", "version": "HTTP/1.1", "headers": hs, "body": nil, "bodyPrefix": nil}
	if body != nil {
		req["body"], req["bodyPrefix"] = body, body
	}
	return &celContext{req: req, jwt: claims}
}

func (c *celContext) eval(expr string) (ref.Val, error) {
	ast, err := Check(expr)
	if err != nil {
		return nil, err
	}
	e, _ := Env()
	prg, err := e.Program(ast)
	if err != nil {
		return nil, err
	}
	vars := map[string]any{"request": c.req}
	for _, v := range CELMapVars {
		vars[v] = map[string]any{}
	}
	if c.jwt != nil {
		vars["jwt"] = c.jwt
	}
	out, _, err := prg.Eval(vars)
	return out, err
}

// evalBody is a body transformation's value (value_as_byte_or_json): a
// string or bytes as they are, another value as JSON; an error when the
// expression fails.
func (c *celContext) evalBody(expr string) ([]byte, error) {
	v, err := c.eval(expr)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case *types.Err:
		return nil, x
	case types.String:
		return []byte(x), nil
	case types.Bytes:
		return []byte(x), nil
	}
	s := toJSON(v)
	if e, ok := s.(*types.Err); ok {
		return nil, e
	}
	return []byte(s.(types.String)), nil
}

// EvalBody evaluates a body transformation on a request as agentgateway
// does; an error means agentgateway sends an empty body.
func EvalBody(expr string, r simulate.Request, claims map[string]any) ([]byte, error) {
	return requestContext(r, claims).evalBody(expr)
}

// evalBool is agentgateway's Executor::eval_bool: an error or a non-bool
// is false.
func (c *celContext) evalBool(expr string) bool {
	v, err := c.eval(expr)
	if err != nil {
		return false
	}
	b, ok := v.(types.Bool)
	return ok && bool(b)
}

// evalHeader is a transformation's set value: a string as is, other values
// as JSON; ok is false when the expression fails (agentgateway then removes
// the header).
func (c *celContext) evalHeader(expr string) (string, bool) {
	v, err := c.eval(expr)
	if err != nil || types.IsError(v) {
		return "", false
	}
	if s, ok := v.(types.String); ok {
		return string(s), true
	}
	native, err := v.ConvertToNative(reflect.TypeFor[any]())
	if err != nil {
		return "", false
	}
	b, err := json.Marshal(native)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// EvalBool evaluates an authorization condition on a request as
// agentgateway does (an error is false), with claims as the verified jwt.
func EvalBool(expr string, r simulate.Request, claims map[string]any) bool {
	return requestContext(r, claims).evalBool(expr)
}

// EvalHeader evaluates a transformation's header value on a request; ok is
// false when agentgateway would remove the header instead.
func EvalHeader(expr string, r simulate.Request, claims map[string]any) (string, bool) {
	return requestContext(r, claims).evalHeader(expr)
}

func requestContext(r simulate.Request, claims map[string]any) *celContext {
	r = r.Normalized()
	var body []byte
	if r.Body != nil {
		body, _ = json.Marshal(r.Body)
	}
	return newCELContext(r.Method, r.Path, r.Host, r.Headers, body, claims)
}
