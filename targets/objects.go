package targets

import (
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// RouterGVK is the ModelRouter's group, version and kind, for owner references.
var RouterGVK = schema.GroupVersionKind{Group: "inference.llmkube.dev", Version: "v1alpha1", Kind: "ModelRouter"}

// OwnerReferences returns the controller reference to the router, or nil when
// its uid is unknown: a reference without a uid is invalid, so offline output
// carries none.
func OwnerReferences(r *ir.Router) []metav1.OwnerReference {
	if r.UID == "" {
		return nil
	}
	t := true
	return []metav1.OwnerReference{{
		APIVersion:         RouterGVK.GroupVersion().String(),
		Kind:               RouterGVK.Kind,
		Name:               r.Name,
		UID:                types.UID(r.UID),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}}
}

// ToGatewayNamespace moves m, the metadata of one of router r's objects
// that must live beside its Gateway (a policy whose targetRefs are
// same-namespace), to the Gateway's namespace ns when that is not r's: an
// owner reference cannot cross namespaces, so there it carries none and is
// labelled with r's namespace, by which the controller's finalizer deletes
// it.
func ToGatewayNamespace(m *metav1.ObjectMeta, ns string, r *ir.Router) {
	if ns == r.Namespace {
		return
	}
	m.Namespace = ns
	m.OwnerReferences = nil
	m.Labels[naming.LabelRouterNamespace] = naming.LabelValue(r.Namespace)
}

// ToUnstructured converts a typed object, stamping its kind and dropping the
// fields a generator never sets (creationTimestamp, empty status) so output is
// byte-stable and applies cleanly with server-side apply.
func ToUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	pruneNullTimestamps(u.Object)
	// A zero-valued struct (e.g. a Deployment's strategy) converts to {};
	// leave it unset so the API server's default applies and output stays minimal.
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		for k, v := range spec {
			if m, ok := v.(map[string]any); ok && len(m) == 0 {
				delete(spec, k)
			}
		}
	}
	return u, nil
}

// pruneNullTimestamps removes nested "creationTimestamp: null" left by
// embedded ObjectMeta (e.g. a pod template), which strict apply would keep as noise.
func pruneNullTimestamps(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			if k == "metadata" {
				if ts, ok := t["creationTimestamp"]; ok && ts == nil {
					delete(t, "creationTimestamp")
				}
			}
			pruneNullTimestamps(t)
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					pruneNullTimestamps(em)
				}
			}
		}
	}
}

// Typed is a generated object before conversion: a typed API struct and the
// kind to stamp on it.
type Typed struct {
	Obj runtime.Object
	GVK schema.GroupVersionKind
}

// NewResult converts a target's typed objects and orders them
// deterministically. A conversion failure is a compiler bug, reported as an
// InternalError diagnostic.
func NewResult(objs []Typed, summary string) (*Result, diag.List) {
	res := &Result{Summary: summary}
	for _, t := range objs {
		u, err := ToUnstructured(t.Obj, t.GVK)
		if err != nil {
			var diags diag.List
			diags.ErrorAt(diag.Spec(), ReasonInternalError, "%v", err)
			return nil, diags
		}
		res.Objects = append(res.Objects, u)
	}
	SortObjects(res.Objects)
	return res, nil
}

// kindOrder puts objects in the order a person reads and a cluster applies
// them: identity and config before workloads, workloads before routing.
var kindOrder = map[string]int{
	"Namespace": 0, "ServiceAccount": 1, "Role": 2, "RoleBinding": 3, "Secret": 4, "ConfigMap": 5,
	"Deployment": 6, "Service": 7,
	"InferencePool": 8, "AgentgatewayPolicy": 9, "AgentgatewayModel": 10, "HTTPRoute": 11,
	"Backend": 12, "AIServiceBackend": 13, "BackendSecurityPolicy": 14, "SecurityPolicy": 15,
	"AIGatewayRoute": 16, "BackendTrafficPolicy": 17,
}

// SortObjects orders objects deterministically: by kind order, then kind,
// namespace and name.
func SortObjects(objs []*unstructured.Unstructured) {
	rank := func(k string) int {
		if r, ok := kindOrder[k]; ok {
			return r
		}
		return len(kindOrder)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if ra, rb := rank(a.GetKind()), rank(b.GetKind()); ra != rb {
			return ra < rb
		}
		if a.GetKind() != b.GetKind() {
			return a.GetKind() < b.GetKind()
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

// DeepCopyJSON copies in into out through JSON, for the typed mirrors of
// data-plane APIs we cannot import: they are plain data and are copied only
// on conversion, so a generated DeepCopy is not worth its upkeep.
func DeepCopyJSON[T runtime.Object](in, out T) runtime.Object {
	data, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}
