/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package views defines read-only views of the InferenceService and ModelPool
// kinds of inference.llmkube.dev/v1alpha1: only the fields the compiler reads,
// with JSON names and types compatible with the real CRDs
// (shared/crds/llmkube). Decoding a full object into a view drops every other
// field, so a view must never be written back to the API server.
//
// Use them through package v1alpha1, which aliases them and registers them in
// its scheme. They live in their own package only to keep controller-gen from
// emitting CRDs for them: controller-gen makes a CRD of every type in an API
// package that embeds TypeMeta and ObjectMeta, and +kubebuilder:skipversion
// refuses to drop a CRD's only version. +kubebuilder:skip below excludes this
// package from CRD generation; deepcopy functions are still generated.
//
// The real CRDs default some of these fields on the API server
// (spec.runtime llamacpp, spec.replicas 1, spec.endpoint port 8080, path
// /v1/chat/completions, type ClusterIP; ModelPool spec.swapBudget 300s). An
// object read from a file carries no such defaults; the field comments name
// them so the compiler can apply them.
//
// +kubebuilder:skip
// +kubebuilder:object:generate=true
package views
