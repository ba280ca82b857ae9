package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// TestPooledRouterControllerProcess: the controller process, as the chart's
// ServiceAccount, deploys a router whose backends share a ModelPool. The API
// server's RBAC lets it create the router-proxy's Role (activation's verbs:
// patch on the members by name, the pool's Lease), the Deployment keeps the
// spec's 2 replicas, and each pod gets its name as its Lease identity.
func TestPooledRouterControllerProcess(t *testing.T) {
	e, admin, _ := chartController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	ns := e.NewNamespace(t)
	doc := `
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: coder}
spec: {modelRef: coder}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata: {name: chat}
spec: {modelRef: chat, replicas: 0}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: gpu}
spec:
  members: [{inferenceServiceRef: {name: coder}}, {inferenceServiceRef: {name: chat}}]
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: pooled}
spec:
  backends:
    - {name: coder, inferenceServiceRef: {name: coder}}
    - {name: chat, inferenceServiceRef: {name: chat}}
  defaultRoute: coder
  proxy: {replicas: 2}
`
	if errs := e.ApplyYAMLInNamespace(ctx, ns, []byte(doc)); len(errs) > 0 {
		t.Fatal(errs)
	}
	role := &rbacv1.Role{}
	eventually(t, "the router-proxy's Role applied by the controller", func() error {
		return admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pooled-router-proxy"}, role)
	})
	want := map[string][]string{
		"inferenceservices get,patch": {"chat", "coder"},
		"leases create":               nil,
		"leases get,update":           {wellknown.PoolLeaseName("gpu")},
	}
	for _, r := range role.Rules {
		key := fmt.Sprintf("%s %s", r.Resources[0], strings.Join(r.Verbs, ","))
		names, ok := want[key]
		if !ok {
			t.Errorf("unexpected rule %+v", r)
			continue
		}
		if !slices.Equal(names, r.ResourceNames) {
			t.Errorf("rule %s: resourceNames %v, want %v", key, r.ResourceNames, names)
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("missing rules %v in %+v", want, role.Rules)
	}
	dep := &appsv1.Deployment{}
	eventually(t, "router-proxy Deployment", func() error {
		return admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pooled-router-proxy"}, dep)
	})
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want the spec's 2: the pool's Lease serializes swaps across replicas", dep.Spec.Replicas)
	}
	if dep.Spec.Template.Spec.ServiceAccountName != "pooled-router-proxy" {
		t.Errorf("serviceAccountName %q", dep.Spec.Template.Spec.ServiceAccountName)
	}
	found := false
	for _, env := range dep.Spec.Template.Spec.Containers[0].Env {
		if env.Name == wellknown.PodNameEnv && env.ValueFrom != nil && env.ValueFrom.FieldRef != nil && env.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s from metadata.name in %+v", wellknown.PodNameEnv, dep.Spec.Template.Spec.Containers[0].Env)
	}
}

// chartController installs the Helm chart's objects (RBAC, ServiceAccount)
// in llmkube-system and starts the controller process as the chart's
// ServiceAccount.
func chartController(t *testing.T) (*testenv.Env, client.Client, *proc) {
	t.Helper()
	e, admin := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const installNS = "llmkube-system"
	if err := e.EnsureNamespace(ctx, installNS); err != nil {
		t.Fatal(err)
	}
	for _, o := range objectsOf(t, helmTemplate(t, installNS)) {
		if err := e.ApplyStrict(ctx, o); err != nil {
			t.Fatalf("applying %s: %v", testenv.Describe(o), err)
		}
	}
	return e, admin, startController(t, serviceAccountKubeconfig(t, e, installNS, "llmkube-llmkube-compile"), installNS)
}
