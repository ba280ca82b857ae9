package proxyapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValidateRateLimits: a hand-written config's rate limits are checked
// as the compiler checks the spec's: a known scope, a cap, a unique name,
// and policy.auth.
func TestValidateRateLimits(t *testing.T) {
	auth := &Auth{JWT: &JWT{Issuer: "https://idp", JWKSURI: "https://idp/certs", TeamClaim: "team", HeaderKey: "x-llmkube-team"}}
	ok := RateLimit{Name: "a", Scope: RateLimitScopeTeam, RequestsPerMinute: 1}
	cases := []struct {
		name   string
		auth   *Auth
		limits []RateLimit
		want   string
	}{
		{"valid", auth, []RateLimit{ok, {Name: "b", Scope: RateLimitScopeKey, OutputTokensPerMinute: 5}}, ""},
		{"no auth", nil, []RateLimit{ok}, "policy.rateLimits[0] requires policy.auth"},
		{"no cap", auth, []RateLimit{{Name: "a", Scope: RateLimitScopeTeam}}, "policy.rateLimits[0] must set a positive"},
		{"negative", auth, []RateLimit{{Name: "a", Scope: RateLimitScopeTeam, RequestsPerMinute: 5, InputTokensPerMinute: -5}}, "policy.rateLimits[0] must set a positive"},
		{"scope", auth, []RateLimit{{Name: "a", Scope: "router", RequestsPerMinute: 1}}, `policy.rateLimits[0].scope "router"`},
		{"duplicate", auth, []RateLimit{ok, ok}, `policy.rateLimits[1].name "a" is empty or duplicated`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{Policy: Policy{Auth: c.auth, RateLimits: c.limits}}
			errs := cfg.validateRateLimits(nil)
			if c.want == "" {
				assert.Empty(t, errs)
				return
			}
			if assert.Len(t, errs, 1) {
				assert.Contains(t, errs[0].Error(), c.want)
			}
		})
	}
}
