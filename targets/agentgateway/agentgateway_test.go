package agentgateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

const isvcs = `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3, namespace: ns}
spec: {runtime: vllm, containerPort: 8000}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama3, namespace: ns}
spec: {runtime: vllm}
---
`

// run compiles a router (spec indented by two spaces) through the frontend
// and the AgentGateway target. The frontend must accept it.
func run(t *testing.T, spec string) ([]*unstructured.Unstructured, diag.List) {
	t.Helper()
	doc := isvcs + "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat, namespace: ns}\nspec:\n  dataPlane: AgentGateway\n" + spec
	in := &compiler.Inputs{}
	d := in.Decode("t.yaml", []byte(doc))
	require.False(t, d.HasErrors(), "%v", d.Err())
	reg := targets.NewRegistry(agentgateway.New())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{Planes: reg.Capabilities()})
	require.False(t, diags.HasErrors(), "the frontend refused the input: %v", diags.Err())
	res, tdiags := agentgateway.New().Compile(r)
	tdiags = append(diags, tdiags...)
	if tdiags.HasErrors() {
		assert.Nil(t, res, "a refused router yields no objects")
		return nil, tdiags
	}
	require.NotNil(t, res)
	assert.NotEmpty(t, res.Summary)
	assert.Subset(t, agentgateway.New().Kinds(), res.Kinds(), "every emitted kind is listed in Kinds()")
	return res.Objects, tdiags
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func reasons(l diag.List, sev diag.Severity) []string {
	var out []string
	for _, d := range l {
		if d.Severity == sev {
			out = append(out, d.Field+" "+d.Reason)
		}
	}
	return out
}

const pooled = `  agentGatewayRef: {name: gw, endpointPicker: epp, endpointPickerPort: 9002}
`

const twoPickers = `  agentGatewayRef: {name: gw}
  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen3}
      endpointPicker: {service: {name: qwen-epp, port: 9002}}
    - name: llama
      inferenceServiceRef: {name: llama3}
      endpointPicker: {service: {name: llama-epp, port: 9003}}
`

func TestInferencePoolObjects(t *testing.T) {
	objs, diags := run(t, pooled+`  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen3}
  defaultRoute: qwen
`)
	require.False(t, diags.HasErrors())
	require.Len(t, objs, 4)
	pool := find(objs, "InferencePool", naming.AgentGatewayPoolName("chat", "qwen3"))
	require.NotNil(t, pool)
	sel, _, _ := unstructured.NestedStringMap(pool.Object, "spec", "selector", "matchLabels")
	assert.Equal(t, map[string]string{"inference.llmkube.dev/service": "qwen3"}, sel)
	ports, _, _ := unstructured.NestedSlice(pool.Object, "spec", "targetPorts")
	assert.Equal(t, []any{map[string]any{"number": int64(8000)}}, ports, "the pods' containerPort")
	epp, _, _ := unstructured.NestedMap(pool.Object, "spec", "endpointPickerRef")
	assert.Equal(t, map[string]any{"name": "epp", "port": map[string]any{"number": int64(9002)}}, epp)

	pol := find(objs, "AgentgatewayPolicy", "chat-model-extraction")
	require.NotNil(t, pol)
	assert.Equal(t, "ns", pol.GetNamespace())
	phase, _, _ := unstructured.NestedString(pol.Object, "spec", "traffic", "phase")
	assert.Equal(t, "PreRouting", phase)
	set, _, _ := unstructured.NestedSlice(pol.Object, "spec", "traffic", "transformation", "request", "set")
	assert.Equal(t, []any{
		map[string]any{"name": agentgateway.ModelHeader, "value": agentgateway.ModelExpression},
		map[string]any{"name": agentgateway.ModelPresentHeader, "value": agentgateway.ModelPresentExpression},
	}, set)

	route := find(objs, "HTTPRoute", "chat-agentgateway")
	require.NotNil(t, route)
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	require.Len(t, rules, 1)
	assert.Equal(t, "default", rules[0].(map[string]any)["name"])

	// The default route brings the pool every model's requests: they are
	// sent the name the runtime serves.
	rewrite := find(objs, "AgentgatewayPolicy", naming.AgentGatewayUpstreamModelPolicyName("chat", "qwen"))
	require.NotNil(t, rewrite)
	body, _, _ := unstructured.NestedString(rewrite.Object, "spec", "traffic", "transformation", "request", "body")
	assert.Equal(t, agentgateway.UpstreamModelBody("qwen3"), body)
}

