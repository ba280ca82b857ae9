//go:build e2ecluster

package cluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// TestFaults: the chart installed as TestHelmInstall installs it (two
// controller replicas with leader election, the budget store on a real
// Redis), then one fault at a time under steady load, each reporting what
// clients saw and what was lost (docs/reliability.md has the table):
//   - Redis killed and restarted while two router-proxy replicas share a
//     budget, in closed and open modes;
//   - a router-proxy pod evicted (its PodDisruptionBudget) and one killed
//     with SIGKILL, two replicas serving;
//   - an upstream that hangs mid-stream and one that resets the connection;
//   - the leading controller killed with SIGKILL in the middle of applying
//     a router;
//   - kube-apiserver stopped for 60 s.
//
// Every assertion is a count or an invariant; no wall-clock bound.
func TestFaults(t *testing.T) {
	llmkubeCRDs(t)
	redis := startRedisDurable(t)
	redisService(t)
	installChart(t, true, "replicas=2", "budgetStore.url="+redisURL)

	t.Run("budget store killed and restarted", func(t *testing.T) { budgetStoreOutage(t, redis) })
	t.Run("router-proxy pod evicted and killed under load", proxyPodKilled)
	t.Run("upstream hangs and resets mid-stream", upstreamFaults)
	t.Run("controller killed mid-apply", controllerKilledMidApply)
	t.Run("a pod never serves another generation's config", otherGenerationRefused)
	t.Run("kube-apiserver stopped for 60s", apiserverOutage)
}

// ---------------------------------------------------------------- budget store

