package agentgateway_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/simulate"
	agw "github.com/llmkube/llmkube-compile/simulate/agentgateway"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// emittedExpressions compiles every AgentGateway golden input and returns
// every CEL header-value expression the target put in an
// AgentgatewayPolicy, and every body transformation (bodies).
func emittedExpressions(t *testing.T) (exprs, bodies []string) {
	t.Helper()
	inputs, err := filepath.Glob("../../testdata/agentgateway-*/input.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
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
				body, _, _ := unstructured.NestedString(o.Object, "spec", "traffic", "transformation", "request", "body")
				if _, direct, _ := unstructured.NestedMap(o.Object, "spec", "traffic", "directResponse"); !direct && body == "" {
					require.NotEmpty(t, set)
				}
				for _, s := range set {
					exprs = append(exprs, s.(map[string]any)["value"].(string))
				}
				if body != "" {
					bodies = append(bodies, body)
				}
			}
		}
	}
	return exprs, bodies
}

// TestEveryEmittedExpressionTypeChecks type-checks every CEL expression the
// target emits for the golden inputs against agentgateway's transformation
// environment, so a malformed expression fails here rather than in a cluster.
func TestEveryEmittedExpressionTypeChecks(t *testing.T) {
	exprs, bodies := emittedExpressions(t)
	require.NotEmpty(t, exprs, "the InferencePool cases emit the model-extraction expression")
	require.NotEmpty(t, bodies, "the InferencePool cases rewrite the model a pool is sent")
	for _, x := range exprs {
		assert.NoError(t, agentgateway.CheckExpression(x), x)
	}
	for _, x := range bodies {
		assert.NoError(t, agentgateway.CheckBody(x), x)
		_, err := agw.Check(x)
		assert.NoError(t, err, "the model's environment takes it too: %s", x)
	}
	assert.NoError(t, agentgateway.CheckExpression(agentgateway.ModelExpression))
}

