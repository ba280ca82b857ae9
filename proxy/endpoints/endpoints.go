// Package endpoints feeds the router-proxy's balancers (runtime/balance)
// from the cluster: the ready pods of each endpoint-resolution backend's
// Service, from a namespace-scoped client-go EndpointSlice informer, and the
// vLLM engine metrics of those pods, scraped on an interval.
package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/llmkube/llmkube-compile/proxy"
)

// PodSink receives a backend's ready pods ("ip:port"); balance.Balancer is one.
type PodSink interface{ SetPods([]string) }

// Target is one backend whose Service's pods are tracked.
type Target struct {
	Name      string // backend name (logs)
	Namespace string
	Service   string
	// Port is the Service port; the pod port is the EndpointSlice port with
	// the same name as that Service port.
	Port int32
	Pods PodSink
}

// Watch starts one informer pair (EndpointSlices selected by
// kubernetes.io/service-name, and Services) per namespace of the targets,
// waits for their caches to sync, pushes every target's ready pods, and keeps
// pushing on every change until ctx ends.
func Watch(ctx context.Context, cs kubernetes.Interface, targets []Target, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	byNS := map[string][]Target{}
	for _, t := range targets {
		byNS[t.Namespace] = append(byNS[t.Namespace], t)
	}
	var syncs []cache.InformerSynced
	var watchers []*nsWatcher
	for ns, ts := range byNS {
		var svcs []string
		for _, t := range ts {
			if !slices.Contains(svcs, t.Service) {
				svcs = append(svcs, t.Service)
			}
		}
		slices.Sort(svcs)
		sel := discoveryv1.LabelServiceName + " in (" + strings.Join(svcs, ",") + ")"
		sliceF := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
		svcF := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
		sliceInf := sliceF.Discovery().V1().EndpointSlices()
		svcInf := svcF.Core().V1().Services()
		w := &nsWatcher{ns: ns, targets: ts, slices: sliceInf.Lister(), svcs: svcInf.Lister(), log: log}
		h := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.update() },
			UpdateFunc: func(any, any) { w.update() },
			DeleteFunc: func(any) { w.update() },
		}
		if _, err := sliceInf.Informer().AddEventHandler(h); err != nil {
			return err
		}
		if _, err := svcInf.Informer().AddEventHandler(h); err != nil {
			return err
		}
		syncs = append(syncs, sliceInf.Informer().HasSynced, svcInf.Informer().HasSynced)
		sliceF.Start(ctx.Done())
		svcF.Start(ctx.Done())
		watchers = append(watchers, w)
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return fmt.Errorf("endpoint informers did not sync: %w", context.Cause(ctx))
	}
	for _, w := range watchers {
		w.synced.Store(true)
		w.update()
	}
	return nil
}

type nsWatcher struct {
	ns      string
	targets []Target
	slices  discoverylisters.EndpointSliceLister
	svcs    corelisters.ServiceLister
	log     *slog.Logger
	synced  atomic.Bool
	mu      sync.Mutex
	last    map[string]string // target name -> last pushed set (logs)
}

// update recomputes every target of the namespace (a handful) and pushes
// their pod sets. Events before the initial sync are ignored; the sync pushes.
func (w *nsWatcher) update() {
	if !w.synced.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[string]string{}
	}
	for _, t := range w.targets {
		pods := w.ready(t)
		t.Pods.SetPods(pods)
		key := strings.Join(pods, ",")
		if prev, ok := w.last[t.Name]; !ok || prev != key {
			w.log.Info("endpoints", "backend", t.Name, "service", t.Namespace+"/"+t.Service, "ready", len(pods), "pods", key)
			w.last[t.Name] = key
		}
	}
}

// ready lists the target's ready pod addresses across all its slices.
func (w *nsWatcher) ready(t Target) []string {
	portName, named := "", false
	if svc, err := w.svcs.Services(t.Namespace).Get(t.Service); err == nil {
		for _, p := range svc.Spec.Ports {
			if p.Port == t.Port {
				portName, named = p.Name, true
				break
			}
		}
	}
	list, err := w.slices.EndpointSlices(t.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: t.Service}))
	if err != nil {
		return nil
	}
	var out []string
	for _, sl := range list {
		port := slicePort(sl, portName, named)
		if port == 0 {
			continue
		}
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			if len(ep.Addresses) == 0 {
				continue
			}
			out = append(out, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// slicePort finds the slice port named like the Service port. Without the
// Service (not seen yet), a slice with a single port uses it.
func slicePort(sl *discoveryv1.EndpointSlice, name string, named bool) int32 {
	for _, p := range sl.Ports {
		if p.Port == nil {
			continue
		}
		pn := ""
		if p.Name != nil {
			pn = *p.Name
		}
		if named && pn == name {
			return *p.Port
		}
	}
	if !named && len(sl.Ports) == 1 && sl.Ports[0].Port != nil {
		return *sl.Ports[0].Port
	}
	return 0
}

// Targets turns the proxy's endpoint backends into watch targets.
func Targets(bs []proxy.EndpointBackend) []Target {
	out := make([]Target, 0, len(bs))
	for _, b := range bs {
		out = append(out, Target{Name: b.Name, Namespace: b.Endpoints.Namespace, Service: b.Endpoints.Service, Port: b.Endpoints.Port, Pods: b.Balancer})
	}
	return out
}

// Sinks turns the proxy's LoadAware endpoint backends into scraper sinks
// (round-robin never reads engine metrics).
func Sinks(bs []proxy.EndpointBackend) []MetricsSink {
	out := make([]MetricsSink, 0, len(bs))
	for _, b := range bs {
		if b.Balancer.Config().LoadAware {
			out = append(out, b.Balancer)
		}
	}
	return out
}
