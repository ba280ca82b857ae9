package compiler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
)

// withAuth sets the base router's policy.auth.
func withAuth(a *v1.AuthSpec, budgets ...v1.BudgetSpec) func(*v1.ModelRouter, *Inputs) {
	return func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Policy = &v1.RouterPolicy{Auth: a, Budgets: budgets}
	}
}

func TestAPIKeysStandInForJWT(t *testing.T) {
	exp := metav1.NewTime(time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC))
	r, diags := vtCompile(t, ir.DataPlaneProxy, withAuth(&v1.AuthSpec{
		APIKeys:    []v1.APIKeySource{{SecretName: "analytics-keys", Team: "analytics", ExpiresAt: &exp}},
		Allowlists: []v1.AllowlistEntry{{Team: "analytics", Models: []string{"local-qwen"}}},
	}, v1.BudgetSpec{Name: "per-team", Scope: v1.ScopeTeam, MaxTokens: new(int64(1000))}))
	require.False(t, diags.HasErrors(), "allowlists and team budgets need a verified team, which API keys give: %v", diags.Err())
	require.NotNil(t, r.Policy.Auth)
	assert.Equal(t, []ir.APIKeySource{{SecretName: "analytics-keys", Team: "analytics", ExpiresAt: new(exp.UTC())}}, r.Policy.Auth.APIKeys)
	assert.Equal(t, "x-llmkube-team", r.Policy.Auth.TeamHeader())
}

func TestAPIKeysRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		auth    *v1.AuthSpec
		budgets []v1.BudgetSpec
		want    []string
	}{
		"the same Secret twice": {
			auth: &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "k", Team: "a"}, {SecretName: "k", Team: "b"}}},
			want: []string{"spec.policy.auth.apiKeys[1].secretName DuplicateAPIKeySecret"},
		},
		"a team with whitespace": {
			auth: &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "k", Team: "a "}}},
			want: []string{"spec.policy.auth.apiKeys[0].team InvalidFormat"},
		},
		"a team no allowlist names": {
			auth: &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "k", Team: "b"}}, Allowlists: []v1.AllowlistEntry{{Team: "a"}}},
			want: []string{"spec.policy.auth.apiKeys[0].team APIKeyTeamNotAllowlisted"},
		},
		"a team budget on a header the client chooses": {
			auth:    &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "k", Team: "a"}}},
			budgets: []v1.BudgetSpec{{Name: "t", Scope: v1.ScopeTeam, HeaderKey: "x-my-team", MaxTokens: new(int64(1))}},
			want:    []string{"spec.policy.budgets[0].headerKey TeamBudgetHeaderUnverified"},
		},
		"allowlists with neither jwt nor keys": {
			auth: &v1.AuthSpec{Allowlists: []v1.AllowlistEntry{{Team: "a"}}},
			want: []string{"spec.policy.auth.allowlists AllowlistRequiresJWT"},
		},
		"a Secret name that is no DNS subdomain": {
			auth: &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "Keys_1", Team: "a"}}},
			want: []string{"spec.policy.auth.apiKeys[0].secretName InvalidFormat"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := vtCompile(t, ir.DataPlaneProxy, withAuth(tc.auth, tc.budgets...))
			assert.Equal(t, tc.want, vtKeys(diags))
		})
	}
}

func TestAPIKeysRefusedOnTheGatewayPlanes(t *testing.T) {
	for dp, reason := range map[ir.DataPlane]string{ir.DataPlaneGateway: "APIKeysUnsupportedOnGateway", ir.DataPlaneAgentGateway: "APIKeysUnsupportedOnAgentGateway"} {
		_, diags := vtCompile(t, dp, func(r *v1.ModelRouter, in *Inputs) {
			r.Spec.Policy = &v1.RouterPolicy{Auth: &v1.AuthSpec{APIKeys: []v1.APIKeySource{{SecretName: "k", Team: "a"}}}}
		})
		_, ok := vtFind(diags, "spec.policy.auth.apiKeys", reason)
		assert.True(t, ok, "%s: %v", dp, vtKeys(diags))
	}
}
