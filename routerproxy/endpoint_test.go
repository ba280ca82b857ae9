package routerproxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
	"github.com/stretchr/testify/require"
)

func hostOf(t *testing.T, s *stub) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	return u.Host
}

func endpointBackend(name, svcURL string, bal proxyapi.Balancing) proxyapi.Backend {
	b := backend(name, svcURL)
	b.Endpoints = &proxyapi.Endpoints{Service: "svc", Namespace: "ns", Port: 8000, Balancing: bal}
	return b
}

func TestEndpointResolutionPlacesOnPods(t *testing.T) {
	svc := newStub(t, "svc", nil)
	p1, p2 := newStub(t, "p1", nil), newStub(t, "p2", nil)
	cfg := config(endpointBackend("m", svc.URL, proxyapi.Balancing{Mode: "RoundRobin"}))
	h := start(t, cfg)
	eb := h.srv.EndpointBackends()
	require.Len(t, eb, 1)

	// Before the pod set is known: the Service URL.
	h.okChat(t, chat("m"))
	require.EqualValues(t, 1, svc.hits.Load())

	eb[0].Balancer.SetPods([]string{hostOf(t, p1), hostOf(t, p2)})
	for range 6 {
		h.okChat(t, chat("m"))
	}
	require.EqualValues(t, 3, p1.hits.Load())
	require.EqualValues(t, 3, p2.hits.Load())
	require.EqualValues(t, 1, svc.hits.Load())
	require.Equal(t, "m", h.last(t).Backend)

	// No ready pod: the attempt fails (502), the backend is not quarantined.
	eb[0].Balancer.SetPods(nil)
	code, body, _ := h.post(t, chat("m"))
	require.Equal(t, http.StatusBadGateway, code, body)
	require.Contains(t, h.last(t).Error, "no ready endpoint")
	require.False(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("m")))
}

func TestEndpointPodQuarantine(t *testing.T) {
	svc := newStub(t, "svc", nil)
	var fail atomic.Bool
	fail.Store(true)
	bad := newStub(t, "bad", func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		okHandler("bad")(w, r)
	})
	good := newStub(t, "good", nil)
	cfg := config(endpointBackend("m", svc.URL, proxyapi.Balancing{Mode: "RoundRobin"}))
	h := start(t, cfg)
	bal := h.srv.EndpointBackends()[0].Balancer
	bal.SetPods([]string{hostOf(t, bad), hostOf(t, good)})
	codes := map[int]int{}
	for range 10 {
		code, _, _ := h.post(t, chat("m"))
		codes[code]++
	}
	require.EqualValues(t, 2, bad.hits.Load(), "two failures in a row quarantine the pod")
	require.Equal(t, map[int]int{502: 2, 200: 8}, codes)
	require.False(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("m")), "the backend itself stays eligible")
	st := bal.Status()
	require.True(t, st[0].Quarantined || st[1].Quarantined)
}

func TestEndpointStreamIdleQuarantinesPodAtOnce(t *testing.T) {
	svc := newStub(t, "svc", nil)
	silent := newStub(t, "silent", sseHandler("silent", 2, time.Hour)) // silent after its first chunk
	good := newStub(t, "good", sseHandler("good", 2, time.Millisecond))
	cfg := config(endpointBackend("m", svc.URL, proxyapi.Balancing{Mode: "LoadAware"}))
	cfg.Timeouts.StreamIdle = dur(2 * time.Second) // no busy machine stalls the good pod's stream that long
	h := start(t, cfg)
	bal := h.srv.EndpointBackends()[0].Balancer
	bal.SetPods([]string{hostOf(t, silent), hostOf(t, good)})
	streamBody := strings.Replace(chat("m"), `{"model"`, `{"stream":true,"model"`, 1)
	for range 4 {
		h.post(t, streamBody)
	}
	h.settle(t)
	require.EqualValues(t, 1, silent.hits.Load(), "one silent stream quarantines the pod")
	require.EqualValues(t, 3, good.hits.Load())
	require.False(t, h.srv.Engine().Quarantined(h.srv.Engine().Backend("m")))
}

