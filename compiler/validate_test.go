package compiler

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// vtBase is a valid router: one local and one external backend.
const vtBase = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen3}
spec: {runtime: vllm}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: llama3}
spec: {runtime: vllm}
---
` + vtChatHead + `    - name: cloud-opus
      external: {provider: anthropic, model: claude-opus-4-7}
  defaultRoute: local-qwen
`

// vtChatHead starts the ModelRouter chat of these tests, up to its first
// backend, local-qwen (InferenceService qwen3).
const vtChatHead = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat}
spec:
  backends:
    - name: local-qwen
      inferenceServiceRef: {name: qwen3}
`

// vtInputs decodes YAML that must decode cleanly.
func vtInputs(t *testing.T, yaml string) *Inputs {
	t.Helper()
	in := &Inputs{}
	d := in.Decode("test.yaml", []byte(yaml))
	require.False(t, d.HasErrors(), "decode: %v", d.Err())
	require.Len(t, in.Routers, 1)
	return in
}

// vtCompile compiles the base router after mutate changes it.
func vtCompile(t *testing.T, dp ir.DataPlane, mutate func(*v1.ModelRouter, *Inputs)) (*ir.Router, diag.List) {
	t.Helper()
	in := vtInputs(t, vtBase)
	r := in.Routers[0].Router
	if mutate != nil {
		mutate(r, in)
	}
	return Compile(r, in, Options{DataPlane: dp, Planes: builtin.Registry().Capabilities()})
}

// vtKeys renders diagnostics as sorted "path Reason" strings.
func vtKeys(l diag.List) []string {
	out := []string{}
	for _, d := range l {
		out = append(out, d.Field+" "+d.Reason)
	}
	sort.Strings(out)
	return out
}

func vtFind(l diag.List, field, reason string) (diag.Diagnostic, bool) {
	for _, d := range l {
		if d.Field == field && d.Reason == reason {
			return d, true
		}
	}
	return diag.Diagnostic{}, false
}

func vtPtr[T any](v T) *T { return &v }

func vtPool(in *Inputs, members ...string) {
	p := &v1.ModelPool{}
	p.Name = "gpu-slot"
	for _, m := range members {
		p.Spec.Members = append(p.Spec.Members, v1.ModelPoolMember{InferenceServiceRef: corev1.LocalObjectReference{Name: m}})
	}
	in.Pools = append(in.Pools, p)
}

func TestValidateBaseIsClean(t *testing.T) {
	router, diags := vtCompile(t, "", nil)
	require.NotNil(t, router)
	assert.Empty(t, diags)
}

// TestValidateReportsEveryProblemAtOnce: no check stops at the first problem.
func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	in := vtInputs(t, vtChatHead+`    - name: local-qwen
      external: {provider: openai, model: gpt-5}
    - name: cloud-opus
      external: {provider: anthropic, model: claude-opus-4-7}
      timeout: soon
  rules:
    - name: pii
      match: {dataClassification: [PII]}
      route: {backends: [local-qwen, cloud-opus]}
    - name: code
      route: {strategy: shadow, backends: [missing]}
  defaultRoute: nowhere
  proxy: {replicas: 11}
  policy:
    budgets:
      - {name: monthly, scope: rule}
    auditLog: {callerHeader: Authorization, trustedProxyCIDRs: [10.0.0.0/8]}
`)
	router, diags := Compile(in.Routers[0].Router, in, Options{})
	assert.Nil(t, router)
	assert.Equal(t, []string{
		"spec.backends[1].name DuplicateBackendName",
		"spec.backends[2].timeout InvalidDuration",
		"spec.defaultRoute UnknownBackend",
		"spec.policy.auditLog.callerHeader CredentialHeader",
		"spec.policy.auditLog.trustedProxyCIDRs RequiresLogClientAddress",
		"spec.policy.budgets[0] BudgetLimitRequired",
		"spec.policy.budgets[0].ruleName RuleNameRequired",
		"spec.proxy.replicas OutOfRange",
		"spec.rules[0].failClosed FailClosedRequired",
		"spec.rules[0].route.backends[1] CloudBackendInSensitiveRule",
		"spec.rules[1].route.backends ShadowNeedsTwoBackends",
		"spec.rules[1].route.backends[0] UnknownBackend",
	}, vtKeys(diags.Errors()))
}

