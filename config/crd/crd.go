// Package crd embeds the generated ModelRouter CRD (controller-gen, `make
// generate`), so the compiler validates offline input against the very
// schema the API server enforces rather than a hand-kept copy.
package crd

import _ "embed"

// ModelRouter is config/crd/inference.llmkube.dev_modelrouters.yaml.
//
//go:embed inference.llmkube.dev_modelrouters.yaml
var ModelRouter []byte
