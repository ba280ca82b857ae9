package proxy

import (
	"time"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// RuntimeConfig translates the IR into the router-proxy's config contract.
func RuntimeConfig(r *ir.Router) *proxyapi.Config {
	c := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: r.Name, Namespace: r.Namespace},
		Timeouts: proxyapi.Timeouts{
			ResponseHeader:     dur(r.Timeouts.ResponseHeader),
			StreamIdle:         dur(r.Timeouts.StreamIdle),
			Quarantine:         dur(r.Timeouts.Quarantine),
			RateLimitHold:      dur(r.Timeouts.RateLimitHold),
			QuotaExhaustedHold: dur(r.Timeouts.QuotaExhaustedHold),
		},
		Default: proxyapi.DefaultRoute{Strategy: proxyapi.DefaultStrategy(r.Default.Strategy), Backend: r.Default.Backend},
		Policy:  policy(&r.Policy),
	}
	for i := range r.Backends {
		c.Backends = append(c.Backends, backend(r, &r.Backends[i]))
	}
	for i := range r.Rules {
		c.Rules = append(c.Rules, rule(&r.Rules[i]))
	}
	if r.MCP != nil {
		c.MCP = &proxyapi.MCP{ResourceURL: r.MCP.ResourceURL}
	}
	return c
}

func dur(d time.Duration) proxyapi.Duration { return proxyapi.Duration{Duration: d} }

func backend(r *ir.Router, b *ir.Backend) proxyapi.Backend {
	out := proxyapi.Backend{
		Name:         b.Name,
		ModelID:      b.ModelID,
		Tier:         string(b.Tier),
		URL:          b.Upstream.URL,
		Capabilities: b.Capabilities,
		Weight:       b.Weight,
		Timeout:      dur(b.Timeout),
		HealthCheck: proxyapi.HealthCheck{
			Path:     b.HealthCheck.Path,
			Interval: dur(b.HealthCheck.Interval),
			Timeout:  dur(b.HealthCheck.Timeout),
		},
		ModelInfo: proxyapi.ModelInfo{
			ContextLength:    b.ModelInfo.ContextLength,
			InputModalities:  b.ModelInfo.InputModalities,
			OutputModalities: b.ModelInfo.OutputModalities,
		},
	}
	// The names allowlists match the serving backend on, written only
	// where an allowlist reads them.
	if a := r.Policy.Auth; a != nil && len(a.Allowlists) > 0 {
		out.ModelNames = b.ModelNames()
	}
	if b.Cost != nil {
		out.Cost = &proxyapi.Cost{PromptUSD: b.Cost.PromptUSD, CompletionUSD: b.Cost.CompletionUSD}
	}
	switch {
	case b.External != nil:
		out.Kind = proxyapi.KindExternal
		out.Provider = string(b.External.Provider)
		out.Model = b.External.Model
		for _, cr := range b.External.Credentials {
			out.Credentials = append(out.Credentials, proxyapi.Credential{Purpose: cr.Purpose, Env: cr.Env})
		}
	case b.Local != nil:
		out.Kind = proxyapi.KindLocal
		out.Model, out.LearnModel = b.UpstreamModel.Name, !b.UpstreamModel.Known()
		if b.Resolution == ir.ResolutionEndpoint {
			out.Endpoints = &proxyapi.Endpoints{
				Service:   b.Local.ServiceName,
				Namespace: r.Namespace,
				Port:      b.Local.Port,
				Balancing: balancing(b.Balancing),
			}
		}
	}
	if p := b.Pool; p != nil {
		out.Pool = &proxyapi.Pool{
			Name:             p.Pool,
			InferenceService: b.Local.InferenceService,
			Members:          p.Members,
			Default:          p.Default,
			SwapBudget:       dur(p.SwapBudget),
		}
	}
	return out
}

