package compiler

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/platform"
)

// parseDuration reads an API duration. Validation has already reported any
// that do not parse, so lowering can treat an error as zero.
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

func mustDuration(s string) time.Duration {
	d, _ := parseDuration(s)
	return d
}

// lower builds the IR from a defaulted, validated router.
func lower(r *v1.ModelRouter, res *resolution) (*ir.Router, diag.List) {
	s := &r.Spec
	p := s.Proxy
	out := &ir.Router{
		Name:       r.Name,
		Namespace:  r.Namespace,
		UID:        string(r.UID),
		Generation: r.Generation,
		DataPlane:  ir.DataPlane(s.DataPlane),
		Default:    ir.DefaultRoute{Strategy: ir.DefaultStrategy(s.DefaultRouteStrategy), Backend: s.DefaultRoute},
		Timeouts: ir.Timeouts{
			ResponseHeader:     mustDuration(p.ResponseHeaderTimeout),
			StreamIdle:         mustDuration(p.StreamIdleTimeout),
			Quarantine:         mustDuration(p.QuarantineDuration),
			RateLimitHold:      mustDuration(p.RateLimitHold),
			QuotaExhaustedHold: mustDuration(p.QuotaExhaustedHold),
			Drain:              mustDuration(p.DrainTimeout),
		},
	}
	for i := range s.Backends {
		b := lowerBackend(r, &s.Backends[i], res, out.Timeouts.ResponseHeader)
		b.Index = i
		out.Backends = append(out.Backends, b)
	}
	for i := range s.Rules {
		out.Rules = append(out.Rules, lowerRule(r, i, out))
	}
	out.Policy = lowerPolicy(s.Policy)
	if m := s.MCPServer; m != nil && m.Enabled {
		out.MCP = &ir.MCP{ResourceURL: m.ResourceURL}
	}
	out.Proxy = lowerProxy(r, out)
	e := s.Endpoint
	out.Exposure = ir.Exposure{
		Type:                  corev1.ServiceType(e.Type),
		Port:                  *e.Port,
		ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicy(e.ExternalTrafficPolicy),
		Path:                  e.Path,
	}
	if e.NodePort != nil {
		out.Exposure.NodePort = *e.NodePort
	}
	if g := s.GatewayRef; g != nil {
		out.Gateway = &ir.GatewayRef{Name: g.Name, Namespace: g.Namespace, Hostnames: g.Hostnames}
	}
	if g := s.AgentGatewayRef; g != nil {
		ag := &ir.AgentGateway{
			Name:        g.Name,
			Namespace:   g.Namespace,
			Routing:     ir.AgentGatewayRouting(g.Routing),
			Hostnames:   g.Hostnames,
			SectionName: g.SectionName,
		}
		if g.EndpointPicker != "" && g.EndpointPickerPort != nil {
			ag.EndpointPicker = &ir.ServiceRef{Name: g.EndpointPicker, Port: *g.EndpointPickerPort}
		}
		out.AgentGateway = ag
		resolvePickers(res.pickers, out)
	}
	return out, nil
}

// capTimeout applies the proxy default as a ceiling (validation warned).
func capTimeout(d, ceiling time.Duration) time.Duration {
	if d > ceiling {
		return ceiling
	}
	return d
}