// TestValidateWarningsDoNotFail: each of these is accepted and compiles, with
// a warning that says what is ignored or changed.
func TestValidateWarningsDoNotFail(t *testing.T) {
	endpointBalancing := func(r *v1.ModelRouter, bal *v1.BalancingSpec) {
		r.Spec.Backends[0].Resolution = v1.ResolutionEndpoint
		r.Spec.Backends[0].Balancing = bal
	}
	for _, tc := range []struct {
		name, field, reason string
		mutate              func(*v1.ModelRouter, *Inputs)
		check               func(*testing.T, *ir.Router, diag.Diagnostic)
	}{
		{name: "prefix affinity without LoadAware", field: "spec.backends[0].balancing.prefixAffinity", reason: "PrefixAffinityIgnored",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				endpointBalancing(r, &v1.BalancingSpec{PrefixAffinity: &v1.PrefixAffinitySpec{}})
			},
			check: func(t *testing.T, out *ir.Router, _ diag.Diagnostic) {
				assert.Nil(t, out.Backends[0].Balancing.PrefixAffinity)
			}},
		{name: "session affinity with RoundRobin", field: "spec.backends[0].balancing.sessionAffinity", reason: "SessionAffinityIgnored",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				endpointBalancing(r, &v1.BalancingSpec{Mode: v1.BalancingRoundRobin,
					SessionAffinity: &v1.SessionAffinitySpec{Headers: []string{"x-session-id"}}})
			}},
		{name: "deprecated maxLoadPercent", field: "spec.backends[0].balancing.sessionAffinity.maxLoadPercent", reason: "MaxLoadPercentDeprecated",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				endpointBalancing(r, &v1.BalancingSpec{Mode: v1.BalancingLoadAware,
					SessionAffinity: &v1.SessionAffinitySpec{Headers: []string{"x-session-id"}, MaxLoadPercent: vtPtr(int32(150))}})
			}},
		{name: "rule timeout above responseHeaderTimeout", field: "spec.rules[0].timeout", reason: "TimeoutCapped",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				r.Spec.Rules = []v1.RouterRule{{Name: "slow", Timeout: "300s", Route: v1.RuleRoute{Backends: []string{"local-qwen"}}}}
			},
			check: func(t *testing.T, out *ir.Router, d diag.Diagnostic) {
				assert.Contains(t, d.Message, "300s")
				assert.Contains(t, d.Message, "120s")
				assert.Equal(t, out.Timeouts.ResponseHeader, out.Rules[0].Timeout)
			}},
		{name: "backend timeout above responseHeaderTimeout", field: "spec.backends[1].timeout", reason: "TimeoutCapped",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				r.Spec.Backends[1].Timeout = "5m"
				r.Spec.Proxy = &v1.ProxySpec{ResponseHeaderTimeout: "90s"}
			},
			check: func(t *testing.T, _ *ir.Router, d diag.Diagnostic) {
				assert.Contains(t, d.Message, "5m")
				assert.Contains(t, d.Message, "90s")
			}},
		{name: "required capabilities nobody has", field: "spec.rules[0].match.requiredCapabilities", reason: "RuleNeverMatches",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				r.Spec.Rules = []v1.RouterRule{{Name: "vision", Match: &v1.RuleMatch{RequiredCapabilities: []string{"vision"}},
					Route: v1.RuleRoute{Backends: []string{"local-qwen", "cloud-opus"}}}}
			}},
		{name: "latency SLO on a weighted rule", field: "spec.rules[0].match.latencySLOMs", reason: "LatencySLOIgnored",
			mutate: func(r *v1.ModelRouter, _ *Inputs) {
				r.Spec.Rules = []v1.RouterRule{{Name: "split", Match: &v1.RuleMatch{LatencySLOMs: vtPtr(int32(500))},
					Route: v1.RuleRoute{Strategy: v1.StrategyWeighted, Backends: []string{"local-qwen", "cloud-opus"}}}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, diags := vtCompile(t, "", tc.mutate)
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			require.NotNil(t, out)
			d, ok := vtFind(diags.Warnings(), tc.field, tc.reason)
			require.True(t, ok, "want warning %s %s, got %v", tc.field, tc.reason, vtKeys(diags))
			assert.NotEmpty(t, d.Message)
			if tc.check != nil {
				tc.check(t, out, d)
			}
		})
	}
}

