package aigateway

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/test/reasonscan"
)

func TestGatewayDuration(t *testing.T) {
	valid := regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)
	for d, want := range map[time.Duration]string{
		0:                                  "0s",
		1500 * time.Millisecond:            "1s500ms",
		90 * time.Minute:                   "1h30m",
		time.Hour:                          "1h",
		2*time.Minute + 5*time.Millisecond: "2m5ms",
	} {
		got, ok := gwDuration(d)
		require.True(t, ok, d)
		assert.Equal(t, want, got)
		assert.Regexp(t, valid, got)
		back, err := time.ParseDuration(got)
		require.NoError(t, err)
		assert.Equal(t, d, back)
	}
	for _, d := range []time.Duration{1500 * time.Microsecond, time.Nanosecond, -time.Second, 100000 * time.Hour} {
		_, ok := gwDuration(d)
		assert.False(t, ok, d)
	}
}

// celEnv declares the variables the AI Gateway gives a CEL request cost.
func celEnv(t *testing.T) *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("model", cel.StringType),
		cel.Variable("backend", cel.StringType),
		cel.Variable("input_tokens", cel.UintType),
		cel.Variable("cached_input_tokens", cel.UintType),
		cel.Variable("cache_creation_input_tokens", cel.UintType),
		cel.Variable("output_tokens", cel.UintType),
		cel.Variable("total_tokens", cel.UintType),
		cel.Variable("reasoning_tokens", cel.UintType),
	)
	require.NoError(t, err)
	return env
}

// TestUSDCostExpression type-checks the generated CEL cost and evaluates it:
// the cost of a request in 1e-scale USD units from costPerMillionTokens.
func TestUSDCostExpression(t *testing.T) {
	data, err := os.ReadFile("../../testdata/gateway-budgets/input.yaml")
	require.NoError(t, err)
	r, res, diags := compileYAML(t, string(data))
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	require.NotNil(t, res)
	e := &emitter{r: r}
	bk := aiBackends{}
	for _, b := range r.Backends {
		bk[b.Name] = aiBackend{name: "metered-" + b.Name}
	}
	c := e.usdCostExpr(bk)
	require.Equal(t, 8, c.scale, "prices have 2 decimals, so the unit is 1e-8 USD")

	env := celEnv(t)
	ast, iss := env.Compile(c.expr)
	require.NoError(t, iss.Err())
	require.Equal(t, cel.UintType, ast.OutputType(), "the AI Gateway requires an int or uint cost")
	prg, err := env.Program(ast)
	require.NoError(t, err)
	eval := func(backend string, in, out uint64) uint64 {
		v, _, err := prg.Eval(map[string]any{
			"model": "chat", "backend": backend, "input_tokens": in, "output_tokens": out,
			"cached_input_tokens": uint64(0), "cache_creation_input_tokens": uint64(0),
			"total_tokens": in + out, "reasoning_tokens": uint64(0),
		})
		require.NoError(t, err)
		return v.Value().(uint64)
	}
	// gpt: $1.25 / $10 per million tokens. 1M in + 1M out = $11.25 = 11.25e8 units.
	assert.Equal(t, uint64(1125000000), eval("metered-gpt.ml", 1_000_000, 1_000_000))
	// local-qwen: $0.05 / $0.2 per million: 2000 in + 1000 out = 0.0001 + 0.0002 = $0.0003.
	assert.Equal(t, uint64(30000), eval("metered-local-qwen.ml", 2000, 1000))
	assert.Equal(t, uint64(0), eval("someone-else.ml", 1000, 1000), "a backend without prices is not charged")

	// What Envoy AI Gateway v1.1's extproc really passes: the per-route-rule
	// backend name <namespace>/<AIServiceBackend>/route/<route>/rule/<i>/ref/<j>.
	assert.Equal(t, uint64(1125000000), eval("ml/metered-gpt/route/chat/rule/0/ref/1", 1_000_000, 1_000_000), "a priced backend costs more than 0 at run time")
	assert.Equal(t, uint64(30000), eval("ml/metered-local-qwen/route/chat/rule/3/ref/0", 2000, 1000))
	assert.Equal(t, uint64(0), eval("ml/someone-else/route/chat/rule/0/ref/0", 1000, 1000), "an unpriced backend costs 0")
	assert.Equal(t, uint64(0), eval("ml/metered-gpt-2/route/chat/rule/0/ref/0", 1000, 1000), "a name that extends a priced one is another backend")
	assert.Equal(t, uint64(0), eval("other/metered-gpt/route/chat/rule/0/ref/0", 1000, 1000), "another namespace's backend")
}

// TestEveryRefusalHasAnInvalidCase: each reason this target refuses with is
// exercised by a testdata/invalid/gateway-target-*.yaml case.
func TestEveryRefusalHasAnInvalidCase(t *testing.T) {
	reasons := map[string]bool{}
	uses, bad, err := reasonscan.Emitted(".")
	require.NoError(t, err)
	require.Empty(t, bad)
	for _, u := range uses {
		if u.Error && u.Reason != targets.ReasonInternalError {
			reasons[u.Reason] = true
		}
	}
	require.GreaterOrEqual(t, len(reasons), 15)
	cases, err := filepath.Glob("../../testdata/invalid/gateway-target-*.yaml")
	require.NoError(t, err)
	var all strings.Builder
	for _, f := range cases {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		all.Write(data)
	}
	for r := range reasons {
		assert.Contains(t, all.String(), " "+r+"\n", "refusal %s has no testdata/invalid/gateway-target-*.yaml case", r)
	}
}

