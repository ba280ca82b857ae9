// Package compiler is the frontend: it decodes ModelRouters strictly, applies
// every default in one place, validates the whole spec (reporting every
// problem at once, each with its field path and a reason) and lowers a valid
// router to the typed IR. It is pure: references come in through the
// References interface, never from a cluster.
package compiler

import (
	"cmp"
	"strings"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/operator"
)

// Options tune a compile.
type Options struct {
	// DataPlane, when set, overrides spec.dataPlane.
	DataPlane ir.DataPlane
	// Operator are the operator's settings: the router-proxy image used when
	// spec.proxy.image is unset, and the OTLP collector for sink otlp.
	Operator operator.Settings
	// Fields are the data planes' field tables (targets.Registry.FieldTables);
	// the pipeline sets them.
	Fields FieldTables
	// Authoritative says the references are the cluster's own (the
	// controller): an InferenceService they lack does not exist and is not
	// ready. Offline (the CLI) a missing one is assumed ready.
	Authoritative bool
}

// Compile defaults, validates and lowers one router. The router is not
// modified. The IR is nil when any error was found; warnings may accompany
// either outcome.
func Compile(router *v1.ModelRouter, refs References, opts Options) (*ir.Router, diag.List) {
	r := router.DeepCopy()
	setDefaults(r, opts)
	res := resolve(r, refs, opts.Authoritative)
	diags := res.diags
	// What the user set, not what defaulting filled in, decides what is ignored.
	if opts.Fields != nil {
		diags = append(diags, ignoredFields(&router.Spec, &r.Spec, opts.Fields(ir.DataPlane(r.Spec.DataPlane)))...)
	}
	diags = append(diags, validate(r, res)...)
	if diags.HasErrors() {
		return nil, diags
	}
	out, more := lower(r, res)
	diags = append(diags, more...)
	if diags.HasErrors() {
		return nil, diags
	}
	out.Policy.Audit.OTLP = lowerOTLP(opts.Operator.OTLP)
	if bs := opts.Operator.BudgetStore; bs.URL != "" && len(out.Policy.Budgets) > 0 {
		store := &ir.BudgetStore{URL: bs.URL, Failure: cmp.Or(bs.Failure, "closed")}
		store.PasswordSecret, store.PasswordKey, _ = strings.Cut(bs.PasswordSecret, "/")
		out.Policy.BudgetStore = store
	}
	return out, diags
}

// resolution is what the router's references resolved to, computed once and
// shared by validation and lowering.
type resolution struct {
	// isvc maps a backend name to its InferenceService; nil when absent from the input.
	isvc map[string]*v1.InferenceService
	// pool maps a backend name to the ModelPool its InferenceService belongs to.
	pool map[string]*v1.ModelPool
	// ready maps a backend name to its InferenceService's readiness
	// (inferenceServiceReady), for the backends found in the input.
	ready map[string]bool
	// missing are the backends whose InferenceService authoritative
	// references lack: not ready.
	missing []string
	// pickers is each backend's effective endpoint picker, by index.
	pickers []effectivePicker
	diags   diag.List
}

func resolve(r *v1.ModelRouter, refs References, authoritative bool) *resolution {
	res := &resolution{isvc: map[string]*v1.InferenceService{}, pool: map[string]*v1.ModelPool{}, ready: map[string]bool{},
		pickers: effectivePickers(&r.Spec)}
	pools := refs.ModelPools(r.Namespace)
	for i, b := range r.Spec.Backends {
		if b.InferenceServiceRef == nil || b.InferenceServiceRef.Name == "" {
			continue
		}
		name := b.InferenceServiceRef.Name
		if s, ok := refs.InferenceService(r.Namespace, name); ok {
			res.isvc[b.Name] = s
			res.ready[b.Name] = inferenceServiceReady(s)
		} else if authoritative {
			res.missing = append(res.missing, b.Name)
			res.diags.Warnf(diag.BackendPath(i)+".inferenceServiceRef.name", "InferenceServiceNotFound",
				"InferenceService %s/%s does not exist; backend %q is not ready and its rules fail over until it does",
				r.Namespace, name, b.Name)
		} else {
			res.diags.Warnf(diag.BackendPath(i)+".inferenceServiceRef.name", "InferenceServiceNotFound",
				"InferenceService %s/%s is not in the input; assuming Service %q on port %d and that it is ready",
				r.Namespace, name, naming.InferenceServiceServiceName(name), ConventionalServicePort)
		}
		for _, p := range pools {
			for _, m := range p.Spec.Members {
				if m.InferenceServiceRef.Name == name {
					res.pool[b.Name] = p
				}
			}
		}
		// A pool member that is not resident is stopped by design; any other
		// InferenceService that is not ready is worth a word, since rules that
		// name it fail over (or, fail-closed, refuse) until it is.
		if s := res.isvc[b.Name]; s != nil && res.pool[b.Name] == nil && !res.ready[b.Name] {
			res.diags.Warnf(diag.BackendPath(i)+".inferenceServiceRef.name", "InferenceServiceNotReady",
				"InferenceService %s/%s is not ready (phase %q); traffic for backend %q fails over until it is", r.Namespace, name, s.Status.Phase, b.Name)
		}
	}
	return res
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
