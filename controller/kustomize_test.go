package controller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// kustomization is the subset of kustomize's Kustomization that config/
// uses. Decoding is strict: a kustomization.yaml using any other field
// (patches, images, labels, configMapGenerator, ...) fails renderKustomize
// instead of being silently ignored.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Namespace  string   `json:"namespace"`
	NamePrefix string   `json:"namePrefix"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// clusterScoped are the cluster-scoped kinds config/ contains.
var clusterScoped = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// renderKustomize renders dir as `kubectl kustomize` does for the features
// config/ uses, and only those:
//   - resources: files (multi-document YAML) and directories (rendered
//     recursively, each with its own kustomization.yaml);
//   - namespace: set on every namespaced object; a Namespace object is
//     renamed to it; ServiceAccount subjects of (Cluster)RoleBindings naming
//     a ServiceAccount of the build get it too;
//   - namePrefix: prepended to every name except Namespaces and
//     CustomResourceDefinitions, and to the references kustomize's name
//     reference transformer follows for these kinds: roleRef (Role,
//     ClusterRole), subjects (ServiceAccount) and a pod template's
//     serviceAccountName.
//
// Anything else in a kustomization.yaml is an error. The result was compared
// with `kubectl kustomize config/default` (kustomize v5.5.0): same objects,
// names, namespaces and references (docs/controller.md).
func renderKustomize(dir string) ([]*unstructured.Unstructured, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, err
	}
	objs, err := k.resources(dir)
	if err != nil {
		return nil, err
	}
	serviceAccounts := map[string]bool{}
	roles := map[string]bool{} // "Kind/name"
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount":
			serviceAccounts[o.GetName()] = true
		case "Role", "ClusterRole":
			roles[o.GetKind()+"/"+o.GetName()] = true
		}
	}
	if k.Namespace != "" {
		for _, o := range objs {
			k.setNamespace(o, serviceAccounts)
		}
	}
	if k.NamePrefix != "" {
		for _, o := range objs {
			k.setNamePrefix(o, serviceAccounts, roles)
		}
	}
	for _, o := range objs {
		k.setImages(o)
	}
	return objs, nil
}

// readKustomization reads dir's kustomization.yaml, refusing a feature
// renderKustomize does not support.
func readKustomization(dir string) (*kustomization, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml uses a feature this renderer does not support: %w", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("%s/kustomization.yaml: %s %s", dir, k.APIVersion, k.Kind)
	}
	return &k, nil
}

// resources reads the objects of k's resources: files (multi-document
// YAML) and directories (rendered recursively).
func (k *kustomization) resources(dir string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", dir, r, err)
		}
		if st.IsDir() {
			sub, err := renderKustomize(p)
			if err != nil {
				return nil, err
			}
			objs = append(objs, sub...)
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs, err := testenv.DecodeYAML(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		objs = append(objs, docs...)
	}
	return objs, nil
}

// setNamespace sets k's namespace on o: a Namespace is renamed to it, a
// namespaced object placed in it, and a binding's subjects naming a
// ServiceAccount of the build get it too.
func (k *kustomization) setNamespace(o *unstructured.Unstructured, serviceAccounts map[string]bool) {
	switch {
	case o.GetKind() == "Namespace":
		o.SetName(k.Namespace)
	case !clusterScoped[o.GetKind()]:
		o.SetNamespace(k.Namespace)
	}
	forSubjects(o, func(s map[string]any) {
		if s["kind"] == "ServiceAccount" && serviceAccounts[fmt.Sprint(s["name"])] {
			s["namespace"] = k.Namespace
		}
	})
}

// setNamePrefix prepends k's namePrefix to o's name (not a Namespace's or
// a CustomResourceDefinition's) and to the references kustomize follows:
// roleRef, ServiceAccount subjects, a pod template's serviceAccountName.
func (k *kustomization) setNamePrefix(o *unstructured.Unstructured, serviceAccounts, roles map[string]bool) {
	if kind := o.GetKind(); kind != "Namespace" && kind != "CustomResourceDefinition" {
		o.SetName(k.NamePrefix + o.GetName())
	}
	if ref, ok, _ := unstructured.NestedMap(o.Object, "roleRef"); ok && roles[fmt.Sprint(ref["kind"])+"/"+fmt.Sprint(ref["name"])] {
		_ = unstructured.SetNestedField(o.Object, k.NamePrefix+fmt.Sprint(ref["name"]), "roleRef", "name")
	}
	forSubjects(o, func(s map[string]any) {
		if s["kind"] == "ServiceAccount" && serviceAccounts[fmt.Sprint(s["name"])] {
			s["name"] = k.NamePrefix + fmt.Sprint(s["name"])
		}
	})
	if sa, ok, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName"); ok && serviceAccounts[sa] {
		_ = unstructured.SetNestedField(o.Object, k.NamePrefix+sa, "spec", "template", "spec", "serviceAccountName")
	}
}

// setImages rewrites the images k names in o's pod template.
func (k *kustomization) setImages(o *unstructured.Unstructured) {
	containers, ok, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if !ok || len(k.Images) == 0 {
		return
	}
	for _, im := range k.Images {
		for _, c := range containers {
			if m, ok := c.(map[string]any); ok && m["image"] == im.Name {
				m["image"] = im.NewName + ":" + im.NewTag
			}
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
}

func forSubjects(o *unstructured.Unstructured, f func(map[string]any)) {
	subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects")
	if !ok {
		return
	}
	for _, s := range subjects {
		if m, ok := s.(map[string]any); ok {
			f(m)
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
}

// installOrder sorts objects so that Namespaces and CRDs come first, as
// kustomize's legacy order does.
func installOrder(objs []*unstructured.Unstructured) {
	rank := map[string]int{"Namespace": 0, "CustomResourceDefinition": 1, "ServiceAccount": 2, "Role": 3, "ClusterRole": 4, "RoleBinding": 5, "ClusterRoleBinding": 6}
	r := func(o *unstructured.Unstructured) int {
		if n, ok := rank[o.GetKind()]; ok {
			return n
		}
		return 10
	}
	sort.SliceStable(objs, func(i, j int) bool { return r(objs[i]) < r(objs[j]) })
}

// TestKustomizeDefaultRenders checks the rendered install: what `kubectl
// apply -k config/default` creates, by name and namespace, with the
// references between them intact.
func TestKustomizeDefaultRenders(t *testing.T) {
	objs, err := renderKustomize(filepath.Join("..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		got[objName(o)] = o
	}
	const ns = "llmkube-compile-system"
	want := []string{
		"Namespace /" + ns,
		"CustomResourceDefinition /modelrouters.inference.llmkube.dev",
		"ServiceAccount " + ns + "/llmkube-compile-controller",
		"ClusterRole /llmkube-compile-manager-role",
		"ClusterRoleBinding /llmkube-compile-manager-rolebinding",
		"Role " + ns + "/llmkube-compile-leader-election",
		"RoleBinding " + ns + "/llmkube-compile-leader-election",
		"Deployment " + ns + "/llmkube-compile-controller",
	}
	sort.Strings(want)
	if fmt.Sprint(sortedKeys(got)) != fmt.Sprint(want) {
		t.Fatalf("rendered %v\nwant     %v", sortedKeys(got), want)
	}
	crb := got["ClusterRoleBinding /llmkube-compile-manager-rolebinding"]
	if n, _, _ := unstructured.NestedString(crb.Object, "roleRef", "name"); n != "llmkube-compile-manager-role" {
		t.Errorf("ClusterRoleBinding roleRef %q", n)
	}
	subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
	if fmt.Sprint(subjects) != fmt.Sprint([]any{map[string]any{"kind": "ServiceAccount", "name": "llmkube-compile-controller", "namespace": ns}}) {
		t.Errorf("ClusterRoleBinding subjects %v", subjects)
	}
	dep := got["Deployment "+ns+"/llmkube-compile-controller"]
	if sa, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "spec", "serviceAccountName"); sa != "llmkube-compile-controller" {
		t.Errorf("Deployment serviceAccountName %q", sa)
	}
	// The install deploys the controller image of this release, the one
	// `make images` tags (one home: internal/images).
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != images.ControllerRef() {
		t.Errorf("config/default deploys %v, want %s", img, images.ControllerRef())
	}
}