// TestPooledRouterKeepsItsReplicas: swaps are serialized across replicas by
// a Lease per pool, so spec.proxy.replicas is honoured for pooled routers.
func TestPooledRouterKeepsItsReplicas(t *testing.T) {
	out, diags := vtCompile(t, "", func(r *v1.ModelRouter, in *Inputs) {
		vtPool(in, "qwen3", "llama3")
		r.Spec.Proxy = &v1.ProxySpec{Replicas: vtPtr(int32(3))}
	})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Empty(t, diags.Warnings())
	assert.Equal(t, int32(3), out.Proxy.Replicas)
	require.True(t, out.HasPooledBackend())
}

func TestPoolNameTooLongForItsLease(t *testing.T) {
	_, diags := vtCompile(t, "", func(r *v1.ModelRouter, in *Inputs) {
		vtPool(in, "qwen3", "llama3")
		in.Pools[0].Name = strings.Repeat("p", 250)
	})
	d, ok := vtFind(diags.Errors(), "spec.backends[0].inferenceServiceRef", "PoolNameTooLong")
	require.True(t, ok, "%v", vtKeys(diags))
	assert.Contains(t, d.Message, "llmkube-pool-")
}

// TestValidateTierDerivationClosesPIIHole: upstream defaulted every backend
// to tier local, so a fail-closed pii rule could reach a cloud provider when
// tier was omitted. Here an external backend is cloud unless it attests
// tier: local.
func TestValidateTierDerivationClosesPIIHole(t *testing.T) {
	piiRule := func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Rules = []v1.RouterRule{{Name: "pii", FailClosed: true,
			Match: &v1.RuleMatch{DataClassification: []string{"pii"}},
			Route: v1.RuleRoute{Backends: []string{"cloud-opus"}}}}
	}
	t.Run("external without tier is refused", func(t *testing.T) {
		in := vtInputs(t, vtBase)
		original := in.Routers[0].Router
		piiRule(original, in)
		out, diags := Compile(original, in, Options{})
		assert.Nil(t, out)
		assert.Equal(t, []string{"spec.rules[0].route.backends[0] CloudBackendInSensitiveRule"}, vtKeys(diags.Errors()))
		assert.Empty(t, original.Spec.Backends[1].Tier, "the input object must not be modified")
	})
	t.Run("external attested local is accepted", func(t *testing.T) {
		out, diags := vtCompile(t, "", func(r *v1.ModelRouter, in *Inputs) {
			piiRule(r, in)
			r.Spec.Backends[1].Tier = v1.TierLocal
		})
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		assert.Equal(t, ir.Tier("local"), out.Backends[1].Tier)
		assert.True(t, out.Rules[0].Sensitive)
	})
	t.Run("sensitive values compare case-insensitively", func(t *testing.T) {
		_, diags := vtCompile(t, "", func(r *v1.ModelRouter, in *Inputs) {
			piiRule(r, in)
			r.Spec.Rules[0].Match.DataClassification = []string{"PHI"}
			r.Spec.Rules[0].FailClosed = false
		})
		assert.Equal(t, []string{
			"spec.rules[0].failClosed FailClosedRequired",
			"spec.rules[0].route.backends[0] CloudBackendInSensitiveRule",
		}, vtKeys(diags.Errors()))
	})
}

