package controller_test

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/proxyapi"
	proxytarget "github.com/llmkube/llmkube-compile/targets/proxy"
)

// TestAPIKeysSecretLifecycle: a router whose policy.auth.apiKeys names a
// Secret that does not exist yet is applied with the Secret mounted
// optional (the pods start; those keys admit nobody), and is Degraded with
// APIKeysNotLoaded naming the Secret as the router-proxy reports it. The
// Secret is created afterwards; nothing is re-rendered (the kubelet updates
// the mounted files, and the router-proxy reads them again), and once the
// router-proxy reports the key loaded the router is Ready. No key value is
// ever in the router's status or events: the controller reads no Secret.
func TestAPIKeysSecretLifecycle(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	const keyValue = "sk-ci-7e1f0c2b9a8d"
	spec := routerSpec + "  auth:\n    apiKeys:\n      - {secretName: ci-keys, team: research}\n"
	mr := createRouter(t, ns, "keys", spec)
	missing := healthyProxy(mr, "qwen", "llama", "claude")
	missing.APIKeys = &proxyapi.APIKeyStatus{Generation: 1, Keys: []string{}, Problems: []string{"secret ci-keys holds no keys (is it created?)"}}
	statuses.set(proxytarget.StatusURL(mr), missing)
	converged(t, ns, "keys")
	markDeploymentReady(t, ctx, ns, "keys-router-proxy")
	got := waitCondition(t, ctx, ns, "keys", v1.ConditionDegraded, metav1.ConditionTrue, proxytarget.ReasonAPIKeysNotLoaded)
	if msg := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionDegraded).Message; !strings.Contains(msg, "secret ci-keys holds no keys") {
		t.Errorf("Degraded message %q does not name the Secret", msg)
	}
	waitPhase(t, ctx, ns, "keys", v1.PhaseDegraded)

	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keys-router-proxy"}, d); err != nil {
		t.Fatal(err)
	}
	var mounted bool
	for _, v := range d.Spec.Template.Spec.Volumes {
		if s := v.Secret; s != nil && s.SecretName == "ci-keys" && s.Optional != nil && *s.Optional {
			mounted = true
		}
	}
	if !mounted {
		t.Fatalf("the Deployment does not mount Secret ci-keys optional: %+v", d.Spec.Template.Spec.Volumes)
	}
	templateGen := d.Generation

	mustApply(t, ctx, ns, "apiVersion: v1\nkind: Secret\nmetadata: {name: ci-keys}\nstringData: {ci: "+keyValue+"}\n")
	loaded := healthyProxy(mr, "qwen", "llama", "claude")
	loaded.APIKeys = &proxyapi.APIKeyStatus{Generation: 2, Keys: []string{"ci-keys/ci"}}
	statuses.set(proxytarget.StatusURL(mr), loaded)
	waitPhase(t, ctx, ns, "keys", v1.PhaseReady)
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keys-router-proxy"}, d); err != nil {
		t.Fatal(err)
	}
	if d.Generation != templateGen {
		t.Errorf("the Deployment was re-rendered for a Secret the kubelet updates in place (generation %d, was %d)", d.Generation, templateGen)
	}

	final := getRouter(t, ctx, ns, "keys")
	st, _ := json.Marshal(final.Status)
	if strings.Contains(string(st), keyValue) {
		t.Errorf("a key's value is in the router's status: %s", st)
	}
	for _, e := range routerEvents(t, ns, final) {
		if strings.Contains(e, keyValue) {
			t.Errorf("a key's value is in an event: %s", e)
		}
	}
}
