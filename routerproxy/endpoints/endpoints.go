// Package endpoints feeds the router-proxy's balancers (routerproxy/engine/balance)
// from the cluster: the ready pods of each endpoint-resolution backend's
// Service, from a namespace-scoped EndpointSlice informer, and the
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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/llmkube/llmkube-compile/routerproxy"
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

// The resources read, through the dynamic client: the router-proxy links no
// typed clientset (client-go's typed clients register every API group, which
// costs the proxy about 30 MB of resident memory), and decodes only the
// fields it reads (endpointSlice, service).
var (
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// labelServiceName is discovery.k8s.io/v1's EndpointSlice-to-Service label.
const labelServiceName = "kubernetes.io/service-name"

// endpointSlice is the part of a discovery.k8s.io/v1 EndpointSlice read here.
type endpointSlice struct {
	Endpoints []struct {
		Addresses  []string `json:"addresses"`
		Conditions struct {
			Ready *bool `json:"ready"`
		} `json:"conditions"`
	} `json:"endpoints"`
	Ports []struct {
		Name *string `json:"name"`
		Port *int32  `json:"port"`
	} `json:"ports"`
}

// service is the part of a v1 Service read here.
type service struct {
	Spec struct {
		Ports []struct {
			Name string `json:"name"`
			Port int32  `json:"port"`
		} `json:"ports"`
	} `json:"spec"`
}

// Watch starts one informer pair (EndpointSlices selected by
// kubernetes.io/service-name, and Services) per namespace of the targets,
// waits for their caches to sync, pushes every target's ready pods, and keeps
// pushing on every change until ctx ends.
func Watch(ctx context.Context, dyn dynamic.Interface, targets []Target, log *slog.Logger) error {
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
		sel := labelServiceName + " in (" + strings.Join(svcs, ",") + ")"
		sliceInf := informer(dyn.Resource(endpointSlicesGVR).Namespace(ns), sel)
		svcInf := informer(dyn.Resource(servicesGVR).Namespace(ns), "")
		w := &nsWatcher{ns: ns, targets: ts, slices: sliceInf.GetStore(), svcs: svcInf.GetStore(), log: log}
		h := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.update() },
			UpdateFunc: func(any, any) { w.update() },
			DeleteFunc: func(any) { w.update() },
		}
		if _, err := sliceInf.AddEventHandler(h); err != nil {
			return err
		}
		if _, err := svcInf.AddEventHandler(h); err != nil {
			return err
		}
		syncs = append(syncs, sliceInf.HasSynced, svcInf.HasSynced)
		go sliceInf.RunWithContext(ctx)
		go svcInf.RunWithContext(ctx)
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

// informer lists and watches one namespaced resource, as unstructured objects.
func informer(ri dynamic.ResourceInterface, selector string) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return ri.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
}

type nsWatcher struct {
	ns      string
	targets []Target
	slices  cache.Store
	svcs    cache.Store
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
	if obj, ok, err := w.svcs.GetByKey(t.Namespace + "/" + t.Service); err == nil && ok {
		var svc service
		if decode(obj, &svc) {
			for _, p := range svc.Spec.Ports {
				if p.Port == t.Port {
					portName, named = p.Name, true
					break
				}
			}
		}
	}
	var out []string
	for _, obj := range w.slices.List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetNamespace() != t.Namespace || u.GetLabels()[labelServiceName] != t.Service {
			continue
		}
		var sl endpointSlice
		if !decode(u, &sl) {
			continue
		}
		port := slicePort(&sl, portName, named)
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

// decode reads the fields of an unstructured object into a view.
func decode(obj any, into any) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into) == nil
}

// slicePort finds the slice port named like the Service port. Without the
// Service (not seen yet), a slice with a single port uses it.
func slicePort(sl *endpointSlice, name string, named bool) int32 {
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
func Targets(bs []routerproxy.EndpointBackend) []Target {
	out := make([]Target, 0, len(bs))
	for _, b := range bs {
		out = append(out, Target{Name: b.Name, Namespace: b.Endpoints.Namespace, Service: b.Endpoints.Service, Port: b.Endpoints.Port, Pods: b.Balancer})
	}
	return out
}

// Sinks turns the proxy's LoadAware endpoint backends into scraper sinks
// (round-robin never reads engine metrics).
func Sinks(bs []routerproxy.EndpointBackend) []MetricsSink {
	out := make([]MetricsSink, 0, len(bs))
	for _, b := range bs {
		if b.Balancer.Config().LoadAware {
			out = append(out, b.Balancer)
		}
	}
	return out
}
