package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/test/poolsim"
	"github.com/llmkube/llmkube-compile/test/tcprelay"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// poolRouter is a router whose two backends share one ModelPool; the rule
// for "chat" waits for a swap, and so does the default route.
const poolRouter = `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: gpu, namespace: %[1]s}
spec:
  swapBudget: 30s
  members: [{inferenceServiceRef: {name: coder}}, {inferenceServiceRef: {name: chat}}]
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: coder, namespace: %[1]s}
spec: {modelRef: coder}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: chat, namespace: %[1]s}
spec: {modelRef: chat, replicas: 0}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: pooled, namespace: %[1]s}
spec:
  backends:
    - {name: coder, inferenceServiceRef: {name: coder}}
    - {name: chat, inferenceServiceRef: {name: chat}}
  rules:
    - name: chat
      match: {models: [chat]}
      route: {backends: [chat]}
    - name: coder
      match: {models: [coder]}
      route: {backends: [coder]}
  defaultRoute: coder
  proxy: {replicas: 3}
`

// pooledReplicas renders poolRouter with the real llmkube-compile, installs
// the rendered ServiceAccount, Role and RoleBinding, starts the simulated
// ModelPool reconciler, and runs n router-proxy processes that act as that
// ServiceAccount: the Role the Proxy target emits is all they get.
func pooledReplicas(t *testing.T, n int, load time.Duration, extra ...string) (*poolsim.Sim, []*proc, kubernetes.Interface, string) {
	t.Helper()
	env := testenv.Start(t)
	ns := env.NewNamespace(t)
	input := filepath.Join(t.TempDir(), "router.yaml")
	require.NoError(t, os.WriteFile(input, fmt.Appendf(nil, poolRouter, ns), 0o600))
	var cfg *proxyapi.Config
	var deployReplicas any
	for _, u := range render(t, input) {
		switch u.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			u.SetOwnerReferences(nil)
			require.NoError(t, env.CreateStrict(context.Background(), u), "%s", u.GetKind())
		case "ConfigMap":
			cfg = proxyConfig(t, u)
		case "Deployment":
			deployReplicas, _, _ = unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
		}
	}
	require.NotNil(t, cfg)
	require.EqualValues(t, 3, deployReplicas, "spec.proxy.replicas is honoured for a pooled router")
	sim := poolsim.Start(t, env.Dynamic, ns, "gpu", []string{"coder", "chat"}, "coder", load)
	for i := range cfg.Backends {
		cfg.Backends[i].URL = sim.URL(cfg.Backends[i].Name)
		cfg.Backends[i].HealthCheck.Interval = proxyapi.Duration{Duration: 200 * time.Millisecond}
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, env.WriteKubeconfig(kc, "system:serviceaccount:"+ns+":pooled-router-proxy", "system:serviceaccounts", "system:authenticated"))
	var ps []*proc
	for i := range n {
		args := append([]string{"--kubeconfig", kc, "--pool-poll-interval", "50ms", "--pool-resync-interval", "500ms", "--pool-lease-duration", "2s"}, extra...)
		ps = append(ps, startProxyEnv(t, cfg, []string{wellknown.PodNameEnv + "=replica-" + fmt.Sprint(i)}, args...))
	}
	for _, p := range ps {
		waitPoolKnown(t, p)
	}
	return sim, ps, kubernetes.NewForConfigOrDie(env.Config), ns
}