func lowerBackend(r *v1.ModelRouter, b *v1.RouterBackend, res *resolution, ceiling time.Duration) ir.Backend {
	out := ir.Backend{
		Name:         b.Name,
		ModelID:      b.DisplayName,
		Tier:         ir.Tier(b.Tier),
		Capabilities: b.Capabilities,
		Weight:       *b.Weight,
		Timeout:      capTimeout(mustDuration(b.Timeout), ceiling),
		HealthCheck: ir.HealthCheck{
			Path:     b.HealthCheck.Path,
			Interval: time.Duration(*b.HealthCheck.IntervalSeconds) * time.Second,
			Timeout:  time.Duration(*b.HealthCheck.TimeoutSeconds) * time.Second,
			Set:      healthCheckSet(b),
		},
		ModelInfo: ir.ModelInfo{
			Set:              modelInfoSet(b),
			InputModalities:  b.ModelInfo.InputModalities,
			OutputModalities: b.ModelInfo.OutputModalities,
		},
	}
	if out.ModelID == "" {
		out.ModelID = b.Name
	}
	if c := b.CostPerMillionTokens; c != nil && (c.PromptUSD != "" || c.CompletionUSD != "") {
		out.Cost = &ir.Cost{PromptUSD: c.PromptUSD, CompletionUSD: c.CompletionUSD}
	}
	switch {
	case b.External != nil:
		out.External = lowerExternal(b)
		out.Upstream = upstream(out.External.URL)
		out.UpstreamModel = ir.UpstreamModel{Name: out.External.Model, Source: ir.UpstreamModelExternal}
	case b.InferenceServiceRef != nil:
		local, ctxLen := res.local(b)
		out.ModelInfo.ContextLength = ctxLen // spec.modelInfo.contextLength wins, below
		out.Local = local
		out.UpstreamModel = res.upstreamModel(b)
		out.Upstream = upstream(fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", local.ServiceName, r.Namespace, local.Port))
		out.Resolution = ir.Resolution(b.Resolution)
		out.Pool = res.membership(b.Name)
		if bal := b.Balancing; bal != nil && out.Resolution == ir.ResolutionEndpoint {
			lb := &ir.Balancing{Mode: ir.BalancingMode(bal.Mode)}
			// Affinity without LoadAware is ignored (validation warned).
			if lb.Mode == ir.BalancingLoadAware {
				if pa := bal.PrefixAffinity; pa != nil {
					lb.PrefixAffinity = &ir.PrefixAffinity{BlockBytes: *pa.BlockBytes, MaxBlocksPerEndpoint: *pa.MaxBlocksPerEndpoint}
				}
				if sa := bal.SessionAffinity; sa != nil {
					headers := make([]string, len(sa.Headers))
					for i, h := range sa.Headers {
						headers[i] = strings.ToLower(h)
					}
					lb.SessionAffinity = &ir.SessionAffinity{Headers: headers, IdleTimeout: mustDuration(sa.IdleTimeout)}
				}
			}
			out.Balancing = lb
		}
	}
	if b.ModelInfo.ContextLength != nil {
		out.ModelInfo.ContextLength = *b.ModelInfo.ContextLength
	}
	return out
}

// healthCheckSet reports whether the spec set a health check other than the
// defaults (lowering sees the defaulted copy, so a healthCheck that spells
// out exactly the defaults counts as unset).
func healthCheckSet(b *v1.RouterBackend) bool {
	hc := b.HealthCheck
	path := DefaultLocalHealth
	if b.External != nil {
		path = wellknown.Providers[string(b.External.Provider)].HealthPath
	}
	return hc.Path != path || *hc.IntervalSeconds != DefaultHealthInterval || *hc.TimeoutSeconds != DefaultHealthTimeout
}

// modelInfoSet reports whether the spec set modelInfo to anything but its
// defaults (lowering sees the defaulted copy, so a modelInfo that spells out
// exactly the defaults counts as unset: it asks for nothing the defaults do not).
func modelInfoSet(b *v1.RouterBackend) bool {
	mi := b.ModelInfo
	if mi == nil {
		return false
	}
	input := []string{"text"}
	if slices.Contains(b.Capabilities, "vision") {
		input = []string{"text", "image"}
	}
	return mi.ContextLength != nil || !slices.Equal(mi.InputModalities, input) ||
		!slices.Equal(mi.OutputModalities, DefaultOutputModalities())
}

// CredentialEnv is the environment variable a backend's Secret key is exposed
// as: scoped to the backend so two backends may use different Secrets that
// share a conventional key.
func CredentialEnv(backend, key string) string {
	return "LLMKUBE_" + strings.ToUpper(strings.ReplaceAll(backend, "-", "_")) + "_" + key
}

func lowerExternal(b *v1.RouterBackend) *ir.ExternalBackend {
	x := b.External
	out := &ir.ExternalBackend{Provider: ir.Provider(x.Provider), Model: x.Model, URL: x.URL}
	if out.URL == "" {
		out.URL = wellknown.Providers[string(x.Provider)].URL
	}
	if ref := x.CredentialsSecretRef; ref != nil && ref.Name != "" {
		out.CredentialsSecret = ref.Name
		for _, c := range wellknown.Providers[string(x.Provider)].Credentials {
			out.Credentials = append(out.Credentials, ir.Credential{Purpose: c.Purpose, Key: c.Key, Optional: c.Optional, Env: CredentialEnv(b.Name, c.Key)})
		}
	}
	return out
}

func upstream(raw string) ir.Upstream {
	if raw == "" {
		return ir.Upstream{}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ir.Upstream{URL: raw}
	}
	out := ir.Upstream{URL: strings.TrimRight(raw, "/"), Scheme: u.Scheme, Host: u.Hostname(), Path: strings.TrimRight(u.Path, "/")}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		out.Port = int32(n)
	} else if u.Scheme == "https" {
		out.Port = 443
	} else {
		out.Port = 80
	}
	return out
}

