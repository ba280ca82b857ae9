package routerproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func closedURL(t *testing.T) string {
	s := newStub(t, "gone", nil)
	u := s.URL
	s.Close()
	return u
}

func TestPrimaryFallbackFailover(t *testing.T) {
	fail5xx := newStub(t, "e500", statusHandler(503))
	hang := newStub(t, "hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	bad := newStub(t, "bad", statusHandler(400))
	good := newStub(t, "good", nil)
	cfg := config(backend("good", good.URL), backend("e500", fail5xx.URL), backend("conn", closedURL(t)), backend("hang", hang.URL), backend("bad", bad.URL))
	r := rule("chain", "primary-fallback", "conn", "e500", "hang", "good")
	r.Timeout = dur(2 * time.Second) // the hang costs it; the others answer within it on a busy machine
	r4 := rule("client-error", "primary-fallback", "bad", "good")
	r4.Match.Models = []string{"bad"}
	cfg.Rules = []proxyapi.Rule{r4, r}
	h := start(t, cfg)

	body := h.okChat(t, chat("m"))
	assert.Equal(t, "good", servedBy(t, body))
	e := h.last(t)
	assert.Equal(t, 4, e.Attempts, "connect error, 5xx and header timeout all fail over")
	eng := h.srv.Engine()
	assert.True(t, eng.Quarantined(eng.Backend("conn")), "network error quarantines")
	assert.True(t, eng.Quarantined(eng.Backend("e500")), "5xx quarantines")
	assert.False(t, eng.Quarantined(eng.Backend("hang")), "a header timeout does not quarantine")

	// A 4xx is the answer: no failover.
	code, _, _ := h.post(t, chat("bad"))
	assert.Equal(t, 400, code)
	assert.Equal(t, int64(1), good.hits.Load())
}

// Once bytes reached the client, a broken upstream is never retried elsewhere.
func TestNoFailoverAfterBytes(t *testing.T) {
	breaks := newStub(t, "breaks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	other := newStub(t, "other", nil)
	cfg := config(backend("breaks", breaks.URL), backend("other", other.URL))
	cfg.Rules = []proxyapi.Rule{rule("r", "primary-fallback", "breaks", "other")}
	h := start(t, cfg)
	req, _ := http.NewRequest(http.MethodPost, h.front.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	resp, err := h.front.Client().Do(req)
	require.NoError(t, err)
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(b), "partial")
	assert.Error(t, rerr, "the client sees a broken stream, not a clean end")
	assert.Equal(t, int64(0), other.hits.Load())
	assert.Equal(t, proxyapi.OutcomeUpstreamAborted, h.last(t).Outcome)
}

func TestWeighted(t *testing.T) {
	a, b, z := newStub(t, "a", nil), newStub(t, "b", nil), newStub(t, "z", nil)
	ba, bb, bz := backend("a", a.URL), backend("b", b.URL), backend("z", z.URL)
	ba.Weight, bb.Weight, bz.Weight = 3, 1, 0
	cfg := config(ba, bb, bz)
	cfg.Rules = []proxyapi.Rule{rule("w", "weighted", "a", "b", "z")}
	h := start(t, cfg)
	const n = 400
	for range n {
		code, _, _ := h.post(t, chat("m"))
		require.Equal(t, 200, code)
	}
	assert.Equal(t, int64(0), z.hits.Load(), "weight 0 never serves")
	// 3:1 split; 300±~60 leaves a very wide margin (about 7 standard deviations).
	assert.InDelta(t, 300, a.hits.Load(), 60)
	assert.Equal(t, int64(n), a.hits.Load()+b.hits.Load())

	// Weight 0 never serves even when every other backend is unavailable.
	eng := h.srv.Engine()
	probeDown(eng, "a")
	probeDown(eng, "b")
	code, _, _ := h.post(t, chat("m"))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, int64(0), z.hits.Load())
}

func TestWeightedFailoverNeverRepeats(t *testing.T) {
	var stubs []*stub
	var bs []proxyapi.Backend
	var names []string
	for i := range 3 {
		n := fmt.Sprintf("f%d", i)
		s := newStub(t, n, statusHandler(502))
		stubs = append(stubs, s)
		bs = append(bs, backend(n, s.URL))
		names = append(names, n)
	}
	cfg := config(bs...)
	cfg.Rules = []proxyapi.Rule{rule("w", "weighted", names...)}
	h := start(t, cfg)
	code, _, _ := h.post(t, chat("m"))
	assert.Equal(t, http.StatusBadGateway, code)
	for _, s := range stubs {
		assert.Equal(t, int64(1), s.hits.Load(), s.name)
	}
	assert.Equal(t, 3, h.last(t).Attempts)
}

func TestShadow(t *testing.T) {
	primary := newStub(t, "primary", nil)
	var seen sync.Map
	mirrorOK := newStub(t, "mirror-ok", func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("X-Llmkube-Shadow"), true)
		okHandler("mirror-ok")(w, r)
	})
	mirrorBad := newStub(t, "mirror-bad", statusHandler(500))
	cfg := config(backend("primary", primary.URL), backend("mirror-ok", mirrorOK.URL), backend("mirror-bad", mirrorBad.URL))
	cfg.Rules = []proxyapi.Rule{rule("s", "shadow", "primary", "mirror-ok", "mirror-bad")}
	cfg.Policy.Budgets = []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1000, Window: dur(time.Hour)}}
	h := start(t, cfg)
	code, body, _ := h.post(t, chat("m"))
	require.Equal(t, 200, code)
	assert.Equal(t, "primary", servedBy(t, body), "the shadow strategy serves from the first backend")
	require.Eventually(t, func() bool { return mirrorOK.hits.Load() == 1 && mirrorBad.hits.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	_, marked := seen.Load("true")
	assert.True(t, marked, "copies carry x-llmkube-shadow: true")
	assert.Empty(t, primary.Last().Header.Get("X-Llmkube-Shadow"))
	require.NoError(t, h.srv.Wait(t.Context()))
	eng := h.srv.Engine()
	assert.False(t, eng.Quarantined(eng.Backend("mirror-bad")), "shadow failures never quarantine")
	assert.Equal(t, int64(15), h.srv.Status().Budgets[0].TokensUsed, "only the served response is charged")
	assert.Len(t, h.audit.all(), 1, "one audit entry per client request")
}

func TestShadowAtMostFourPerBackend(t *testing.T) {
	primary := newStub(t, "primary", nil)
	release := make(chan struct{})
	var inflight, peak atomic.Int64
	slow := newStub(t, "slow", func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inflight.Add(-1)
		okHandler("slow")(w, r)
	})
	cfg := config(backend("primary", primary.URL), backend("slow", slow.URL))
	cfg.Rules = []proxyapi.Rule{rule("s", "shadow", "primary", "slow")}
	h := start(t, cfg)
	for range 10 {
		code, _, _ := h.post(t, chat("m"))
		require.Equal(t, 200, code)
	}
	require.Eventually(t, func() bool { return slow.hits.Load() == 4 }, 5*time.Second, 5*time.Millisecond)
	close(release)
	require.NoError(t, h.srv.Wait(t.Context()))
	assert.Equal(t, int64(4), slow.hits.Load())
	assert.Equal(t, int64(4), peak.Load())
	assert.Equal(t, 6.0, testutil.ToFloat64(h.srv.m.shadowDropped.WithLabelValues("slow")), "the rest are dropped and counted")
}

