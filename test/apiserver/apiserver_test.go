// Package apiserver proves the compiler's output and its input schema against
// a real kube-apiserver (envtest) that has the real upstream CRDs and our
// generated ModelRouter CRD installed, with strict field validation.
package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.RunMain(m, &env) }

func decode(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	objs, err := testenv.DecodeYAML(data)
	require.NoError(t, err, path)
	return objs
}

// apply applies every object strictly in a fresh namespace and deletes them
// again, so cluster-wide allocations (a pinned nodePort) are free for the next case.
func apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	c := testenv.Context(t)
	ns := env.NewNamespace(t)
	env.SetNamespace(ns, objs...)
	for _, o := range objs {
		desc := testenv.Describe(o)
		require.NoError(t, env.ApplyStrict(c, o), "the API server refused %s", desc)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
}

// TestGoldenOutputIsAccepted applies every golden output, of every data plane.
func TestGoldenOutputIsAccepted(t *testing.T) {
	files, err := filepath.Glob("../../golden/*/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 25, "every golden case must be proven against the API server")
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			objs := decode(t, f)
			require.NotEmpty(t, objs)
			apply(t, objs)
		})
	}
}

// llmkubeObjects keeps the objects of our API group from a compiler input
// (inputs may also hold a v1 List or unrelated kinds, which the compiler ignores).
func llmkubeObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.IsList() {
			l, _ := o.ToList()
			for i := range l.Items {
				out = append(out, llmkubeObjects([]*unstructured.Unstructured{&l.Items[i]})...)
			}
			continue
		}
		if strings.HasPrefix(o.GetAPIVersion(), "inference.llmkube.dev/") {
			// status is a subresource: the server ignores it on apply.
			unstructured.RemoveNestedField(o.Object, "status")
			// An input's uid is the cluster's to assign.
			o.SetUID("")
			out = append(out, o)
		}
	}
	return out
}

// TestValidInputsAreAcceptedByTheCRDs applies every valid input's ModelRouters
// to our generated CRD, and its InferenceServices and ModelPools to the real
// upstream CRDs: what the compiler accepts, the cluster accepts.
func TestValidInputsAreAcceptedByTheCRDs(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*/input.yaml")
	require.NoError(t, err)
	examples, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	files = append(files, examples...)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			objs := llmkubeObjects(decode(t, f))
			require.NotEmpty(t, objs)
			apply(t, objs)
		})
	}
}

// TestFieldTableViolationsAreRefusedByTheCRD checks that the CRD and the
// compiler's offline field checks agree: every fields-* invalid case that the
// compiler refuses is refused by the API server too.
func TestFieldTableViolationsAreRefusedByTheCRD(t *testing.T) {
	files, err := filepath.Glob("../../testdata/invalid/fields-*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c := testenv.Context(t)
			ns := env.NewNamespace(t)
			var routers []*unstructured.Unstructured
			for _, o := range llmkubeObjects(decode(t, f)) {
				if o.GetKind() == "ModelRouter" {
					routers = append(routers, o)
				}
			}
			require.NotEmpty(t, routers)
			env.SetNamespace(ns, routers...)
			for _, r := range routers {
				err := env.ApplyStrict(c, r)
				assert.Error(t, err, "the CRD accepted %s, which the compiler refuses", f)
			}
		})
	}
}
