package agentgateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

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
// the variables above and json(string|bytes) -> dyn, which parses JSON and
// fails on anything else (an empty body included).
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := append(CELVariables(), cel.Function("json",
			cel.Overload("json_string", []*cel.Type{cel.StringType}, cel.DynType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return parseJSON([]byte(v.(types.String))) })),
			cel.Overload("json_bytes", []*cel.Type{cel.BytesType}, cel.DynType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return parseJSON([]byte(v.(types.Bytes))) })),
		))
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
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return types.NewErr("json: %v", err)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
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