// budgetStoreOutage: two routers with two replicas each count one budget in
// Redis, one rendered by the controller in the chart's closed mode, one by
// `llmkube-compile render --budget-store-failure open`. Redis (append-only
// file, fsync always) is killed with SIGKILL under load and restarted 10 s
// later. Closed: during the outage clients get 503 budget_store_unavailable
// with Retry-After, nothing is served uncounted, and the budget is never
// overrun. Open: clients are served, each replica admits at most one budget
// of its own, and once Redis is back every answered token is in the shared
// count (nothing lost), so the overrun is at most replicas x budget.
func budgetStoreOutage(t *testing.T, redis *durableRedis) {
	const answer = 15 // tokens of each stub answer
	closedNS, openNS := namespace(t, "faults-closed"), namespace(t, "faults-open")
	const closedCap, openCap = 600, 150
	routerDoc := func(ns, name string, maxTokens int) string {
		return inferenceService("model", ns) + fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: %s, namespace: %s}
spec:
  proxy: {replicas: 2}
  backends: [`+stubBackend+`]
  defaultRoute: model
  policy:
    budgets: [{name: tokens, scope: router, maxTokens: %d, windowSeconds: 3600}]
`, name, ns, maxTokens)
	}
	for _, ns := range []string{closedNS, openNS} {
		apply(t, stubModel("model", ns, 1, 0))
	}
	apply(t, routerDoc(closedNS, "closed", closedCap))
	// The open router as a platform renders it without the controller.
	in := filepath.Join(t.TempDir(), "open.yaml")
	if err := os.WriteFile(in, []byte(routerDoc(openNS, "open", openCap)), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, run(t, "", e.bin, "render", "-f", in, "--budget-store", redisURL, "--budget-store-failure", "open"))
	for ns, name := range map[string]string{closedNS: "closed", openNS: "open"} {
		kubectl(t, "-n", ns, "rollout", "status", "deploy/model", "--timeout=120s")
		kubectl(t, "-n", ns, "rollout", "status", "deploy/"+name+"-router-proxy", "--timeout=120s")
		waitEndpoints(t, ns, name+"-router-proxy", 2)
	}
	closedURL, openURL := serviceURL(t, closedNS, "closed-router-proxy"), serviceURL(t, openNS, "open-router-proxy")
	// One answer each before the load (the backend's first health probe
	// may still be due): counted in the budget, so in what clients got.
	for _, base := range []string{closedURL, openURL} {
		eventually(t, 60*time.Second, "a first answer", func() error {
			r, err := chat(base, "model", map[string]string{"Connection": "close"})
			if err != nil || r.status != http.StatusOK {
				return errorf("%v %d %s", err, r.status, r.body)
			}
			return nil
		})
	}

	// A connection per request, so kube-proxy spreads them over both replicas.
	closedLoad := startPhasedLoad(closedURL, 2, 250*time.Millisecond)
	openLoad := startPhasedLoad(openURL, 1, 500*time.Millisecond)
	time.Sleep(3 * time.Second)
	// A request is counted in the phase it was sent in: the outage starts
	// once Redis is dead, and ends as it is started again, before it can
	// answer. So a request counted in the outage met a dead Redis, but for
	// the one each client may have in flight as Redis comes back, which
	// the replicas admit once their probe (every second) finds it up.
	// (Ending the outage at Redis's first PONG instead left up to half a
	// second in which requests counted in the outage were served.)
	redis.kill(t)
	closedLoad.setPhase(phaseOutage)
	openLoad.setPhase(phaseOutage)
	time.Sleep(10 * time.Second)
	closedLoad.setPhase(phaseAfter)
	openLoad.setPhase(phaseAfter)
	redis.start(t)
	// Until both budgets refuse: every token served is counted by then.
	eventually(t, 2*time.Minute, "both budgets exhausted after the outage", func() error {
		c, o := closedLoad.count(phaseAfter, "429 budget_exceeded"), openLoad.count(phaseAfter, "429 budget_exceeded")
		if c < 3 || o < 3 {
			return errorf("429s after the outage: closed %d, open %d", c, o)
		}
		return nil
	})
	closedLoad.stop()
	openLoad.stop()
	t.Logf("closed: %s", closedLoad)
	t.Logf("open: %s", openLoad)

	// What clients saw: only the documented answers, never a transport
	// error. Closed, before the outage too: a round trip that Redis's death
	// (or a busy node past --budget-store-timeout) cut fails its request.
	closedLoad.allow(t, map[string][]string{
		phaseBefore: {"200", "503 budget_store_unavailable", "429 budget_exceeded"},
		phaseOutage: {"200", "503 budget_store_unavailable"},
		phaseAfter:  {"200", "503 budget_store_unavailable", "429 budget_exceeded"},
	})
	openLoad.allow(t, map[string][]string{
		phaseBefore: {"200", "429 budget_exceeded"},
		phaseOutage: {"200", "429 budget_exceeded"},
		phaseAfter:  {"200", "429 budget_exceeded"},
	})
	if n := closedLoad.count(phaseOutage, "503 budget_store_unavailable"); n == 0 {
		t.Errorf("closed: no request met the outage (503 budget_store_unavailable): the scenario did not exercise it")
	}
	if !closedLoad.retryAfterOn503 {
		t.Errorf("closed: a 503 budget_store_unavailable without Retry-After")
	}
	// Closed: of the requests sent while Redis was dead, only those in
	// flight as it came back (one per client: a client sends its next
	// request after the answer) may be served; the shared count below
	// holds every one of them (nothing served uncounted).
	if n := closedLoad.count(phaseOutage, "200"); n > 2 {
		t.Errorf("closed: %d requests sent while Redis was dead were served, want at most the 2 in flight as it came back", n)
	}
	if n := openLoad.count(phaseOutage, "200"); n == 0 {
		t.Errorf("open: nothing served during the outage")
	}

	// Nothing lost: the shared count is every answered token, the open
	// replicas' outage counts included (flushed once Redis answered).
	for _, c := range []struct {
		ns, name string
		l        *phasedLoad
		bound    int
	}{
		// Closed: never over the budget but for one answer in flight on
		// each replica when it was reached.
		{closedNS, "closed", closedLoad, closedCap + 2*answer},
		// Open: the shared budget, plus one budget per replica admitted on
		// its own count while Redis was down, plus one in flight each.
		{openNS, "open", openLoad, openCap + 2*openCap + 2*answer},
	} {
		served := (c.l.count("", "200") + 1) * answer // and the first answer
		eventually(t, 30*time.Second, c.name+": the shared count equals the answered tokens", func() error {
			used, err := sharedTokens(c.ns, c.name)
			if err != nil {
				return err
			}
			if used != served {
				return errorf("Redis counts %d tokens, clients were answered %d", used, served)
			}
			return nil
		})
		if served > c.bound {
			t.Errorf("%s: %d tokens answered on a %s budget: over the documented bound %d", c.name, served, map[string]string{"closed": strconv.Itoa(closedCap), "open": strconv.Itoa(openCap)}[c.name], c.bound)
		}
		t.Logf("%s: %d tokens answered, bound %d", c.name, served, c.bound)
	}
}

// sharedTokens is the budget's shared count as the router-proxy reports it
// (/status on its admin port, read from Redis).
func sharedTokens(ns, name string) (int, error) {
	pods, err := e.kube.CoreV1().Pods(ns).List(context.Background(), listOpts("app="+name+"-router-proxy"))
	if err != nil || len(pods.Items) == 0 {
		return 0, errorf("router-proxy pods: %v", err)
	}
	resp, err := client.Get("http://" + net.JoinHostPort(pods.Items[0].Status.PodIP, "9090") + "/status")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st proxyapi.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, err
	}
	if st.BudgetStore != nil && !st.BudgetStore.Healthy {
		return 0, errorf("budget store still down: %s", st.BudgetStore.Message)
	}
	for _, b := range st.Budgets {
		if b.Name == "tokens" {
			return int(b.TokensUsed), nil
		}
	}
	return 0, errorf("no budget tokens in %+v", st.Budgets)
}

// durableRedis is redis-server on the node's bridge address with an
// append-only file fsynced on every write, as a platform runs a budget
// store it cannot lose: killed and started again it has every count.
type durableRedis struct {
	dir string
	cmd *exec.Cmd
}

func startRedisDurable(t *testing.T) *durableRedis {
	t.Helper()
	r := &durableRedis{dir: t.TempDir()}
	r.start(t)
	t.Cleanup(func() { r.kill(t) })
	return r
}

func (r *durableRedis) start(t testing.TB) {
	t.Helper()
	r.cmd = exec.Command("redis-server", "--bind", nodeIP, "--port", redisPort, "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "no")
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("redis-server (hack/install-test-deps.sh installs it): %v", err)
	}
	eventually(t, 30*time.Second, "redis-server up", func() error {
		out, err := tryRun("", "redis-cli", "-h", nodeIP, "-p", redisPort, "ping")
		if err != nil || strings.TrimSpace(out) != "PONG" {
			return errorf("%v %q", err, out)
		}
		return nil
	})
}

func (r *durableRedis) cli(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, "", "redis-cli", append([]string{"-h", nodeIP, "-p", redisPort}, args...)...)
}

// kill ends it with SIGKILL, as an OOM kill or a node failure does.
func (r *durableRedis) kill(t testing.TB) {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// redisService is platform/redis: a Service without selector whose
// EndpointSlice names the node, where the Redis of these tests listens.
func redisService(t *testing.T) {
	t.Helper()
	apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: platform}
---
apiVersion: v1
kind: Service
metadata: {name: redis, namespace: platform}
spec:
  ports: [{name: redis, port: 6379, targetPort: `+redisPort+`}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: redis-host
  namespace: platform
  labels: {kubernetes.io/service-name: redis}
addressType: IPv4
ports: [{name: redis, port: `+redisPort+`}]
endpoints: [{addresses: [`+nodeIP+`]}]
`)
	// Gone before the next scenario creates it again.
	t.Cleanup(func() {
		_, _ = tryRun("", "kubectl", "delete", "namespace", "platform", "--wait=true", "--timeout=120s")
	})
}

