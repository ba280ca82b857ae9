package compiler

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/diag"
)

// capabilities applies a plane's capability table, every row the same way:
// an Ignored row to the spec as written (what the user set, not what
// defaulting filled in, earns a FieldIgnored warning), a Refused or Required
// row to the defaulted spec (what the plane would be asked to do). When and
// Unless read the defaulted spec.
func capabilities(asWritten, defaulted *v1.ModelRouterSpec, table capability.Table) diag.List {
	if len(table.Rows) == 0 {
		return nil
	}
	written, ok := specDoc(asWritten)
	if !ok {
		return nil
	}
	dflt, ok := specDoc(defaulted)
	if !ok {
		return nil
	}
	var diags diag.List
	for _, r := range table.Rows {
		if r.Feature != "" {
			continue // the plane's emitter reports a feature; validate reads it
		}
		if (r.When != nil && !holds(dflt, *r.When)) || (r.Unless != nil && holds(dflt, *r.Unless)) {
			continue
		}
		switch r.Verdict {
		case capability.Ignored:
			for _, hit := range rowHits(written, r) {
				diags.WarnAt(hit.path, ReasonFieldIgnored, "%s", message(dflt, r, hit))
			}
		case capability.Refused:
			for _, hit := range rowHits(dflt, r) {
				diags.ErrorAt(hit.path, r.Reason, "%s", message(dflt, r, hit))
			}
		case capability.Required:
			if len(walk(dflt, diag.Spec(), segments(r.Path))) == 0 {
				diags.ErrorAt(fieldPath(r.Path), r.Reason, "%s", message(dflt, r, fieldHit{}))
			}
		}
	}
	return diags
}

// refuses reports whether the table refuses what the defaulted spec sets at
// path: a check of what the field asks for is moot then.
func refuses(defaulted *v1.ModelRouterSpec, table capability.Table, path string) bool {
	for _, d := range capabilities(defaulted, defaulted, capability.Table{Rows: rowsAt(table, path, capability.Refused)}) {
		if d.Severity == diag.Error {
			return true
		}
	}
	return false
}

func rowsAt(table capability.Table, path string, v capability.Verdict) []capability.Row {
	var out []capability.Row
	for _, r := range table.Rows {
		if r.Path == path && r.Verdict == v {
			out = append(out, r)
		}
	}
	return out
}

// rowHits are the values of the spec document at the row's path that the
// row's Value or Except select.
func rowHits(doc any, r capability.Row) []fieldHit {
	var out []fieldHit
	for _, hit := range walk(doc, diag.Spec(), segments(r.Path)) {
		v := fmt.Sprint(hit.value)
		if (r.Value != "" && v != r.Value) || (r.Except != "" && v == r.Except) {
			continue
		}
		out = append(out, hit)
	}
	return out
}

// placeholder is "{value}" or "{spec.x.y}" in a row's message.
var placeholder = regexp.MustCompile(`\{(value|spec(?:\.[A-Za-z]+)+)\}`)

// message is the row's message with its placeholders filled in: the value
// found, or the (first) value of another field of the defaulted spec.
func message(dflt any, r capability.Row, hit fieldHit) string {
	return placeholder.ReplaceAllStringFunc(r.Message, func(m string) string {
		name := m[1 : len(m)-1]
		if name == "value" {
			return fmt.Sprint(hit.value)
		}
		if hits := walk(dflt, diag.Spec(), segments(name)); len(hits) > 0 {
			return fmt.Sprint(hits[0].value)
		}
		return ""
	})
}

func segments(path string) []string { return strings.Split(strings.TrimPrefix(path, "spec."), ".") }

// fieldPath is a path without [*] as a field.Path.
func fieldPath(path string) *field.Path { return diag.Spec(segments(path)...) }

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
func holds(doc any, fv capability.FieldValue) bool {
	for _, hit := range walk(doc, diag.Spec(), segments(fv.Path)) {
		if fmt.Sprint(hit.value) == fv.Value {
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
