package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// The fleet a scenario creates: namespaces bench-0.. (routersPerNS routers
// each), isvcsPerNS Ready InferenceServices per namespace, and Gateways in
// the namespace gateways: gw-0.. for the Gateway plane (Envoy AI Gateway),
// agw-0.. for the AgentGateway plane, each with one HTTP listener that
// admits routes from every namespace.
const (
	gatewayNS     = "gateways"
	leaseNS       = "llmkube-system"
	planeProxy    = "Proxy"
	planeGateway  = "Gateway"
	planeAgentGW  = "AgentGateway"
	routerPrefix  = "r"
	benchNSPrefix = "bench-"
)

var planes = []string{planeProxy, planeGateway, planeAgentGW}

// layout says how a scenario's routers are placed.
type layout struct {
	n            int
	onePlane     string // "" spreads over the three planes (i%3); else every router on this plane
	gateways     int    // Gateways per gateway plane (1 for the one-Gateway runs)
	routersPerNS int
	isvcsPerNS   int
}

func (l layout) namespaces() int { return (l.n + l.routersPerNS - 1) / l.routersPerNS }

// router is one ModelRouter of the fleet.
type router struct {
	ns, name, plane string
	index           int
}

func (l layout) routers() []router {
	out := make([]router, l.n)
	for i := range out {
		plane := l.onePlane
		if plane == "" {
			plane = planes[i%3]
		}
		out[i] = router{ns: fmt.Sprintf("%s%d", benchNSPrefix, i/l.routersPerNS), name: fmt.Sprintf("%s%05d", routerPrefix, i), plane: plane, index: i}
	}
	return out
}

// isvcs are the two InferenceServices a router references.
func (l layout) isvcs(r router) (a, b string) {
	return fmt.Sprintf("m%d", r.index%l.isvcsPerNS), fmt.Sprintf("m%d", (r.index+1)%l.isvcsPerNS)
}

// gateway is the Gateway a gateway-plane router attaches to.
func (l layout) gateway(r router) string {
	g := (r.index / 3) % l.gateways
	if l.onePlane != "" {
		g = r.index % l.gateways
	}
	if r.plane == planeAgentGW {
		return fmt.Sprintf("agw-%d", g)
	}
	return fmt.Sprintf("gw-%d", g)
}

// object is the ModelRouter. Every router has two backends (two
// InferenceServices) and the spec change moves its traffic from the first
// to the second. Routers that share a Gateway are kept apart as the
// cluster-wide checks demand: Gateway-plane routers by hostnames (one each),
// AgentGateway routers by matching disjoint models (a rule on a model name
// of their own, no default route).
func (l layout) object(r router, changed bool) *unstructured.Unstructured {
	a, b := l.isvcs(r)
	target := "a"
	if changed {
		target = "b"
	}
	backend := func(name, isvc string) map[string]any {
		m := map[string]any{"name": name, "inferenceServiceRef": map[string]any{"name": isvc}}
		if r.plane == planeAgentGW {
			// An Endpoint Picker binds to one InferencePool: one per InferenceService.
			m["endpointPicker"] = map[string]any{"service": map[string]any{"name": isvc + "-epp", "port": int64(9002)}}
		}
		return m
	}
	spec := map[string]any{"backends": []any{backend("a", a), backend("b", b)}}
	switch r.plane {
	case planeProxy:
		spec["defaultRoute"] = target
	case planeGateway:
		spec["dataPlane"] = planeGateway
		spec["gatewayRef"] = map[string]any{"name": l.gateway(r), "namespace": gatewayNS,
			"hostnames": []any{fmt.Sprintf("%s.%s.bench.example", r.name, r.ns)}}
		spec["defaultRoute"] = target
	case planeAgentGW:
		spec["dataPlane"] = planeAgentGW
		spec["agentGatewayRef"] = map[string]any{"name": l.gateway(r), "namespace": gatewayNS}
		spec["rules"] = []any{map[string]any{"name": "own", "match": map[string]any{"models": []any{r.ns + "-" + r.name}},
			"route": map[string]any{"backends": []any{target}}}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "ModelRouter",
		"metadata": map[string]any{"name": r.name, "namespace": r.ns},
		"spec":     spec,
	}}
	return u
}

// changePatch is the merge patch of the one spec change.
func (l layout) changePatch(r router) []byte {
	if r.plane == planeAgentGW {
		return []byte(fmt.Sprintf(`{"spec":{"rules":[{"name":"own","match":{"models":[%q]},"route":{"backends":["b"]}}]}}`, r.ns+"-"+r.name))
	}
	return []byte(`{"spec":{"defaultRoute":"b"}}`)
}

// createFixtures creates the namespaces, Gateways and Ready InferenceServices.
func createFixtures(ctx context.Context, c client.Client, l layout) error {
	nss := []string{gatewayNS, leaseNS}
	for i := range l.namespaces() {
		nss = append(nss, fmt.Sprintf("%s%d", benchNSPrefix, i))
	}
	for _, ns := range nss {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for g := range l.gateways {
		for _, gw := range []struct{ name, class string }{{fmt.Sprintf("gw-%d", g), "envoy-ai-gateway"}, {fmt.Sprintf("agw-%d", g), "agentgateway"}} {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
				"metadata": map[string]any{"name": gw.name, "namespace": gatewayNS},
				"spec": map[string]any{"gatewayClassName": gw.class, "listeners": []any{map[string]any{
					"name": "http", "port": int64(80), "protocol": "HTTP",
					"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
				}}},
			}}
			if err := c.Create(ctx, obj); err != nil {
				return fmt.Errorf("creating Gateway %s: %w", gw.name, err)
			}
		}
	}
	var jobs []func() error
	for i := range l.namespaces() {
		ns := fmt.Sprintf("%s%d", benchNSPrefix, i)
		for m := range l.isvcsPerNS {
			jobs = append(jobs, func() error {
				// Unstructured: the api package's InferenceService is a
				// read-only view of the LLMKube operator's kind.
				name := fmt.Sprintf("m%d", m)
				s := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": v1.GroupVersion.String(), "kind": "InferenceService",
					"metadata": map[string]any{"name": name, "namespace": ns},
					"spec":     map[string]any{"modelRef": fmt.Sprintf("model-%d", m), "runtime": v1.RuntimeVLLM},
				}}
				if err := c.Create(ctx, s); err != nil {
					return fmt.Errorf("InferenceService %s/%s: %w", ns, name, err)
				}
				s.Object["status"] = map[string]any{"phase": v1.InferenceServicePhaseReady, "replicas": int64(1), "readyReplicas": int64(1), "desiredReplicas": int64(1),
					"endpoint": fmt.Sprintf("http://%s.%s.svc.cluster.local:8080/v1/chat/completions", name, ns)}
				return c.Status().Update(ctx, s)
			})
		}
	}
	return parallel(ctx, 8, jobs)
}

// createRouters creates every router with workers in parallel.
func createRouters(ctx context.Context, c client.Client, l layout, rs []router, workers int) error {
	jobs := make([]func() error, len(rs))
	for i, r := range rs {
		jobs[i] = func() error { return c.Create(ctx, l.object(r, false)) }
	}
	return parallel(ctx, workers, jobs)
}

// parallel runs jobs on workers goroutines and returns the first error.
func parallel(ctx context.Context, workers int, jobs []func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				if err := jobs[i](); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
