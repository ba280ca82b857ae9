package compiler

import (
	"reflect"
	"regexp"
	"slices"
	"sort"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/config/crd"
)

// fieldTableFromCRD reads every constraint of the spec's own fields (not of
// the core Kubernetes types it embeds, which the API server judges) from the
// generated CRD: the markers on the API types are their one home. hints adds
// the words that explain a pattern.
func fieldTableFromCRD(hints map[string]string) map[string]fieldRule {
	var root schemaNode
	if err := crd.DecodeSchema(v1.GroupVersion.Version, &root); err != nil {
		panic("compiler: " + err.Error())
	}
	reachable := map[string]bool{}
	schemaPaths(reflect.TypeFor[v1.ModelRouterSpec](), "spec", reachable)
	table := map[string]fieldRule{}
	root.Properties["spec"].walk("spec", false, reachable, hints, table)
	if len(table) == 0 {
		panic("compiler: the embedded ModelRouter CRD has no " + v1.GroupVersion.Version + " spec schema")
	}
	return table
}

// schemaNode is the part of an OpenAPI v3 schema the field table reads.
type schemaNode struct {
	Type       string                `json:"type"`
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
	Required   []string              `json:"required"`
	Enum       []string              `json:"enum"`
	Pattern    string                `json:"pattern"`
	MinLength  *int                  `json:"minLength"`
	MaxLength  *int                  `json:"maxLength"`
	MinItems   *int                  `json:"minItems"`
	MaxItems   *int                  `json:"maxItems"`
	Minimum    *int64                `json:"minimum"`
	Maximum    *int64                `json:"maximum"`
}

func (n schemaNode) walk(path string, required bool, reachable map[string]bool, hints map[string]string, table map[string]fieldRule) {
	if path != "spec" && !reachable[path] {
		return
	}
	if path != "spec" {
		rule := n.rule(required, hints[path])
		if !reflect.DeepEqual(rule, fieldRule{hint: rule.hint}) {
			table[path] = rule
		}
	}
	n.children(path, reachable, hints, table)
}

// children walks the properties of an object, and the elements of a list of
// objects ("[]"): the field walker applies rules to fields, never to a bare
// list element.
func (n schemaNode) children(path string, reachable map[string]bool, hints map[string]string, table map[string]fieldRule) {
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n.Properties[name].walk(path+"."+name, slices.Contains(n.Required, name), reachable, hints, table)
	}
	if n.Items != nil {
		n.Items.children(path+"[]", reachable, hints, table)
	}
}

// rule is the field-table row of one schema node.
func (n schemaNode) rule(required bool, hint string) fieldRule {
	rule := fieldRule{required: required, enum: n.Enum, minimum: n.Minimum, maximum: n.Maximum, hint: hint}
	if n.Pattern != "" {
		rule.pattern = regexp.MustCompile(n.Pattern)
	}
	for dst, src := range map[*int]*int{&rule.minLength: n.MinLength, &rule.maxLength: n.MaxLength, &rule.minItems: n.MinItems, &rule.maxItems: n.MaxItems} {
		if src != nil {
			*dst = *src
		}
	}
	return rule
}

// schemaPaths lists every field path of an API struct the field walker
// reaches ("[]" marks a list element).
func schemaPaths(t reflect.Type, prefix string, out map[string]bool) {
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name == "" {
			continue
		}
		p, ft := prefix+"."+name, t.Field(i).Type
		out[p] = true
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case isAPIStruct(ft):
			schemaPaths(ft, p, out)
		case ft.Kind() == reflect.Slice && isAPIStruct(ft.Elem()):
			schemaPaths(ft.Elem(), p+"[]", out)
		}
	}
}

// specPaths are the ModelRouter's own field paths, for hints.
var specPaths = func() map[string]bool {
	out := map[string]bool{}
	schemaPaths(reflect.TypeFor[v1.ModelRouterSpec](), "spec", out)
	for _, f := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
		out[f] = true
	}
	return out
}()