// TestPoolReplicasNeverScaleTwoMembers: three router-proxy processes under
// alternating two-model load share one pool. A watch on the
// InferenceServices never sees two members scaled up, every request is
// served by the member it asked for, and /status reports the pool.
func TestPoolReplicasNeverScaleTwoMembers(t *testing.T) {
	sim, ps, _, _ := pooledReplicas(t, 3, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range 6 {
		model := []string{"coder", "chat"}[i%2]
		p := ps[i%3]
		wg.Go(func() {
			for ctx.Err() == nil {
				code, body := p.post(t, chat(model))
				if code == http.StatusOK && strings.Contains(body, `"model":"`+model+`"`) {
					ok.Add(1)
					continue
				}
				bad.Add(1)
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%d %s", code, body))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	maxUp, both := sim.MaxScaledUp()
	assert.Equal(t, 1, maxUp, "never two members scaled up at once: %v", both)
	assert.Zero(t, bad.Load(), "%v", failures)
	assert.Positive(t, sim.Served("coder"))
	assert.Positive(t, sim.Served("chat"))
	t.Logf("served %d requests with %d activations", ok.Load(), sim.TotalActivations())
	assert.Less(t, sim.TotalActivations()*4, int(ok.Load()), "many requests per swap: no ping-pong")

	// Quiet now: every replica settles on the one resident member.
	require.Eventually(t, func() bool {
		var seen []string
		for _, p := range ps {
			st := p.status(t)
			if len(st.Pools) != 1 || !st.Pools[0].Known || st.Pools[0].Resident == "" {
				return false
			}
			seen = append(seen, st.Pools[0].Resident)
		}
		return seen[0] == seen[1] && seen[1] == seen[2]
	}, time.Minute, 50*time.Millisecond, "the replicas agree on the resident member")

	metrics := ps[0].metrics(t)
	for _, m := range []string{"llmkube_router_pool_hold_duration_seconds", "llmkube_router_pool_resident"} {
		assert.Contains(t, metrics, m)
	}
}

// TestPoolHolderKilledMidSwap: the replica holding the pool's Lease is
// killed after it scaled the incumbent down and before it scaled the target
// up. Its Lease expires, another replica takes it over and finishes the swap.
func TestPoolHolderKilledMidSwap(t *testing.T) {
	sim, ps, cs, ns := pooledReplicas(t, 2, 300*time.Millisecond)
	sim.UnloadDelay = time.Hour // the holder waits here for the incumbent to unload, until FinishUnload
	go func() { _, _ = postQuiet(ps[0], chat("chat")) }()
	require.Eventually(t, func() bool { return sim.Replicas("coder") == 0 }, time.Minute, 10*time.Millisecond, "replica-0 started the swap")
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), wellknown.PoolLeaseName("gpu"), metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "replica-0", ptr.Deref(l.Spec.HolderIdentity, ""))
	require.Equal(t, "chat", l.Annotations[wellknown.PoolSwapTargetAnnotation])
	require.Eventually(t, func() bool {
		st := ps[1].status(t)
		return len(st.Pools) == 1 && st.Pools[0].LeaseHolder == "replica-0" && st.Pools[0].Pending == "chat"
	}, time.Minute, 20*time.Millisecond, "the other replica's /status shows the Lease holder and its pending swap")
	require.NoError(t, ps[0].cmd.Process.Kill())
	<-ps[0].done
	require.EqualValues(t, 0, sim.Replicas("chat"), "killed before the target was scaled up")
	sim.FinishUnload("coder")

	start := time.Now()
	code, body := ps[1].post(t, chat("chat"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"model":"chat"`)
	t.Logf("replica-1 finished the swap after %s", time.Since(start))
	assert.Equal(t, 1, sim.Activations("chat"))
	maxUp, both := sim.MaxScaledUp()
	assert.Equal(t, 1, maxUp, "%v", both)
	l, err = cs.CoordinationV1().Leases(ns).Get(context.Background(), wellknown.PoolLeaseName("gpu"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ptr.Deref(l.Spec.LeaseTransitions, 0), int32(1), "replica-1 took the Lease over")
	st := ps[1].status(t)
	require.Len(t, st.Pools, 1)
	assert.Equal(t, "chat", st.Pools[0].Resident)
	// Counted once. Its from label is what replica-1 believed resident when
	// it started: "" once its poll saw replica-0 scale coder down, still
	// coder when the request came first (a busy machine's order).
	swaps := regexp.MustCompile(`(?m)^llmkube_router_pool_swaps_total\{from="(|coder)",pool="gpu",router="pooled",to="chat"\} (\d+)$`).
		FindAllStringSubmatch(ps[1].metrics(t), -1)
	require.Len(t, swaps, 1, "the swap it finished is counted, under one from label")
	assert.Equal(t, "1", swaps[0][2], "the swap it finished is counted once")
}

// TestPoolHoldPastBudgetIs503: a member that never becomes Ready answers
// 503 with Retry-After and an OpenAI error once the swap budget passes, and
// the target is scaled back down when no caller came back for it within one
// more budget.
func TestPoolHoldPastBudgetIs503(t *testing.T) {
	env, ns, sim := simPool(t, 100*time.Millisecond)
	sim.NeverReady("chat")
	cfg := simConfig(ns, sim, time.Second)
	cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: "chat-warm", Match: proxyapi.Match{Models: []string{"chat-or-warm"}}, Backends: []string{"chat", "coder"}, Strategy: "primary-fallback", PoolActivation: "IfIdle"})
	p := poolReplica(t, env, cfg)

	// IfIdle: while the incumbent serves a slow request, the rule skips
	// the pooled chat backend at once and serves on the warm one. The slow
	// request takes 8 s (under the 10-s header timeout) so that it is still in
	// flight on a busy machine.
	slow := make(chan int, 1)
	go func() {
		code, _ := p.post(t, chat("coder"), "X-Test-Delay", "8s")
		slow <- code
	}()
	require.Eventually(t, func() bool {
		return strings.Contains(p.metrics(t), `llmkube_router_inflight_requests{router="pooled"} 1`)
	}, time.Minute, 10*time.Millisecond)
	// Held, it would be served by chat after a swap (an activation).
	code, body := p.post(t, chat("chat-or-warm"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"model":"coder"`, "served on the warm member, skipped at once, not held")
	assert.Equal(t, 0, sim.Activations("chat"))
	assert.Equal(t, http.StatusOK, <-slow)
	assert.Contains(t, p.metrics(t), `llmkube_router_pool_ifidle_skips_total{member="chat",pool="gpu",router="pooled"} 1`)

	// Wait: the member never loads; past the swap budget the answer is 503.
	a := p.send(t, chatPath, chat("chat"))
	var e struct {
		Error struct{ Type, Code, Message string }
	}
	decodeJSON(t, a.body, &e)
	assert.Equal(t, http.StatusServiceUnavailable, a.code, "never 429: that means a budget")
	assert.NotEmpty(t, a.hdr.Get("Retry-After"))
	assert.Equal(t, "model_pool_swap_timeout", e.Error.Code)
	assert.Equal(t, "server_error", e.Error.Type)
	require.Eventually(t, func() bool { return sim.Replicas("chat") == 0 }, time.Minute, 20*time.Millisecond, "the abandoned swap is undone")
	assert.Contains(t, p.metrics(t), `llmkube_router_pool_holds_abandoned_total{member="chat",pool="gpu",reason="budget_exceeded",router="pooled"} 1`)
}

// simPool starts an API server with a namespace of the test's own, and
// there the simulated reconciler of pool gpu: members coder (resident) and
// chat, each taking load to become Ready.
func simPool(t *testing.T, load time.Duration) (*testenv.Env, string, *poolsim.Sim) {
	t.Helper()
	env := testenv.Start(t)
	ns := env.NewNamespace(t)
	return env, ns, poolsim.Start(t, env.Dynamic, ns, "gpu", []string{"coder", "chat"}, "coder", load)
}

// poolReplica is startReplica with a kubeconfig of env's administrator.
func poolReplica(t *testing.T, env *testenv.Env, cfg *proxyapi.Config, extra ...string) *proc {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, env.WriteKubeconfig(kc, ""))
	return startReplica(t, kc, cfg, extra...)
}

// startReplica starts replica-0 of cfg on the kubeconfig kc, its pool
// polled every 50 ms and extra flags after, and waits until it knows its
// pool.
func startReplica(t *testing.T, kc string, cfg *proxyapi.Config, extra ...string) *proc {
	t.Helper()
	p := startProxyEnv(t, cfg, []string{wellknown.PodNameEnv + "=replica-0"}, append([]string{"--kubeconfig", kc, "--pool-poll-interval", "50ms"}, extra...)...)
	waitPoolKnown(t, p)
	return p
}

// waitPoolKnown waits until the replica has read its pool's members.
func waitPoolKnown(t *testing.T, p *proc) {
	t.Helper()
	require.Eventually(t, func() bool {
		st := p.status(t)
		return len(st.Pools) == 1 && st.Pools[0].Known
	}, 20*time.Second, 20*time.Millisecond, "the resident member is learned on a cold start")
}

// simConfig is a router-proxy config over sim's two members (coder
// resident) sharing pool gpu: a Wait rule for chat, coder by default.
func simConfig(ns string, sim *poolsim.Sim, budget time.Duration) *proxyapi.Config {
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "pooled", Namespace: ns},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 10 * time.Second}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Policy:     proxyapi.Policy{Audit: proxyapi.Audit{Sink: "stdout"}},
		Rules: []proxyapi.Rule{
			{Name: "chat", Match: proxyapi.Match{Models: []string{"chat"}}, Backends: []string{"chat"}, Strategy: "primary-fallback", PoolActivation: "Wait"},
		},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "coder"},
	}
	for _, m := range []string{"coder", "chat"} {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: m, ModelID: m, Kind: proxyapi.KindLocal, Tier: "local", Weight: 1, URL: sim.URL(m), HealthCheck: probeEvery(200 * time.Millisecond),
			Pool: &proxyapi.Pool{Name: "gpu", InferenceService: m, Members: []string{"coder", "chat"}, SwapBudget: proxyapi.Duration{Duration: budget}}})
	}
	return cfg
}