// waitEndpoints waits until a Service has n ready endpoints, then gives
// kube-proxy a moment to program them.
func waitEndpoints(t *testing.T, ns, svc string, n int) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%d ready endpoints behind %s/%s", n, ns, svc), func() error {
		if got := readyEndpoints(t, ns, svc); got != n {
			return errorf("%d ready endpoints", got)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
}

// The phases of a fault, as the load records its answers.
const (
	phaseBefore = "before"
	phaseOutage = "outage"
	phaseAfter  = "after"
)

// phasedLoad is steady load that counts each answer by the fault's phase
// when it was sent and by its class: "200", "<status> <error code>", or
// "transport: ..." for a request that got no answer.
type phasedLoad struct {
	phase           atomic.Value // string
	done            chan struct{}
	wg              sync.WaitGroup
	mu              sync.Mutex
	counts          map[string]map[string]int
	retryAfterOn503 bool
}

func startPhasedLoad(base string, clients int, interval time.Duration) *phasedLoad {
	l := &phasedLoad{done: make(chan struct{}), counts: map[string]map[string]int{}, retryAfterOn503: true}
	l.phase.Store(phaseBefore)
	everyTick(&l.wg, l.done, clients, interval, func() {
		phase := l.phase.Load().(string)
		r, err := chat(base, "model", map[string]string{"Connection": "close"})
		l.record(phase, r, err)
	})
	return l
}

func (l *phasedLoad) record(phase string, r reply, err error) {
	class := "200"
	switch {
	case err != nil:
		class = "transport: " + err.Error()
	case r.status != http.StatusOK:
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(r.body), &body)
		class = fmt.Sprintf("%d %s", r.status, body.Error.Code)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts[phase] == nil {
		l.counts[phase] = map[string]int{}
	}
	l.counts[phase][class]++
	if err == nil && r.status == http.StatusServiceUnavailable {
		if r.headers.Get("Retry-After") == "" {
			l.retryAfterOn503 = false
		}
	}
}

func (l *phasedLoad) setPhase(p string) { l.phase.Store(p) }

func (l *phasedLoad) stop() { close(l.done); l.wg.Wait() }

// count is how many answers of class were sent in phase ("" = any phase).
func (l *phasedLoad) count(phase, class string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p, m := range l.counts {
		if phase == "" || p == phase {
			n += m[class]
		}
	}
	return n
}

// allow fails the test on any answer of a class its phase does not allow.
func (l *phasedLoad) allow(t *testing.T, allowed map[string][]string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for phase, m := range l.counts {
		for class, n := range m {
			ok := false
			for _, a := range allowed[phase] {
				ok = ok || a == class
			}
			if !ok {
				t.Errorf("%s the fault: %d answers %q, which the docs do not promise", phase, n, class)
			}
		}
	}
}

