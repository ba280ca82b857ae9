package agentgateway

import (
	"fmt"
	"reflect"

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
// functions this target uses: json(string|bytes) -> dyn (declared only;
// simulate/agentgateway binds them).
func CELEnv() (*cel.Env, error) {
	return cel.NewEnv(append(CELVariables(), cel.Function("json",
		cel.Overload("json_string", []*cel.Type{cel.StringType}, cel.DynType),
		cel.Overload("json_bytes", []*cel.Type{cel.BytesType}, cel.DynType),
	))...)
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
