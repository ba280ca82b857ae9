package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/ir"
)

// The Degraded message of a store that is down says what it does to the
// router's requests: its budgets' failure mode, or, without budgets (the
// store shares only the quota holds), that requests are still served.
func TestStoreDownEffect(t *testing.T) {
	budgets := &ir.Router{Policy: ir.Policy{Budgets: []ir.Budget{{Name: "monthly"}}}}
	assert.Contains(t, storeDownEffect(budgets, wellknown.BudgetStoreFailClosed), "refused with 503")
	assert.Contains(t, storeDownEffect(budgets, wellknown.BudgetStoreFailOpen), "counted per replica")
	holdsOnly := &ir.Router{}
	for _, f := range []string{wellknown.BudgetStoreFailClosed, wellknown.BudgetStoreFailOpen} {
		got := storeDownEffect(holdsOnly, f)
		assert.Contains(t, got, "requests are served")
		assert.NotContains(t, got, "503")
	}
}