// postQuiet posts a chat completion and fails no test: a goroutine's.
func postQuiet(p *proc, body string) (int, error) {
	a, err := p.request(http.DefaultClient, http.MethodPost, chatPath, body, "Content-Type", "application/json")
	return a.code, err
}

// apiFront forwards TCP to the API server and can be cut: the router-proxy
// process then loses the API server the way it would in a cluster.
type apiFront struct {
	addr  string // the front's
	to    string
	mu    sync.Mutex
	conns []net.Conn
	down  atomic.Bool
}

func newAPIFront(t *testing.T, to string) *apiFront {
	f := &apiFront{to: to}
	t.Cleanup(f.cut) // after the listener closes
	f.addr = tcprelay.Listen(t, func(c net.Conn) {
		if f.down.Load() {
			c.Close()
			return
		}
		u, err := net.Dial("tcp", to)
		if err != nil {
			c.Close()
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c, u)
		f.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); u.Close() }()
		_, _ = io.Copy(c, u)
		c.Close()
	})
	return f
}

// cut refuses new connections and closes the open ones.
func (f *apiFront) cut() {
	f.down.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// TestPoolAPIServerUnavailable: with the API server unreachable, the
// router-proxy process keeps serving the resident member, answers a request
// that needs a swap with 503 and Retry-After once the swap budget passes
// (the audit says why), and swaps again when the API server is back.
func TestPoolAPIServerUnavailable(t *testing.T) {
	env, ns, sim := simPool(t, 100*time.Millisecond)
	cfg := simConfig(ns, sim, 2*time.Second)
	fileAudit(t, cfg)
	api, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	front := newAPIFront(t, api.Host)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, env.WriteKubeconfig(kc, ""))
	raw, err := os.ReadFile(kc)
	require.Contains(t, string(raw), api.Host)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kc, []byte(strings.ReplaceAll(string(raw), api.Host, front.addr)), 0o600))
	p := startReplica(t, kc, cfg, "--pool-resync-interval", "300ms")

	front.cut()
	for range 5 {
		code, body := p.post(t, chat("coder"))
		require.Equal(t, http.StatusOK, code, "the resident member needs no API call: %s", body)
	}
	a := p.send(t, chatPath, chat("chat"), "Content-Type", "application/json")
	assert.Equal(t, http.StatusServiceUnavailable, a.code)
	assert.NotEmpty(t, a.hdr.Get("Retry-After"))
	audit, err := os.ReadFile(cfg.Policy.Audit.FilePath)
	require.Eventually(t, func() bool {
		audit, err = os.ReadFile(cfg.Policy.Audit.FilePath)
		return err == nil && strings.Contains(string(audit), "pool_hold_expired")
	}, time.Minute, 50*time.Millisecond, "audited: %s", audit)
	assert.Contains(t, string(audit), "Lease", "the audit names what the swap could not reach")
	assert.Equal(t, 0, sim.Activations("chat"))

	// Back: a client retrying as Retry-After says is served by chat (the
	// API client may first ride out a connection the cut left behind).
	front.down.Store(false)
	var body string
	require.Eventually(t, func() bool {
		var code int
		code, body = p.post(t, chat("chat"))
		return code == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "status: %+v", p.status(t).Pools)
	assert.Contains(t, body, `"model":"chat"`)
	assert.Equal(t, 1, sim.Activations("chat"))
}