func TestSummary(t *testing.T) {
	for file, want := range map[string]string{
		"gateway-budgets":          "2 backends, 1 rule, default route, 2 budgets, 1 upstream credential on gateway envoy-gateway-system/ai-gateway",
		"gateway-jwt-allowlists":   "2 backends, 1 rule, default route, JWT enforced, 2 team allowlists on gateway envoy-gateway-system/ai-gateway",
		"gateway-many-rules-split": "1 backend, 20 rules on gateway envoy-gateway-system/ai-gateway (2 AIGatewayRoutes)",
	} {
		data, err := os.ReadFile("../../testdata/" + file + "/input.yaml")
		require.NoError(t, err)
		_, res, diags := compileYAML(t, string(data))
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		assert.Equal(t, want, res.Summary, file)
	}
}

// TestKindsCoverOutput: every emitted kind is declared in Kinds, so the
// controller checks discovery for it and prunes it.
func TestKindsCoverOutput(t *testing.T) {
	declared := map[string]bool{}
	for _, k := range New().Kinds() {
		declared[k.GroupVersion().String()+"/"+k.Kind] = true
	}
	files, err := filepath.Glob("../../testdata/gateway-*/input.yaml")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		_, res, diags := compileYAML(t, string(data))
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		for _, o := range res.Objects {
			k := o.GetAPIVersion() + "/" + o.GetKind()
			assert.True(t, declared[k], "%s is emitted but not in Kinds()", k)
			seen[k] = true
		}
	}
	assert.Equal(t, declared, seen, "every declared kind appears in some golden case")
}

// GatewayRouterDoc is the start of a Gateway-plane ModelRouter document in
// namespace ml, up to its backends list; ref is what its gatewayRef holds.
// Exported for the package's external tests (shared_test.go).
func GatewayRouterDoc(name, ref string) string {
	return "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: " + name + ", namespace: ml}\nspec:\n  dataPlane: Gateway\n  gatewayRef: {" + ref + "}\n  backends:\n"
}

// QwenISVC is the InferenceService qwen3 in namespace ml the routers of
// these tests serve, as a YAML document (no trailing newline).
const QwenISVC = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3, namespace: ml}
spec: {runtime: vllm}`

var healthRouter = QwenISVC + "\n---\n" + GatewayRouterDoc("chat", "name: eg")

func healthWarnings(t *testing.T, backends string) ([]string, *unstructured.Unstructured) {
	t.Helper()
	_, res, diags := compileYAML(t, healthRouter+backends+"  defaultRoute: b\n")
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	var got []string
	for _, d := range diags.Warnings() {
		if d.Reason == "ActiveHealthCheckNotApplied" {
			got = append(got, d.Field)
		}
	}
	var btp *unstructured.Unstructured
	for _, o := range res.Objects {
		if o.GetKind() == "BackendTrafficPolicy" {
			btp = o
		}
	}
	return got, btp
}

// TestActiveHealthCheckNotAppliedOnlyWhenAsked: a credentialed provider is
// never probed by the gateway, but the warning is for a healthCheck the spec
// set; a provider without credentials is probed like a local backend.
func TestActiveHealthCheckNotAppliedOnlyWhenAsked(t *testing.T) {
	got, _ := healthWarnings(t, `    - name: b
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
`)
	assert.Empty(t, got, "no healthCheck was written")

	got, _ = healthWarnings(t, `    - name: b
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
      healthCheck: {intervalSeconds: 30}
`)
	assert.Equal(t, []string{"spec.backends[0].healthCheck"}, got)

	got, btp := healthWarnings(t, `    - name: b
      external: {provider: litellm, model: qwen, url: "http://10.0.0.7:4000"}
`)
	assert.Empty(t, got, "nothing keeps the gateway from probing a backend without credentials")
	require.NotNil(t, btp)
	path, _, _ := unstructured.NestedString(btp.Object, "spec", "healthCheck", "active", "http", "path")
	assert.Equal(t, "/health/liveliness", path)
}

// TestNoFallThroughIsOneWarningPerRouter: many rules without failClosed make
// one warning that names them, not one each.
func TestNoFallThroughIsOneWarningPerRouter(t *testing.T) {
	spec := healthRouter + "    - name: b\n      inferenceServiceRef: {name: qwen3}\n  rules:\n"
	for i := range 14 {
		spec += fmt.Sprintf("    - name: r%d\n      match: {models: [m%d]}\n      route: {backends: [b]}\n", i, i)
	}
	_, _, diags := compileYAML(t, spec+"  defaultRoute: b\n")
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	got := diags.Warnings().OfReason("NoFallThroughOnGateway")
	require.Len(t, got, 1)
	assert.Equal(t, "spec.rules", got[0].Field)
	assert.Contains(t, got[0].Message, `on the gateway a matched rule never falls through: when every backend of one of the 14 rules "r0", "r1",`)
	assert.Contains(t, got[0].Message, `"r9" and 4 more is down`)
}
