package endpoints_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/endpoints"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.RunMain(m, &env) }

// pod is a loopback upstream standing in for one pod. The API server
// refuses loopback addresses in EndpointSlices, so the slices carry
// documentation addresses (192.0.2.0/24, TEST-NET-1) and the proxy's
// transport dials each of them to its pod's loopback listener: placement, the
// URL rewrite and the upstream request are real, only the network is mapped.
type pod struct {
	ip   string // the address in the EndpointSlice
	srv  *httptest.Server
	hits atomic.Int64
}

// podPort is the pods' port in the EndpointSlices ("http").
const podPort = 8080

func startPods(t *testing.T, n int) []*pod {
	var pods []*pod
	for i := range n {
		p := &pod{ip: fmt.Sprintf("192.0.2.%d", i+2)}
		p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			p.hits.Add(1)
			providertest.JSON(w, `{"model":%q,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, p.ip)
		}))
		t.Cleanup(p.srv.Close)
		pods = append(pods, p)
	}
	return pods
}

// mappedTransport dials pod addresses to their loopback servers and refuses
// any other non-loopback address (nothing leaves the machine).
func mappedTransport(pods []*pod) *http.Transport {
	m := map[string]string{}
	for _, p := range pods {
		m[net.JoinHostPort(p.ip, fmt.Sprint(podPort))] = p.srv.Listener.Addr().String()
	}
	tr := routerproxy.NewTransport()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := m[addr]; ok {
			addr = to
		} else if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
			return nil, fmt.Errorf("test transport: %s is not a test pod", addr)
		}
		return d.DialContext(ctx, network, addr)
	}
	return tr
}

func ptr[T any](v T) *T { return &v }

func slice(ns, name string, ready map[string]bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "llm"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		// The metrics port comes first and has another number: the proxy
		// must take the port named like the Service port.
		Ports: []discoveryv1.EndpointPort{{Name: ptr("metrics"), Port: ptr(int32(9))}, {Name: ptr("http"), Port: ptr(int32(podPort))}},
	}
	for ip, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(r)}})
	}
	return s
}

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

func TestEndpointSlicesWhileTrafficFlows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	pods := startPods(t, 3)

	// The Service maps port 8000 to the named target port "http".
	_, err = cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "llm", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "metrics", Port: 9090, TargetPort: intstr.FromString("metrics")},
			{Name: "http", Port: 8000, TargetPort: intstr.FromString("http")},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	sl := cs.DiscoveryV1().EndpointSlices(ns)
	_, err = sl.Create(ctx, slice(ns, "llm-a", map[string]bool{pods[0].ip: true, pods[1].ip: true}), metav1.CreateOptions{})
	require.NoError(t, err)

	// The Service URL: a request reaching it would have bypassed the pods.
	var svcHits atomic.Int64
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svcHits.Add(1)
		providertest.JSON(w, `{"model":"svc","choices":[]}`)
	}))
	defer svc.Close()
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: ns},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 10 * time.Second}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{{Name: "m", ModelID: "m", Kind: proxyapi.KindLocal, Tier: "local", URL: svc.URL, Weight: 1,
			HealthCheck: proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: time.Hour}, Timeout: proxyapi.Duration{Duration: time.Second}},
			Endpoints:   &proxyapi.Endpoints{Service: "llm", Namespace: ns, Port: 8000, Balancing: proxyapi.Balancing{Mode: "RoundRobin"}}}},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "m"},
		Policy:  proxyapi.Policy{Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification"}, Audit: proxyapi.Audit{Sink: "stdout"}},
	}
	srv, err := routerproxy.New(cfg, routerproxy.Options{Transport: mappedTransport(pods)})
	require.NoError(t, err)
	front := httptest.NewServer(srv.Handler())
	defer front.Close()

	require.NoError(t, endpoints.Watch(ctx, env.Dynamic, endpoints.Targets(srv.EndpointBackends()), nil))
	bal := srv.EndpointBackends()[0].Balancer
	require.Equal(t, []string{"192.0.2.2:8080", "192.0.2.3:8080"}, bal.Pods())

	// Traffic flows for the whole test.
	var sent, bad atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := front.Client().Post(front.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
			sent.Add(1)
			if err != nil {
				bad.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				bad.Add(1)
			}
		}
	}()
	var once sync.Once
	stopTraffic := func() { once.Do(func() { close(stop); <-done }) }
	defer stopTraffic()
	eventually := func(msg string, f func() bool) {
		t.Helper()
		require.Eventually(t, f, 20*time.Second, 5*time.Millisecond, msg)
	}
	eventually("both ready pods serve", func() bool { return pods[0].hits.Load() > 5 && pods[1].hits.Load() > 5 })
	require.Zero(t, pods[2].hits.Load())

	// Added: a second slice with a third pod.
	_, err = sl.Create(ctx, slice(ns, "llm-b", map[string]bool{pods[2].ip: true}), metav1.CreateOptions{})
	require.NoError(t, err)
	eventually("the added pod serves", func() bool { return pods[2].hits.Load() > 5 })

	// Made unready: the second pod leaves the set.
	a, err := sl.Get(ctx, "llm-a", metav1.GetOptions{})
	require.NoError(t, err)
	for i := range a.Endpoints {
		if a.Endpoints[i].Addresses[0] == pods[1].ip {
			a.Endpoints[i].Conditions.Ready = ptr(false)
		}
	}
	_, err = sl.Update(ctx, a, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually("the unready pod leaves", func() bool { return len(bal.Pods()) == 2 })
	h1 := pods[1].hits.Load()
	p0, p2 := pods[0].hits.Load(), pods[2].hits.Load()
	eventually("traffic continues on the ready pods", func() bool { return pods[0].hits.Load() > p0+20 && pods[2].hits.Load() > p2+20 })
	require.LessOrEqual(t, pods[1].hits.Load(), h1+1, "at most a request placed just before the update")

	// Removed: the second slice goes, its pod with it.
	require.NoError(t, sl.Delete(ctx, "llm-b", metav1.DeleteOptions{}))
	eventually("the removed slice's pod leaves", func() bool { return len(bal.Pods()) == 1 })
	h2 := pods[2].hits.Load()
	p0 = pods[0].hits.Load()
	eventually("traffic continues on the last pod", func() bool { return pods[0].hits.Load() > p0+20 })
	require.LessOrEqual(t, pods[2].hits.Load(), h2+1)

	// The pod servers stayed up, so no request failed while pods came and went.
	stopTraffic()
	require.Positive(t, sent.Load())
	require.Zero(t, bad.Load())

	// Every slice gone: the attempt fails over (here: no other backend, 502)
	// and never takes the Service URL.
	require.NoError(t, sl.Delete(ctx, "llm-a", metav1.DeleteOptions{}))
	eventually("no pod left", func() bool { return len(bal.Pods()) == 0 })
	resp, err := front.Client().Post(front.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Zero(t, svcHits.Load(), "once synced, requests never take the Service URL")
}