// TestPoolSwapOutlastsBudget: a member that takes longer to load than the
// swap budget. The held request is answered 503 at the budget, the swap goes
// on, and the retry the Retry-After asks for is served by the now loaded
// member: one load, not one restarted (and abandoned) per retry.
func TestPoolSwapOutlastsBudget(t *testing.T) {
	// The swap is abandoned if no retry comes within Retry-After (1 s on a
	// first swap) plus one budget: a 10 s budget leaves the retry 10 s of
	// slack on a busy machine (1 s and 3 s budgets each failed the test
	// there once); the load takes twice the budget.
	env, ns, sim := simPool(t, 20*time.Second)
	cfg := simConfig(ns, sim, 10*time.Second)
	p := poolReplica(t, env, cfg)

	// A client that retries as Retry-After says.
	deadline := time.Now().Add(2 * time.Minute)
	var body []byte
	for tries := 1; ; tries++ {
		resp, err := http.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(chat("chat")))
		require.NoError(t, err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if resp.StatusCode == http.StatusOK {
			require.Greater(t, tries, 1, "the load outlasts the first request's budget")
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
		after, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err)
		require.True(t, time.Now().Before(deadline), "still refused after %d tries: %s", tries, body)
		time.Sleep(time.Duration(after) * time.Second)
	}
	assert.Contains(t, string(body), `"model":"chat"`)
	assert.Equal(t, 1, sim.Activations("chat"), "the load the first request started served the retry")
}

