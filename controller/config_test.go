package controller_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

// TestInstallManifestsApply applies every manifest config/default builds
// from (config/crd, config/rbac, config/manager) and the webhook Service to
// the real API server with strict field validation, in a test namespace
// instead of the kustomize one. (`kubectl apply -k config/default` renders
// the same objects with a namespace and a name prefix.)
func TestInstallManifestsApply(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	for _, dir := range []string{"crd", "rbac", "manager", "webhook"} {
		files, err := filepath.Glob(filepath.Join("..", "config", dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := testenv.DecodeYAML(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, o := range objs {
				switch o.GetKind() {
				case "Namespace", "ValidatingWebhookConfiguration":
					// The namespace is the test's; envtest installed the
					// webhook configuration from the same file at start.
					continue
				case "ClusterRole", "ClusterRoleBinding":
					o.SetName(ns + "-" + o.GetName())
				}
				if o.GetNamespace() != "" {
					o.SetNamespace(ns)
				}
				if err := env.ApplyStrict(ctx, o); err != nil {
					t.Errorf("%s: %s: %v", f, testenv.Describe(o), err)
				}
			}
		}
	}
}
