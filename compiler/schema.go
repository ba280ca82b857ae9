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
	var root crd.SchemaNode
	if err := crd.DecodeSchema(v1.GroupVersion.Version, &root); err != nil {
		panic("compiler: " + err.Error())
	}
	reachable := map[string]bool{}
	schemaPaths(reflect.TypeFor[v1.ModelRouterSpec](), "spec", reachable)
	table := map[string]fieldRule{}
	walkSchema(root.Properties["spec"], "spec", false, reachable, hints, table)
	if len(table) == 0 {
		panic("compiler: the embedded ModelRouter CRD has no " + v1.GroupVersion.Version + " spec schema")
	}
	return table
}

func walkSchema(n crd.SchemaNode, path string, required bool, reachable map[string]bool, hints map[string]string, table map[string]fieldRule) {
	if path != "spec" && !reachable[path] {
		return
	}
	if path != "spec" {
		rule := schemaRule(n, required, hints[path])
		if !reflect.DeepEqual(rule, fieldRule{hint: rule.hint}) {
			table[path] = rule
		}
	}
	schemaChildren(n, path, reachable, hints, table)
}

// children walks the properties of an object, and the elements of a list of
// objects ("[]"): the field walker applies rules to fields, never to a bare
// list element.
func schemaChildren(n crd.SchemaNode, path string, reachable map[string]bool, hints map[string]string, table map[string]fieldRule) {
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		walkSchema(n.Properties[name], path+"."+name, slices.Contains(n.Required, name), reachable, hints, table)
	}
	if n.Items != nil {
		schemaChildren(*n.Items, path+"[]", reachable, hints, table)
	}
}

// rule is the field-table row of one schema node.
func schemaRule(n crd.SchemaNode, required bool, hint string) fieldRule {
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

// requiredFields are the names of the required fields of an API struct t at
// schema path schema (spec.policy.auth.jwt), in the struct's order, from
// the field table: what a hint that says "set X (a, b, c)" lists, never a
// hand-kept copy of the CRD's required list.
func requiredFields(t reflect.Type, schema string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if name := jsonName(t.Field(i)); name != "" && fieldTable[schema+"."+name].required {
			out = append(out, name)
		}
	}
	return out
}
