package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/proxy"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// agentgatewayCRD picks the CRDs the AgentGateway plane needs beyond the
// Gateway API: agentgateway.dev and the Inference Extension's InferencePool.
func agentgatewayCRD(c *apiextensionsv1.CustomResourceDefinition) bool {
	return c.Spec.Group == "agentgateway.dev" || c.Spec.Group == "inference.networking.k8s.io"
}

// TestCRDsAbsentThenInstalled runs its own API server without the
// AgentGateway plane's CRDs: the router gets a condition naming them and
// nothing is generated; once they are installed, it recovers by itself. The
// same controller also runs a build without the Gateway target: a Gateway
// router reports DataPlaneNotImplemented and gets no objects.
func TestCRDsAbsentThenInstalled(t *testing.T) {
	// Proxy plus the real AgentGateway target, without Gateway.
	e, c, ctx := dedicatedController(t, agentgatewayCRD, targets.NewRegistry(proxy.New(), agentgatewayTarget()))

	ns := e.NewNamespace(t)
	createGateway(t, ctx, c, ns, "agentgateway", "203.0.113.70")
	applyStrictIn(t, ctx, e, ns, isvcs, "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: ag}\nspec:\n"+indent(agentGatewaySpec(ns)))
	get := func(name string) *v1.ModelRouter { return getRouterIn(t, ctx, c, ns, name) }
	cond := func(name, typ string) (*metav1.Condition, *v1.ModelRouter) {
		mr := get(name)
		return meta.FindStatusCondition(mr.Status.Conditions, typ), mr
	}
	waitFailedFor(t, ctx, c, ns, "ag", controller.ReasonCRDsNotInstalled, "InferencePool", "AgentgatewayPolicy")
	// Nothing was generated: the HTTPRoute CRD exists, and no route was made.
	noHTTPRoutes(t, ctx, c, ns, "generated %d HTTPRoutes while CRDs are missing")

	// A data plane this build lacks.
	gw := testenv.Objects(t, fmt.Sprintf(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: gw, namespace: %s}
spec:
  dataPlane: Gateway
  gatewayRef: {name: eg}
  backends:
    - name: qwen
      inferenceServiceRef: {name: qwen}
  defaultRoute: qwen
`, ns))[0]
	if err := e.ApplyStrict(ctx, gw); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DataPlaneNotImplemented", func() error {
		cnd, mr := cond("gw", v1.ConditionGatewayReady)
		if cnd == nil || cnd.Reason != controller.ReasonDataPlaneNotImplemented || mr.Status.Phase != v1.PhaseFailed {
			return fmt.Errorf("condition %+v phase %s", cnd, mr.Status.Phase)
		}
		return nil
	})

	// Install the CRDs: the router recovers without being touched.
	if err := e.InstallCRDs(agentgatewayCRD); err != nil {
		t.Fatal(err)
	}
	eventually(t, "recovered after the CRDs were installed", func() error {
		cnd, _ := cond("ag", v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %+v", cnd)
		}
		pools := &unstructured.UnstructuredList{}
		pools.SetGroupVersionKind(poolGVK.GroupVersion().WithKind("InferencePoolList"))
		if err := c.List(ctx, pools, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(pools.Items) != 1 {
			return fmt.Errorf("%d InferencePools", len(pools.Items))
		}
		return nil
	})
}

// TestModelRoutingNeedsNoInferenceExtension: the CRDs a router needs are
// the kinds it emits. On an API server without the Gateway API Inference
// Extension CRDs, routing Model (AgentgatewayModels behind one HTTPRoute, no
// picker) becomes Ready; routing InferencePool on the same server reports
// CRDsNotInstalled naming InferencePool.
func TestModelRoutingNeedsNoInferenceExtension(t *testing.T) {
	e, c, ctx := dedicatedController(t, func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return c.Spec.Group == "inference.networking.k8s.io" || c.Spec.Group == "inference.networking.x-k8s.io"
	}, targets.NewRegistry(proxy.New(), agentgatewayTarget()))
	ns := e.NewNamespace(t)
	createGateway(t, ctx, c, ns, "agentgateway", "203.0.113.80")
	applyStrictIn(t, ctx, e, ns, isvcs,
		"apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: models}\nspec:\n  dataPlane: AgentGateway\n  agentGatewayRef: {name: agentgateway, routing: Model, sectionName: http, hostnames: [models.example]}\n  defaultRouteStrategy: BackendNameMatch\n  backends:\n    - {name: qwen, inferenceServiceRef: {name: qwen}}\n",
		"apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: pools}\nspec:\n"+
			// Disjoint hostnames: two routers on one listener and host are refused (GatewayRoutesOverlap).
			indent(strings.Replace(agentGatewaySpec(ns), "  endpointPicker: qwen-epp\n", "  endpointPicker: qwen-epp\n  hostnames: [pools.example]\n", 1)))
	get := func(name string) *v1.ModelRouter { return getRouterIn(t, ctx, c, ns, name) }
	eventually(t, "Model routing Ready without the Inference Extension", func() error {
		mr := get("models")
		cnd := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Status != metav1.ConditionTrue || mr.Status.Phase != v1.PhaseReady {
			return fmt.Errorf("condition %+v phase %s", cnd, mr.Status.Phase)
		}
		return nil
	})
	eventually(t, "InferencePool routing names the missing CRD", func() error {
		mr := get("pools")
		cnd := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Reason != controller.ReasonCRDsNotInstalled || !strings.Contains(cnd.Message, "InferencePool") || strings.Contains(cnd.Message, "AgentgatewayPolicy") {
			return fmt.Errorf("condition %+v", cnd)
		}
		if mr.Status.Phase != v1.PhaseFailed {
			return fmt.Errorf("phase %s", mr.Status.Phase)
		}
		return nil
	})
	// Each readiness transition is an event.
	for name, want := range map[string]string{"models": "Normal/Applied", "pools": "Warning/CRDsNotInstalled"} {
		eventually(t, name+" event "+want, func() error {
			evs := routerEventsIn(t, c, ns, get(name))
			for _, e := range evs {
				if strings.HasPrefix(e, want) {
					return nil
				}
			}
			return fmt.Errorf("events %v", evs)
		})
	}
}

// dedicatedController starts an API server of its own without the CRDs
// exclude picks, the controller with reg on it, and the played gateway
// controllers; everything stops when the test ends.
func dedicatedController(t *testing.T, exclude func(*apiextensionsv1.CustomResourceDefinition) bool, reg *targets.Registry) (*testenv.Env, client.Client, context.Context) {
	t.Helper()
	return dedicatedControllerWith(t, testenv.Options{ExcludeCRD: exclude}, reg)
}

// dedicatedControllerWith is dedicatedController with the API server's Options.
func dedicatedControllerWith(t *testing.T, o testenv.Options, reg *targets.Registry) (*testenv.Env, client.Client, context.Context) {
	t.Helper()
	e := testenv.StartOwn(t, o)
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, done, err := startManager(ctx, e, reg, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	go playGatewayControllers(ctx, c)
	return e, c, ctx
}

// applyStrictIn applies every object of docs in namespace ns of e.
func applyStrictIn(t *testing.T, ctx context.Context, e *testenv.Env, ns string, docs ...string) {
	t.Helper()
	for _, doc := range docs {
		for _, o := range testenv.Objects(t, doc) {
			o.SetNamespace(ns)
			if err := e.ApplyStrict(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// getRouterIn reads a router through c.
func getRouterIn(t *testing.T, ctx context.Context, c client.Client, ns, name string) *v1.ModelRouter {
	t.Helper()
	mr := &v1.ModelRouter{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
		t.Fatal(err)
	}
	return mr
}

// TestOutdatedCRDsReported runs its own API server with agentgateway's
// release v1.4.1 CRDs, which lack jwks.remote.url (issue 51). A router with
// a JWT provider is not applied: its AgentGatewayReady condition says
// CRDsOutdated naming the field and the release to install, and nothing is
// written (before: ApplyFailed quoting the API server's "field not declared
// in schema", after some objects were applied). A router without JWT on the
// same server is Ready. Once the CRD is upgraded to main's, the first
// router recovers by itself.
func TestOutdatedCRDsReported(t *testing.T) {
	e, c, ctx := dedicatedControllerWith(t, testenv.Options{SharedRelease: map[string]string{"agentgateway": "agentgateway/release-v1.4.1"}},
		targets.NewRegistry(proxy.New(), agentgatewayTarget()))
	ns := e.NewNamespace(t)
	createGateway(t, ctx, c, ns, "agentgateway", "203.0.113.71")
	jwt := agentGatewaySpec(ns) + platformAllowlist
	applyStrictIn(t, ctx, e, ns, isvcs, "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: guarded}\nspec:\n"+indent(jwt))
	waitFailedFor(t, ctx, c, ns, "guarded", controller.ReasonCRDsOutdated,
		"AgentgatewayPolicy spec.traffic.jwtAuthentication.providers[].jwks.remote.url: not declared", "agentgateway main at c22211981 or newer")
	noHTTPRoutes(t, ctx, c, ns, "applied %d HTTPRoutes while the CRDs refuse a field")

	// Without JWT the output fits v1.4.1.
	other := e.NewNamespace(t)
	createGateway(t, ctx, c, other, "agentgateway", "203.0.113.72")
	applyStrictIn(t, ctx, e, other, isvcs, "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: open}\nspec:\n"+indent(agentGatewaySpec(other)))
	eventually(t, "open router Ready", func() error {
		cnd := meta.FindStatusCondition(getRouterIn(t, ctx, c, other, "open").Status.Conditions, v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %+v", cnd)
		}
		return nil
	})

	// Upgrade the policy CRD to main's: the CRD watch rechecks the router.
	mainCRDs, err := testenv.LoadCRDs(e.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range mainCRDs {
		if want.Name != "agentgatewaypolicies.agentgateway.dev" {
			continue
		}
		eventually(t, "policy CRD upgraded", func() error {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := e.Client.Get(ctx, types.NamespacedName{Name: want.Name}, live); err != nil {
				return err
			}
			live.Spec = want.Spec
			return e.Client.Update(ctx, live)
		})
	}
	eventually(t, "recovered after the CRD upgrade", func() error {
		cnd := meta.FindStatusCondition(getRouterIn(t, ctx, c, ns, "guarded").Status.Conditions, v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %+v", cnd)
		}
		return nil
	})
}

// noHTTPRoutes fails the test (with format, given their number) when ns
// holds any HTTPRoute.
func noHTTPRoutes(t *testing.T, ctx context.Context, c client.Client, ns, format string) {
	t.Helper()
	routes := &unstructured.UnstructuredList{}
	routes.SetGroupVersionKind(routeGVK.GroupVersion().WithKind("HTTPRouteList"))
	if err := c.List(ctx, routes, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(routes.Items) != 0 {
		t.Errorf(format, len(routes.Items))
	}
}

// waitFailedFor waits until router name in ns is Failed, its
// AgentGatewayReady condition False for reason with a message that says
// each of says.
func waitFailedFor(t *testing.T, ctx context.Context, c client.Client, ns, name, reason string, says ...string) {
	t.Helper()
	eventually(t, reason, func() error {
		mr := getRouterIn(t, ctx, c, ns, name)
		cnd := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAgentGatewayReady)
		if cnd == nil || cnd.Reason != reason || cnd.Status != metav1.ConditionFalse || mr.Status.Phase != v1.PhaseFailed {
			return fmt.Errorf("condition %+v phase %s", cnd, mr.Status.Phase)
		}
		for _, want := range says {
			if !strings.Contains(cnd.Message, want) {
				return fmt.Errorf("message does not say %q: %q", want, cnd.Message)
			}
		}
		return nil
	})
}
