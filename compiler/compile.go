// Package compiler is the frontend. It reads as its pipeline, a file per
// step:
//
//   - decode (inputs.go, decode_errors.go): ModelRouters strictly, every
//     unknown, duplicated or mistyped field with its path; the referenced
//     kinds through lenient views;
//   - defaults (defaults.go): every default, in one place, on a copy;
//   - resolve (resolve.go): the references (InferenceServices, their
//     readiness, ModelPool membership, endpoint pickers), computed once;
//   - validate (capabilities.go, validate*.go): the plane's capability
//     table, then the whole checklist, every problem at once with
//     its field path and a reason;
//   - lower (lower.go): a valid router to the typed IR.
//
// It is pure: references come in through the References interface, never
// from a cluster.
package compiler

import (
	"cmp"
	"strings"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/platform"
)

// Options tune a compile.
type Options struct {
	// DataPlane, when set, overrides spec.dataPlane.
	DataPlane ir.DataPlane
	// Operator are the operator's settings: the router-proxy image used when
	// spec.proxy.image is unset, and the OTLP collector for sink otlp.
	Operator platform.Settings
	// Planes are the data planes' capability tables
	// (targets.Registry.Capabilities); the pipeline sets them. Without
	// them the frontend applies no plane's table: what a plane ignores,
	// refuses or requires is not checked.
	Planes capability.Tables
	// Authoritative says the references are the cluster's own (the
	// controller): an InferenceService they lack does not exist and is not
	// ready. Offline (the CLI) a missing one is assumed ready.
	Authoritative bool
}

// Compile defaults, validates and lowers one router. The router is not
// modified. The IR is nil when any error was found; warnings may accompany
// either outcome.
func Compile(router *v1.ModelRouter, refs References, opts Options) (*ir.Router, diag.List) {
	// defaults
	r := router.DeepCopy()
	setDefaults(r, opts)
	// resolve
	res := resolve(r, refs, opts.Authoritative)
	diags := res.diags
	// validate: the plane's capability table (what the user set, not what
	// defaulting filled in, decides what is ignored), then the checklist.
	var plane capability.Table
	if opts.Planes != nil {
		plane = opts.Planes(ir.DataPlane(r.Spec.DataPlane))
	}
	diags = append(diags, capabilities(&router.Spec, &r.Spec, plane)...)
	diags = append(diags, validate(r, res, plane)...)
	if diags.HasErrors() {
		return nil, diags
	}
	// lower
	out, more := lower(r, res)
	diags = append(diags, more...)
	diags = append(diags, checkAllowlists(out)...)
	if diags.HasErrors() {
		return nil, diags
	}
	out.OTLP = lowerOTLP(opts.Operator.OTLP)
	if bs := opts.Operator.BudgetStore; bs.URL != "" && needsStore(out) {
		store := &ir.BudgetStore{URL: bs.URL, Failure: cmp.Or(bs.Failure, DefaultBudgetStoreFailure)}
		store.PasswordSecret, store.PasswordKey, _ = strings.Cut(bs.PasswordSecret, "/")
		out.Policy.BudgetStore = store
	}
	return out, diags
}

// needsStore reports whether the router uses the operator's shared store:
// to count its budgets and rate limits, or to share its external backends' upstream quota
// holds across replicas (docs/upstream-quota.md).
func needsStore(r *ir.Router) bool {
	if len(r.Policy.Budgets) > 0 || len(r.Policy.RateLimits) > 0 {
		return true
	}
	for _, b := range r.Backends {
		if b.External != nil {
			return true
		}
	}
	return false
}

// sensitive reports whether any of a rule's classifications is sensitive.
func sensitive(values, sensitiveSet []string) bool {
	for _, v := range values {
		for _, s := range sensitiveSet {
			if strings.EqualFold(v, s) {
				return true
			}
		}
	}
	return false
}
