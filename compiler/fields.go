package compiler

import (
	"encoding/json"
	"strings"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// FieldRule is one row of a data plane's field table: a field of the spec
// that the plane does not read. Each plane keeps its table in its own folder
// (fields.go); one frontend pass applies it to the spec as written, so a
// field the user set is never dropped without a FieldIgnored warning.
type FieldRule struct {
	// Path is the field's path, with [*] for every element of a list:
	// "spec.proxy.replicas", "spec.backends[*].balancing".
	Path string
	// Value, when set, limits the rule to that value ("Endpoint").
	Value string
	// When, when set, limits the rule to specs it returns true for (a
	// routing mode, for example). It sees the defaulted spec.
	When func(s *v1.ModelRouterSpec) bool
	// Why is the warning's message: what the field does and why this plane
	// does without it.
	Why string
}

// FieldTables returns the field table of a data plane; nil for none.
type FieldTables func(dp ir.DataPlane) []FieldRule

// ignoredFields applies a plane's field table to the spec as written
// (asWritten) with one reason, FieldIgnored. defaulted is the same spec
// after defaulting, for the rules' When.
func ignoredFields(asWritten, defaulted *v1.ModelRouterSpec, rules []FieldRule) diag.List {
	if len(rules) == 0 {
		return nil
	}
	raw, err := json.Marshal(asWritten)
	if err != nil {
		return nil
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil
	}
	var diags diag.List
	for _, r := range rules {
		if r.When != nil && !r.When(defaulted) {
			continue
		}
		segs := strings.Split(strings.TrimPrefix(r.Path, "spec."), ".")
		for _, hit := range walk(doc, "spec", segs) {
			if r.Value != "" && hit.value != r.Value {
				continue
			}
			diags.Warnf(hit.path, "FieldIgnored", "%s", r.Why)
		}
	}
	return diags
}

type fieldHit struct {
	path  string
	value any
}

// walk finds every set value at segs below v; "name[*]" fans out over a list.
func walk(v any, path string, segs []string) []fieldHit {
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
		return walk(child, path+"."+name, segs[1:])
	}
	list, _ := child.([]any)
	var out []fieldHit
	for i, el := range list {
		out = append(out, walk(el, diag.ItemPath(path+"."+name, i), segs[1:])...)
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
