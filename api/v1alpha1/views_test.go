/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// TestViewsMatchUpstreamCRDs checks that every JSON field of the read-only
// views exists, with a compatible type, in the real llmkube CRD.
func TestViewsMatchUpstreamCRDs(t *testing.T) {
	for _, tc := range []struct {
		file string
		obj  any
	}{
		{"inference.llmkube.dev_inferenceservices.yaml", v1.InferenceService{}},
		{"inference.llmkube.dev_modelpools.yaml", v1.ModelPool{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			crd := loadCRD(t, filepath.Join(sharedDir(t), "crds", "llmkube", tc.file))
			if got, want := dig(crd, "spec", "names", "kind"), reflect.TypeOf(tc.obj).Name(); got != want {
				t.Fatalf("CRD kind = %v, want %s", got, want)
			}
			checkView(t, openAPISchema(t, crd), reflect.TypeOf(tc.obj), "")
		})
	}
}

// TestSwapBudgetDefaultIsUpstreams: a pool read from a file never passed
// through the API server, so the compiler and the router-proxy apply the
// ModelPool CRD's swapBudget default themselves (wellknown.PoolSwapBudget);
// it must be the CRD's.
func TestSwapBudgetDefaultIsUpstreams(t *testing.T) {
	crd := loadCRD(t, filepath.Join(sharedDir(t), "crds", "llmkube", "inference.llmkube.dev_modelpools.yaml"))
	def, ok := dig(openAPISchema(t, crd), "properties", "spec", "properties", "swapBudget", "default").(string)
	if !ok {
		t.Fatal("the ModelPool CRD states no spec.swapBudget default")
	}
	d, err := time.ParseDuration(def)
	if err != nil {
		t.Fatal(err)
	}
	if d != wellknown.PoolSwapBudget {
		t.Errorf("ModelPool CRD defaults swapBudget to %s; wellknown.PoolSwapBudget is %s", def, wellknown.PoolSwapBudget)
	}
}

var metav1Pkg = reflect.TypeOf(metav1.Time{}).PkgPath()

// checkView walks the struct type's JSON fields through the schema node.
func checkView(t *testing.T, node schema, typ reflect.Type, path string) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" { // inline TypeMeta
			continue
		}
		fieldPath := path + name
		child, ok := dig(node, "properties", name).(schema)
		if !ok {
			t.Errorf("%s: not in the upstream CRD", fieldPath)
			continue
		}
		checkViewType(t, child, f.Type, fieldPath)
	}
}

func checkViewType(t *testing.T, node schema, typ reflect.Type, path string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	want := map[reflect.Kind]string{
		reflect.String: "string", reflect.Bool: "boolean", reflect.Int32: "integer", reflect.Int64: "integer",
		reflect.Struct: "object", reflect.Map: "object", reflect.Slice: "array",
	}[typ.Kind()]
	if node["type"] != want {
		t.Errorf("%s: upstream type %v, view has %s (%s)", path, node["type"], want, typ)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		items, _ := node["items"].(schema)
		checkViewType(t, items, typ.Elem(), path+"[]")
	case reflect.Struct:
		if typ.PkgPath() == metav1Pkg { // ObjectMeta, Condition: upstream's own
			return
		}
		checkView(t, node, typ, path+".")
	}
}

// TestSchemeRegistersKinds checks AddToScheme registers ModelRouter and the
// views under inference.llmkube.dev/v1alpha1.
func TestSchemeRegistersKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for kind, obj := range map[string]runtime.Object{
		"ModelRouter": &v1.ModelRouter{}, "ModelRouterList": &v1.ModelRouterList{},
		"InferenceService": &v1.InferenceService{}, "InferenceServiceList": &v1.InferenceServiceList{},
		"ModelPool": &v1.ModelPool{}, "ModelPoolList": &v1.ModelPoolList{},
	} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		if want := v1.GroupVersion.WithKind(kind); len(gvks) != 1 || gvks[0] != want {
			t.Errorf("%s registered as %v, want %v", kind, gvks, want)
		}
	}
}

// TestViewsDecodeRealObjects decodes full upstream objects into the views:
// the fields the compiler reads survive, everything else is dropped.
func TestViewsDecodeRealObjects(t *testing.T) {
	const isvcYAML = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: qwen, namespace: team-a}
spec:
  modelRef: qwen3-8b
  runtime: vllm
  replicas: 2
  priority: high
  endpoint: {port: 8000, path: /v1/chat/completions, type: ClusterIP}
  containerPort: 8000
  extraArgs: ["--max-model-len", "32768"]
  contextSize: 8192
  parallelSlots: 4
  vllmConfig: {maxModelLen: 16384, tensorParallelSize: 2}
  podLabels: {team: a}
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
status:
  phase: Ready
  readyReplicas: 1
  replicas: 2
  desiredReplicas: 2
  endpoint: http://qwen.team-a.svc.cluster.local:8000/v1/chat/completions
  conditions:
  - {type: Available, status: "True", reason: Ready, message: "", lastTransitionTime: "2026-01-02T03:04:05Z"}
`
	var isvc v1.InferenceService
	if err := yaml.Unmarshal([]byte(isvcYAML), &isvc); err != nil {
		t.Fatal(err)
	}
	wantSpec := v1.InferenceServiceSpec{
		ModelRef: "qwen3-8b", Runtime: v1.RuntimeVLLM, Replicas: i32(2),
		Endpoint:      &v1.InferenceServiceEndpoint{Port: i32(8000), Path: "/v1/chat/completions", Type: "ClusterIP"},
		ContainerPort: i32(8000), ExtraArgs: []string{"--max-model-len", "32768"},
		ContextSize: i32(8192), ParallelSlots: i32(4),
		VLLMConfig: &v1.VLLMConfig{MaxModelLen: i32(16384)}, PodLabels: map[string]string{"team": "a"},
	}
	if diff := cmp.Diff(wantSpec, isvc.Spec); diff != "" {
		t.Errorf("InferenceService spec (-want +got):\n%s", diff)
	}
	st := isvc.Status
	if st.Phase != v1.InferenceServicePhaseReady || st.ReadyReplicas != 1 || st.Replicas != 2 ||
		st.DesiredReplicas != 2 || len(st.Conditions) != 1 || st.Conditions[0].Type != "Available" {
		t.Errorf("InferenceService status = %+v", st)
	}

	const poolYAML = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: gpu0, namespace: team-a}
spec:
  gpu: 1
  swapPolicy: sticky
  swapBudget: 120s
  members:
  - inferenceServiceRef: {name: qwen}
  - inferenceServiceRef: {name: llama}
status: {residentMember: qwen}
`
	var pool v1.ModelPool
	if err := yaml.Unmarshal([]byte(poolYAML), &pool); err != nil {
		t.Fatal(err)
	}
	wantPool := v1.ModelPoolSpec{SwapBudget: "120s", Members: []v1.ModelPoolMember{
		{InferenceServiceRef: corev1.LocalObjectReference{Name: "qwen"}}, {InferenceServiceRef: corev1.LocalObjectReference{Name: "llama"}},
	}}
	if diff := cmp.Diff(wantPool, pool.Spec); diff != "" {
		t.Errorf("ModelPool spec (-want +got):\n%s", diff)
	}

	// DeepCopy must not share the pointers the compiler reads.
	cp := isvc.DeepCopy()
	*cp.Spec.VLLMConfig.MaxModelLen = 1
	if *isvc.Spec.VLLMConfig.MaxModelLen != 16384 {
		t.Error("DeepCopy shares vllmConfig.maxModelLen")
	}
}

func i32(v int32) *int32 { return &v }
