package agentgateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/llmkube/llmkube-compile/simulate"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// CELRequest is agentgateway's `request` CEL variable, declared once by
// the target (targets/agentgateway.CELRequest).
type CELRequest = agentgateway.CELRequest

// Env is the CEL environment of agentgateway's request-time expressions
// (authorization, transformation, direct response) as cel-go declares it:
// the variables above and json(string|bytes) -> dyn, which parses JSON and
// fails on anything else (an empty body included).
func Env() (*cel.Env, error) {
	envOnce.Do(func() {
		opts := append(agentgateway.CELVariables(), cel.Function("json",
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
	return ast, nil
}

// celContext is what an expression sees of one request.
type celContext struct {
	req CELRequest
	jwt map[string]any
}

func newCELContext(method, path, host string, h http.Header, body []byte, claims map[string]any) *celContext {
	hs := map[string]string{}
	for k, vs := range h {
		hs[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	return &celContext{
		req: CELRequest{Method: method, URI: "http://" + host + path, Path: path, PathAndQuery: path, Host: host,
			Scheme: "http", Version: "HTTP/1.1", Headers: hs, Body: body, BodyPrefix: body},
		jwt: claims,
	}
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
	for _, v := range agentgateway.CELMapVars {
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
