package budget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

func TestBudgetWindowAndRetryAfter(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	bs, err := NewMemory([]proxyapi.Budget{{Name: "b", Scope: "router", MaxTokens: 100, Window: proxyapi.Duration{Duration: time.Minute}}}, clock)
	require.NoError(t, err)
	ch, ex := bs.Admit("x", nil)
	require.Nil(t, ex)
	ch.Add(60, 0)
	now = now.Add(30 * time.Second)
	ch, _ = bs.Admit("x", nil)
	ch.Add(50, 0)
	_, ex = bs.Admit("x", nil)
	require.NotNil(t, ex, "110 tokens in the window")
	assert.Equal(t, 30*time.Second, ex.RetryAfter, "the first 60 tokens leave the window in 30s")
	now = now.Add(31 * time.Second)
	_, ex = bs.Admit("x", nil)
	assert.Nil(t, ex, "rolled out of the window")
	assert.Equal(t, int64(50), bs.Status()[0].TokensUsed)
}
