package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
)

var rlAuth = &v1.AuthSpec{JWT: &v1.JWTSpec{Provider: "keycloak", Issuer: "https://idp", JWKSURI: "https://idp/certs", TeamClaim: "team"}}

// TestRateLimitsLowered: a team limit under policy.auth reaches the IR with
// its caps (0 for the unset ones) and its teams.
func TestRateLimitsLowered(t *testing.T) {
	out, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Policy = &v1.RouterPolicy{Auth: rlAuth.DeepCopy(), RateLimits: []v1.RateLimitSpec{
			{Name: "per-team", Scope: v1.RateLimitScopeTeam, Teams: []string{"ml", "web"}, RequestsPerMinute: vtPtr(int64(60)), OutputTokensPerMinute: vtPtr(int64(5000))},
		}}
	})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.Equal(t, []ir.RateLimit{{Name: "per-team", Scope: ir.RateLimitScopeTeam, Teams: []string{"ml", "web"}, RequestsPerMinute: 60, OutputTokensPerMinute: 5000}}, out.Policy.RateLimits)
}

// TestKeyRateLimitWithAPIKeys: with policy.auth.apiKeys a scope key limit
// is accepted, with or without a JWT beside the keys.
func TestKeyRateLimitWithAPIKeys(t *testing.T) {
	keys := []v1.APIKeySource{{SecretName: "batch-keys", Team: "ml"}}
	for _, withJWT := range []bool{false, true} {
		out, diags := vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
			auth := &v1.AuthSpec{APIKeys: keys}
			if withJWT {
				auth.JWT = rlAuth.JWT.DeepCopy()
			}
			r.Spec.Policy = &v1.RouterPolicy{Auth: auth, RateLimits: []v1.RateLimitSpec{
				{Name: "per-key", Scope: v1.RateLimitScopeKey, Keys: []string{"batch-keys/nightly"}, RequestsPerMinute: vtPtr(int64(5))},
				{Name: "per-team", Scope: v1.RateLimitScopeTeam, OutputTokensPerMinute: vtPtr(int64(5))},
			}}
		})
		require.False(t, diags.HasErrors(), "jwt %v: %v", withJWT, diags.Err())
		require.Len(t, out.Policy.RateLimits, 2)
		assert.Equal(t, []string{"batch-keys/nightly"}, out.Policy.RateLimits[0].Keys)
	}
}

// TestRateLimitsRefused: every way a rate limit is refused, at its path.
func TestRateLimitsRefused(t *testing.T) {
	rpm := vtPtr(int64(10))
	cases := []struct {
		name string
		auth *v1.AuthSpec
		rl   []v1.RateLimitSpec
		dp   ir.DataPlane
		want []string
	}{
		{"without auth the team is the client's", nil, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeTeam, RequestsPerMinute: rpm}},
			"", []string{"spec.policy.rateLimits[0].scope RateLimitRequiresAuth"}},
		{"no cap", rlAuth, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeTeam}},
			"", []string{"spec.policy.rateLimits[0] RateLimitRequired"}},
		{"a JWT names no key", rlAuth, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeKey, RequestsPerMinute: rpm}},
			"", []string{"spec.policy.rateLimits[0].scope RateLimitKeyScopeWithoutAPIKeys"}},
		{"keys on a team limit", rlAuth, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeTeam, Keys: []string{"k"}, RequestsPerMinute: rpm}},
			"", []string{"spec.policy.rateLimits[0].keys RateLimitKeysNeedKeyScope"}},
		{"names", rlAuth, []v1.RateLimitSpec{
			{Name: "a", Scope: v1.RateLimitScopeTeam, Teams: []string{"ml", " ml", "ml"}, RequestsPerMinute: rpm},
			{Name: "a", Scope: v1.RateLimitScopeTeam, RequestsPerMinute: rpm}},
			"", []string{"spec.policy.rateLimits[0].teams[1] InvalidFormat", "spec.policy.rateLimits[0].teams[2] DuplicateRateLimitSubject", "spec.policy.rateLimits[1].name DuplicateRateLimitName"}},
		{"Gateway", rlAuth, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeTeam, RequestsPerMinute: rpm}},
			ir.DataPlaneGateway, []string{"spec.policy.rateLimits RateLimitsUnsupportedOnGateway"}},
		{"AgentGateway", rlAuth, []v1.RateLimitSpec{{Name: "a", Scope: v1.RateLimitScopeTeam, RequestsPerMinute: rpm}},
			ir.DataPlaneAgentGateway, []string{"spec.policy.rateLimits RateLimitsUnsupportedOnAgentGateway"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, diags := vtCompile(t, c.dp, func(r *v1.ModelRouter, _ *Inputs) {
				r.Spec.Policy = &v1.RouterPolicy{RateLimits: c.rl}
				if c.auth != nil {
					r.Spec.Policy.Auth = c.auth.DeepCopy()
				}
				switch c.dp {
				case ir.DataPlaneGateway:
					r.Spec.GatewayRef = &v1.RouterGatewayRef{Name: "gw"}
				case ir.DataPlaneAgentGateway:
					r.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw", SectionName: "http"}
				}
			})
			got := vtKeys(diags.Errors())
			for _, w := range c.want {
				assert.Contains(t, got, w)
			}
			if c.dp == "" {
				assert.Equal(t, c.want, got)
			}
		})
	}
}
