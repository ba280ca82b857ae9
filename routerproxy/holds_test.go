package routerproxy

import (
	"context"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/budget"
	"github.com/llmkube/llmkube-compile/test/poll"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeSharer is the replicas' shared holds in memory: what this replica
// publishes, and the apply its subscription was given.
type fakeSharer struct {
	published chan budget.SharedHold
	apply     chan func(budget.SharedHold)
}

func newFakeSharer() *fakeSharer {
	return &fakeSharer{published: make(chan budget.SharedHold, 8), apply: make(chan func(budget.SharedHold), 1)}
}

func (f *fakeSharer) Publish(_ context.Context, h budget.SharedHold) error {
	f.published <- h
	return nil
}

func (f *fakeSharer) Run(ctx context.Context, _ time.Duration, apply func(budget.SharedHold)) {
	f.apply <- apply
	<-ctx.Done()
}

// A hold this replica learns is published; one another replica shares
// holds an external backend here (the fallback serves, the provider is
// sent nothing) and never a local one, never shortens a hold, and a
// reason it does not know is dropped.
func TestQuotaHoldsAreShared(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	oai := newStub(t, "oai", limitHandler(429, openaiRateLimited, "Retry-After", "30"))
	other := newStub(t, "other", nil)
	local := newStub(t, "local", nil)
	cfg := config(externalBackend("oai", oai.URL), externalBackend("other", other.URL), backend("local", local.URL))
	limited := rule("limited", "primary-fallback", "oai", "local")
	limited.Match.Models = []string{"limited"}
	cfg.Rules = []proxyapi.Rule{limited, rule("r", "primary-fallback", "other", "local")}
	f := newFakeSharer()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := start(t, cfg, withClock(clock), func(o *Options) { o.Holds, o.Context = f, ctx })
	apply := poll.Recv(t, f.apply, 20*time.Second, "Run was not called")

	// Learned here: published with its reason and end.
	h.okChat(t, chat("limited"))
	require.EqualValues(t, 1, oai.hits.Load())
	assert.Equal(t, budget.SharedHold{Backend: "oai", Reason: "rate_limited", UntilMS: clock.Now().Add(30 * time.Second).UnixMilli()}, poll.Recv(t, f.published, 20*time.Second, "nothing was published"))

	// Shared by another replica: "other" is held here without being asked.
	until := clock.Now().Add(time.Minute)
	apply(budget.SharedHold{Backend: "other", Reason: "rate_limited", UntilMS: until.UnixMilli()})
	h.okChat(t, chat("x"))
	assert.Equal(t, "local", h.last(t).Backend)
	assert.EqualValues(t, 0, other.hits.Load(), "the shared hold keeps the provider from being sent anything")
	apply(budget.SharedHold{Backend: "other", Reason: "rate_limited", UntilMS: clock.Now().Add(time.Second).UnixMilli()})
	assert.Contains(t, adminGet(t, h, wellknown.StatusPath), `"rateLimitedUntil":"2026-12-07T21:01:00Z"`, "a shorter shared hold does not shorten it")

	apply(budget.SharedHold{Backend: "local", Reason: "rate_limited", UntilMS: until.UnixMilli()})
	apply(budget.SharedHold{Backend: "missing", Reason: "rate_limited", UntilMS: until.UnixMilli()})
	clock.Step(time.Minute)
	apply(budget.SharedHold{Backend: "other", Reason: "quarantined", UntilMS: clock.Now().Add(time.Hour).UnixMilli()})
	h.okChat(t, chat("x"))
	assert.Equal(t, "other", h.last(t).Backend, "the hold ended, and no unknown reason holds it")
	assert.True(t, h.srv.Engine().Eligible(h.srv.Engine().Backend("local")), "a local backend is never held by a shared hold")
}
