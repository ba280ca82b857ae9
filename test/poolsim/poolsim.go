// Package poolsim plays the LLMKube operator's ModelPool reconciler for
// tests against a real API server: it watches the pool members'
// InferenceServices, and after a delay turns a member scaled to one into
// phase Ready and a member scaled to zero into phase Stopped. Each member has
// a loopback model server that answers only while its member is loaded.
//
// From the same watch it records the invariant the router-proxies must keep:
// never two members scaled up at once.
package poolsim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/llmkube/llmkube-compile/routerproxy/activation/kube"
)

// Sim is one ModelPool's reconciler.
type Sim struct {
	dyn       dynamic.Interface
	ns, pool  string
	members   []string
	LoadDelay time.Duration
	// UnloadDelay is how long a member scaled to zero keeps serving.
	UnloadDelay time.Duration

	mu        sync.Mutex
	replicas  map[string]int64
	phase     map[string]string
	never     map[string]bool // members that never become Ready
	fail      map[string]bool // members that report Failed
	maxUp     int
	bothUp    []string // the events that saw two members scaled up
	activated map[string]int
	served    map[string]int
	received  map[string][]http.Header // the headers of each chat completion served
	servers   map[string]*httptest.Server
	timers    map[string]*time.Timer
}

// Start creates the members (spec.replicas 0, except resident at 1 and
// Ready) and the ModelPool, and runs the reconciler until the test ends.
func Start(t testing.TB, dyn dynamic.Interface, ns, pool string, members []string, resident string, load time.Duration) *Sim {
	t.Helper()
	s := &Sim{dyn: dyn, ns: ns, pool: pool, members: members, LoadDelay: load, UnloadDelay: load / 4,
		replicas: map[string]int64{}, phase: map[string]string{}, never: map[string]bool{}, fail: map[string]bool{},
		activated: map[string]int{}, served: map[string]int{}, received: map[string][]http.Header{}, servers: map[string]*httptest.Server{}, timers: map[string]*time.Timer{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	isvcs := dyn.Resource(kube.InferenceServices).Namespace(ns)
	var refs []any
	for _, m := range members {
		r := int64(0)
		if m == resident {
			r = 1
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "InferenceService",
			"metadata": map[string]any{"name": m, "namespace": ns},
			"spec":     map[string]any{"modelRef": m, "replicas": r},
		}}
		created, err := isvcs.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("poolsim: create InferenceService %s: %v", m, err)
		}
		phase := "Stopped"
		if m == resident {
			phase = "Ready"
		}
		if err := unstructured.SetNestedField(created.Object, phase, "status", "phase"); err != nil {
			t.Fatal(err)
		}
		if _, err := isvcs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("poolsim: status of %s: %v", m, err)
		}
		s.replicas[m], s.phase[m] = r, phase
		refs = append(refs, map[string]any{"inferenceServiceRef": map[string]any{"name": m}})
		member := m
		s.servers[m] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(member, w, r) }))
		t.Cleanup(s.servers[m].Close)
	}
	mp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "ModelPool",
		"metadata": map[string]any{"name": pool, "namespace": ns},
		"spec":     map[string]any{"members": refs, "swapPolicy": "sticky"},
	}}
	if _, err := dyn.Resource(kube.InferenceServices.GroupVersion().WithResource("modelpools")).Namespace(ns).Create(ctx, mp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("poolsim: create ModelPool: %v", err)
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	inf := f.ForResource(kube.InferenceServices).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.observe(ctx, o) },
		UpdateFunc: func(_, o any) { s.observe(ctx, o) },
	})
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("poolsim: informer did not sync")
	}
	return s
}

// Received are the request headers of every chat completion the member
// served, in order.
func (s *Sim) Received(member string) []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.received[member]...)
}

// URL is the member's model server.
func (s *Sim) URL(member string) string { return s.servers[member].URL }

// NeverReady makes a member stay Progressing when scaled up.
func (s *Sim) NeverReady(member string) { s.mu.Lock(); s.never[member] = true; s.mu.Unlock() }

// Fail makes a member report Failed when scaled up.
func (s *Sim) Fail(member string) { s.mu.Lock(); s.fail[member] = true; s.mu.Unlock() }

// Activations is how often the member went from zero replicas to one.
func (s *Sim) Activations(member string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.activated[member]
}

// TotalActivations sums Activations over the members.
func (s *Sim) TotalActivations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.activated {
		n += v
	}
	return n
}

// Served is how many requests the member's server answered.
func (s *Sim) Served(member string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.served[member] }

// MaxScaledUp is the most members the watch ever saw scaled up at once;
// Violations lists the events where it was more than one.
func (s *Sim) MaxScaledUp() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxUp, append([]string(nil), s.bothUp...)
}

// Replicas is a member's spec.replicas as last watched.
func (s *Sim) Replicas(member string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas[member]
}

func (s *Sim) observe(ctx context.Context, o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name := u.GetName()
	r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		r = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, member := s.phase[name]; !member {
		return
	}
	prev := s.replicas[name]
	s.replicas[name] = r
	up := 0
	var names []string
	for _, m := range s.members {
		if s.replicas[m] > 0 {
			up++
			names = append(names, m)
		}
	}
	if up > s.maxUp {
		s.maxUp = up
	}
	if up > 1 {
		s.bothUp = append(s.bothUp, fmt.Sprintf("rv %s: %v scaled up", u.GetResourceVersion(), names))
	}
	if prev == r {
		return
	}
	if t := s.timers[name]; t != nil {
		t.Stop()
	}
	switch {
	case r > 0:
		s.activated[name]++
		next := "Ready"
		if s.fail[name] {
			next = "Failed"
		}
		if s.never[name] {
			s.phase[name] = "Progressing"
			go s.setPhase(ctx, name, "Progressing")
			return
		}
		s.timers[name] = time.AfterFunc(s.LoadDelay, func() { s.setPhase(ctx, name, next) })
	default:
		s.timers[name] = time.AfterFunc(s.UnloadDelay, func() { s.setPhase(ctx, name, "Stopped") })
	}
}

// FinishUnload ends member's unload now (its phase Stopped), however long
// UnloadDelay is: a test that holds a swap in the unload for as long as it
// needs (UnloadDelay an hour) lets it go on.
func (s *Sim) FinishUnload(member string) {
	s.mu.Lock()
	if t := s.timers[member]; t != nil {
		t.Stop()
	}
	s.mu.Unlock()
	s.setPhase(context.Background(), member, "Stopped")
}

func (s *Sim) setPhase(ctx context.Context, name, phase string) {
	isvcs := s.dyn.Resource(kube.InferenceServices).Namespace(s.ns)
	for ctx.Err() == nil {
		cur, err := isvcs.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			_ = unstructured.SetNestedField(cur.Object, phase, "status", "phase")
			if _, err = isvcs.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil {
				s.mu.Lock()
				s.phase[name] = phase
				s.mu.Unlock()
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serve answers a chat completion while the member is loaded.
func (s *Sim) serve(member string, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	loaded := s.phase[member] == "Ready"
	if loaded && r.URL.Path == "/v1/chat/completions" {
		s.served[member]++
		s.received[member] = append(s.received[member], r.Header.Clone())
	}
	s.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	if !loaded {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		_, _ = w.Write([]byte("ok"))
		return
	}
	if d := r.Header.Get("X-Test-Delay"); d != "" {
		if dd, err := time.ParseDuration(d); err == nil {
			time.Sleep(dd)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	// id names the member that answered: the model a client sees is the one
	// it asked for, whatever the member echoes.
	fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, member, member)
}