// TestValidateFieldTableEnforcement checks enums, bounds, patterns, lengths
// and item counts at and just past their limits. want "" means valid.
func TestValidateFieldTableEnforcement(t *testing.T) {
	local := func(r *v1.ModelRouter) *v1.RouterBackend { return &r.Spec.Backends[0] }
	loadAware := func(r *v1.ModelRouter, pa *v1.PrefixAffinitySpec) {
		local(r).Resolution = v1.ResolutionEndpoint
		local(r).Balancing = &v1.BalancingSpec{Mode: v1.BalancingLoadAware, PrefixAffinity: pa}
	}
	hostnames := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "h" + strconv.Itoa(i) + ".example.com"
		}
		return out
	}
	for _, tc := range []struct {
		name, want string
		mutate     func(*v1.ModelRouter)
	}{
		{"enum tier", "spec.backends[0].tier NotSupported", func(r *v1.ModelRouter) { local(r).Tier = "edge" }},
		{"enum strategy", "spec.rules[0].route.strategy NotSupported", func(r *v1.ModelRouter) {
			r.Spec.Rules = []v1.RouterRule{{Name: "x", Route: v1.RuleRoute{Strategy: "random", Backends: []string{"local-qwen"}}}}
		}},
		{"enum is case-sensitive", "spec.dataPlane NotSupported", func(r *v1.ModelRouter) { r.Spec.DataPlane = "proxy" }},
		{"replicas at maximum", "", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{Replicas: vtPtr(int32(10))} }},
		{"replicas below minimum", "spec.proxy.replicas OutOfRange", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{Replicas: vtPtr(int32(0))} }},
		{"weight zero", "", func(r *v1.ModelRouter) { local(r).Weight = vtPtr(int32(0)) }},
		{"weight negative", "spec.backends[0].weight OutOfRange", func(r *v1.ModelRouter) { local(r).Weight = vtPtr(int32(-1)) }},
		{"nodePort at minimum", "", func(r *v1.ModelRouter) {
			r.Spec.Endpoint = &v1.EndpointSpec{Type: v1.EndpointTypeNodePort, NodePort: vtPtr(int32(30000))}
		}},
		{"nodePort below minimum", "spec.endpoint.nodePort OutOfRange", func(r *v1.ModelRouter) {
			r.Spec.Endpoint = &v1.EndpointSpec{Type: v1.EndpointTypeNodePort, NodePort: vtPtr(int32(29999))}
		}},
		{"blockBytes at bounds", "", func(r *v1.ModelRouter) {
			loadAware(r, &v1.PrefixAffinitySpec{BlockBytes: vtPtr(int32(256)), MaxBlocksPerEndpoint: vtPtr(int32(262144))})
		}},
		{"blockBytes above maximum", "spec.backends[0].balancing.prefixAffinity.blockBytes OutOfRange", func(r *v1.ModelRouter) {
			loadAware(r, &v1.PrefixAffinitySpec{BlockBytes: vtPtr(int32(16385))})
		}},
		{"maxBlocksPerEndpoint below minimum", "spec.backends[0].balancing.prefixAffinity.maxBlocksPerEndpoint OutOfRange", func(r *v1.ModelRouter) {
			loadAware(r, &v1.PrefixAffinitySpec{MaxBlocksPerEndpoint: vtPtr(int32(1023))})
		}},
		{"backend name of 63 characters", "", func(r *v1.ModelRouter) {
			local(r).Name = strings.Repeat("a", 63)
			r.Spec.DefaultRoute = local(r).Name
		}},
		{"backend name of 64 characters", "spec.backends[0].name InvalidFormat", func(r *v1.ModelRouter) {
			local(r).Name = strings.Repeat("a", 64)
			r.Spec.DefaultRoute = local(r).Name
		}},
		{"callerHeader of 64 characters", "", func(r *v1.ModelRouter) {
			r.Spec.Policy = &v1.RouterPolicy{AuditLog: &v1.AuditLogSpec{CallerHeader: strings.Repeat("x", 64)}}
		}},
		{"callerHeader of 65 characters", "spec.policy.auditLog.callerHeader TooLong", func(r *v1.ModelRouter) {
			r.Spec.Policy = &v1.RouterPolicy{AuditLog: &v1.AuditLogSpec{CallerHeader: strings.Repeat("x", 65)}}
		}},
		{"maxUSD decimal", "", func(r *v1.ModelRouter) {
			r.Spec.Policy = &v1.RouterPolicy{Budgets: []v1.BudgetSpec{{Name: "b", Scope: v1.ScopeRouter, MaxUSD: "12.50"}}}
		}},
		{"maxUSD trailing dot", "spec.policy.budgets[0].maxUSD InvalidFormat", func(r *v1.ModelRouter) {
			r.Spec.Policy = &v1.RouterPolicy{Budgets: []v1.BudgetSpec{{Name: "b", Scope: v1.ScopeRouter, MaxUSD: "12."}}}
		}},
		{"promptUSD negative", "spec.backends[0].costPerMillionTokens.promptUSD InvalidFormat", func(r *v1.ModelRouter) {
			local(r).CostPerMillionTokens = &v1.CostSpec{PromptUSD: "-1"}
		}},
		{"serviceName DNS-1035", "", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{ServiceName: "llmkube"} }},
		{"serviceName uppercase", "spec.proxy.serviceName InvalidFormat", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{ServiceName: "LLMKube"} }},
		{"sectionName subdomain", "spec.agentGatewayRef.sectionName InvalidFormat", func(r *v1.ModelRouter) {
			r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw", SectionName: "-http"}
		}},
		{"hostnames at maximum", "", func(r *v1.ModelRouter) {
			r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw", Hostnames: hostnames(16)}
		}},
		{"hostnames above maximum", "spec.agentGatewayRef.hostnames TooMany", func(r *v1.ModelRouter) {
			r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw", Hostnames: hostnames(17)}
		}},
		{"hostnames written empty", "spec.agentGatewayRef.hostnames TooFew", func(r *v1.ModelRouter) {
			r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw", Hostnames: []string{}}
		}},
		{"modalities at maximum", "", func(r *v1.ModelRouter) {
			local(r).ModelInfo = &v1.ModelInfoSpec{InputModalities: []string{"a", "b", "c", "d", "e"}}
		}},
		{"modalities above maximum", "spec.backends[0].modelInfo.outputModalities TooMany", func(r *v1.ModelRouter) {
			local(r).ModelInfo = &v1.ModelInfoSpec{OutputModalities: []string{"a", "b", "c", "d", "e", "f"}}
		}},
		{"jwt field empty", "spec.policy.auth.jwt.provider Required", func(r *v1.ModelRouter) {
			r.Spec.DataPlane = v1.DataPlaneGateway
			r.Spec.GatewayRef = &v1.RouterGatewayRef{Name: "gw"}
			r.Spec.Policy = &v1.RouterPolicy{Auth: &v1.AuthSpec{JWT: &v1.JWTSpec{Issuer: "https://idp", JWKSURI: "https://idp/certs", TeamClaim: "team"}}}
		}},
		{"idleTimeout at minimum", "", func(r *v1.ModelRouter) {
			loadAware(r, nil)
			local(r).Balancing.SessionAffinity = &v1.SessionAffinitySpec{Headers: []string{"x-session"}, IdleTimeout: "1m"}
		}},
		{"idleTimeout above maximum", "spec.backends[0].balancing.sessionAffinity.idleTimeout OutOfRange", func(r *v1.ModelRouter) {
			loadAware(r, nil)
			local(r).Balancing.SessionAffinity = &v1.SessionAffinitySpec{Headers: []string{"x-session"}, IdleTimeout: "24h1s"}
		}},
		{"streamIdleTimeout 0s disables", "", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{StreamIdleTimeout: "0s"} }},
		{"drainTimeout below minimum", "spec.proxy.drainTimeout OutOfRange", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{DrainTimeout: "500ms"} }},
		{"drainTimeout at maximum", "", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{DrainTimeout: "1h"} }},
		{"rateLimitHold 0s", "spec.proxy.rateLimitHold OutOfRange", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{RateLimitHold: "0s"} }},
		{"rateLimitHold above maximum", "spec.proxy.rateLimitHold OutOfRange", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{RateLimitHold: "61m"} }},
		{"quotaExhaustedHold at maximum", "", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{QuotaExhaustedHold: "24h"} }},
		{"quotaExhaustedHold above maximum", "spec.proxy.quotaExhaustedHold OutOfRange", func(r *v1.ModelRouter) { r.Spec.Proxy = &v1.ProxySpec{QuotaExhaustedHold: "25h"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) { tc.mutate(r) })
			want := []string{}
			if tc.want != "" {
				want = []string{tc.want}
			}
			assert.Equal(t, want, vtKeys(diags.Errors()))
		})
	}
}