// TestPoolSwappedOutMemberStaysEligible: a swap unloads the incumbent. Neither
// the replica that swaps nor another one whose view of the pool predates the
// swap (its resync is a minute away) reports the unloaded member unhealthy
// from its probes, so a request for it is held for a swap back, not refused
// with no_route or sent down the default route to another model.
func TestPoolSwappedOutMemberStaysEligible(t *testing.T) {
	_, ps, _, _ := pooledReplicas(t, 2, 800*time.Millisecond, "--pool-resync-interval", "1m")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var unhealthy []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			for i, p := range ps {
				st, _ := p.readStatus() // what could be read; none when the replica did not answer
				for _, b := range st.Backends {
					if !b.Healthy {
						mu.Lock()
						unhealthy = append(unhealthy, fmt.Sprintf("replica-%d %s: %s", i, b.Name, b.Message))
						mu.Unlock()
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	code, body := ps[0].post(t, chat("chat"))
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"model":"chat"`)
	time.Sleep(time.Second) // replica-1 probes coder about five times
	cancel()
	wg.Wait()
	assert.Empty(t, unhealthy, "a member swapped out is activated on demand, not unhealthy")
	code, body = ps[1].post(t, chat("coder"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"model":"coder"`)
}

// TestKubeAPIThrottle: --kube-api-qps and --kube-api-burst bound what the
// proxy's API client sends. The proxy reaches the real API server through a
// loopback reverse proxy that notes when each request arrives; a swap with
// 50 ms polls wants far more than 2 requests a second, and in no stretch of
// time do more arrive than the token bucket lets out (burst + qps × length,
// plus one for requests delayed on the way and arriving together).
func TestKubeAPIThrottle(t *testing.T) {
	env, ns, sim := simPool(t, 200*time.Millisecond)
	cfg := simConfig(ns, sim, 30*time.Second)

	target, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	tr, err := rest.TransportFor(env.Config)
	require.NoError(t, err)
	var mu sync.Mutex
	var arrived []time.Time
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tr
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"front": {Server: front.URL}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"front": {}},
		Contexts:       map[string]*clientcmdapi.Context{"front": {Cluster: "front", AuthInfo: "front"}},
		CurrentContext: "front",
	}, kc))

	const qps, burst = 2, 1
	p := startReplica(t, kc, cfg, "--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(burst))
	code, body := p.post(t, chat("chat"))
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "chat", served(t, body), "the throttled client still swaps the pool")

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests over %s", len(arrived), arrived[len(arrived)-1].Sub(arrived[0]))
	require.Greater(t, len(arrived), 4, "the proxy read the pool through the front")
	for i := range arrived {
		for j := i + 1; j < len(arrived); j++ {
			span := arrived[j].Sub(arrived[i]).Seconds()
			if n := j - i + 1; float64(n) > burst+qps*span+1 {
				t.Fatalf("%d API requests arrived within %.2fs: more than --kube-api-qps %d and --kube-api-burst %d let out", n, span, qps, burst)
			}
		}
	}
}

// TestKubeAPIThrottleFlagsRefused: a throttle that would stall or switch
// off the API client is refused at start, naming the flag.
func TestKubeAPIThrottleFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps must be greater than 0, got 0"},
		{[]string{"--kube-api-qps", "-1"}, "--kube-api-qps must be greater than 0, got -1"},
		{[]string{"--kube-api-qps", "NaN"}, "--kube-api-qps must be greater than 0, got NaN"},
		{[]string{"--kube-api-burst", "0"}, "--kube-api-burst must be at least 1, got 0"},
	} {
		assert.Contains(t, refusedAtStart(t, nil, tc.args...), tc.want, "%v", tc.args)
	}
}
