package controller_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// installDefault applies config/default as `kubectl apply -k` would, in
// install order, and checks every object is there.
func installDefault(ctx context.Context, t *testing.T, e *testenv.Env, admin client.Client) {
	t.Helper()
	objs, err := renderKustomize(filepath.Join("..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	installOrder(objs)
	for _, o := range objs {
		if err := e.ApplyStrict(ctx, o.DeepCopy()); err != nil {
			t.Fatalf("applying %s: %v", testenv.Describe(o), err)
		}
	}
	for _, o := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := admin.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, live); err != nil {
			t.Errorf("%s after apply: %v", testenv.Describe(o), err)
		}
	}
}

// serviceAccountConfig is a client config impersonating the ServiceAccount
// sa of ns, checked to be: it may not list Secrets, and it may discover
// the API.
func serviceAccountConfig(ctx context.Context, t *testing.T, e *testenv.Env, ns, sa string) *rest.Config {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	as, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := as.List(ctx, &corev1.SecretList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing Secrets as the controller: %v, want Forbidden (is the client impersonating?)", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dc.ServerGroupsAndResources(); err != nil {
		t.Fatalf("discovery as the controller: %v", err)
	}
	return cfg
}

// TestInstallAndRBAC is `kubectl apply -k config/default` followed by the
// controller running as the ServiceAccount that install creates, on a
// dedicated API server (RBAC authorization, as envtest configures it):
//
//  1. config/default is rendered (renderKustomize) and every object applied
//     with strict field validation, then read back;
//  2. a client impersonating system:serviceaccount:llmkube-compile-system:
//     llmkube-compile-controller is refused what the ClusterRole does not
//     grant (Secrets), so the identity is really restricted, and can run
//     discovery;
//  3. the controller's manager runs with that identity and leader election
//     in the install namespace (the leader-election Role), and reconciles a
//     Proxy router with endpoint resolution (it creates the proxy's Role
//     and RoleBinding: bind/escalate) to Ready with the warning events
//     recorded, a Gateway router with JWT, and an AgentGateway router with
//     its policy in another namespace; deleting them runs the finalizers.
//
// Any permission the kubebuilder markers miss shows up as a reconcile that
// never converges (ApplyFailed, a cache that never syncs, a missing event).
func TestInstallAndRBAC(t *testing.T) {
	e := testenv.StartOwn(t, testenv.Options{})
	ctx := ctxT(t)
	admin, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	go playGatewayControllers(ctx, admin)

	// 1. The install.
	installDefault(ctx, t, e, admin)
	const installNS, sa = "llmkube-compile-system", "llmkube-compile-controller"

	// 2. The controller's identity.
	cfg := serviceAccountConfig(ctx, t, e, installNS, sa)

	// 3. The controller, as that identity.
	mctx, cancel := context.WithCancel(context.Background())
	var done chan struct{}
	t.Cleanup(func() {
		cancel()
		if done != nil {
			<-done
		}
	})
	if _, done, err = startManagerWith(mctx, cfg, builtin.Registry(), nil, func(o *ctrl.Options) {
		o.LeaderElection = true
		o.LeaderElectionNamespace = installNS
		o.LeaderElectionID = "llmkube-controller.inference.llmkube.dev"
		o.LeaderElectionReleaseOnCancel = true
	}); err != nil {
		t.Fatal(err)
	}

	ns, gwns := e.NewNamespace(t), e.NewNamespace(t)
	apply := func(objs ...*unstructured.Unstructured) {
		t.Helper()
		for _, o := range objs {
			o = o.DeepCopy()
			if o.GetNamespace() == "" {
				o.SetNamespace(ns)
			}
			if err := e.ApplyStrict(ctx, o); err != nil {
				t.Fatalf("applying %s: %v", testenv.Describe(o), err)
			}
		}
	}
	router := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "inference.llmkube.dev/v1alpha1", "kind": "ModelRouter", "spec": spec}}
		u.SetName(name)
		u.SetNamespace(ns)
		return u
	}
	waitRouter := func(name, what string, check func(*v1.ModelRouter) error) *v1.ModelRouter {
		t.Helper()
		var mr *v1.ModelRouter
		eventually(t, name+": "+what, func() error {
			mr = &v1.ModelRouter{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated); c == nil || c.ObservedGeneration != mr.Generation {
				return fmt.Errorf("not reconciled yet: %+v", mr.Status.Conditions)
			}
			return check(mr)
		})
		return mr
	}
	condIs := func(typ string, status metav1.ConditionStatus) func(*v1.ModelRouter) error {
		return func(mr *v1.ModelRouter) error {
			if c := meta.FindStatusCondition(mr.Status.Conditions, typ); c == nil || c.Status != status {
				return fmt.Errorf("%s is %+v (phase %s, conditions %+v)", typ, c, mr.Status.Phase, mr.Status.Conditions)
			}
			return nil
		}
	}

	// Proxy, with endpoint resolution and ignored-affinity warnings.
	pobjs, pname, pspec := testCase(t, "round-robin-affinity-ignored", ns, "")
	apply(pobjs...)
	apply(router(pname, pspec))
	want := convergedIn(t, admin, ns, pname)
	for _, k := range []string{"Role " + ns + "/" + pname + "-router-proxy", "RoleBinding " + ns + "/" + pname + "-router-proxy", "ServiceAccount " + ns + "/" + pname + "-router-proxy"} {
		if want[k] == nil {
			t.Errorf("render lacks %s: %v", k, sortedKeys(want))
		}
	}
	markDeploymentReadyIn(t, ctx, admin, ns, pname+"-router-proxy")
	mr := waitRouter(pname, "Ready", func(mr *v1.ModelRouter) error {
		if mr.Status.Phase != v1.PhaseReady {
			return fmt.Errorf("phase %q, conditions %+v", mr.Status.Phase, mr.Status.Conditions)
		}
		return nil
	})
	if !containsString(mr.Finalizers, controller.Finalizer) {
		t.Errorf("finalizers %v", mr.Finalizers)
	}
	eventually(t, "Warning events recorded as the controller", func() error {
		evs := routerEventsIn(t, admin, ns, mr)
		for _, reason := range []string{"PrefixAffinityIgnored", "SessionAffinityIgnored"} {
			if !strings.Contains(strings.Join(evs, "\n"), "Warning/"+reason+": ") {
				return fmt.Errorf("no %s event; events %v", reason, evs)
			}
		}
		return nil
	})

	// Gateway, with JWT.
	createGateway(t, ctx, admin, gwns, "ai-gateway", "203.0.113.50")
	gobjs, gname, gspec := testCase(t, "gateway-jwt-allowlists", ns, gwns)
	apply(gobjs...)
	apply(router(gname, gspec))
	convergedIn(t, admin, ns, gname)
	waitRouter(gname, "GatewayReady with auth", func(mr *v1.ModelRouter) error {
		if err := condIs(v1.ConditionGatewayReady, metav1.ConditionTrue)(mr); err != nil {
			return err
		}
		if mr.Status.Gateway == nil || !mr.Status.Gateway.AuthEnabled || mr.Status.Endpoint != "http://203.0.113.50" {
			return fmt.Errorf("status.gateway %+v endpoint %q", mr.Status.Gateway, mr.Status.Endpoint)
		}
		return nil
	})

	// AgentGateway, its model-extraction policy in the Gateway's namespace.
	createGateway(t, ctx, admin, gwns, "agentgateway", "203.0.113.51")
	apply(testenv.Objects(t, isvcs)...)
	ag := testenv.Objects(t, fmt.Sprintf("apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: ag}\nspec:\n%s", indent(agentGatewaySpec(gwns))))[0]
	apply(ag)
	waitRouter("ag", "AgentGatewayReady", condIs(v1.ConditionAgentGatewayReady, metav1.ConditionTrue))
	if inv := liveInventory(t, ctx, admin, ns, "ag"); len(inv) == 0 || !strings.Contains(strings.Join(sortedKeys(inv), ","), "AgentgatewayPolicy "+gwns+"/") {
		t.Errorf("AgentGateway inventory %v: want a policy in %s", sortedKeys(inv), gwns)
	}

	// Deletion: the finalizers clean up, as the controller.
	deleteRouters(t, ctx, admin, ns, pname, gname, "ag")
}