// classes are the answer classes seen in phase.
func (l *phasedLoad) classes(phase string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for c := range l.counts[phase] {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func (l *phasedLoad) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, p := range []string{phaseBefore, phaseOutage, phaseAfter} {
		var classes []string
		for c, n := range l.counts[p] {
			classes = append(classes, fmt.Sprintf("%s=%d", c, n))
		}
		sort.Strings(classes)
		parts = append(parts, p+" {"+strings.Join(classes, ", ")+"}")
	}
	return strings.Join(parts, " ")
}

// ---------------------------------------------------------------- router-proxy pods

// proxyPodKilled: a router with two replicas gets a PodDisruptionBudget
// that lets an eviction (a node drain) take one pod and refuses the
// second while the first is being replaced; then one pod is killed with
// SIGKILL under load. Requests that fail after they were sent are at most
// those in flight on the killed pod (one per client); new connections
// kube-proxy sends to its address until the kubelet has restarted the
// container are refused (nothing was sent: a client may retry them), and
// are counted.
func proxyPodKilled(t *testing.T) {
	ns := namespace(t, "faults-pods")
	base := twoReplicaRouter(t, ns, "two", 50*time.Millisecond)

	// The PodDisruptionBudget, as the API server's eviction judges it.
	pdb, err := e.kube.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), "two-router-proxy", metaGet)
	if err != nil {
		t.Fatalf("no PodDisruptionBudget for a router with two replicas: %v", err)
	}
	eventually(t, 60*time.Second, "the PodDisruptionBudget allowing one disruption", func() error {
		p, err := e.kube.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), pdb.Name, metaGet)
		if err != nil {
			return err
		}
		if p.Status.DisruptionsAllowed != 1 {
			return errorf("disruptionsAllowed %d (healthy %d of %d)", p.Status.DisruptionsAllowed, p.Status.CurrentHealthy, p.Status.ExpectedPods)
		}
		return nil
	})
	pods := podsOf(t, ns, "app=two-router-proxy")
	evict := func(pod string) error {
		return e.kube.PolicyV1().Evictions(ns).Evict(context.Background(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
	}
	// Under load, as a drain meets it: the evicted pod drains (docs/
	// router-proxy.md) while the other serves; nothing fails.
	drain := startLoad(base, "model", nil, 2, 20*time.Millisecond)
	if err := evict(pods[0].Name); err != nil {
		t.Fatalf("evicting the first replica: %v", err)
	}
	if err := evict(pods[1].Name); !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting the second replica while the first is replaced: %v, want 429 (the budget refuses it)", err)
	}
	kubectl(t, "-n", ns, "rollout", "status", "deploy/two-router-proxy", "--timeout=120s")
	waitEndpoints(t, ns, "two-router-proxy", 2)
	drain.finish(t, "a router-proxy pod evicted")

	// SIGKILL under load: 4 clients, each sending its next request on a
	// new connection once the last is answered (so kube-proxy spreads them).
	const clients = 4
	l := startPhasedLoad(base, clients, 20*time.Millisecond)
	time.Sleep(3 * time.Second)
	victim := podsOf(t, ns, "app=two-router-proxy")[0]
	restarts := victim.Status.ContainerStatuses[0].RestartCount
	l.setPhase(phaseOutage)
	killContainer(t, victim, "router-proxy")
	// The kubelet restarts the container in the same pod (same address);
	// the outage ends when it is ready again.
	eventually(t, 90*time.Second, "the killed router-proxy restarted and ready", func() error {
		p, err := e.kube.CoreV1().Pods(ns).Get(context.Background(), victim.Name, metaGet)
		if err != nil {
			return err
		}
		if c := p.Status.ContainerStatuses[0]; c.RestartCount == restarts || !c.Ready {
			return errorf("restarts %d, ready %v", c.RestartCount, c.Ready)
		}
		return nil
	})
	l.setPhase(phaseAfter)
	time.Sleep(3 * time.Second)
	l.stop()
	t.Logf("SIGKILL of %s: %s", victim.Name, l)
	if l.count(phaseBefore, "200") == 0 || l.count(phaseAfter, "200") == 0 {
		t.Errorf("no answers before or after the kill: %s", l)
	}
	// Only 200s once the restarted container is ready. A request in
	// flight at the kill was sent before it: it counts with the outage's.
	l.allow(t, map[string][]string{phaseBefore: l.classes(phaseBefore), phaseAfter: {"200"}, phaseOutage: l.classes(phaseOutage)})
	failed, refused := 0, 0
	for _, phase := range []string{phaseBefore, phaseOutage} {
		for _, class := range l.classes(phase) {
			switch n := l.count(phase, class); {
			case class == "200":
			case strings.Contains(class, "connection refused"):
				refused += n
			default:
				failed += n
			}
		}
	}
	t.Logf("failed after sending: %d (bound %d: one in flight per client); refused connections: %d", failed, clients, refused)
	if failed > clients {
		t.Errorf("%d requests failed after they were sent, want at most %d (those in flight on the killed pod)", failed, clients)
	}
}

