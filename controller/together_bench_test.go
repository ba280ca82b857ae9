package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// oneGatewayFleet is n routers of one plane on one Gateway, kept apart as
// the cross-router check demands (hostnames of their own on the Gateway
// plane, a model of their own on AgentGateway), plus others routers on
// other Gateways and planes, in namespaces of 100 routers with two
// InferenceServices each (what make bench-controller creates). It returns
// a reconciler reading them and the first router compiled.
func oneGatewayFleet(tb testing.TB, plane string, n, others int) (*Reconciler, *v1.ModelRouter, *ir.Router, targets.Target) {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	var objs []client.Object
	isvcs := map[string]bool{}
	add := func(i int, plane, gateway string) {
		ns := fmt.Sprintf("bench-%d", i/100)
		if !isvcs[ns] {
			isvcs[ns] = true
			for _, m := range []string{"m0", "m1"} {
				objs = append(objs, &v1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: ns},
					Spec: v1.InferenceServiceSpec{ModelRef: m, Runtime: v1.RuntimeVLLM}})
			}
		}
		name := fmt.Sprintf("r%05d", i)
		mr := &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1}}
		mr.Spec.Backends = []v1.RouterBackend{{Name: "a", InferenceServiceRef: &corev1.LocalObjectReference{Name: "m0"}}, {Name: "b", InferenceServiceRef: &corev1.LocalObjectReference{Name: "m1"}}}
		switch plane {
		case string(v1.DataPlaneGateway):
			mr.Spec.DataPlane = v1.DataPlaneGateway
			mr.Spec.GatewayRef = &v1.RouterGatewayRef{Name: gateway, Namespace: "gateways", Hostnames: []string{name + "." + ns + ".bench.example"}}
			mr.Spec.DefaultRoute = "a"
		case string(v1.DataPlaneAgentGateway):
			mr.Spec.DataPlane = v1.DataPlaneAgentGateway
			mr.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: gateway, Namespace: "gateways"}
			for j, m := range []string{"m0", "m1"} {
				mr.Spec.Backends[j].EndpointPicker = &v1.EndpointPickerSpec{Service: &v1.EndpointPickerService{Name: m + "-epp", Port: 9002}}
			}
			mr.Spec.Rules = []v1.RouterRule{{Name: "own", Match: &v1.RuleMatch{Models: []string{ns + "-" + name}}, Route: v1.RuleRoute{Backends: []string{"a"}}}}
		default:
			mr.Spec.DefaultRoute = "a"
		}
		objs = append(objs, mr)
	}
	for i := range n {
		add(i, plane, "one")
	}
	all := []string{string(v1.DataPlaneProxy), string(v1.DataPlaneGateway), string(v1.DataPlaneAgentGateway)}
	for i := range others {
		add(n+i, all[i%3], fmt.Sprintf("other-%d", i%4))
	}
	c := &listClient{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), objs: objs}
	r := &Reconciler{Client: c, Registry: builtin.Registry()}
	router := &v1.ModelRouter{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(objs[2]), router); err != nil {
		tb.Fatal(err)
	}
	compiled, target := compileFor(tb, r, router)
	return r, router, compiled, target
}

// BenchmarkCheckTogetherOneGateway is the controller's cross-router check
// (checkTogether, run in every reconcile of a gateway-plane router) with n
// routers on the router's Gateway. make bench-controller measures the
// whole controller; this isolates the check: `go test ./controller/ -run
// '^$' -bench CheckTogether` (with KUBEBUILDER_ASSETS: the package's
// TestMain starts an API server first).
func BenchmarkCheckTogetherOneGateway(b *testing.B) {
	for _, plane := range []string{string(v1.DataPlaneGateway), string(v1.DataPlaneAgentGateway)} {
		for _, n := range []int{250, 500, 1000} {
			b.Run(fmt.Sprintf("%s/%d", plane, n), func(b *testing.B) {
				r, router, compiled, target := oneGatewayFleet(b, plane, n, 0)
				ctx := context.Background()
				for b.Loop() {
					diags, err := r.checkTogether(ctx, router, compiled, target)
					if err != nil || diags.HasErrors() {
						b.Fatal(err, diags)
					}
				}
			})
		}
	}
}

// listClient answers List from its objects with deep copies, as the
// manager's cache does (the fake client's List round-trips JSON, which
// would be most of what the benchmark measures).
type listClient struct {
	client.Client
	objs []client.Object
}

func (c *listClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	in := func(obj client.Object) bool { return o.Namespace == "" || obj.GetNamespace() == o.Namespace }
	switch l := list.(type) {
	case *v1.ModelRouterList:
		for _, obj := range c.objs {
			if mr, ok := obj.(*v1.ModelRouter); ok && in(mr) {
				l.Items = append(l.Items, *mr.DeepCopy())
			}
		}
	case *v1.InferenceServiceList:
		for _, obj := range c.objs {
			if s, ok := obj.(*v1.InferenceService); ok && in(s) {
				l.Items = append(l.Items, *s.DeepCopy())
			}
		}
	case *v1.ModelPoolList:
	default:
		return fmt.Errorf("listClient: %T", list)
	}
	return nil
}