func balancing(b *ir.Balancing) proxyapi.Balancing {
	if b == nil {
		return proxyapi.Balancing{Mode: proxyapi.BalancingRoundRobin}
	}
	out := proxyapi.Balancing{Mode: string(b.Mode)}
	if pa := b.PrefixAffinity; pa != nil {
		out.PrefixAffinity = &proxyapi.PrefixAffinity{BlockBytes: pa.BlockBytes, MaxBlocksPerEndpoint: pa.MaxBlocksPerEndpoint}
	}
	if sa := b.SessionAffinity; sa != nil {
		out.SessionAffinity = &proxyapi.SessionAffinity{Headers: sa.Headers, IdleTimeout: dur(sa.IdleTimeout)}
	}
	return out
}

func rule(r *ir.Rule) proxyapi.Rule {
	out := proxyapi.Rule{
		Name:           r.Name,
		Backends:       r.Candidates,
		Strategy:       proxyapi.Strategy(r.Strategy),
		PoolActivation: proxyapi.PoolActivation(r.PoolActivation),
		FailClosed:     r.FailClosed,
		Timeout:        dur(r.Timeout),
		Match: proxyapi.Match{
			Models:               r.Match.Models,
			DataClassification:   r.Match.DataClassification,
			TaskComplexity:       r.Match.TaskComplexity,
			RequiredCapabilities: r.Match.RequiredCapabilities,
			LatencySLO:           dur(r.Match.LatencySLO),
		},
	}
	if out.Backends == nil {
		out.Backends = []string{}
	}
	for _, h := range r.Match.Headers {
		out.Match.Headers = append(out.Match.Headers, proxyapi.HeaderMatch{Name: h.Name, Value: h.Value})
	}
	return out
}

func policy(p *ir.Policy) proxyapi.Policy {
	out := proxyapi.Policy{
		Classification: proxyapi.Classification{
			Mode:      string(p.Classification.Mode),
			HeaderKey: p.Classification.HeaderKey,
			Sensitive: p.Classification.Sensitive,
		},
		Audit: proxyapi.Audit{
			Sink:               proxyapi.AuditSink(p.Audit.Sink),
			IncludeRequestBody: p.Audit.IncludeRequestBody,
			CallerHeader:       p.Audit.CallerHeader,
			LogClientAddress:   p.Audit.LogClientAddress,
			TrustedProxyCIDRs:  p.Audit.TrustedProxies,
		},
	}
	if p.Audit.Sink == ir.AuditSinkFile {
		out.Audit.FilePath = p.Audit.FilePath
	}
	for _, b := range p.Budgets {
		out.Budgets = append(out.Budgets, proxyapi.Budget{
			Name:      b.Name,
			Scope:     string(b.Scope),
			RuleName:  b.RuleName,
			HeaderKey: b.HeaderKey,
			MaxTokens: b.MaxTokens,
			MaxUSD:    b.MaxUSD,
			Window:    dur(b.Window),
		})
	}
	for _, l := range p.RateLimits {
		out.RateLimits = append(out.RateLimits, proxyapi.RateLimit{Name: l.Name, Scope: string(l.Scope), Teams: l.Teams, Keys: l.Keys,
			RequestsPerMinute: l.RequestsPerMinute, InputTokensPerMinute: l.InputTokensPerMinute, OutputTokensPerMinute: l.OutputTokensPerMinute})
	}
	if a := p.Auth; a != nil {
		out.Auth = &proxyapi.Auth{}
		if j := a.JWT; j != nil {
			out.Auth.JWT = &proxyapi.JWT{Provider: j.Provider, Issuer: j.Issuer, JWKSURI: j.JWKSURI, TeamClaim: j.TeamClaim, HeaderKey: j.HeaderKey, Audiences: j.Audiences}
		}
		for _, e := range a.Allowlists {
			out.Auth.Allowlists = append(out.Auth.Allowlists, proxyapi.Allowlist{Team: e.Team, Models: e.Models})
		}
		out.Auth.APIKeys = apiKeySources(a.APIKeys)
	}
	return out
}
