// Package planes is what the compiler and every plane's folder agree on about
// data planes, with neither importing the other: the planes the API accepts
// (Known, the CRD's enum of spec.dataPlane) and the row of a plane's field
// table (FieldRule). It imports nothing of ours but ir and config/crd
// (test/architecture), so an emitter's fields.go reads no compiler and no
// API type.
package planes

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/config/crd"
	"github.com/llmkube/llmkube-compile/ir"
)

// FieldRule is one row of a data plane's field table: a field of the spec
// that the plane does not read. Each plane keeps its table in its own folder
// (fields.go); one frontend pass (compiler.ignoredFields) applies it to the
// spec as written, so a field the user set is never dropped without a
// FieldIgnored warning.
type FieldRule struct {
	// Path is the field's path, with [*] for every element of a list:
	// "spec.proxy.replicas", "spec.backends[*].balancing".
	Path string
	// Value, when set, limits the rule to that value ("Endpoint").
	Value string
	// Unless, when set, turns the rule off for specs whose field at
	// Unless.Path holds Unless.Value (a routing mode, for example). It reads
	// the defaulted spec.
	Unless *FieldValue
	// Why is the warning's message: what the field does and why this plane
	// does without it.
	Why string
}

// FieldValue is a field of the spec (a path as in FieldRule.Path) and a value.
type FieldValue struct {
	Path, Value string
}

// FieldTables returns the field table of a data plane; nil for none.
type FieldTables func(dp ir.DataPlane) []FieldRule

// known is the CRD's enum of spec.dataPlane, read once.
var known = func() []ir.DataPlane {
	type node struct {
		Properties map[string]node `json:"properties"`
		Enum       []string        `json:"enum"`
	}
	var doc struct {
		Spec struct {
			Versions []struct {
				Storage bool `json:"storage"`
				Schema  struct {
					OpenAPIV3Schema node `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(crd.ModelRouter, &doc); err != nil {
		panic(fmt.Sprintf("planes: the embedded ModelRouter CRD does not parse: %v", err))
	}
	var out []ir.DataPlane
	for _, v := range doc.Spec.Versions {
		if v.Storage {
			for _, dp := range v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["dataPlane"].Enum {
				out = append(out, ir.DataPlane(dp))
			}
		}
	}
	if len(out) == 0 {
		panic("planes: the embedded ModelRouter CRD has no spec.dataPlane enum")
	}
	return out
}()

// Known are the data planes the API accepts (the CRD's enum of
// spec.dataPlane), built into this binary or not.
func Known() []ir.DataPlane {
	return append([]ir.DataPlane(nil), known...)
}
