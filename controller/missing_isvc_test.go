package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
)

// TestMissingInferenceServiceIsNotReportedHealthy: nothing in the cluster
// says the backend can serve, so status must not claim it does.
func TestMissingInferenceServiceIsNotReportedHealthy(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	createRouter(t, ns, "ghost", `
backends:
  - name: ghost
    inferenceServiceRef: {name: does-not-exist}
defaultRoute: ghost
`)
	mr := waitCondition(t, ctx, ns, "ghost", v1.ConditionBackendsReady, metav1.ConditionFalse, controller.ReasonBackendsNotReady)
	if len(mr.Status.Backends) != 1 || mr.Status.Backends[0].Healthy {
		t.Fatalf("backend status = %+v, want one unhealthy backend", mr.Status.Backends)
	}
	if msg := mr.Status.Backends[0].Message; !strings.Contains(msg, "InferenceServiceNotFound") {
		t.Errorf("message %q does not say the InferenceService is missing", msg)
	}
}