func TestCrossNamespacePolicyHasNoOwnerAndIsLabelled(t *testing.T) {
	doc := strings.Replace(pooled, "name: gw,", "name: gw, namespace: gateways,", 1)
	objs, _ := run(t, doc+`  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen3}
  defaultRoute: qwen
`)
	var pol *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "AgentgatewayPolicy" && strings.Contains(o.GetName(), "model-extraction") {
			pol = o
		} else {
			assert.Equal(t, "ns", o.GetNamespace(), "%s stays in the router's namespace", o.GetKind())
		}
	}
	require.NotNil(t, pol)
	assert.Equal(t, "gateways", pol.GetNamespace())
	assert.Empty(t, pol.GetOwnerReferences())
	assert.Equal(t, "ns", pol.GetLabels()[naming.LabelRouterNamespace])
	assert.Equal(t, "chat", pol.GetLabels()[naming.LabelRouter])
	route := find(objs, "HTTPRoute", "chat-agentgateway")
	parents, _, _ := unstructured.NestedSlice(route.Object, "spec", "parentRefs")
	assert.Equal(t, []any{map[string]any{"name": "gw", "namespace": "gateways"}}, parents)
	// Routers of two namespaces with one name never share a policy name.
	assert.NotEqual(t, naming.AgentGatewayPolicyName("a", "chat", true), naming.AgentGatewayPolicyName("b", "chat", true))
}