// TestStalledShadowCopyIsCut: with the stream-idle guard off, a shadow target
// that sends headers and then stalls is still cut, so it cannot hold one of
// its backend's four slots (or the drain) forever.
func TestStalledShadowCopyIsCut(t *testing.T) {
	primary := newStub(t, "primary", nil)
	release := make(chan struct{})
	stall := newStub(t, "stall", heldStream(release, ""))
	// Registered after the stub, so it runs first and the stub can close.
	t.Cleanup(func() { close(release) })
	cfg := config(backend("primary", primary.URL), backend("stall", stall.URL))
	cfg.Timeouts.StreamIdle = dur(0)
	cfg.Rules = []proxyapi.Rule{rule("s", "shadow", "primary", "stall")}
	h := start(t, cfg)
	h.srv.shadowIdle = 20 * time.Millisecond
	code, _, _ := h.post(t, chat("m"))
	require.Equal(t, 200, code)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.srv.Wait(ctx), "the stalled copy ends without the target answering")
	assert.Equal(t, int64(1), stall.hits.Load())
}

func TestHeaderTimeoutResolution(t *testing.T) {
	a := newStub(t, "a", nil)
	ba, bb := backend("a", a.URL), backend("b", a.URL)
	bb.Timeout = dur(5 * time.Second)
	cfg := config(ba, bb)
	cfg.Timeouts.ResponseHeader = dur(10 * time.Second)
	rShort := rule("short", "primary-fallback", "a", "b")
	rShort.Timeout = dur(2 * time.Second)
	rLong := rule("long", "primary-fallback", "a", "b")
	rLong.Timeout = dur(time.Minute)
	rNone := rule("none", "primary-fallback", "a", "b")
	cfg.Rules = []proxyapi.Rule{rShort, rLong, rNone}
	h := start(t, cfg)
	eng := h.srv.Engine()
	rs := eng.Rules()
	assert.Equal(t, 2*time.Second, eng.HeaderTimeout(rs[0], eng.Backend("b")), "rule wins")
	assert.Equal(t, 10*time.Second, eng.HeaderTimeout(rs[1], eng.Backend("b")), "capped at the default")
	assert.Equal(t, 5*time.Second, eng.HeaderTimeout(rs[2], eng.Backend("b")), "backend next")
	assert.Equal(t, 10*time.Second, eng.HeaderTimeout(rs[2], eng.Backend("a")), "default last")
	assert.Equal(t, 10*time.Second, eng.HeaderTimeout(nil, eng.Backend("a")))
}