// TestUpstreamModelBodyRewritesOnlyTheModel evaluates the body
// transformation with agentgateway's json(), merge() and toJson() semantics
// (simulate/agentgateway, from crates/celx/src/general.rs): the model is
// the served name, every other field comes back equal (nested objects,
// integers past 2^53, floats, unicode, HTML characters unescaped), for
// served names that need escaping in CEL. Without a JSON body it fails,
// and agentgateway then sends an empty body: never the client's model.
func TestUpstreamModelBodyRewritesOnlyTheModel(t *testing.T) {
	body := map[string]any{
		"model":       "gpt-4.1",
		"messages":    []any{map[string]any{"role": "user", "content": "Pätient <MRN 12345678> \"quoted\" 🩺"}},
		"max_tokens":  json.Number("9007199254740993"),
		"temperature": json.Number("0.7"),
		"stream":      true,
		"tools":       []any{},
		"metadata":    map[string]any{"nested": map[string]any{"a": nil}},
	}
	for _, served := range []string{"medgemma-27b", "Qwen/Qwen3-8B", `we"ird\\name`, "modèle-ü", "tab\there"} {
		expr := agentgateway.UpstreamModelBody(served)
		require.NoError(t, agentgateway.CheckBody(expr), expr)
		out, err := agw.EvalBody(expr, simulate.Request{Body: body}, nil)
		require.NoError(t, err, expr)
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var got map[string]any
		require.NoError(t, d.Decode(&got), string(out))
		want := maps.Clone(body)
		want["model"] = served
		assert.Equal(t, want, got, expr)
		assert.Contains(t, string(out), "<MRN", "no HTML escaping: %s", out)
	}
	_, err := agw.EvalBody(agentgateway.UpstreamModelBody("m"), simulate.Request{}, nil)
	assert.Error(t, err, "no body: json() fails")
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

// TestModelExpressionEvaluates runs the expression with agentgateway's json
// semantics (parse bytes as JSON) on an OpenAI request body, in the model's
// CEL environment (simulate/agentgateway).
func TestModelExpressionEvaluates(t *testing.T) {
	eval := func(body map[string]any) (string, bool) {
		return agw.EvalHeader(agentgateway.ModelExpression, simulate.Request{Body: body}, nil)
	}
	v, ok := eval(map[string]any{"model": "qwen3-32b", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	require.True(t, ok)
	assert.Equal(t, "qwen3-32b", v)
	_, ok = eval(map[string]any{"messages": []any{}})
	assert.False(t, ok, "no model: the expression fails and agentgateway removes the header")
	_, ok = eval(nil)
	assert.False(t, ok, "no body: json() fails")
}

// TestRequestBodyIsBytes: agentgateway's request.body is bytes
// (cel/types.rs), not a string; the target's environment says so, as the
// model's does.
func TestRequestBodyIsBytes(t *testing.T) {
	for _, x := range []string{`request.body == b""`, `size(request.bodyPrefix) > 0`, `request.pathAndQuery != ""`, `has(llm.requestModel)`} {
		assert.NoError(t, agentgateway.CheckCondition(x), x)
		_, err := agw.Check(x)
		assert.NoError(t, err, x)
	}
	assert.Error(t, agentgateway.CheckCondition(`request.body == "x"`))
}

// TestAuthorizationConditionsEvaluate evaluates the allowlist condition
// compiled for testdata/agentgateway-pool-auth with agentgateway's CEL
// semantics: a listed team on its models is allowed, off them or unlisted
// it is not. It is one Require condition (see shared_test.go for why).
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
			action, _, _ := unstructured.NestedString(o.Object, "spec", "traffic", "authorization", "action")
			assert.Equal(t, "Require", action)
			target, _, _ := unstructured.NestedSlice(o.Object, "spec", "targetRefs")
			assert.Equal(t, "HTTPRoute", target[0].(map[string]any)["kind"])
		}
	}
	require.Len(t, conds, 1)
	cond := conds[0].(string)
	require.NoError(t, agentgateway.CheckCondition(cond))
	allowed := func(team, model string) bool {
		return agw.EvalBool(cond, simulate.Request{Body: map[string]any{"model": model}}, map[string]any{"team": team})
	}
	assert.True(t, allowed("platform", "anything"), "a team without models reaches every model")
	assert.True(t, allowed("research", "qwen3-32b"))
	assert.True(t, allowed("research", "qwen3-7b-instruct"), "glob")
	assert.False(t, allowed("research", "qwen3-7b-instruct-x"), "the glob is anchored")
	assert.False(t, allowed("research", "claude"))
	assert.False(t, allowed("sales", "qwen3-32b"), "an unlisted team")
	assert.False(t, agw.EvalBool(cond, simulate.Request{}, nil), "no token, no body: denied")
}

// TestCELEnvironmentsAgree: the target's environment (which Compile checks
// against) and the model's (which evaluates) declare the same variables and
// request fields, as agentgateway's Executor does.
func TestCELEnvironmentsAgree(t *testing.T) {
	var exprs []string
	for _, v := range []string{"response", "proxy", "env", "source", "destination", "jwt", "apiKey", "basicAuth",
		"llm", "llmRequest", "mcp", "mcpGuardrails", "backend", "extauthz", "extproc", "metadata"} {
		exprs = append(exprs, "has("+v+".x)")
	}
	for _, f := range []string{"method", "uri", "path", "pathAndQuery", "host", "scheme", "version"} {
		exprs = append(exprs, "request."+f+` == ""`)
	}
	exprs = append(exprs, `request.headers["a"] == ""`, `request.body == b""`, `request.bodyPrefix == b""`)
	for _, x := range exprs {
		assert.NoError(t, agentgateway.CheckCondition(x), x)
		_, err := agw.Check(x)
		assert.NoError(t, err, x)
	}
	for _, x := range []string{`has(nosuch.x)`, `request.nosuch == ""`} {
		assert.Error(t, agentgateway.CheckCondition(x), x)
		_, err := agw.Check(x)
		assert.Error(t, err, x)
	}
}