// twoReplicaRouter is a router named name in ns with two router-proxy
// replicas and one stub model (answering after delay) as its default
// route, Ready, both replicas in its Service; it returns the Service URL.
func twoReplicaRouter(t *testing.T, ns, name string, delay time.Duration) string {
	t.Helper()
	apply(t, stubModel("model", ns, 1, delay))
	apply(t, inferenceService("model", ns)+`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  proxy: {replicas: 2}
  backends: [`+stubBackend+`]
  defaultRoute: model
`)
	waitRouterReady(t, ns, name)
	kubectl(t, "-n", ns, "rollout", "status", "deploy/"+name+"-router-proxy", "--timeout=120s")
	waitEndpoints(t, ns, name+"-router-proxy", 2)
	return serviceURL(t, ns, name+"-router-proxy")
}

// podReady is a pod's Ready condition.
func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" && c.Status == "True" {
			return true
		}
	}
	return false
}

// killContainer SIGKILLs a container's process from the node, as the
// kernel's OOM killer or a crash ends it.
func killContainer(t *testing.T, pod corev1.Pod, container string) {
	t.Helper()
	pid := containerProcess(t, pod, container).pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -KILL %d (%s/%s): %v", pid, pod.Name, container, err)
	}
	t.Logf("killed %s/%s (pid %d) with SIGKILL", pod.Name, container, pid)
}

// ---------------------------------------------------------------- upstreams

// upstreamFaults: a model that starts a stream and hangs, and one that
// resets the connection mid-stream, 20 requests each at once. The client
// gets the stream's start and then its end (the stream-idle timeout, 3 s
// here; the reset at once); the router-proxy's goroutines and heap return
// to where they were before.
func upstreamFaults(t *testing.T) {
	ns := namespace(t, "faults-upstream")
	apply(t, stubModel("model", ns, 1, 0))
	apply(t, inferenceService("model", ns)+`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: streams, namespace: `+ns+`}
spec:
  proxy: {streamIdleTimeout: 3s, quarantineDuration: 1s}
  backends: [`+stubBackend+`]
  defaultRoute: model
`)
	waitRouterReady(t, ns, "streams")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/streams-router-proxy", "--timeout=120s")
	base := serviceURL(t, ns, "streams-router-proxy")
	pod := podsOf(t, ns, "app=streams-router-proxy")[0]
	// The backend answers once it is eligible: a fault batch quarantines it
	// (1 s here), and on a busy node two probes in a row can time out, which
	// makes the only backend ineligible until a probe passes
	// (docs/router-proxy.md#health): 503 no_route. Neither is what this
	// scenario measures, so each request outside the fault batches waits
	// such a gap out.
	answers := func(what string) {
		eventually(t, 60*time.Second, what, func() error {
			r, err := chat(base, "model", nil)
			if err != nil || r.status != http.StatusOK {
				return errorf("%v %d %s", err, r.status, r.body)
			}
			return nil
		})
	}
	// Warm up: connections, pools and the first allocations in place.
	for i := 0; i < 20; i++ {
		answers("a warm-up answer")
	}
	before := proxyRuntime(t, pod.Status.PodIP)

	// One fault at a time, 20 streams at once: a fault quarantines the
	// backend (1 s here), so the other fault's batch waits it out. A batch
	// starts once the backend answers again; on a busy node a health probe
	// can time out between the warm-up and the batch, and then the whole
	// batch is refused 503 no_route before any request reaches the model:
	// such a batch is counted and sent again (at most 5 times).
	const n = 20
	seen := map[string]int{}
	for _, fault := range []string{"hang-mid-stream", "reset-mid-stream"} {
		for attempt := 1; attempt <= 5 && seen[fault+": started, then ended"] == 0; attempt++ {
			answers("the backend answers before the " + fault + " batch")
			results := make(chan string, n)
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results <- fault + ": " + streamFault(base, fault)
				}()
			}
			wg.Wait()
			close(results)
			for r := range results {
				seen[r]++
			}
			time.Sleep(2 * time.Second)
		}
	}
	t.Logf("client outcomes: %v", seen)
	// Each fault quarantines the backend (passive health,
	// docs/router-proxy.md), so requests that arrive after it get 503
	// no_route at once: the other documented outcome.
	for r := range seen {
		if !strings.HasSuffix(r, ": started, then ended") && !strings.Contains(r, `"code":"no_route"`) {
			t.Errorf("a client saw %q: want the stream's first chunk, then its end", r)
		}
	}
	for _, fault := range []string{"hang-mid-stream", "reset-mid-stream"} {
		if seen[fault+": started, then ended"] == 0 {
			t.Errorf("no %s request reached the model: the scenario did not exercise it", fault)
		}
	}
	// Back to the baseline: every request's goroutines end (the proxy's
	// own count, /metrics go_goroutines), and the heap holds nothing of
	// them after a collection (go_memstats_heap_inuse_bytes, read after
	// the runtime's own GC; the bound is generous: one request's buffers
	// are a few KiB, 40 leaked ones would not pass unnoticed in goroutines).
	var after runtimeFigures
	eventually(t, 60*time.Second, "goroutines back to the baseline", func() error {
		after = proxyRuntime(t, pod.Status.PodIP)
		if after.goroutines > before.goroutines+2 {
			return errorf("%d goroutines, %d before", after.goroutines, before.goroutines)
		}
		return nil
	})
	t.Logf("router-proxy before: %+v; after: %+v", before, after)
	if after.heapInuse > before.heapInuse+16<<20 {
		t.Errorf("heap in use %d bytes after, %d before: the faulted requests left memory behind", after.heapInuse, before.heapInuse)
	}
}

