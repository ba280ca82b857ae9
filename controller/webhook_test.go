package controller_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

const invalidRouter = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: bad}
spec:
  backends:
    - name: a
      external: {provider: openai, model: gpt-5}
  defaultRoute: nope
`

// TestWebhookRefusesInvalidRouter: the API server refuses an invalid router
// through the webhook with the CLI's reason and field path; the validator
// called directly says the same; an invalid spec change of a valid router is
// refused, a metadata-only change is not.
func TestWebhookRefusesInvalidRouter(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	obj := testenv.Objects(t, invalidRouter)[0]
	obj.SetNamespace(ns)
	err := k8s.Create(ctx, obj)
	if err == nil {
		t.Fatal("the API server accepted an invalid router")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.defaultRoute") || !strings.Contains(err.Error(), "(UnknownBackend)") {
		t.Errorf("want Invalid naming spec.defaultRoute and UnknownBackend, got: %v", err)
	}

	mr := &v1.ModelRouter{}
	mr.Name, mr.Namespace = "bad", ns
	mr.Spec.Backends = []v1.RouterBackend{{Name: "a", External: &v1.ExternalBackend{Provider: v1.ProviderOpenAI, Model: "gpt-5"}}}
	mr.Spec.DefaultRoute = "nope"
	_, verr := (&controller.Validator{Registry: builtin.Registry()}).Validate(mr)
	if verr == nil || !strings.Contains(verr.Error(), "spec.defaultRoute") || !strings.Contains(verr.Error(), "(UnknownBackend)") {
		t.Errorf("validator: %v", verr)
	}

	// A valid router, then an invalid edit of its spec.
	createRouter(t, ns, "good", `
backends:
  - name: a
    external: {provider: openai, model: gpt-5}
defaultRoute: a
`)
	// (Retried on conflicts: the controller adds its finalizer meanwhile.)
	eventually(t, "invalid spec update refused", func() error {
		good := getRouter(t, ctx, ns, "good")
		good.Spec.DefaultRoute = "nope"
		err := k8s.Update(ctx, good)
		if err != nil && strings.Contains(err.Error(), "UnknownBackend") {
			return nil
		}
		if err == nil {
			t.Fatal("an invalid spec update was accepted")
		}
		return err
	})
	eventually(t, "metadata-only update accepted", func() error {
		good := getRouter(t, ctx, ns, "good")
		good.Labels = map[string]string{"team": "a"}
		return k8s.Update(ctx, good)
	})
}
