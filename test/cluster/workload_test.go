//go:build e2ecluster

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var metaGet = metav1.GetOptions{}

func listOpts(selector string) metav1.ListOptions { return metav1.ListOptions{LabelSelector: selector} }

// stubModel is a model Service of stub pods as the LLMKube operator would
// run them for an InferenceService: a Deployment and a Service on port 8000
// named after it. Each pod answers with its own name.
func stubModel(name, ns string, replicas int, delay time.Duration) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
        - name: model
          image: %[4]s
          imagePullPolicy: IfNotPresent
          args: [-listen, ":8000", -delay, %[5]q]
          env:
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          ports:
            - {name: http, containerPort: 8000}
          readinessProbe:
            httpGet: {path: /health, port: 8000}
            periodSeconds: 1
          lifecycle:
            # The model server keeps serving while kube-proxy and the
            # router-proxies learn the pod is leaving.
            preStop:
              sleep: {seconds: 3}
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  selector: {app: %[1]s}
  ports:
    - {name: http, port: 8000, targetPort: 8000}
`, name, ns, replicas, e.stubImage, delay.String())
}

// serviceURL is http://CLUSTER-IP:PORT of a Service, reached from the host
// through kube-proxy, as a client in the cluster reaches it.
func serviceURL(t testing.TB, ns, name string) string {
	t.Helper()
	svc, err := e.kube.CoreV1().Services(ns).Get(context.Background(), name, metaGet)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
}

// reply is what a chat completion through the router answered.
type reply struct {
	status   int
	servedBy string // the stub pod's name
	body     string
	headers  http.Header
}

var client = &http.Client{Timeout: 30 * time.Second}

// pii marks a request as PII: the quickstart's fail-closed rule sends it to
// the in-cluster model only (its vision-to-cloud rule, which filters
// backends by capability, takes every other request to the cloud backend).
var pii = map[string]string{"x-llmkube-classification": "pii"}

// chat sends one chat completion for model to base.
func chat(base, model string, header map[string]string) (reply, error) {
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello"}]}`, model)
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode, body: string(b), headers: resp.Header}
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(b, &c) == nil && len(c.Choices) > 0 {
		r.servedBy = strings.TrimPrefix(c.Choices[0].Message.Content, "served by ")
	}
	return r, nil
}

// mustChat sends one chat completion and wants a 200 from a stub pod.
func mustChat(t testing.TB, base, model string, header map[string]string) reply {
	t.Helper()
	r, err := chat(base, model, header)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK || r.servedBy == "" {
		t.Fatalf("POST %s/v1/chat/completions (model %s): %d %s", base, model, r.status, r.body)
	}
	return r
}

// load is a steady stream of requests from several clients until stopped;
// it counts every answer and keeps every failure.
type load struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	ok       atomic.Int64
	mu       sync.Mutex
	failures []string
	served   map[string]int
}

// startLoad runs clients workers, each sending a request every interval.
func startLoad(base, model string, header map[string]string, clients int, interval time.Duration) *load {
	l := &load{stop: make(chan struct{}), served: map[string]int{}}
	everyTick(&l.wg, l.stop, clients, interval, func() {
		r, err := chat(base, model, header)
		l.record(r, err)
	})
	return l
}

// everyTick starts clients workers, counted in wg, each calling send every
// interval until stop is closed.
func everyTick(wg *sync.WaitGroup, stop <-chan struct{}, clients int, interval time.Duration, send func()) {
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				send()
			}
		}()
	}
}

func (l *load) record(r reply, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
	case r.status != http.StatusOK:
		l.failures = append(l.failures, fmt.Sprintf("%s %d %s", time.Now().Format("15:04:05.000"), r.status, strings.TrimSpace(r.body)))
	default:
		l.ok.Add(1)
		l.served[r.servedBy]++
	}
}

// finish stops the load and fails the test on any failed request.
func (l *load) finish(t testing.TB, what string) map[string]int {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("%s: %d requests answered, %d failed, served by %v", what, l.ok.Load(), len(l.failures), l.served)
	if len(l.failures) > 0 {
		t.Errorf("%s: %d of %d requests failed; first: %s", what, len(l.failures), int(l.ok.Load())+len(l.failures), strings.Join(first(l.failures, 5), " | "))
	}
	if l.ok.Load() == 0 {
		t.Errorf("%s: no request was answered", what)
	}
	return l.served
}

func first(s []string, n int) []string {
	if len(s) < n {
		return s
	}
	return s[:n]
}
