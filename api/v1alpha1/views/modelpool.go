/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package views

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModelPool is a read-only view of a ModelPool: InferenceServices that share
// one GPU slot, one of them resident at a time.
//
// +kubebuilder:object:root=true
type ModelPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ModelPoolSpec `json:"spec,omitempty"`
}

// ModelPoolList is a list of ModelPool views.
//
// +kubebuilder:object:root=true
type ModelPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModelPool `json:"items"`
}

// ModelPoolSpec is the part of a ModelPool spec the compiler reads.
type ModelPoolSpec struct {
	// Members lists the InferenceServices, in the pool's namespace, that share
	// the pool's GPU slot.
	Members []ModelPoolMember `json:"members,omitempty"`

	// Default names the member to warm on a cold pool; empty lets the first
	// request pick.
	Default string `json:"default,omitempty"`

	// SwapBudget bounds how long the router holds a cross-model request while
	// the target member loads (a duration). CRD default: 300s.
	SwapBudget string `json:"swapBudget,omitempty"`
}

// ModelPoolMember names one InferenceService of a pool.
type ModelPoolMember struct {
	// InferenceServiceRef names the member InferenceService.
	InferenceServiceRef corev1.LocalObjectReference `json:"inferenceServiceRef"`
}
