// Package pipeline runs the whole compile for every router in an input: the
// frontend, then the router's data-plane target. The CLI and the controller
// share it, so a router means the same thing offline and in a cluster.
package pipeline

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

// Options tune a run.
type Options struct {
	Compile compiler.Options
}

// Run compiles every router in the input. It returns the objects of every
// router only when no router was refused: output is all or nothing.
func Run(in *compiler.Inputs, reg *targets.Registry, opts Options) ([]*unstructured.Unstructured, diag.List) {
	var all []*unstructured.Unstructured
	var diags diag.List
	owner := map[string]string{}
	together := map[ir.DataPlane][]compiled{}
	for _, src := range in.Routers {
		router, objs, d := compileRouter(src, in, reg, opts)
		diags = append(diags, d...)
		if router != nil {
			together[router.DataPlane] = append(together[router.DataPlane], compiled{src, router, objs})
		}
		for _, o := range objs {
			key := o.GroupVersionKind().GroupKind().String() + " " + o.GetNamespace() + "/" + o.GetName()
			if prev, taken := owner[key]; taken {
				diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: src.File, Object: "ModelRouter/" + src.Router.Name,
					Reason: ReasonNameCollision, Message: fmt.Sprintf("generates %s, which ModelRouter/%s also generates; rename one of the routers (or, on the Proxy data plane, set a different spec.proxy.serviceName)", key, prev)})
				continue
			}
			owner[key] = src.Router.Name
		}
		all = append(all, objs...)
	}
	diags = append(diags, checkTogether(reg, together)...)
	diags = append(diags, checkNeighbours(reg, together, in.Foreign)...)
	if diags.HasErrors() {
		return nil, diags
	}
	targets.SortObjects(all)
	return all, diags
}

// CompileRouter compiles one router: frontend, then its target. Diagnostics
// are attributed to the router's file and object.
func CompileRouter(src compiler.RouterSource, refs compiler.References, reg *targets.Registry, opts Options) ([]*unstructured.Unstructured, diag.List) {
	_, objs, diags := compileRouter(src, refs, reg, opts)
	return objs, diags
}

// compiled is a router the frontend and its target accepted.
type compiled struct {
	src    compiler.RouterSource
	router *ir.Router
	objs   []*unstructured.Unstructured
}

func compileRouter(src compiler.RouterSource, refs compiler.References, reg *targets.Registry, opts Options) (*ir.Router, []*unstructured.Unstructured, diag.List) {
	p, _ := Plan(src, refs, reg, opts, nil) // no gate, no error
	if p.NotBuilt != nil {
		p.Diags = append(p.Diags, diag.Diagnostic{Severity: diag.Error, File: src.File, Object: "ModelRouter/" + src.Router.Name,
			Field: diag.Spec("dataPlane").String(), Reason: ReasonDataPlaneNotImplemented, Message: p.NotBuilt.Error()})
	}
	if p.Result == nil {
		return nil, nil, p.Diags
	}
	return p.Router, p.Result.Objects, p.Diags
}

// Planned is one router's compile, stage by stage.
type Planned struct {
	// Router is the frontend's IR; nil when the frontend refused the spec.
	Router *ir.Router
	// Target is the router's data plane; nil when it is not built
	// (NotBuilt says why).
	Target   targets.Target
	NotBuilt error
	// Result is the target's output; nil when a stage refused or stopped.
	Result *targets.Result
	// Diags are every stage's diagnostics, attributed to the router.
	Diags diag.List
}

// Plan compiles one router: frontend, then its target. gate, when set, runs
// on the target's result and may withhold it (the controller does while the
// kinds the router emits are not served). The CLI, the webhook and the
// controller all compile through here.
func Plan(src compiler.RouterSource, refs compiler.References, reg *targets.Registry, opts Options, gate func(*targets.Result) (bool, error)) (*Planned, error) {
	object := "ModelRouter/" + src.Router.Name
	p := &Planned{}
	if opts.Compile.Planes == nil {
		opts.Compile.Planes = reg.Capabilities()
	}
	router, diags := compiler.Compile(src.Router, refs, opts.Compile)
	defer func() { p.Diags = diags.WithObject(src.File, object) }()
	if diags.HasErrors() {
		return p, nil
	}
	p.Router = router
	target, err := reg.Get(router.DataPlane)
	if err != nil {
		p.NotBuilt = err
		return p, nil
	}
	p.Target = target
	res, tdiags := target.Compile(router)
	diags = append(diags, tdiags...)
	if diags.HasErrors() || res == nil {
		return p, nil
	}
	if gate != nil {
		if ok, err := gate(res); err != nil || !ok {
			return p, err
		}
	}
	p.Result = res
	return p, nil
}

// checkTogether runs the cross-router checks of targets whose routers share
// data-plane state (targets.Together), per data plane, over the routers it
// accepted.
func checkTogether(reg *targets.Registry, byPlane map[ir.DataPlane][]compiled) diag.List {
	var diags diag.List
	for _, dp := range capability.Planes() {
		cs := byPlane[dp]
		t, err := reg.Get(dp)
		if err != nil || len(cs) < 2 {
			continue
		}
		tg, ok := t.(targets.Together)
		if !ok {
			continue
		}
		rs := make([]*ir.Router, len(cs))
		for i, c := range cs {
			rs[i] = c.router
		}
		for i, d := range tg.CheckTogether(rs) {
			diags = append(diags, d.WithObject(cs[i].src.File, "ModelRouter/"+cs[i].src.Router.Name)...)
		}
	}
	return diags
}

// checkNeighbours runs each plane's neighbour checks (targets.Neighbours)
// against the foreign objects given beside the routers, as the controller
// runs them against the cluster: a conflict the controller would report is
// an error here, at the router's gateway reference.
func checkNeighbours(reg *targets.Registry, byPlane map[ir.DataPlane][]compiled, foreign []*unstructured.Unstructured) diag.List {
	if len(foreign) == 0 {
		return nil
	}
	var diags diag.List
	for _, dp := range capability.Planes() {
		t, err := reg.Get(dp)
		if err != nil {
			continue
		}
		n, ok := t.(targets.Neighbours)
		if !ok {
			continue
		}
		for _, c := range byPlane[dp] {
			at := diag.Diagnostic{File: c.src.File, Object: "ModelRouter/" + c.src.Router.Name, Field: diag.Spec(n.RefField()).String()}
			if u, ok := t.(targets.UncheckedNeighbours); ok {
				// What the check could not judge without an object not
				// given: a warning, so the router is not taken as checked.
				msg, err := u.Unchecked(context.Background(), targets.MemoryReader(foreign), c.router, c.objs)
				if err == nil && msg != "" {
					w := at
					w.Severity, w.Reason, w.Message = diag.Warning, ReasonNeighbourNotChecked, msg
					diags = append(diags, w)
				}
			}
			reason, msg, err := n.CheckForeign(context.Background(), targets.MemoryReader(foreign), c.router, c.objs)
			if err != nil {
				reason, msg = ReasonNeighbourCheckFailed, err.Error()
			}
			if reason == "" {
				continue
			}
			e := at
			e.Severity, e.Reason, e.Message = diag.Error, reason, msg
			diags = append(diags, e)
		}
	}
	return diags
}
