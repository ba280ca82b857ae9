package agentgateway_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// emittedExpressions compiles every AgentGateway golden input and returns
// every CEL expression the target put in an AgentgatewayPolicy.
func emittedExpressions(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob("../../testdata/agentgateway-*/input.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	var out []string
	for _, f := range inputs {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		in := &compiler.Inputs{}
		require.False(t, in.Decode(f, data).HasErrors())
		for _, src := range in.Routers {
			r, diags := compiler.Compile(src.Router, in, compiler.Options{DataPlane: "AgentGateway"})
			require.False(t, diags.HasErrors(), "%s: %v", f, diags.Err())
			res, diags := agentgateway.New().Compile(r)
			require.False(t, diags.HasErrors(), "%s: %v", f, diags.Err())
			for _, o := range res.Objects {
				if o.GetKind() != "AgentgatewayPolicy" {
					continue
				}
				set, _, _ := unstructured.NestedSlice(o.Object, "spec", "traffic", "transformation", "request", "set")
				require.NotEmpty(t, set)
				for _, s := range set {
					out = append(out, s.(map[string]any)["value"].(string))
				}
			}
		}
	}
	return out
}

// TestEveryEmittedExpressionTypeChecks type-checks every CEL expression the
// target emits for the golden inputs against agentgateway's transformation
// environment, so a malformed expression fails here rather than in a cluster.
func TestEveryEmittedExpressionTypeChecks(t *testing.T) {
	exprs := emittedExpressions(t)
	require.NotEmpty(t, exprs, "the InferencePool cases emit the model-extraction expression")
	for _, x := range exprs {
		assert.NoError(t, agentgateway.CheckExpression(x), x)
	}
	assert.NoError(t, agentgateway.CheckExpression(agentgateway.ModelExpression))
}

func TestMalformedExpressionsFail(t *testing.T) {
	for _, x := range []string{
		"json(request.body).model)",   // syntax
		"json(request.bdy).model",     // no such field
		"jsn(request.body).model",     // no such function
		"json(42).model",              // no overload
		"size(request.body)",          // an int is not a header value
		"request.body == 'x'",         // nor is a bool
		"json(request.body, 1).model", // arity
	} {
		assert.Error(t, agentgateway.CheckExpression(x), x)
	}
}

// evalEnv is agentgateway's CEL environment with its json semantics (parse
// a string as JSON) bound, to evaluate what the target emits.
func evalEnv(t *testing.T) *cel.Env {
	t.Helper()
	env, err := agentgateway.CELEnv()
	require.NoError(t, err)
	env, err = env.Extend(cel.Function("json",
		cel.Overload("json_string", []*cel.Type{cel.StringType}, cel.DynType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				var out any
				if err := json.Unmarshal([]byte(v.(types.String)), &out); err != nil {
					return types.NewErr("json: %v", err)
				}
				return types.DefaultTypeAdapter.NativeToValue(out)
			}))))
	require.NoError(t, err)
	return env
}

// TestModelExpressionEvaluates runs the expression with agentgateway's json
// semantics (parse a string as JSON) on an OpenAI request body.
func TestModelExpressionEvaluates(t *testing.T) {
	env := evalEnv(t)
	ast, iss := env.Compile(agentgateway.ModelExpression)
	require.NoError(t, iss.Err())
	prg, err := env.Program(ast)
	require.NoError(t, err)
	eval := func(body string) (ref.Val, error) {
		v, _, err := prg.Eval(map[string]any{"request": agentgateway.CELRequest{Method: "POST", Path: "/v1/chat/completions", Body: body}})
		return v, err
	}
	v, err := eval(`{"model":"qwen3-32b","messages":[{"role":"user","content":"hi"}]}`)
	require.NoError(t, err)
	assert.Equal(t, "qwen3-32b", v.Value())
	_, err = eval(`{"messages":[]}`)
	assert.Error(t, err, "no model: the expression fails and agentgateway removes the header")
	_, err = eval(`not json`)
	assert.Error(t, err)
}

// TestAuthorizationConditionsEvaluate evaluates the allowlist conditions
// compiled for testdata/agentgateway-pool-auth with agentgateway's CEL
// semantics: a listed team on its models is allowed, off them or unlisted
// it is not (Allow with no matching condition denies).
func TestAuthorizationConditionsEvaluate(t *testing.T) {
	data, err := os.ReadFile("../../testdata/agentgateway-pool-auth/input.yaml")
	require.NoError(t, err)
	in := &compiler.Inputs{}
	require.False(t, in.Decode("input.yaml", data).HasErrors())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	res, diags := agentgateway.New().Compile(r)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	var conds []any
	for _, o := range res.Objects {
		if o.GetName() == "tenants-agentgateway-auth" {
			conds, _, _ = unstructured.NestedSlice(o.Object, "spec", "traffic", "authorization", "policy", "matchExpressions")
			target, _, _ := unstructured.NestedSlice(o.Object, "spec", "targetRefs")
			assert.Equal(t, "HTTPRoute", target[0].(map[string]any)["kind"])
		}
	}
	require.Len(t, conds, 2)

	env := evalEnv(t)
	allowed := func(team, model string) bool {
		for _, c := range conds {
			require.NoError(t, agentgateway.CheckCondition(c.(string)))
			ast, iss := env.Compile(c.(string))
			require.NoError(t, iss.Err())
			prg, err := env.Program(ast)
			require.NoError(t, err)
			v, _, err := prg.Eval(map[string]any{
				"jwt":     map[string]any{"team": team},
				"request": agentgateway.CELRequest{Body: `{"model":"` + model + `"}`},
			})
			if err == nil && v == types.True {
				return true
			}
		}
		return false
	}
	assert.True(t, allowed("platform", "anything"), "a team without models reaches every model")
	assert.True(t, allowed("research", "qwen3-32b"))
	assert.True(t, allowed("research", "qwen3-7b-instruct"), "glob")
	assert.False(t, allowed("research", "qwen3-7b-instruct-x"), "the glob is anchored")
	assert.False(t, allowed("research", "claude"))
	assert.False(t, allowed("sales", "qwen3-32b"), "an unlisted team")
}