func lowerRule(r *v1.ModelRouter, i int, out *ir.Router) ir.Rule {
	spec := &r.Spec.Rules[i]
	rule := ir.Rule{
		Name:           spec.Name,
		Index:          i,
		Backends:       spec.Route.Backends,
		Strategy:       ir.Strategy(spec.Route.Strategy),
		PoolActivation: ir.PoolActivation(spec.Route.PoolActivation),
		FailClosed:     spec.FailClosed,
		Timeout:        capTimeout(mustDuration(spec.Timeout), out.Timeouts.ResponseHeader),
	}
	if m := spec.Match; m != nil {
		rule.Match = ir.Match{
			Models:               m.Models,
			DataClassification:   lowerAll(m.DataClassification),
			TaskComplexity:       string(m.TaskComplexity),
			RequiredCapabilities: m.RequiredCapabilities,
		}
		if m.LatencySLOMs != nil {
			rule.Match.LatencySLO = time.Duration(*m.LatencySLOMs) * time.Millisecond
		}
		names := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			rule.Match.Headers = append(rule.Match.Headers, ir.HeaderMatch{Name: strings.ToLower(k), Value: m.Headers[k]})
		}
	}
	rule.Sensitive = sensitive(rule.Match.DataClassification, r.Spec.Policy.Classification.SensitiveClassifications)
	for _, name := range rule.Backends {
		if b, ok := out.Backend(name); ok && b.HasCapabilities(rule.Match.RequiredCapabilities) {
			rule.Candidates = append(rule.Candidates, name)
		}
	}
	return rule
}

func lowerAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}

func lowerPolicy(p *v1.RouterPolicy) ir.Policy {
	out := ir.Policy{
		Classification: ir.Classification{
			Mode:      ir.ClassificationMode(p.Classification.Mode),
			HeaderKey: strings.ToLower(p.Classification.HeaderKey),
			Sensitive: lowerAll(p.Classification.SensitiveClassifications),
		},
		Audit: ir.Audit{
			Sink:               ir.AuditSink(p.AuditLog.Sink),
			FilePath:           p.AuditLog.FilePath,
			IncludeRequestBody: p.AuditLog.IncludeRequestBody,
			CallerHeader:       strings.ToLower(p.AuditLog.CallerHeader),
			LogClientAddress:   p.AuditLog.LogClientAddress,
		},
	}
	for _, c := range p.AuditLog.TrustedProxyCIDRs {
		out.Audit.TrustedProxies = append(out.Audit.TrustedProxies, normalizeCIDR(c))
	}
	for _, b := range p.Budgets {
		ib := ir.Budget{
			Name:      b.Name,
			Scope:     ir.BudgetScope(b.Scope),
			RuleName:  b.RuleName,
			MaxUSD:    b.MaxUSD,
			Window:    time.Duration(*b.WindowSeconds) * time.Second,
			HeaderKey: strings.ToLower(b.HeaderKey),
		}
		if b.Scope != v1.ScopeTeam {
			ib.HeaderKey = ""
		}
		if b.MaxTokens != nil {
			ib.MaxTokens = *b.MaxTokens
		}
		out.Budgets = append(out.Budgets, ib)
	}
	out.RateLimits = lowerRateLimits(p.RateLimits)
	if a := p.Auth; a != nil && (a.JWT != nil || len(a.Allowlists) > 0 || len(a.APIKeys) > 0) {
		auth := &ir.Auth{}
		if j := a.JWT; j != nil {
			auth.JWT = &ir.JWT{Provider: j.Provider, Issuer: j.Issuer, JWKSURI: j.JWKSURI, TeamClaim: j.TeamClaim, HeaderKey: strings.ToLower(j.HeaderKey), Audiences: slices.Clone(j.Audiences)}
		}
		for _, e := range a.Allowlists {
			auth.Allowlists = append(auth.Allowlists, ir.Allowlist{Team: e.Team, Models: e.Models})
		}
		auth.APIKeys = lowerAPIKeys(a.APIKeys)
		out.Auth = auth
	}
	return out
}

