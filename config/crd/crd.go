// Package crd embeds the generated ModelRouter CRD (controller-gen, `make
// generate`), so the compiler validates offline input against the very
// schema the API server enforces rather than a hand-kept copy.
package crd

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ModelRouter is config/crd/inference.llmkube.dev_modelrouters.yaml.
//
//go:embed inference.llmkube.dev_modelrouters.yaml
var ModelRouter []byte

// DecodeSchema decodes the openAPIV3Schema of the ModelRouter CRD's version
// (its storage version when version is "") into out, a type of the
// caller's own that reads the parts it needs (SchemaNode reads what the
// compiler and the planes do).
func DecodeSchema(version string, out any) error {
	var doc struct {
		Spec struct {
			Versions []struct {
				Name    string `json:"name"`
				Storage bool   `json:"storage"`
				Schema  struct {
					OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(ModelRouter, &doc); err != nil {
		return fmt.Errorf("the embedded ModelRouter CRD does not parse: %w", err)
	}
	for _, v := range doc.Spec.Versions {
		if (version == "" && v.Storage) || (version != "" && v.Name == version) {
			return json.Unmarshal(v.Schema.OpenAPIV3Schema, out)
		}
	}
	return fmt.Errorf("the embedded ModelRouter CRD has no version %q", version)
}

// SchemaNode is what this project reads of an OpenAPI v3 schema node of
// the ModelRouter CRD: the compiler's field table (the constraints) and
// the planes' list of spec fields (the shape), both decoded with
// DecodeSchema.
type SchemaNode struct {
	Type       string                `json:"type"`
	Properties map[string]SchemaNode `json:"properties"`
	Items      *SchemaNode           `json:"items"`
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
