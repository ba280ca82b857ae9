package proxyapi

import "fmt"

// validateRateLimits checks policy.rateLimits: a scope the proxy knows, a
// cap, a unique name, and policy.auth, without which no identity is verified
// and a limit would count nothing (or a header the client chooses).
func (c *Config) validateRateLimits(errs []error) []error {
	names := map[string]bool{}
	for i, l := range c.Policy.RateLimits {
		if l.Name == "" || names[l.Name] {
			errs = append(errs, fmt.Errorf("policy.rateLimits[%d].name %q is empty or duplicated", i, l.Name))
		}
		names[l.Name] = true
		if l.Scope != RateLimitScopeTeam && l.Scope != RateLimitScopeKey {
			errs = append(errs, fmt.Errorf("policy.rateLimits[%d].scope %q must be %s or %s", i, l.Scope, RateLimitScopeTeam, RateLimitScopeKey))
		}
		if l.RequestsPerMinute < 0 || l.InputTokensPerMinute < 0 || l.OutputTokensPerMinute < 0 ||
			l.RequestsPerMinute+l.InputTokensPerMinute+l.OutputTokensPerMinute == 0 {
			errs = append(errs, fmt.Errorf("policy.rateLimits[%d] must set a positive requestsPerMinute, inputTokensPerMinute or outputTokensPerMinute", i))
		}
		if c.Policy.Auth == nil {
			errs = append(errs, fmt.Errorf("policy.rateLimits[%d] requires policy.auth: the team or key it counts must be verified", i))
		}
	}
	return errs
}
