package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/config/crd"
)

// explainFieldCmd is kubectl explain for the ModelRouter, read from the CRD
// this binary embeds (the schema the API server enforces), so nobody has
// to read Go types to learn a field.
func (s *streams) explainFieldCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain-field [PATH]",
		Short: "Describe a ModelRouter field: its type, constraints, description and subfields",
		Long: `explain-field describes a field of the ModelRouter API from the CRD this
binary embeds, as kubectl explain does: PATH is dotted from spec or status
(spec.policy.classification.mode); a list's elements are reached through the
list (spec.backends.name, or spec.backends[].name). Without PATH it describes
the ModelRouter itself.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			root, err := modelRouterSchema()
			if err != nil {
				return err
			}
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			node, typ, err := schemaAt(root, path)
			if err != nil {
				return usageErr("%v", err)
			}
			name := path
			if name == "" {
				name = "ModelRouter"
			}
			fmt.Fprintf(s.stdout, "FIELD: %s <%s>\n", name, typ)
			for _, c := range constraints(node) {
				fmt.Fprintln(s.stdout, c)
			}
			if d, _ := node["description"].(string); d != "" {
				fmt.Fprintf(s.stdout, "\nDESCRIPTION:\n%s\n", indentText(d, "  "))
			}
			fields := properties(node)
			if len(fields) > 0 {
				fmt.Fprintln(s.stdout, "\nFIELDS:")
				required := map[string]bool{}
				if rs, ok := elem(node)["required"].([]any); ok {
					for _, r := range rs {
						if n, ok := r.(string); ok {
							required[n] = true
						}
					}
				}
				names := make([]string, 0, len(fields))
				for n := range fields {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					child, _ := fields[n].(map[string]any)
					req := ""
					if required[n] {
						req = " -required-"
					}
					d, _ := child["description"].(string)
					first, _, _ := strings.Cut(d, "\n")
					fmt.Fprintf(s.stdout, "  %s <%s>%s\n%s\n", n, typeOf(child), req, indentText(first, "    "))
				}
			}
			return nil
		},
	}
}

// modelRouterSchema is the embedded CRD's openAPIV3Schema.
func modelRouterSchema() (map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(crd.ModelRouter, &doc); err != nil {
		return nil, fmt.Errorf("the embedded ModelRouter CRD: %w", err)
	}
	spec, _ := doc["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	if len(versions) == 0 {
		return nil, fmt.Errorf("the embedded ModelRouter CRD has no version")
	}
	v, _ := versions[0].(map[string]any)
	sch, _ := v["schema"].(map[string]any)
	root, _ := sch["openAPIV3Schema"].(map[string]any)
	if root == nil {
		return nil, fmt.Errorf("the embedded ModelRouter CRD has no schema")
	}
	return root, nil
}

// elem is a node's element schema for a list, else the node.
func elem(node map[string]any) map[string]any {
	if node["type"] == "array" {
		if items, ok := node["items"].(map[string]any); ok {
			return items
		}
	}
	return node
}

func properties(node map[string]any) map[string]any {
	p, _ := elem(node)["properties"].(map[string]any)
	return p
}

// schemaAt walks a dotted path; "[]" after a segment is optional.
func schemaAt(root map[string]any, path string) (map[string]any, string, error) {
	node := root
	if path == "" {
		return node, typeOf(node), nil
	}
	walked := ""
	for _, seg := range strings.Split(strings.ReplaceAll(path, "[]", ""), ".") {
		fields := properties(node)
		child, ok := fields[seg].(map[string]any)
		if !ok {
			var names []string
			for n := range fields {
				names = append(names, n)
			}
			sort.Strings(names)
			at := walked
			if at == "" {
				at = "ModelRouter"
			}
			if len(names) == 0 {
				return nil, "", fmt.Errorf("%s has no fields; %q is not one", at, seg)
			}
			return nil, "", fmt.Errorf("%s has no field %q; its fields are %s", at, seg, strings.Join(names, ", "))
		}
		node = child
		walked = strings.TrimPrefix(walked+"."+seg, ".")
	}
	return node, typeOf(node), nil
}

// typeOf is a schema's type as kubectl explain writes it ([]Object for a
// list of objects).
func typeOf(node map[string]any) string {
	t, _ := node["type"].(string)
	switch t {
	case "array":
		items, _ := node["items"].(map[string]any)
		return "[]" + typeOf(items)
	case "object":
		if _, ok := node["additionalProperties"]; ok {
			return "map[string]" + typeOf(mapOrEmpty(node["additionalProperties"]))
		}
		return "Object"
	case "":
		if node["x-kubernetes-int-or-string"] == true {
			return "IntOrString"
		}
		return "Object"
	}
	return t
}

func mapOrEmpty(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// constraints are the schema's validation rules, one line each.
func constraints(node map[string]any) []string {
	var out []string
	if e, ok := node["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, fmt.Sprint(v))
		}
		out = append(out, "ENUM: "+strings.Join(vs, ", "))
	}
	for _, k := range []string{"default", "format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"} {
		if v, ok := node[k]; ok {
			out = append(out, fmt.Sprintf("%s: %v", strings.ToUpper(k), v))
		}
	}
	return out
}

func indentText(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
