//go:build e2ecluster

package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/llmkube/llmkube-compile/test/otlptest"
)

const (
	release    = "llmkube"
	releaseNS  = "llmkube-system"
	fullname   = "llmkube-llmkube-compile" // the chart's llmkube.fullname for release llmkube
	nodeIP     = "10.244.0.1"              // hack/cluster/cluster.sh: the node, on the pods' bridge
	redisPort  = "16379"
	otlpPort   = "14318"
	redisURL   = "redis://redis.platform.svc.cluster.local:6379/0"
	leaseName  = "llmkube-controller.inference.llmkube.dev"
	managerBox = "manager"
)

// The chart installed with a real `helm install`: two controller replicas
// with leader election, the validating webhook served in-cluster with the
// certificate the chart is given, and the budget store on a real Redis the
// pods reach through a Service. On that install:
//   - the webhook refuses a bad ModelRouter with its field path and reason;
//   - two router-proxy replicas share one budget in Redis;
//   - resolution: endpoint with LoadAware spreads over three model pods
//     through real EndpointSlices, and a pod deleted under load loses no
//     request;
//   - a router-proxy pod's spans reach the collector the chart names,
//     continuing the caller's trace;
//   - the leader's pod deleted, the other replica takes the Lease and
//     reconciliation goes on.
func TestHelmInstall(t *testing.T) {
	llmkubeCRDs(t)
	redis := startRedisDurable(t)
	redisService(t)

	caPEM := webhookCertificate(t)
	// The platform's OpenTelemetry collector: a receiver on the node's
	// bridge address, where the router-proxy pods reach it.
	collector := otlptest.NewAt(t, net.JoinHostPort(nodeIP, otlpPort))
	installChart(t, false,
		"replicas=2",
		"otlp.endpoint="+collector.URL,
		"webhook.enabled=true",
		"webhook.caBundle="+base64.StdEncoding.EncodeToString(caPEM),
		"budgetStore.url="+redisURL)
	for _, p := range podsOf(t, releaseNS, "app.kubernetes.io/instance="+release) {
		checkHardened(t, p, managerBox, "")
	}

	t.Run("webhook refuses a bad router", helmWebhookRefuses)

	t.Run("two replicas share one budget in Redis", func(t *testing.T) { helmSharedBudget(t, redis) })

	t.Run("endpoint resolution over three pods, one deleted under load", helmEndpointResolution)

	t.Run("traces reach the platform's collector", func(t *testing.T) { helmTracesReachTheCollector(t, collector) })

	t.Run("leader failover", helmLeaderFailover)
}

