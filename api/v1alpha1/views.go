/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1

import "github.com/llmkube/llmkube-compile/api/v1alpha1/views"

// Read-only views of the InferenceService and ModelPool kinds of this group,
// defined in package views (see the package comment for why). They carry only
// the fields the compiler reads; never write one back to the API server.
type (
	InferenceService         = views.InferenceService
	InferenceServiceList     = views.InferenceServiceList
	InferenceServiceSpec     = views.InferenceServiceSpec
	InferenceServiceEndpoint = views.InferenceServiceEndpoint
	InferenceServiceStatus   = views.InferenceServiceStatus
	VLLMConfig               = views.VLLMConfig
	ModelPool                = views.ModelPool
	ModelPoolList            = views.ModelPoolList
	ModelPoolSpec            = views.ModelPoolSpec
	ModelPoolMember          = views.ModelPoolMember
)

// InferenceService spec.runtime values.
const (
	RuntimeLlamaCpp       = "llamacpp"
	RuntimeLlamaCppRouter = "llamacpp-router"
	RuntimePersonaPlex    = "personaplex"
	RuntimeVLLM           = "vllm"
	RuntimeTGI            = "tgi"
	RuntimeSGLang         = "sglang"
	RuntimeGeneric        = "generic"
)

// InferenceServicePhaseReady is the InferenceService status.phase of a
// service whose pods serve requests.
const InferenceServicePhaseReady = "Ready"

func init() {
	register(
		&InferenceService{}, &InferenceServiceList{},
		&ModelPool{}, &ModelPoolList{},
	)
}