func TestRulesRouteToFirstCandidateAndKeepOrder(t *testing.T) {
	objs, diags := run(t, twoPickers+`  rules:
    - name: both
      match: {models: [qwen3], headers: {X-Team: a}}
      route: {backends: [llama, qwen]}
    - name: any-qwen
      match: {models: ["qwen*"]}
      route: {backends: [qwen]}
  defaultRouteStrategy: BackendNameMatch
  defaultRoute: llama
`)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	route := find(objs, "HTTPRoute", "chat-agentgateway")
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	var names, pools []string
	for _, r := range rules {
		m := r.(map[string]any)
		names = append(names, m["name"].(string))
		refs := m["backendRefs"].([]any)
		pools = append(pools, refs[0].(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"rule-both", "rule-any-qwen", "model-qwen", "model-llama", "default"}, names)
	assert.Equal(t, []string{"chat-llama3-pool", "chat-qwen3-pool", "chat-qwen3-pool", "chat-llama3-pool", "chat-llama3-pool"}, pools)
}

func TestWarnings(t *testing.T) {
	_, diags := run(t, pooled+`  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen3}
      resolution: endpoint
      balancing: {mode: LoadAware}
      modelInfo: {outputModalities: [text, audio]}
      timeout: 10s
      costPerMillionTokens: {promptUSD: "1"}
  rules:
    - name: r
      timeout: 5s
      match: {latencySLOMs: 100}
      route: {backends: [qwen], poolActivation: IfIdle}
`)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.ElementsMatch(t, []string{
		"spec.backends[0].balancing FieldIgnored",
		"spec.backends[0].modelInfo FieldIgnored",
		"spec.backends[0].resolution FieldIgnored",
		"spec.backends[0].timeout FieldIgnored",
		"spec.backends[0].costPerMillionTokens FieldIgnored",
		"spec.rules[0].timeout FieldIgnored",
		"spec.rules[0].match.latencySLOMs FieldIgnored",
		"spec.rules[0].route.poolActivation FieldIgnored",
		"spec.backends[0].inferenceServiceRef.name UpstreamModelAssumed",
	}, reasons(diags, diag.Warning))
}

func TestModelInfoAtItsDefaultsIsNotWarned(t *testing.T) {
	_, diags := run(t, pooled+`  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen3}
  defaultRoute: qwen
`)
	// The served name is assumed (UpstreamModelAssumed), not a word about
	// modelInfo.
	assert.Equal(t, []string{"spec.backends[0].inferenceServiceRef.name UpstreamModelAssumed"}, reasons(diags, diag.Warning))
}

// TestRefusals: the emitter's own refusals. What one field decides (the
// audit log's fields, the routing mode's refusals) the capability table
// refuses in the frontend; testdata/invalid/agentgateway-*.yaml pins those.
func TestRefusals(t *testing.T) {
	local := "    - name: qwen\n      inferenceServiceRef: {name: qwen3}\n"
	manyRules := ""
	for i := range 17 {
		manyRules += fmt.Sprintf("    - name: r%d\n      match: {models: [m%d]}\n      route: {backends: [qwen]}\n", i, i)
	}
	manyModels := make([]string, 65)
	for i := range manyModels {
		manyModels[i] = fmt.Sprintf("m%d", i)
	}
	cases := []struct {
		name, spec string
		want       []string
	}{
		{"external backend in InferencePool routing", pooled + "  backends:\n" + local +
			"    - name: opus\n      external: {provider: anthropic, model: claude-opus-4-7}\n  defaultRoute: qwen\n",
			[]string{"spec.backends[1].external UnsupportedOnAgentGateway"}},
		{"budgets", pooled + "  backends:\n" + local + "  defaultRoute: qwen\n  policy:\n    budgets:\n      - {name: cap, scope: router, maxTokens: 1000}\n",
			[]string{"spec.policy.budgets[0] UnsupportedOnAgentGateway"}},
		{"auth with a rule on the verified header", pooled + "  backends:\n" + local + "  rules:\n    - name: gold\n      match: {headers: {x-llmkube-team: gold}}\n      route: {backends: [qwen]}\n  defaultRoute: qwen\n  policy:\n    auth:\n      jwt: {provider: kc, issuer: https://kc.example.com, jwksURI: https://kc.example.com/jwks, teamClaim: team}\n",
			[]string{"spec.rules[0].match.headers[x-llmkube-team] VerifiedHeaderMatchUnsupported"}},
		{"rule order", pooled + "  backends:\n" + local + "  rules:\n    - name: wide\n      match: {models: [\"qwen*\"]}\n      route: {backends: [qwen]}\n" +
			"    - name: narrow\n      match: {models: [qwen3], taskComplexity: complex}\n      route: {backends: [qwen]}\n",
			[]string{"spec.rules[1].match RuleOrderNotExpressible"}},
		{"too many rules", pooled + "  backends:\n" + local + "  rules:\n" + manyRules,
			[]string{"spec.rules RouteLimitExceeded"}},
		{"too many matches in a rule", pooled + "  backends:\n" + local + "  rules:\n    - name: r\n      match: {models: [" + strings.Join(manyModels, ", ") + "]}\n      route: {backends: [qwen]}\n",
			[]string{"spec.rules[0].match RouteLimitExceeded"}},
		{"default picker on two InferenceServices in Model routing", "  agentGatewayRef: {name: gw, routing: Model, sectionName: http, endpointPicker: epp, endpointPickerPort: 9002}\n  backends:\n" + local +
			"    - name: llama\n      inferenceServiceRef: {name: llama3}\n",
			[]string{"spec.agentGatewayRef.endpointPicker PickerSharedAcrossInferenceServices"}},
		{"duplicate model id in Model routing", "  agentGatewayRef: {name: gw, routing: Model, sectionName: http}\n  backends:\n" + local +
			"    - name: llama\n      displayName: qwen\n      inferenceServiceRef: {name: llama3}\n",
			[]string{"spec.backends[1].displayName DuplicateModelID"}},
		{"wildcard model id in Model routing", "  agentGatewayRef: {name: gw, routing: Model, sectionName: http}\n  backends:\n" +
			"    - name: qwen\n      displayName: \"qwen-*\"\n      inferenceServiceRef: {name: qwen3}\n",
			[]string{"spec.backends[0].displayName ModelIDNotExpressible"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, diags := run(t, c.spec)
			assert.Nil(t, objs)
			assert.ElementsMatch(t, c.want, reasons(diags, diag.Error), "%v", diags)
			for _, d := range diags.Errors() {
				assert.NotEmpty(t, d.Message)
			}
		})
	}
}

func TestExclusiveRulesKeepTheirOrder(t *testing.T) {
	// A later rule with more headers is fine when no request matches both
	// (qwen-complex after llama); more headers first is always fine.
	_, diags := run(t, twoPickers+`  rules:
    - name: team-b
      match: {headers: {X-Team: b}, taskComplexity: simple}
      route: {backends: [qwen]}
    - name: llama
      match: {models: [llama3]}
      route: {backends: [llama]}
    - name: qwen-complex
      match: {models: ["qwen*"], taskComplexity: complex}
      route: {backends: [qwen]}
`)
	assert.False(t, diags.HasErrors(), "%v", diags.Err())
}

func TestReadinessFailover(t *testing.T) {
	doc := strings.Replace(isvcs, "spec: {runtime: vllm}\n", "spec: {runtime: vllm}\nstatus: {phase: Failed}\n", 1)
	require.NotEqual(t, isvcs, doc)
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc+"apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat, namespace: ns}\nspec:\n  dataPlane: AgentGateway\n"+twoPickers+
		"  rules:\n    - name: closed\n      failClosed: true\n      match: {headers: {X-Only: llama}}\n      route: {backends: [llama]}\n    - name: a\n      route: {backends: [llama, qwen]}\n")).HasErrors())
	reg := targets.NewRegistry(agentgateway.New())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{Planes: reg.Capabilities()})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	res, tdiags := agentgateway.New().Compile(r)
	require.False(t, tdiags.HasErrors(), "%v", tdiags.Err())
	assert.ElementsMatch(t, []string{"spec.rules[1].route.backends RoutedToFallback", "spec.rules[0].route.backends NoReadyBackend",
		"spec.backends[0].inferenceServiceRef.name UpstreamModelAssumed", "spec.backends[1].inferenceServiceRef.name UpstreamModelAssumed"}, reasons(tdiags, diag.Warning))
	route := find(res.Objects, "HTTPRoute", "chat-agentgateway")
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	require.Len(t, rules, 2)
	refs := rules[1].(map[string]any)["backendRefs"].([]any)
	assert.Equal(t, "chat-qwen3-pool", refs[0].(map[string]any)["name"], "fails over to the first ready backend")
	_, has := rules[0].(map[string]any)["backendRefs"]
	assert.False(t, has, "a fail-closed rule with no ready backend keeps its matches and no backend: 503")
}