// streamFault sends one streamed request whose model server faults as
// asked, and says what the client saw.
func streamFault(base, fault string) string {
	body := `{"model":"model","stream":true,"messages":[{"role":"user","content":"` + fault + `"}]}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return "no answer: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	started := false
	for sc.Scan() {
		started = started || strings.Contains(sc.Text(), "served by")
	}
	if !started {
		return "ended without its first chunk"
	}
	return "started, then ended"
}

type runtimeFigures struct {
	goroutines int
	heapInuse  int64
	rss        int64
}

// proxyRuntime reads a router-proxy's Go runtime figures from /metrics.
func proxyRuntime(t *testing.T, podIP string) runtimeFigures {
	t.Helper()
	resp, err := client.Get("http://" + net.JoinHostPort(podIP, "9090") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var f runtimeFigures
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_goroutines":
			f.goroutines = int(v)
		case "go_memstats_heap_inuse_bytes":
			f.heapInuse = int64(v)
		case "process_resident_memory_bytes":
			f.rss = int64(v)
		}
	}
	return f
}

// ---------------------------------------------------------------- controller

// controllerKilledMidApply: a router whose apply is several objects
// (ConfigMap, Deployment, two Services, ServiceAccount, Role, RoleBinding,
// PodDisruptionBudget) is changed, and the leading controller is killed
// with SIGKILL the moment the first object of the new generation lands.
// The other replica takes the Lease and finishes: every object at the new
// generation, no duplicate and no orphan, the status converged; and no
// router-proxy ever served a config of another generation than its pod
// template (each one's start log names the config's SHA-256, which must be
// its template's: a pod mounting the other generation's file refuses to
// start, docs/reliability.md#one-generation-per-pod).
func controllerKilledMidApply(t *testing.T) {
	ns := namespace(t, "faults-apply")
	apply(t, stubModel("model", ns, 2, 0))
	router := func(quarantine string) string {
		return inferenceService("model", ns) + `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: many, namespace: ` + ns + `}
spec:
  proxy: {replicas: 2, quarantineDuration: ` + quarantine + `}
  backends: [{name: model, inferenceServiceRef: {name: model}, resolution: endpoint}]
  defaultRoute: model
