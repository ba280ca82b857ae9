/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package views

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InferenceService is a read-only view of an InferenceService.
//
// +kubebuilder:object:root=true
type InferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InferenceServiceSpec   `json:"spec,omitempty"`
	Status InferenceServiceStatus `json:"status,omitempty"`
}

// InferenceServiceList is a list of InferenceService views.
//
// +kubebuilder:object:root=true
type InferenceServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InferenceService `json:"items"`
}

// InferenceServiceSpec is the part of an InferenceService spec the compiler
// reads. An InferenceService does not name its ModelPool: pool membership is
// found from ModelPool.spec.members.
type InferenceServiceSpec struct {
	// ModelRef names the Model CR the service serves.
	ModelRef string `json:"modelRef,omitempty"`

	// Runtime is the inference server: llamacpp, llamacpp-router,
	// personaplex, vllm, tgi, sglang or generic. CRD default: llamacpp.
	Runtime string `json:"runtime,omitempty"`

	// Replicas is the desired number of inference pods. CRD default: 1.
	Replicas *int32 `json:"replicas,omitempty"`

	// Endpoint is the Service in front of the inference pods.
	Endpoint *InferenceServiceEndpoint `json:"endpoint,omitempty"`

	// ContainerPort overrides the primary container port. Each runtime has its
	// own default (llamacpp: 8080).
	ContainerPort *int32 `json:"containerPort,omitempty"`

	// ExtraArgs are extra command-line arguments passed to the runtime; they
	// win over typed fields (for example --max-model-len for vLLM).
	ExtraArgs []string `json:"extraArgs,omitempty"`

	// ContextSize is the llama.cpp context window (-c), shared by all
	// parallel slots.
	ContextSize *int32 `json:"contextSize,omitempty"`

	// ParallelSlots is the number of llama.cpp request slots (--parallel).
	// When unset, llama.cpp picks its own value.
	ParallelSlots *int32 `json:"parallelSlots,omitempty"`

	// VLLMConfig holds the vLLM runtime settings.
	VLLMConfig *VLLMConfig `json:"vllmConfig,omitempty"`

	// PodLabels are merged into the inference pods' labels alongside the
	// operator-managed ones (app, inference.llmkube.dev/model,
	// inference.llmkube.dev/service), which win on collision.
	PodLabels map[string]string `json:"podLabels,omitempty"`
}

// InferenceServiceEndpoint is the Service in front of an InferenceService.
type InferenceServiceEndpoint struct {
	// Port is the Service port. CRD default: 8080.
	Port *int32 `json:"port,omitempty"`

	// Path is the HTTP path of the inference endpoint. CRD default:
	// /v1/chat/completions.
	Path string `json:"path,omitempty"`

	// Type is the Service type: ClusterIP, NodePort or LoadBalancer. CRD
	// default: ClusterIP.
	Type string `json:"type,omitempty"`
}

// VLLMConfig is the part of the vLLM runtime settings the compiler reads.
type VLLMConfig struct {
	// MaxModelLen is the maximum model context length (--max-model-len).
	MaxModelLen *int32 `json:"maxModelLen,omitempty"`
}

// InferenceServiceStatus is the readiness part of an InferenceService status.
type InferenceServiceStatus struct {
	// Phase is the lifecycle phase: Pending, Creating, Progressing, Ready,
	// WaitingForGPU, Stopped, Suspended or Failed.
	Phase string `json:"phase,omitempty"`

	// Replicas is the current number of running inference pods.
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of ready inference pods.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// DesiredReplicas is the desired number of replicas.
	DesiredReplicas int32 `json:"desiredReplicas,omitempty"`

	// Endpoint is the service URL where inference requests can be sent.
	Endpoint string `json:"endpoint,omitempty"`

	// Conditions represent the current state of the InferenceService.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