// TestValidateAgentGatewayPickers covers the accepted picker layouts and the
// decision to accept external backends under InferencePool routing.
func TestValidateAgentGatewayPickers(t *testing.T) {
	agw := func(r *v1.ModelRouter) *v1.AgentGatewayRef {
		r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw"}
		return r.Spec.AgentGatewayRef
	}
	pick := func(name string) *v1.EndpointPickerSpec {
		return &v1.EndpointPickerSpec{Service: &v1.EndpointPickerService{Name: name, Port: 9002}}
	}
	secondLocal := func(r *v1.ModelRouter, isvc string) {
		r.Spec.Backends = append(r.Spec.Backends, v1.RouterBackend{Name: "local-2", InferenceServiceRef: &corev1.LocalObjectReference{Name: isvc}})
	}
	for _, tc := range []struct {
		name   string
		want   []string
		mutate func(*v1.ModelRouter)
	}{
		{"router default with an external backend", nil, func(r *v1.ModelRouter) {
			g := agw(r)
			g.EndpointPicker, g.EndpointPickerPort = "epp", vtPtr(int32(9002))
		}},
		{"sibling on the same InferenceService lends its picker", nil, func(r *v1.ModelRouter) {
			agw(r)
			r.Spec.Backends[0].EndpointPicker = pick("qwen-epp")
			secondLocal(r, "qwen3")
		}},
		{"one picker per InferenceService", nil, func(r *v1.ModelRouter) {
			agw(r)
			r.Spec.Backends[0].EndpointPicker = pick("qwen-epp")
			secondLocal(r, "llama3")
			r.Spec.Backends[2].EndpointPicker = pick("llama-epp")
		}},
		{"own picker plus default on another InferenceService", []string{"spec.agentGatewayRef.endpointPicker PickerSharedAcrossInferenceServices"}, func(r *v1.ModelRouter) {
			g := agw(r)
			g.EndpointPicker, g.EndpointPickerPort = "qwen-epp", vtPtr(int32(9002))
			r.Spec.Backends[0].EndpointPicker = pick("qwen-epp")
			secondLocal(r, "llama3")
		}},
		{"no picker anywhere", []string{"spec.backends[0].endpointPicker EndpointPickerRequired"}, func(r *v1.ModelRouter) {
			agw(r)
		}},
		{"model routing with hostnames", nil, func(r *v1.ModelRouter) {
			g := agw(r)
			g.Routing, g.Hostnames = v1.RoutingModel, []string{"models.example.com"}
			r.Spec.Backends = r.Spec.Backends[:1]
			r.Spec.DefaultRoute = ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := vtCompile(t, ir.DataPlaneAgentGateway, func(r *v1.ModelRouter, _ *Inputs) { tc.mutate(r) })
			want := tc.want
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, vtKeys(diags.Errors()))
		})
	}
}

