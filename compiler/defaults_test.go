package compiler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// TestDefaultsAgreeWithTheRouterProxy: the router-proxy fills the fields a
// hand-written config leaves out (proxyapi.Config.SetDefaults); each of those
// defaults is the compiler's own, which the compiler always writes.
func TestDefaultsAgreeWithTheRouterProxy(t *testing.T) {
	c := proxyapi.Config{
		Backends: []proxyapi.Backend{{Pool: &proxyapi.Pool{}}},
		Policy: proxyapi.Policy{
			Budgets: []proxyapi.Budget{{Scope: proxyapi.ScopeTeam}},
			Audit:   proxyapi.Audit{Sink: proxyapi.SinkFile},
			Auth:    &proxyapi.Auth{JWT: &proxyapi.JWT{}},
		},
	}
	c.SetDefaults()
	assert.Equal(t, string(DefaultClassificationMode), c.Policy.Classification.Mode)
	assert.Equal(t, DefaultClassificationHeader, c.Policy.Classification.HeaderKey)
	assert.Equal(t, DefaultTeamHeader, c.Policy.Budgets[0].HeaderKey)
	assert.Equal(t, DefaultTeamHeader, c.Policy.Auth.JWT.HeaderKey)
	assert.Equal(t, time.Duration(DefaultBudgetWindow)*time.Second, c.Policy.Budgets[0].Window.Duration)
	assert.Equal(t, DefaultSwapBudget, c.Backends[0].Pool.SwapBudget.Duration)
	assert.Equal(t, DefaultAuditFilePath, c.Policy.Audit.FilePath)
}
