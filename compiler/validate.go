package compiler

import (
	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// validate checks a defaulted router against every rule of the reference and
// returns every problem found.
func validate(r *v1.ModelRouter, res *resolution) diag.List {
	return nil
}