// schemaPaths lists every field path the walker can reach, as table keys.
func bound(n int64) *int64 { return &n }

// fieldRow is a field-table entry in a form comparable with a TSV row.
type fieldRow struct {
	Required                                 bool
	Enum                                     []string
	Pattern                                  string
	MinLength, MaxLength, MinItems, MaxItems int
	Minimum, Maximum                         *int64
}

func rowOf(r fieldRule) fieldRow {
	row := fieldRow{Required: r.required, Enum: r.enum, MinLength: r.minLength, MaxLength: r.maxLength,
		MinItems: r.minItems, MaxItems: r.maxItems, Minimum: r.minimum, Maximum: r.maximum}
	if r.pattern != nil {
		row.Pattern = r.pattern.String()
	}
	return row
}

// parseRow reads the required and constraints columns of the TSV.
func parseRow(t *testing.T, path, required, constraints string) fieldRow {
	row := fieldRow{Required: required == "required"}
	if constraints == "" {
		return row
	}
	lengths := map[string]*int{"minLength": &row.MinLength, "maxLength": &row.MaxLength, "minItems": &row.MinItems, "maxItems": &row.MaxItems}
	bounds := map[string]**int64{"minimum": &row.Minimum, "maximum": &row.Maximum}
	for _, c := range strings.Split(constraints, ";") {
		key, val, _ := strings.Cut(c, "=")
		n, _ := strconv.ParseInt(val, 10, 64)
		switch {
		case key == "format":
		case key == "enum":
			row.Enum = strings.Split(val, ", ")
		case key == "pattern":
			row.Pattern = val
		case lengths[key] != nil:
			*lengths[key] = int(n)
		case bounds[key] != nil:
			*bounds[key] = bound(n)
		default:
			t.Errorf("%s: constraint %q is not handled by the field table", path, c)
		}
	}
	return row
}