// The pod balancer learns the backend's answer length from the responses'
// usage (plain and streamed) of requests that set no max_tokens, and
// counts that, not the cap, for the KV pages such a request takes on its
// pod. A bounded request's answer, or usage the proxy had to estimate,
// teaches nothing.
func TestEndpointBalancerLearnsAnswerLength(t *testing.T) {
	// learner is a LoadAware backend with prefix affinity whose one pod
	// answers with handler.
	learner := func(handler http.HandlerFunc) (*harness, *balance.Balancer) {
		svc, pod := newStub(t, "svc", nil), newStub(t, "pod", handler)
		h := start(t, config(endpointBackend("m", svc.URL, proxyapi.Balancing{Mode: "LoadAware", PrefixAffinity: &proxyapi.PrefixAffinity{}})))
		bal := h.srv.EndpointBackends()[0].Balancer
		bal.SetPods([]string{hostOf(t, pod)})
		return h, bal
	}
	with := func(field string) string { return strings.Replace(chat("m"), `{"model"`, `{`+field+`,"model"`, 1) }

	h, bal := learner(nil) // usage: 5 completion tokens
	for range 10 {
		h.okChat(t, with(`"max_tokens":64`))
	}
	require.InDelta(t, balance.DefaultOutputTokens, bal.AnswerTokens(), 0, "bounded requests teach nothing")
	for range 250 {
		h.okChat(t, chat("m"))
	}
	require.InDelta(t, 5, bal.AnswerTokens(), 1, "the pod's usage says 5 completion tokens")

	// A pod that reports no usage: the proxy charges an estimate, which
	// teaches nothing.
	h, bal = learner(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a long answer without usage"}}]}`))
	})
	for range 10 {
		h.okChat(t, chat("m"))
	}
	require.InDelta(t, balance.DefaultOutputTokens, bal.AnswerTokens(), 0, "estimated usage teaches nothing")

	// A stream: the proxy asks for its usage chunk (include_usage).
	h, bal = learner(sseHandler("pod", 2, time.Millisecond))
	for range 250 {
		h.post(t, with(`"stream":true`))
	}
	h.settle(t)
	require.InDelta(t, 3, bal.AnswerTokens(), 1, "the stream's usage chunk says 3 completion tokens")
}

// The pod balancer counts the prefill a pod owes (the uncached prompt
// blocks of requests whose answer has not begun) until the first byte of
// the pod's answer body passes the proxy, not until the answer ends: the
// engine sends the response head before its first token.
func TestEndpointPrefillEndsAtFirstByte(t *testing.T) {
	release, finish := make(chan struct{}), make(chan struct{})
	var relOnce, finOnce sync.Once
	rel := func() { relOnce.Do(func() { close(release) }) }
	fin := func() { finOnce.Do(func() { close(finish) }) }
	pod := newStub(t, "pod", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		f := w.(http.Flusher)
		f.Flush()
		<-release // prefilling
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		f.Flush()
		<-finish // decoding
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	svc := newStub(t, "svc", nil)
	h := start(t, config(endpointBackend("m", svc.URL, proxyapi.Balancing{Mode: "LoadAware", PrefixAffinity: &proxyapi.PrefixAffinity{}})))
	bal := h.srv.EndpointBackends()[0].Balancer
	// Should an assertion fail, unblock the pod before the proxy and its server close.
	t.Cleanup(func() { rel(); fin() })
	bal.SetPods([]string{hostOf(t, pod)})
	body := `{"stream":true,"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("d", 8*1024) + `"}]}`
	done := make(chan int, 1)
	go func() {
		code, _, _ := h.post(t, body)
		done <- code
	}()
	require.Eventually(t, func() bool { return bal.Status()[0].Prefilling >= 8 }, 5*time.Second, 5*time.Millisecond,
		"the uncached prompt is owed while the pod has sent only the response head")
	rel()
	require.Eventually(t, func() bool { st := bal.Status()[0]; return st.Prefilling == 0 && st.InFlight == 1 }, 5*time.Second, 5*time.Millisecond,
		"the first byte of the answer ends the prefill; the answer is still in flight")
	fin()
	require.Equal(t, 200, <-done)
	require.Eventually(t, func() bool { return bal.Status()[0].InFlight == 0 }, 5*time.Second, 5*time.Millisecond)
	require.Zero(t, bal.Status()[0].Prefilling)
}
