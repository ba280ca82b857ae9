package routerproxy

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// fakePools is a PoolGate that counts what dispatch asks of it.
type fakePools struct {
	acquired, released, refreshed atomic.Int64
	// swappedOut: the re-read pool says the member is not resident.
	swappedOut bool
}

func (f *fakePools) Acquire(context.Context, *proxyapi.Backend, proxyapi.PoolActivation) (func(), error) {
	f.acquired.Add(1)
	var once sync.Once // the contract: release may be called again
	return func() { once.Do(func() { f.released.Add(1) }) }, nil
}
func (f *fakePools) Refresh(*proxyapi.Backend)               { f.refreshed.Add(1) }
func (f *fakePools) Resident(*proxyapi.Backend) (bool, bool) { return !f.swappedOut, true }
func (f *fakePools) Status() []proxyapi.PoolStatus           { return nil }

func pooledConfig(url string) *proxyapi.Config {
	b := backend("llama", url)
	b.Pool = &proxyapi.Pool{Name: "gpu", InferenceService: "llama", Members: []string{"llama", "qwen"}}
	return config(b)
}

// TestPooledFailureRecheckedOnce: a pooled member that fails (another
// replica swapped it out) makes the proxy re-read the pool, make it resident
// again and send once more; the client never sees the first failure, the
// backend is not quarantined, and every hold is released.
func TestPooledFailureRecheckedOnce(t *testing.T) {
	var n atomic.Int64
	up := newStub(t, "llama", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // unloading
			return
		}
		okHandler("llama")(w, r)
	})
	pools := &fakePools{}
	h := start(t, pooledConfig(up.URL), func(o *Options) { o.Pools = pools })
	code, body, _ := h.post(t, chat("llama"))
	require.Equal(t, http.StatusOK, code, body)
	assert.EqualValues(t, 2, up.hits.Load())
	assert.EqualValues(t, 1, pools.refreshed.Load())
	// The response reaches the client before the handler's bookkeeping ends.
	require.NoError(t, h.srv.Wait(t.Context()))
	assert.EqualValues(t, 2, pools.acquired.Load())
	assert.Equal(t, pools.acquired.Load(), pools.released.Load(), "every hold released")
	assert.False(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("llama")), "the first failure is not counted")

	// A member that keeps failing is re-read once more (is it still
	// resident?), then fails as usual: quarantined while resident, not
	// when other replicas swapped it out again meanwhile.
	for _, swappedOut := range []bool{false, true} {
		up2 := newStub(t, "llama", statusHandler(http.StatusBadGateway))
		pools2 := &fakePools{swappedOut: swappedOut}
		h2 := start(t, pooledConfig(up2.URL), func(o *Options) { o.Pools = pools2 })
		code, _, _ = h2.post(t, chat("llama"))
		assert.Equal(t, http.StatusBadGateway, code)
		assert.EqualValues(t, 2, up2.hits.Load(), "one retry, not a loop")
		assert.EqualValues(t, 2, pools2.refreshed.Load())
		require.NoError(t, h2.srv.Wait(t.Context()))
		assert.Equal(t, pools2.acquired.Load(), pools2.released.Load())
		assert.Equal(t, !swappedOut, h2.srv.Engine().Quarantined(h2.srv.Engine().Backend("llama")), "swapped out: %v", swappedOut)
	}
}