func TestModelRouting(t *testing.T) {
	objs, diags := run(t, `  agentGatewayRef: {name: gw, routing: Model, hostnames: [llm.example.com]}
  defaultRouteStrategy: BackendNameMatch
  backends:
    - name: qwen
      displayName: Qwen/Qwen3
      inferenceServiceRef: {name: qwen3}
    - name: llama
      inferenceServiceRef: {name: llama3}
`)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	require.Len(t, objs, 3)
	m := find(objs, "AgentgatewayModel", "chat-qwen-model")
	require.NotNil(t, m)
	model, _, _ := unstructured.NestedString(m.Object, "spec", "match", "model")
	assert.Equal(t, "Qwen/Qwen3", model)
	ref, _, _ := unstructured.NestedMap(m.Object, "spec", "custom", "backendRef")
	assert.Equal(t, map[string]any{"name": "qwen3", "port": int64(8080)}, ref, "the InferenceService's Service and port")
	parents, _, _ := unstructured.NestedSlice(m.Object, "spec", "parentRefs")
	assert.Equal(t, []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "chat-agentgateway"}}, parents)
	route := find(objs, "HTTPRoute", "chat-agentgateway")
	hosts, _, _ := unstructured.NestedStringSlice(route.Object, "spec", "hostnames")
	assert.Equal(t, []string{"llm.example.com"}, hosts)
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	require.Len(t, rules, 1)
	refs := rules[0].(map[string]any)["backendRefs"].([]any)
	assert.Equal(t, map[string]any{"group": "agentgateway.dev", "kind": "AgentgatewayModel", "name": "*", "weight": int64(1)}, refs[0])
	assert.Nil(t, find(objs, "AgentgatewayPolicy", "chat-model-extraction"), "Model routing needs no extraction policy")
}

