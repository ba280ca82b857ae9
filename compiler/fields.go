package compiler

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/planes"
)

// ignoredFields applies a plane's field table to the spec as written
// (asWritten) with one reason, FieldIgnored. defaulted is the same spec
// after defaulting, for the rules' When.
func ignoredFields(asWritten, defaulted *v1.ModelRouterSpec, rules []planes.FieldRule) diag.List {
	if len(rules) == 0 {
		return nil
	}
	doc, ok := specDoc(asWritten)
	if !ok {
		return nil
	}
	var dflt any // the defaulted spec, read for Unless
	var diags diag.List
	for _, r := range rules {
		if u := r.Unless; u != nil {
			if dflt == nil {
				if dflt, ok = specDoc(defaulted); !ok {
					return nil
				}
			}
			if holds(dflt, *u) {
				continue
			}
		}
		segs := strings.Split(strings.TrimPrefix(r.Path, "spec."), ".")
		for _, hit := range walk(doc, diag.Spec(), segs) {
			if r.Value != "" && hit.value != r.Value {
				continue
			}
			diags.WarnAt(hit.path, ReasonFieldIgnored, "%s", r.Why)
		}
	}
	return diags
}

// specDoc is the spec as generic JSON, as the field tables' paths read it.
func specDoc(s *v1.ModelRouterSpec) (any, bool) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, false
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, false
	}
	return doc, true
}

// holds reports whether the spec's field at fv.Path holds fv.Value.
func holds(doc any, fv planes.FieldValue) bool {
	for _, hit := range walk(doc, diag.Spec(), strings.Split(strings.TrimPrefix(fv.Path, "spec."), ".")) {
		if hit.value == fv.Value {
			return true
		}
	}
	return false
}

type fieldHit struct {
	path  *field.Path
	value any
}

// walk finds every set value at segs below v; "name[*]" fans out over a list.
func walk(v any, path *field.Path, segs []string) []fieldHit {
	if len(segs) == 0 {
		if isZero(v) {
			return nil
		}
		return []fieldHit{{path, v}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	name, each := strings.CutSuffix(segs[0], "[*]")
	child, ok := m[name]
	if !ok {
		return nil
	}
	if !each {
		return walk(child, path.Child(name), segs[1:])
	}
	list, _ := child.([]any)
	var out []fieldHit
	for i, el := range list {
		out = append(out, walk(el, path.Child(name).Index(i), segs[1:])...)
	}
	return out
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return false // an object the user wrote, even empty, asks for something
	}
	return false
}