// TestFieldTableMatchesReference compares the field table with
// modelrouter-fields.tsv row by row, so no constraint of the reference is
// missed and none is invented, and checks that the walker reaches every key.
func TestFieldTableMatchesReference(t *testing.T) {
	reachable := map[string]bool{}
	schemaPaths(reflect.TypeFor[v1.ModelRouterSpec](), "spec", reachable)
	for path := range fieldTable {
		assert.True(t, reachable[path], "field table key %s is not a field the walker reaches", path)
	}

	tsv := filepath.Join("..", "..", "shared", "spec", "modelrouter-fields.tsv")
	f, err := os.Open(tsv)
	require.NoError(t, err, "the field table is part of the spec; CI lays ../shared beside the repository")
	defer f.Close()

	// Rows inside core Kubernetes types are the API server's to judge; the
	// only one with constraints belongs to apiKeySecretRef, which the
	// compiler refuses on a ModelRouter altogether.
	exempt := func(path, typ string) bool {
		return path == "spec" || strings.Contains(typ, "corev1.") || strings.HasPrefix(path, "spec.endpoint.apiKeySecretRef.")
	}
	want := map[string]fieldRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 || !strings.HasPrefix(cols[0], "spec") || exempt(cols[0], cols[1]) {
			continue
		}
		if row := parseRow(t, cols[0], cols[2], cols[3]); !reflect.DeepEqual(row, fieldRow{}) {
			want[cols[0]] = row
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, want)
	// The API's extensions of the reference (api/v1alpha1 extensionRows),
	// with their constraints.
	want["spec.gatewayRef.hostnames"] = fieldRow{MinItems: 1, MaxItems: 16}
	want["spec.policy.auth.jwt.audiences"] = fieldRow{MaxItems: 64}
	want["spec.policy.auth.apiKeys"] = fieldRow{MaxItems: 64}
	want["spec.policy.auth.apiKeys[].secretName"] = fieldRow{Required: true, MinLength: 1, MaxLength: 253, Pattern: `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`}
	want["spec.policy.auth.apiKeys[].team"] = fieldRow{Required: true, MinLength: 1}
	one := int64(1)
	want["spec.proxy.podDisruptionBudget.maxUnavailable"] = fieldRow{Minimum: &one}
	want["spec.policy.rateLimits"] = fieldRow{MaxItems: 64}
	want["spec.policy.rateLimits[].name"] = fieldRow{Required: true, Pattern: `^[a-z0-9][a-z0-9-]{0,62}$`}
	want["spec.policy.rateLimits[].scope"] = fieldRow{Required: true, Enum: []string{"team", "key"}}
	want["spec.policy.rateLimits[].teams"] = fieldRow{MaxItems: 256}
	want["spec.policy.rateLimits[].keys"] = fieldRow{MaxItems: 256}
	for _, f := range []string{"requestsPerMinute", "inputTokensPerMinute", "outputTokensPerMinute"} {
		want["spec.policy.rateLimits[]."+f] = fieldRow{Minimum: &one}
	}
	for path, row := range want {
		rule, ok := fieldTable[path]
		if assert.True(t, ok, "%s: the reference's constraints are missing from the field table", path) {
			assert.Equal(t, row, rowOf(rule), path)
		}
	}
	for path := range fieldTable {
		_, ok := want[path]
		assert.True(t, ok, "%s is in the field table but the reference states no constraint for it", path)
	}
}

