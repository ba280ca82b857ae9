// Package targets defines what a data-plane emitter is and keeps the set of
// emitters the CLI and the controller can use. Each emitter lives in its own
// sub-package and reads only the IR.
package targets

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// Target compiles one router for one data plane.
type Target interface {
	// DataPlane is the spec.dataPlane value this target serves.
	DataPlane() ir.DataPlane
	// Compile returns every object the data plane needs for the router, or
	// errors when the plane cannot express what the router asks. Warnings may
	// accompany a result.
	Compile(r *ir.Router) (*Result, diag.List)
	// Kinds lists every kind Compile may emit. The controller checks through
	// discovery that they are served before applying, and prunes across the
	// kinds of every target when a router changes data plane.
	Kinds() []schema.GroupVersionKind
	// Capabilities is the plane's capability table
	// (targets/<plane>/capabilities.go): what it ignores, refuses or
	// requires of the spec; the compiler applies it before the target runs.
	Capabilities() capability.Table
}

// Together is implemented by a target whose routers share data-plane state,
// such as the virtual host of one Gateway: CheckTogether checks the routers
// of one input (or, in the controller, of one Gateway) together and returns
// one list of diagnostics per router, in the order given.
type Together interface {
	CheckTogether(rs []*ir.Router) []diag.List
}

// TogetherOne is implemented by a Together target that can check one router
// against the others alone: CheckOne(r, others) returns what
// CheckTogether(append([]*ir.Router{r}, others...))[0] returns, in time
// linear in len(others) (CheckTogether compares every pair). The controller
// runs it in every reconcile of a router, against every other router of the
// cluster on the same data plane.
type TogetherOne interface {
	Together
	CheckOne(r *ir.Router, others []*ir.Router) diag.List
}

// CrossNamespace is implemented by a target that places objects of some
// kinds outside the router's namespace (in its Gateway's, where a policy
// must live to target the Gateway). Such objects carry no owner reference;
// they are labelled with the router's namespace (naming.LabelRouterNamespace)
// and the controller finds them, to prune them, with a label query across
// the cluster, which it runs only for these kinds.
type CrossNamespace interface {
	CrossNamespaceKinds() []schema.GroupVersionKind
}

// Result is a target's complete desired object set for one router. The
// controller prunes anything it applied before that is not in it.
type Result struct {
	Objects []*unstructured.Unstructured
	// Summary says in a few words what was compiled ("3 backends, 2 rules,
	// 1 budget"), for status messages.
	Summary string
}

// Kinds are the distinct kinds of the result's objects, sorted.
func (r *Result) Kinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, o := range r.Objects {
		kinds = append(kinds, o.GroupVersionKind())
	}
	return distinctKinds(kinds)
}

// distinctKinds are kinds without repeats, sorted.
func distinctKinds(kinds []schema.GroupVersionKind) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, k := range kinds {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Registry maps data planes to their targets.
type Registry struct {
	targets map[ir.DataPlane]Target
}

// NewRegistry builds a registry from targets; a data plane registered twice panics (programming error).
func NewRegistry(ts ...Target) *Registry {
	r := &Registry{targets: map[ir.DataPlane]Target{}}
	for _, t := range ts {
		if _, dup := r.targets[t.DataPlane()]; dup {
			panic(fmt.Sprintf("targets: data plane %s registered twice", t.DataPlane()))
		}
		r.targets[t.DataPlane()] = t
	}
	return r
}

// AllKinds is the union of every registered target's kinds, sorted.
func (r *Registry) AllKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, t := range r.targets {
		kinds = append(kinds, t.Kinds()...)
	}
	return distinctKinds(kinds)
}

// CrossNamespaceKinds is the union of the kinds the registered targets
// place outside the router's namespace (CrossNamespace), sorted.
func (r *Registry) CrossNamespaceKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, t := range r.targets {
		if c, ok := t.(CrossNamespace); ok {
			kinds = append(kinds, c.CrossNamespaceKinds()...)
		}
	}
	return distinctKinds(kinds)
}

// Get returns the target for a data plane, or an error naming a data plane that is not built.
func (r *Registry) Get(dp ir.DataPlane) (Target, error) {
	if t, ok := r.targets[dp]; ok {
		return t, nil
	}
	for _, known := range capability.Planes() {
		if known == dp {
			return nil, fmt.Errorf("data plane %s is not implemented yet in this build of llmkube-compile (available: %s)", dp, strings.Join(r.names(), ", "))
		}
	}
	return nil, fmt.Errorf("unknown data plane %q (available: %s)", dp, strings.Join(r.names(), ", "))
}

// Cluster returns the controller side of a registered data plane.
func (r *Registry) Cluster(dp ir.DataPlane) (Cluster, bool) {
	c, ok := r.targets[dp].(Cluster)
	return c, ok
}

// Clusters returns the controller side of every registered data plane.
func (r *Registry) Clusters() map[ir.DataPlane]Cluster {
	out := map[ir.DataPlane]Cluster{}
	for dp, t := range r.targets {
		if c, ok := t.(Cluster); ok {
			out[dp] = c
		}
	}
	return out
}

// Names lists the registered data planes, sorted: the CLI's --data-plane values.
func (r *Registry) Names() []string { return r.names() }

func (r *Registry) names() []string {
	var out []string
	for dp := range r.targets {
		out = append(out, string(dp))
	}
	sort.Strings(out)
	return out
}

// HostnamesOverlap reports whether two routers' Gateway API hostnames can
// take one request, and a pair that does: no hostnames takes every host;
// otherwise some host matches a hostname of each (exact, or "*.suffix" for
// any host under suffix). x and y are "" when either list is empty.
func HostnamesOverlap(a, b []string) (x, y string, ok bool) {
	if len(a) == 0 || len(b) == 0 {
		return "", "", true
	}
	for _, x := range a {
		for _, y := range b {
			if hostsOverlap(x, y) {
				return x, y, true
			}
		}
	}
	return "", "", false
}

// hostsOverlap reports whether some host matches both Gateway API hostnames
// (exact, or "*.suffix" for any host under suffix).
func hostsOverlap(x, y string) bool {
	x, y = strings.ToLower(x), strings.ToLower(y)
	wx, wy := strings.HasPrefix(x, "*."), strings.HasPrefix(y, "*.")
	switch {
	case wx && wy:
		return strings.HasSuffix(x[1:], y[1:]) || strings.HasSuffix(y[1:], x[1:])
	case wx:
		return strings.HasSuffix(y, x[1:])
	case wy:
		return strings.HasSuffix(x, y[1:])
	}
	return x == y
}