func TestGlobRegexp(t *testing.T) {
	assert.Equal(t, `^qwen3-.*$`, agentgateway.GlobRegexp("qwen3-*"))
	assert.Equal(t, `^qwen3\.5.$`, agentgateway.GlobRegexp("qwen3.5?"))
}

// TestRefusedBackendOnlyRefused: an external backend refused in InferencePool
// routing yields its refusal and nothing else: no RoutedToFallback,
// NoReadyBackend or NoRoute describing it as an InferenceService.
func TestRefusedBackendOnlyRefused(t *testing.T) {
	_, diags := run(t, pooled+`  backends:
    - name: gpt
      external: {provider: openai, model: gpt-5}
    - name: qwen
      inferenceServiceRef: {name: qwen3}
  rules:
    - name: r
      match: {models: [gpt-*]}
      route: {backends: [gpt, qwen]}
    - name: only-gpt
      match: {models: [o3]}
      route: {backends: [gpt]}
  defaultRoute: gpt
`)
	var got []string
	for _, d := range diags {
		got = append(got, d.Field+" "+d.Reason)
	}
	assert.Equal(t, []string{"spec.backends[0].external UnsupportedOnAgentGateway", "spec.backends[1].inferenceServiceRef.name UpstreamModelAssumed"}, got)
}

// TestUpstreamModelRewrittenOnReroute: every HTTPRoute rule that can bring
// a pool requests under another name than the one its runtime serves (a
// sensitive rule matching any model, a static default route) rewrites the
// body's model to the served name, in one policy per backend naming those
// rules; a rule matching only the served name needs none. With policy.auth
// the rule's transformation also carries the team header and the removal
// of the caller's token, which it replaces on those rules.
func TestUpstreamModelRewrittenOnReroute(t *testing.T) {
	doc := `apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: medgemma, namespace: ns}
spec: {runtime: vllm, modelRef: medgemma-27b, extraArgs: [--served-model-name, medgemma-27b]}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: general, namespace: ns}
spec: {runtime: vllm, modelRef: llama-3, extraArgs: [--served-model-name, llama-3]}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ns}
spec:
  dataPlane: AgentGateway
  agentGatewayRef: {name: gw}
  backends:
    - {name: local-medgemma, displayName: medgemma-27b, inferenceServiceRef: {name: medgemma}, endpointPicker: {service: {name: medgemma-epp, port: 9002}}}
    - {name: local-general, displayName: llama-3, inferenceServiceRef: {name: general}, endpointPicker: {service: {name: general-epp, port: 9002}}}
  rules:
    - name: phi-stays-local
      failClosed: true
      match: {dataClassification: [phi]}
      route: {backends: [local-medgemma]}
    - name: by-name
      match: {models: [llama-3]}
      route: {backends: [local-general]}
  defaultRoute: local-medgemma
  policy:
    auth:
      jwt: {provider: keycloak, issuer: "https://idp.example.com", jwksURI: "https://idp.example.com/jwks", teamClaim: team}
`
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	reg := targets.NewRegistry(agentgateway.New())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{Planes: reg.Capabilities()})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	res, tdiags := agentgateway.New().Compile(r)
	require.False(t, tdiags.HasErrors(), "%v", tdiags.Err())
	assert.Empty(t, tdiags.Warnings(), "both served names are known")
	p := find(res.Objects, "AgentgatewayPolicy", "chat-local-medgemma-model-name")
	require.NotNil(t, p, "local-medgemma is reached under other names")
	refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
	var sections []any
	for _, ref := range refs {
		sections = append(sections, ref.(map[string]any)["sectionName"])
	}
	assert.Equal(t, []any{"default", "rule-phi-stays-local"}, sections)
	req, _, _ := unstructured.NestedMap(p.Object, "spec", "traffic", "transformation", "request")
	assert.Equal(t, `toJson(json(request.body).merge({"model": "medgemma-27b"}))`, req["body"])
	assert.Equal(t, []any{"authorization"}, req["remove"], "the rule's transformation replaces the route's: it removes the caller's token too")
	assert.Equal(t, []any{map[string]any{"name": "x-llmkube-team", "value": `jwt["team"]`}}, req["set"])
	assert.Nil(t, find(res.Objects, "AgentgatewayPolicy", "chat-local-general-model-name"), "local-general is reached only by requests for llama-3")
}