func TestCredentialHeadersCaseInsensitive(t *testing.T) {
	for _, h := range []string{"authorization", "PROXY-AUTHORIZATION", "cookie", "X-API-KEY", "api-key", "x-goog-api-key"} {
		_, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
			r.Spec.Policy = &v1.RouterPolicy{AuditLog: &v1.AuditLogSpec{CallerHeader: h}}
		})
		assert.Equal(t, []string{"spec.policy.auditLog.callerHeader CredentialHeader"}, vtKeys(diags.Errors()), h)
	}
	_, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Policy = &v1.RouterPolicy{AuditLog: &v1.AuditLogSpec{CallerHeader: "X-LLMKube-Client"}}
	})
	assert.False(t, diags.HasErrors())
}

// TestPodDisruptionBudgetBound: maxUnavailable beside enabled: false is
// named as ignored (nothing renders it), and the IR carries 0 (no budget);
// replicas above 1 default to a budget of 1.
func TestPodDisruptionBudgetBound(t *testing.T) {
	off, two := false, int32(2)
	r, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Proxy = &v1.ProxySpec{Replicas: &two, PodDisruptionBudget: &v1.ProxyDisruptionBudget{Enabled: &off, MaxUnavailable: &two}}
	})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Equal(t, []string{"spec.proxy.podDisruptionBudget.maxUnavailable FieldIgnored"}, vtKeys(diags.Warnings()))
	assert.Zero(t, r.Proxy.MaxUnavailable)

	r, diags = vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) { r.Spec.Proxy = &v1.ProxySpec{Replicas: &two} })
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Empty(t, diags.Warnings())
	assert.Equal(t, DefaultMaxUnavailable, r.Proxy.MaxUnavailable)
}

// TestShortDuration: a duration as the compiler's messages and the
// controller's (a conflict's recheck interval) write it.
func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		2 * time.Minute: "2m", time.Hour: "1h", 90 * time.Second: "1m30s", 10 * time.Second: "10s", 3 * time.Second: "3s",
		time.Hour + 30*time.Second: "1h0m30s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
