package agentgateway

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// ModelHeader is the request header the model-extraction policy sets from the
// body and the generated HTTPRoute matches (the Gateway API Inference
// Extension's base-model header).
const ModelHeader = "X-Gateway-Base-Model-Name"

// ModelExpression is the CEL expression that reads the OpenAI "model" field
// from the request body. Referencing request.body makes agentgateway buffer
// the body (at most 2 MiB by default); when the body is larger, is not JSON or
// has no model, the expression fails and agentgateway removes the header
// rather than setting it, so such a request matches no generated rule.
const ModelExpression = "json(request.body).model"

// ModelPresentHeader is set by the model-extraction policy to "true" when
// the body has a model (of any value) and removed otherwise. The rules that
// match any model (the default route, a rule without models) match it
// exactly instead of the model header with the regular expression `.+`:
// agentgateway never matches a regular expression against a header value
// that is not visible ASCII (HeaderValue::to_str fails), so a model id with
// such bytes would miss the default route. An exact match compares bytes.
const ModelPresentHeader = "X-LLMKube-Model-Present"

// ModelPresentExpression is ModelPresentHeader's value: it fails, and the
// header is removed, exactly when ModelExpression fails for lack of a JSON
// body; a body without model yields "false".
const ModelPresentExpression = `has(json(request.body).model) ? "true" : "false"`

// CELRequest declares agentgateway's `request` CEL variable
// (crates/agentgateway/src/cel/types.rs RequestRef at 75b4e6c): body and
// bodyPrefix are bytes. simulate/agentgateway evaluates in the same
// declarations (CELVariables).
type CELRequest struct {
	Method       string            `cel:"method"`
	URI          string            `cel:"uri"`
	Path         string            `cel:"path"`
	PathAndQuery string            `cel:"pathAndQuery"`
	Host         string            `cel:"host"`
	Scheme       string            `cel:"scheme"`
	Version      string            `cel:"version"`
	Headers      map[string]string `cel:"headers"`
	Body         []byte            `cel:"body"`
	BodyPrefix   []byte            `cel:"bodyPrefix"`
}

// CELMapVars are the other root variables agentgateway's Executor declares
// (cel/types.rs Executor), each a map of string to dyn.
var CELMapVars = []string{"response", "proxy", "env", "source", "destination", "jwt", "apiKey", "basicAuth",
	"llm", "llmRequest", "mcp", "mcpGuardrails", "backend", "extauthz", "extproc", "metadata"}

// CELVariables declares agentgateway's request-time variables: request
// (CELRequest) and CELMapVars. The target type-checks in them, and
// simulate/agentgateway evaluates in them, so both read one declaration.
func CELVariables() []cel.EnvOption {
	opts := []cel.EnvOption{
		ext.NativeTypes(reflect.TypeFor[CELRequest](), ext.ParseStructTags(true)),
		cel.Variable("request", cel.ObjectType("agentgateway.CELRequest")),
	}
	for _, v := range CELMapVars {
		opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
	}
	return opts
}

// CELEnv is agentgateway's CEL environment for request-time expressions
// (authorization, transformation): CELVariables, with the agentgateway
// functions this target uses (crates/celx/src/general.rs; declared only,
// simulate/agentgateway binds them): json(string|bytes) -> dyn parses JSON,
// toJson(dyn) -> string writes it, and map.merge(map) -> map is the
// receiver's entries then the argument's, the argument's winning on a key
// both have (map_merge).
func CELEnv() (*cel.Env, error) {
	anyMap := cel.MapType(cel.DynType, cel.DynType)
	return cel.NewEnv(append(CELVariables(),
		cel.Function("json",
			cel.Overload("json_string", []*cel.Type{cel.StringType}, cel.DynType),
			cel.Overload("json_bytes", []*cel.Type{cel.BytesType}, cel.DynType)),
		cel.Function("toJson",
			cel.Overload("toJson_dyn", []*cel.Type{cel.DynType}, cel.StringType)),
		cel.Function("merge",
			cel.MemberOverload("map_merge", []*cel.Type{anyMap, anyMap}, anyMap)),
	)...)
}

// CheckCondition parses and type-checks an authorization condition against
// CELEnv: it must yield a bool.
func CheckCondition(expr string) error {
	return check("condition", expr, types.BoolType, "a bool")
}

// CheckExpression parses and type-checks a header-value expression against
// CELEnv: it must compile and yield a string (or dyn, which agentgateway
// renders as the header value).
func CheckExpression(expr string) error {
	return check("expression", expr, types.StringType, "a header value (string)")
}

// CheckBody parses and type-checks a body transformation against CELEnv:
// it must yield a string or bytes (agentgateway sends either as the body,
// value_as_byte_or_json) or dyn.
func CheckBody(expr string) error {
	if err := check("body", expr, types.StringType, "a body"); err == nil {
		return nil
	}
	return check("body", expr, types.BytesType, "a body (string or bytes)")
}

// CELString is s as a CEL string literal: a double-quoted string whose
// escapes (\", \\, \n, \u....) CEL reads as Go writes them, for a value
// taken from the spec (a served model name) placed in an expression.
func CELString(s string) string { return strconv.Quote(s) }

// check compiles expr in CELEnv and requires it to yield want (or dyn).
func check(what, expr string, want *types.Type, wantWords string) error {
	env, err := CELEnv()
	if err != nil {
		return err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return fmt.Errorf("CEL %s %q: %w", what, expr, iss.Err())
	}
	if out := ast.OutputType(); !out.IsExactType(want) && !out.IsExactType(types.DynType) {
		return fmt.Errorf("CEL %s %q yields %s, not %s", what, expr, out, wantWords)
	}
	return nil
}
