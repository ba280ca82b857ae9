package controller

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedRBACUpToDate regenerates the controller's RBAC and webhook
// manifests from its kubebuilder markers into a scratch directory, with the
// controller-gen version and arguments `make generate-rbac` uses, and fails
// when the checked-in files differ.
func TestGeneratedRBACUpToDate(t *testing.T) {
	tmp := t.TempDir()
	rbac, webhook := filepath.Join(tmp, "rbac"), filepath.Join(tmp, "webhook")
	for _, args := range [][]string{
		{"rbac:roleName=manager-role", "paths=./controller/...", "output:rbac:artifacts:config=" + rbac},
		{"webhook", "paths=./controller/...", "output:webhook:artifacts:config=" + webhook},
	} {
		cmd := exec.Command("go", append([]string{"run", "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"}, args...)...)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, out)
		}
	}
	for got, want := range map[string]string{
		filepath.Join(rbac, "role.yaml"):         "../config/rbac/role.yaml",
		filepath.Join(webhook, "manifests.yaml"): "../config/webhook/manifests.yaml",
	} {
		g, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(w), string(g)); d != "" {
			t.Errorf("%s is out of date; run make generate (-checked-in +generated):\n%s", want, d)
		}
	}
}