// helmWebhookRefuses is TestHelmInstall's subtest "webhook refuses a bad router".
func helmWebhookRefuses(t *testing.T) {
	ns := namespace(t, "webhook")
	bad := `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: bad, namespace: ` + ns + `}
spec:
  backends:
    - name: a
      inferenceServiceRef: {name: missing}
  rules:
    - name: r
      route: {backends: [nope]}
`
	out, err := tryRun(bad, "kubectl", "apply", "--server-side", "-f", "-")
	if err == nil {
		t.Fatalf("a router naming an unknown backend was admitted: %s", out)
	}
	msg := err.Error()
	for _, want := range []string{"spec.rules[0].route.backends[0]", "(UnknownBackend)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	// The refusal came from the webhook (the CRD's schema cannot see
	// that a backend is undeclared): without its configuration the
	// same object is admitted. helm upgrade puts it back.
	kubectl(t, "delete", "validatingwebhookconfiguration", fullname)
	if out, err := tryRun(bad, "kubectl", "apply", "--server-side", "-f", "-"); err != nil {
		t.Errorf("without the webhook the router is still refused (so the webhook was not what refused it): %v %s", err, out)
	}
	kubectl(t, "-n", ns, "delete", "modelrouter", "bad", "--wait=false")
	run(t, "", e.helm, "upgrade", release, "charts/llmkube-compile", "--namespace", releaseNS, "--reuse-values", "--wait", "--timeout", "3m")
	kubectl(t, "get", "validatingwebhookconfiguration", fullname)
}

// helmSharedBudget is TestHelmInstall's subtest "two replicas share one budget in Redis".
func helmSharedBudget(t *testing.T, redis *durableRedis) {
	ns := namespace(t, "budgets")
	apply(t, stubModel("model", ns, 1, 0))
	kubectl(t, "-n", ns, "rollout", "status", "deploy/model", "--timeout=120s")
	apply(t, inferenceService("model", ns)+`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: shared, namespace: `+ns+`}
spec:
  proxy: {replicas: 2}
  backends:
    - name: model
      inferenceServiceRef: {name: model}
  defaultRoute: model
  policy:
    budgets:
      - name: tokens
        scope: router
        maxTokens: 300
        windowSeconds: 3600
`)
	waitRouterReady(t, ns, "shared")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/shared-router-proxy", "--timeout=120s")
	pods := podsOf(t, ns, "app=shared-router-proxy")
	if len(pods) != 2 {
		t.Fatalf("want 2 router-proxy replicas, got %d", len(pods))
	}
	for _, p := range pods {
		if !strings.Contains(strings.Join(p.Spec.Containers[0].Args, " "), "--budget-store "+redisURL) {
			t.Fatalf("router-proxy %s does not use the budget store: %v", p.Name, p.Spec.Containers[0].Args)
		}
	}
	base := serviceURL(t, ns, "shared-router-proxy")
	// Both replicas in the Service's EndpointSlice, and a moment for
	// kube-proxy to program them: right after the rollout its rules may
	// still hold one.
	eventually(t, 30*time.Second, "both replicas ready in the Service's endpoints", func() error {
		if n := readyEndpoints(t, ns, "shared-router-proxy"); n != 2 {
			return errorf("%d ready endpoints", n)
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	// Each answer is 15 tokens; the budget is 300 for the router,
	// whichever replica serves. Per-replica counters would admit 40.
	// A connection per request, so kube-proxy spreads them over both
	// replicas (a kept connection stays on one).
	// Until the first answer a replica may still be waiting for its
	// backend's next health probe (503, nothing charged).
	served := 0
	for i := 0; i < 200; i++ {
		r, err := chat(base, "model", map[string]string{"Connection": "close"})
		if err != nil {
			t.Fatal(err)
		}
		if r.status == http.StatusTooManyRequests {
			t.Logf("request %d refused: %s", i, r.body)
			break
		}
		if r.status == http.StatusServiceUnavailable && i < 100 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		served++
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("served %d requests before the shared budget ran out", served)
	// 20 exactly but for one in flight: a charge lands in Redis just
	// after its answer, and the next request may be admitted on the
	// other replica before it does. Per-replica counters would admit 40.
	if served < 19 || served > 21 {
		t.Errorf("served %d requests of 15 tokens on a 300-token budget shared by two replicas, want 20 (±1)", served)
	}
	if keys := redis.cli(t, "--scan"); !strings.Contains(keys, "tokens") {
		t.Errorf("no budget key in Redis: %q", keys)
	}
	// Each replica's own counters (its admin port, from the node) say
	// that both served: the budget held across them.
	for _, p := range pods {
		n := answered(t, p.Status.PodIP)
		t.Logf("replica %s (%s) answered %d", p.Name, p.Status.PodIP, n)
		if n == 0 {
			t.Errorf("replica %s answered no request: the test did not exercise both replicas", p.Name)
		}
	}
}

// helmEndpointResolution is TestHelmInstall's subtest "endpoint resolution over three pods, one deleted under load".
func helmEndpointResolution(t *testing.T) {
	ns := namespace(t, "endpoints")
	apply(t, stubModel("model", ns, 3, 20*time.Millisecond))
	kubectl(t, "-n", ns, "rollout", "status", "deploy/model", "--timeout=120s")
	apply(t, inferenceService("model", ns)+`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: pods, namespace: `+ns+`}
spec:
  backends:
    - name: model
      inferenceServiceRef: {name: model}
      resolution: endpoint
      balancing: {mode: LoadAware}
  defaultRoute: model
`)
	waitRouterReady(t, ns, "pods")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/pods-router-proxy", "--timeout=120s")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/model", "--timeout=120s")
	base := serviceURL(t, ns, "pods-router-proxy")
	eventually(t, 60*time.Second, "all three pods answering through the router", func() error {
		seen := map[string]bool{}
		for i := 0; i < 30; i++ {
			r, err := chat(base, "model", nil)
			if err != nil {
				return err
			}
			seen[r.servedBy] = true
		}
		if len(seen) != 3 {
			return errorf("answered by %v", seen)
		}
		return nil
	})
	l := startLoad(base, "model", nil, 6, 10*time.Millisecond)
	time.Sleep(2 * time.Second)
	victim := podsOf(t, ns, "app=model")[0].Name
	kubectl(t, "-n", ns, "delete", "pod", victim, "--wait=false")
	eventually(t, 60*time.Second, "the deleted pod replaced", func() error {
		ready := 0
		for _, p := range podsOf(t, ns, "app=model") {
			if p.Name == victim {
				return errorf("%s still there", victim)
			}
			if podReady(p) {
				ready++
			}
		}
		if ready != 3 {
			return errorf("%d ready", ready)
		}
		return nil
	})
	time.Sleep(5 * time.Second)
	served := l.finish(t, "a model pod deleted under load")
	if served[victim] == 0 {
		t.Errorf("the deleted pod %s served nothing before it went: the test did not exercise it", victim)
	}
}

// helmTracesReachTheCollector is TestHelmInstall's subtest "traces reach the platform's collector".
func helmTracesReachTheCollector(t *testing.T, collector *otlptest.Receiver) {
	base := simpleRouter(t, namespace(t, "tracing"), "traced")
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	eventually(t, 30*time.Second, "a traced request answered", func() error {
		r, err := chat(base, "model", map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return errorf("%d %s", r.status, r.body)
		}
		return nil
	})
	// The pod's batch exporter sends within seconds: the request's
	// server span continues the caller's trace, its attempt is a child.
	eventually(t, 30*time.Second, "the request's spans at the collector", func() error {
		var server *tracepb.Span
		for _, s := range collector.Spans() {
			if hex.EncodeToString(s.TraceId) == traceID && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
				server = s
			}
		}
		if server == nil {
			return errorf("no server span of trace %s among %d spans", traceID, len(collector.Spans()))
		}
		if got := hex.EncodeToString(server.ParentSpanId); got != parentID {
			return errorf("server span's parent %s, want the caller's %s", got, parentID)
		}
		for _, s := range collector.Spans() {
			if s.Kind == tracepb.Span_SPAN_KIND_CLIENT && string(s.ParentSpanId) == string(server.SpanId) {
				return nil
			}
		}
		return errorf("no attempt span under the server span %q", server.Name)
	})
}

// helmLeaderFailover is TestHelmInstall's subtest "leader failover".
func helmLeaderFailover(t *testing.T) {
	leader := leaseHolder(t)
	var pod string
	for _, p := range podsOf(t, releaseNS, "app.kubernetes.io/instance="+release) {
		if strings.HasPrefix(leader, p.Name) {
			pod = p.Name
		}
	}
	if pod == "" {
		t.Fatalf("no controller pod holds the Lease (holder %q)", leader)
	}
	kubectl(t, "-n", releaseNS, "delete", "pod", pod, "--wait=false")
	eventually(t, 90*time.Second, "the other replica taking the Lease", func() error {
		if h := leaseHolder(t); h == leader || h == "" {
			return errorf("holder %q", h)
		}
		return nil
	})
	// Reconciliation goes on under the new leader.
	simpleRouter(t, namespace(t, "failover"), "after")
}

// answered is how many requests a router-proxy pod answered 200, from its
// llmkube_router_requests_total on the admin port.
func answered(t testing.TB, podIP string) int {
	t.Helper()
	resp, err := client.Get("http://" + net.JoinHostPort(podIP, "9090") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "llmkube_router_requests_total{") && strings.Contains(line, `code="200"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// readyEndpoints counts the ready addresses of a Service's EndpointSlices.
func readyEndpoints(t testing.TB, ns, svc string) int {
	t.Helper()
	l, err := e.kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), listOpts("kubernetes.io/service-name="+svc))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range l.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				n += len(ep.Addresses)
			}
		}
	}
	return n
}

// inferenceService is the InferenceService the LLMKube operator would serve
// as the stub model Service of the same name (stubModel), ending in a
// document separator.
func inferenceService(name, ns string) string {
	return "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
		"spec: {modelRef: " + name + ", runtime: vllm, endpoint: {port: 8000}}\n---\n"
}

// stubBackend is the one backend of the routers in front of a stub model.
// Its probes get 10 s, not the default 2 s: the stub answers /health at
// once, but a busy node can hold a probe past 2 s, and two failed probes in
// a row make the only backend ineligible until the next one passes
// (docs/router-proxy.md#health), which the scenarios that count every
// failed request would count against the fault they measure.
const stubBackend = `{name: model, inferenceServiceRef: {name: model}, healthCheck: {timeoutSeconds: 10}}`

// simpleRouter is a router named name in ns with one stub model as its
// default route, Ready and rolled out; it returns the router's Service URL.
func simpleRouter(t *testing.T, ns, name string) string {
	t.Helper()
	apply(t, stubModel("model", ns, 1, 0))
	kubectl(t, "-n", ns, "rollout", "status", "deploy/model", "--timeout=120s")
	apply(t, inferenceService("model", ns)+`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  backends: [`+stubBackend+`]
  defaultRoute: model
`)
	waitRouterReady(t, ns, name)
	kubectl(t, "-n", ns, "rollout", "status", "deploy/"+name+"-router-proxy", "--timeout=120s")
	return serviceURL(t, ns, name+"-router-proxy")
}

// leaseHolder is the controller replica leading now.
func leaseHolder(t testing.TB) string {
	t.Helper()
	l, err := e.kube.CoordinationV1().Leases(releaseNS).Get(context.Background(), leaseName, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// webhookCertificate makes a CA and a serving certificate for the chart's
// webhook Service and stores the pair in the Secret the chart mounts
// (webhook.certSecret), as cert-manager or a platform team would; it
// returns the CA for webhook.caBundle.
func webhookCertificate(t *testing.T) []byte {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmkube-e2e-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	svc := fullname + "-webhook"
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: svc + "." + releaseNS + ".svc"},
		DNSNames:  []string{svc, svc + "." + releaseNS, svc + "." + releaseNS + ".svc", svc + "." + releaseNS + ".svc.cluster.local"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	crt, kf := dir+"/tls.crt", dir+"/tls.key"
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+releaseNS+"\n")
	run(t, "", "kubectl", "-n", releaseNS, "create", "secret", "tls", "llmkube-compile-webhook-cert", "--cert", crt, "--key", kf)
	t.Cleanup(func() { _, _ = tryRun("", "kubectl", "delete", "namespace", releaseNS, "--wait=false") })
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// installChart installs the chart as release in releaseNS with the given
// values (--set), waiting for it, and uninstalls it when the test ends,
// with the ModelRouter CRD it leaves behind. createNamespace creates
// releaseNS, deleted at the end so that the next scenario starts afresh.
func installChart(t *testing.T, createNamespace bool, values ...string) {
	t.Helper()
	args := []string{"install", release, "charts/llmkube-compile", "--namespace", releaseNS}
	if createNamespace {
		args = append(args, "--create-namespace")
	}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	run(t, "", e.helm, append(args, "--wait", "--timeout", "3m")...)
	t.Cleanup(func() {
		if out, err := tryRun("", e.helm, "uninstall", release, "--namespace", releaseNS, "--wait", "--timeout", "2m"); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
		_, _ = tryRun("", "kubectl", "delete", "crd", "modelrouters.inference.llmkube.dev", "--wait=true", "--timeout=60s")
		if createNamespace {
			_, _ = tryRun("", "kubectl", "delete", "namespace", releaseNS, "--wait=true", "--timeout=120s")
		}
	})
}
