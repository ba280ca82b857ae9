/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package v1alpha1 is the ModelRouter API, group inference.llmkube.dev,
// version v1alpha1, as specified by shared/spec/modelrouter-reference.txt.
//
// # Defaults
//
// The CRD carries no defaults (no +kubebuilder:default markers). Every
// default is applied by the compiler, in one place, so an object read from a
// file and an object read from the API server compile identically. In
// particular spec.backends[].tier has no API default: the compiler derives it
// when unset, inferenceServiceRef → local and external → cloud. An explicit
// tier always wins. (Upstream defaulted tier to local in the CRD, so an
// external backend without a tier silently became "local" and passed the
// fail-closed PII gate.)
//
// Durations (timeout, idleTimeout, drainTimeout, quarantineDuration,
// responseHeaderTimeout, streamIdleTimeout) are strings in the API; the
// compiler parses and range-checks them and reports errors with field paths.
//
// # Read-only views
//
// InferenceService and ModelPool (and their lists) are aliases of the types in
// package views, registered in this package's scheme. They carry only the
// fields the compiler reads. They are defined in a separate package because
// controller-gen emits a CRD for every type in an API package that embeds
// TypeMeta and ObjectMeta (and +kubebuilder:skipversion refuses a CRD's only
// version), so defining them here would emit InferenceService and ModelPool
// CRDs that contradict the real ones. Package views is marked
// +kubebuilder:skip: controller-gen generates its deepcopy functions but no
// CRD, and config/crd holds only the ModelRouter CRD.
//
// +kubebuilder:object:generate=true
// +groupName=inference.llmkube.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "inference.llmkube.dev", Version: "v1alpha1"}

	// SchemeBuilder registers ModelRouter and the read-only views with a scheme.
	SchemeBuilder runtime.SchemeBuilder

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// register adds objs to SchemeBuilder under GroupVersion (apimachinery's
// builder; an API package needs nothing of controller-runtime).
func register(objs ...runtime.Object) {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objs...)
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})
}