// normalizeCIDR turns a single address into a host prefix and canonicalises a
// prefix (validation has checked that it parses).
func normalizeCIDR(s string) string {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		if pfx.Addr().Is4In6() && pfx.Bits() >= 96 {
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
		}
		return pfx.Masked().String()
	}
	if a, err := netip.ParseAddr(s); err == nil {
		// An IPv4-mapped address is an IPv4 peer: match it as one.
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()).String()
	}
	return s
}

func lowerProxy(r *v1.ModelRouter, out *ir.Router) ir.ProxyDeployment {
	p := r.Spec.Proxy
	d := ir.ProxyDeployment{
		Image:                     p.Image,
		Replicas:                  *p.Replicas,
		RevisionHistoryLimit:      *p.RevisionHistoryLimit,
		MaxUnavailable:            maxUnavailable(p),
		ServiceName:               p.ServiceName,
		Resources:                 *p.Resources,
		Affinity:                  p.Affinity,
		Tolerations:               p.Tolerations,
		TopologySpreadConstraints: p.TopologySpreadConstraints,
		NodeSelector:              p.NodeSelector,
		RuntimeClassName:          p.RuntimeClassName,
		ImagePullSecrets:          p.ImagePullSecrets,
		PodLabels:                 p.PodLabels,
		PodAnnotations:            p.PodAnnotations,
	}
	if d.ServiceName == "" {
		d.ServiceName = naming.ProxyName(r.Name)
	}
	return d
}

// lowerOTLP carries the operator's collector into the IR; nil without an
// endpoint, which the targets that export audit records refuse for sink otlp
// (and for which the router-proxy exports no traces or metrics).
func lowerOTLP(o platform.OTLP) *ir.OTLPExport {
	if o.Endpoint == "" {
		return nil
	}
	out := &ir.OTLPExport{Endpoint: o.Endpoint, Headers: o.HeaderValue()}
	if name, key, ok := o.SecretRef(); ok {
		out.HeadersSecret, out.HeadersSecretKey = name, key
	}
	return out
}

// maxUnavailable is the router-proxy PodDisruptionBudget's bound, or 0 for
// none: rendered by default only when there is more than one replica (with
// one, a budget either blocks every drain or allows everything).
func maxUnavailable(p *v1.ProxySpec) int32 {
	enabled, n := *p.Replicas > 1, DefaultMaxUnavailable
	if b := p.PodDisruptionBudget; b != nil {
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		if b.MaxUnavailable != nil {
			n = *b.MaxUnavailable
		}
	}
	if !enabled {
		return 0
	}
	return n
}

// lowerRateLimits lowers policy.rateLimits; an unset cap is 0.
func lowerRateLimits(in []v1.RateLimitSpec) []ir.RateLimit {
	var out []ir.RateLimit
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	for _, l := range in {
		out = append(out, ir.RateLimit{Name: l.Name, Scope: ir.RateLimitScope(l.Scope), Teams: slices.Clone(l.Teams), Keys: slices.Clone(l.Keys),
			RequestsPerMinute: val(l.RequestsPerMinute), InputTokensPerMinute: val(l.InputTokensPerMinute), OutputTokensPerMinute: val(l.OutputTokensPerMinute)})
	}
	return out
}