// A stream that lasts far longer than the header timeout and than the idle
// timeout, but never goes silent that long, is delivered whole.
func TestLongHealthyStreamNotCut(t *testing.T) {
	const events, gap = 40, 50 * time.Millisecond // a 2-s stream
	s := newStub(t, "s", sseHandler("s", events, gap))
	cfg := config(backend("s", s.URL))
	cfg.Timeouts.ResponseHeader = dur(time.Second)
	cfg.Timeouts.StreamIdle = dur(time.Second)
	h := start(t, cfg)
	code, body, _ := h.post(t, `{"model":"m","stream":true}`)
	require.Equal(t, 200, code)
	assert.Equal(t, events, strings.Count(body, `"content":"s-`))
	assert.Contains(t, body, "[DONE]")
	e := h.last(t)
	assert.Equal(t, proxyapi.OutcomeOKStream, e.Outcome)
	assert.GreaterOrEqual(t, e.LatencyMs, float64(events*gap/time.Millisecond), "latency covers the whole stream, longer than either timeout")
}

func TestStreamIdleTimeout(t *testing.T) {
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	s := newStub(t, "s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	cfg := config(backend("s", s.URL))
	cfg.Timeouts.StreamIdle = dur(time.Second)
	h := start(t, cfg)
	req, _ := http.NewRequest(http.MethodPost, h.front.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	resp, err := h.front.Client().Do(req)
	require.NoError(t, err)
	first, _ := bufio.NewReader(resp.Body).ReadString('\n')
	assert.Contains(t, first, "hi")
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Error(t, err, "the silent stream is aborted")
	e := h.last(t)
	assert.Equal(t, proxyapi.OutcomeStreamIdle, e.Outcome)
	assert.True(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("s")), "the silent endpoint is quarantined")
}

func TestStreamIdleDisabled(t *testing.T) {
	s := newStub(t, "s", sseHandler("s", 3, 150*time.Millisecond))
	cfg := config(backend("s", s.URL))
	cfg.Timeouts.StreamIdle = dur(0)
	h := start(t, cfg)
	code, body, _ := h.post(t, `{"model":"m","stream":true}`)
	require.Equal(t, 200, code)
	assert.Equal(t, 3, strings.Count(body, `"content":"s-`))
}
