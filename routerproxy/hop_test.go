package routerproxy

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The headers a Connection header names are dropped when present; the
// usual tokens allocate nothing.
func TestConnectionTokens(t *testing.T) {
	h := http.Header{"Connection": {"keep-alive, x-hop , Close", "X-Other"}, "X-Hop": {"1"}, "Close": {"weird"}, "X-Kept": {"1"}}
	assert.Equal(t, map[string]bool{"X-Hop": true, "Close": true}, connectionTokens(h))
	plain := http.Header{"Connection": {"keep-alive"}, "Content-Type": {"application/json"}}
	assert.Nil(t, connectionTokens(plain))
	assert.Zero(t, testing.AllocsPerRun(100, func() { connectionTokens(plain) }))
}