`
	}
	apply(t, router("15s"))
	waitRouterReady(t, ns, "many")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/many-router-proxy", "--timeout=120s")
	before := inventory(t, ns, "many")
	oldHash := configHash(t, ns, "many-router-proxy")

	leader := leaderPod(t)
	pid := containerProcess(t, leader, managerBox).pid
	// Poll the router's ConfigMap and kill the leader at the first change,
	// i.e. in the middle of its apply (how far it got is logged below).
	apply(t, router("20s"))
	for deadline := time.Now().Add(time.Minute); configHash(t, ns, "many-router-proxy") == oldHash; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the controller did not write the new generation's ConfigMap")
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -KILL %d: %v", pid, err)
	}
	newHash := configHash(t, ns, "many-router-proxy")
	dep, err := e.kube.AppsV1().Deployments(ns).Get(context.Background(), "many-router-proxy", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("at the kill: ConfigMap at %.12s, Deployment template at %.12s (old %.12s)", newHash, dep.Spec.Template.Annotations["inference.llmkube.dev/router-config-hash"], oldHash)

	// The next leader finishes: the template names the new config, the
	// rollout completes, the status says the new generation is Ready.
	eventually(t, 3*time.Minute, "the router converged at its new generation", func() error {
		u := getRouter(t, ns, "many")
		gen, observed := u.GetGeneration(), observedGeneration(u)
		phase, notReady := routerPhase(u)
		if observed != gen || phase != "Ready" || len(notReady) > 0 {
			return errorf("generation %d observed %d, phase %s %v", gen, observed, phase, notReady)
		}
		d, err := e.kube.AppsV1().Deployments(ns).Get(context.Background(), "many-router-proxy", metaGet)
		if err != nil {
			return err
		}
		if h := d.Spec.Template.Annotations["inference.llmkube.dev/router-config-hash"]; h != newHash {
			return errorf("Deployment template at %.12s, ConfigMap at %.12s", h, newHash)
		}
		return nil
	})
	kubectl(t, "-n", ns, "rollout", "status", "deploy/many-router-proxy", "--timeout=180s")
	if after := inventory(t, ns, "many"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("objects before the kill %v, after %v: a duplicate or an orphan", before, after)
	}
	// Every router-proxy container that ever started here said which
	// config it serves: its own template's (the pods of both generations,
	// and any that refused).
	servedMixed := 0
	for _, p := range allPods(t, ns, "app=many-router-proxy") {
		want := p.Annotations["inference.llmkube.dev/router-config-hash"]
		logs, _ := tryRun("", "kubectl", "-n", ns, "logs", p.Name, "-c", "router-proxy")
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "router-proxy serving") && !strings.Contains(line, `"configSHA256":"`+want+`"`) {
				servedMixed++
				t.Errorf("pod %s (template %.12s) served another config: %s", p.Name, want, line)
			}
		}
	}
	if servedMixed == 0 {
		t.Logf("no router-proxy served a config of another generation than its template")
	}
	// The killed controller comes back and the pair goes on.
	eventually(t, 2*time.Minute, "both controller replicas ready again", func() error {
		ready := 0
		for _, p := range podsOf(t, releaseNS, "app.kubernetes.io/instance="+release) {
			if podReady(p) {
				ready++
			}
		}
		if ready != 2 {
			return errorf("%d ready", ready)
		}
		return nil
	})
}

// otherGenerationRefused: the state a controller stopped between its two
// writes leaves, made on purpose. With the controllers scaled to zero, the
// router's ConfigMap is changed to another config (as the next
// generation's apply writes it first) and a router-proxy pod is deleted:
// its replacement, of the current template, mounts the other generation's
// file and refuses to start (never Ready), while the other replica serves
// every request. Scaled back, the controller puts its ConfigMap back and
// the pod starts.
func otherGenerationRefused(t *testing.T) {
	ns := namespace(t, "faults-generation")
	base := twoReplicaRouter(t, ns, "gen", 0)

	kubectl(t, "-n", releaseNS, "scale", "deploy/"+fullname, "--replicas=0")
	t.Cleanup(func() { _, _ = tryRun("", "kubectl", "-n", releaseNS, "scale", "deploy/"+fullname, "--replicas=2") })
	eventually(t, 90*time.Second, "the controllers stopped", func() error {
		if n := len(allPods(t, releaseNS, "app.kubernetes.io/instance="+release)); n != 0 {
			return errorf("%d controller pods", n)
		}
		return nil
	})
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), "gen-router-proxy", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(cm.Data["config.json"]), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["timeouts"].(map[string]any)["quarantine"] = "20s"
	next, _ := json.Marshal(cfg)
	sum := sha256.Sum256(next)
	cm.Data["config.json"] = string(next)
	cm.Annotations["inference.llmkube.dev/router-config-hash"] = hex.EncodeToString(sum[:])
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	l := startLoad(base, "model", nil, 2, 50*time.Millisecond)
	victim := podsOf(t, ns, "app=gen-router-proxy")[0].Name
	kubectl(t, "-n", ns, "delete", "pod", victim, "--wait=false")
	var refused string
	eventually(t, 2*time.Minute, "the replacement refusing the other generation's config", func() error {
		for _, p := range podsOf(t, ns, "app=gen-router-proxy") {
			if p.Name == victim {
				continue
			}
			for _, c := range p.Status.ContainerStatuses {
				if term := c.LastTerminationState.Terminated; term != nil && term.ExitCode != 0 {
					if c.Ready {
						return errorf("%s is Ready", p.Name)
					}
					logs, _ := tryRun("", "kubectl", "-n", ns, "logs", p.Name, "-c", "router-proxy", "--previous")
					if !strings.Contains(logs, "another generation") {
						return errorf("%s exited without saying why: %s", p.Name, logs)
					}
					refused = p.Name
					return nil
				}
			}
		}
		return errorf("no replacement has exited yet")
	})
	t.Logf("%s refused the other generation's config", refused)
	if n := readyEndpoints(t, ns, "gen-router-proxy"); n != 1 {
		t.Errorf("%d ready endpoints, want only the pod that loaded its own generation", n)
	}
	l.finish(t, "one replica refusing another generation's config")

	// The controller back: it writes its ConfigMap again, the pod starts.
	kubectl(t, "-n", releaseNS, "scale", "deploy/"+fullname, "--replicas=2")
	eventually(t, 4*time.Minute, "the refused pod serving once the controller restored its config", func() error {
		if n := readyEndpoints(t, ns, "gen-router-proxy"); n != 2 {
			return errorf("%d ready endpoints", n)
		}
		return nil
	})
	dep, err := e.kube.AppsV1().Deployments(ns).Get(context.Background(), "gen-router-proxy", metaGet)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := configHash(t, ns, "gen-router-proxy"), dep.Spec.Template.Annotations["inference.llmkube.dev/router-config-hash"]; got != want {
		t.Errorf("ConfigMap at %.12s, template at %.12s", got, want)
	}
}

// observedGeneration is the oldest generation a router's status
// conditions were written for: the status has converged on generation g
// when this is g.
func observedGeneration(u *unstructured.Unstructured) int64 {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	oldest := int64(-1)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		g, _ := m["observedGeneration"].(int64)
		if oldest < 0 || g < oldest {
			oldest = g
		}
	}
	return oldest
}

// configHash is the router-config-hash annotation of a router's ConfigMap.
func configHash(t *testing.T, ns, name string) string {
	t.Helper()
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metaGet)
	if err != nil {
		t.Fatal(err)
	}
	return cm.Annotations["inference.llmkube.dev/router-config-hash"]
}

// leaderPod is the controller pod holding the Lease.
func leaderPod(t *testing.T) corev1.Pod {
	t.Helper()
	leader := leaseHolder(t)
	for _, p := range podsOf(t, releaseNS, "app.kubernetes.io/instance="+release) {
		if strings.HasPrefix(leader, p.Name) {
			return p
		}
	}
	t.Fatalf("no controller pod holds the Lease (holder %q)", leader)
	return corev1.Pod{}
}

// inventory names every object the router owns, with its uid: the same
// list before and after a fault means nothing was duplicated, orphaned or
// recreated.
func inventory(t *testing.T, ns, router string) []string {
	t.Helper()
	out := run(t, "", "kubectl", "-n", ns, "get", "configmaps,deployments,services,serviceaccounts,roles,rolebindings,poddisruptionbudgets",
		"-l", "inference.llmkube.dev/model-router="+router, "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}/{.metadata.uid}{\"\\n\"}{end}")
	lines := strings.Fields(out)
	sort.Strings(lines)
	return lines
}

// allPods lists the pods a selector picks, terminating ones included.
func allPods(t *testing.T, ns, selector string) []corev1.Pod {
	t.Helper()
	l, err := e.kube.CoreV1().Pods(ns).List(context.Background(), listOpts(selector))
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// ---------------------------------------------------------------- API server

// apiserverOutage: kube-apiserver stopped for 60 s under load. The
// router-proxies keep serving with the config they loaded (zero failed
// requests); the controllers lose the Lease and come back; afterwards
// every router's objects are the same objects (no duplicate, no orphan,
// nothing recreated), its status converges, and a spec change made after
// the outage settles.
func apiserverOutage(t *testing.T) {
	ns := namespace(t, "faults-apiserver")
	base := simpleRouter(t, ns, "steady")
	waitEndpoints(t, ns, "steady-router-proxy", 1)
	before := inventory(t, ns, "steady")

	l := startLoad(base, "model", nil, 4, 50*time.Millisecond)
	time.Sleep(2 * time.Second)
	run(t, "", "hack/cluster/cluster.sh", "apiserver-stop")
	stopped := time.Now()
	t.Cleanup(func() {
		// Never leave the cluster without its API server.
		if _, err := tryRun("", "kubectl", "get", "--raw", "/readyz"); err != nil {
			_, _ = tryRun("", "hack/cluster/cluster.sh", "apiserver-start")
		}
	})
	time.Sleep(60 * time.Second)
	run(t, "", "hack/cluster/cluster.sh", "apiserver-start")
	t.Logf("kube-apiserver down for %s", time.Since(stopped).Round(time.Second))
	time.Sleep(5 * time.Second)
	l.finish(t, "kube-apiserver stopped for 60 s")

	// The controllers resume (their Lease renewals failed: each exits and
	// the kubelet restarts it) and the router is as it was.
	eventually(t, 3*time.Minute, "a controller leading again", func() error {
		if leaseHolder(t) == "" {
			return errorf("no holder")
		}
		return nil
	})
	waitRouterReady(t, ns, "steady")
	if after := inventory(t, ns, "steady"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("objects before the outage %v, after %v: a duplicate, an orphan or a recreation", before, after)
	}
	// A change after the outage settles.
	run(t, "", "kubectl", "-n", ns, "patch", "modelrouter", "steady", "--type=merge", "-p", `{"spec":{"proxy":{"quarantineDuration":"20s"}}}`)
	eventually(t, 2*time.Minute, "the change after the outage settled", func() error {
		u := getRouter(t, ns, "steady")
		observed := observedGeneration(u)
		if phase, notReady := routerPhase(u); observed != u.GetGeneration() || phase != "Ready" || len(notReady) > 0 {
			return errorf("generation %d observed %d, phase %s %v", u.GetGeneration(), observed, phase, notReady)
		}
		return nil
	})
}
