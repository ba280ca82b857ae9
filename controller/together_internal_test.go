package controller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// checkWith runs checkTogether for router against the objects of c.
func checkWith(t *testing.T, r *Reconciler, router *v1.ModelRouter) diag.List {
	t.Helper()
	compiled, target := compileFor(t, r, router)
	out, err := r.checkTogether(context.Background(), router, compiled, target)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compileFor compiles router, with the InferenceServices r's client reads,
// for its data plane, and returns that plane's target.
func compileFor(tb testing.TB, r *Reconciler, router *v1.ModelRouter) (*ir.Router, targets.Target) {
	tb.Helper()
	refs, err := readRefs(context.Background(), r.Client, router.Namespace)
	if err != nil {
		tb.Fatal(err)
	}
	compiled, diags := compiler.Compile(router, refs, compiler.Options{})
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	target, err := r.Registry.Get(compiled.DataPlane)
	if err != nil {
		tb.Fatal(err)
	}
	return compiled, target
}

func isvcObj(name, model string) *v1.InferenceService {
	return &v1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec: v1.InferenceServiceSpec{ModelRef: model, Runtime: v1.RuntimeVLLM}}
}

func gatewayRouter(name, host string) *v1.ModelRouter {
	mr := &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1}}
	mr.Spec.DataPlane = v1.DataPlaneGateway
	mr.Spec.GatewayRef = &v1.RouterGatewayRef{Name: "gw", Hostnames: []string{host}}
	mr.Spec.Backends = []v1.RouterBackend{{Name: "a", InferenceServiceRef: &corev1.LocalObjectReference{Name: "m0"}}}
	mr.Spec.DefaultRoute = "a"
	return mr
}

// agentGatewayRouter is a router on agentgateway Gateway ns/agw whose one
// rule serves the model of its own name.
func agentGatewayRouter(name string) *v1.ModelRouter {
	mr := &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1}}
	mr.Spec.DataPlane = v1.DataPlaneAgentGateway
	mr.Spec.AgentGatewayRef = &v1.AgentGatewayRef{Name: "agw"}
	mr.Spec.Backends = []v1.RouterBackend{{Name: "a", InferenceServiceRef: &corev1.LocalObjectReference{Name: "m0"},
		EndpointPicker: &v1.EndpointPickerSpec{Service: &v1.EndpointPickerService{Name: "m0-epp", Port: 9002}}}}
	mr.Spec.Rules = []v1.RouterRule{{Name: "own", Match: &v1.RuleMatch{Models: []string{name}}, Route: v1.RuleRoute{Backends: []string{"a"}}}}
	return mr
}

// TestCheckTogetherRecompilesWhatChanged: checkTogether keeps the other
// routers' compiled form between reconciles; a new generation of a router,
// or a change to an InferenceService of its namespace, is compiled again,
// so the check sees it; routers on other planes are never compiled, and
// routers that are gone are forgotten.
func TestCheckTogetherRecompilesWhatChanged(t *testing.T) {
	alpha, beta := gatewayRouter("alpha", "a.example.com"), gatewayRouter("beta", "b.example.com")
	proxy := &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: "ns", UID: "uid-proxy", Generation: 1}}
	proxy.Spec.Backends = []v1.RouterBackend{{Name: "a", InferenceServiceRef: &corev1.LocalObjectReference{Name: "m0"}}}
	proxy.Spec.DefaultRoute = "a"
	c := &listClient{objs: []client.Object{isvcObj("m0", "model-0"), alpha, beta, proxy}}
	r := &Reconciler{Client: c, Registry: builtin.Registry()}

	if d := checkWith(t, r, alpha); d.HasErrors() {
		t.Fatalf("disjoint hostnames: %v", d)
	}
	if len(r.together.m) != 1 || r.together.m[beta.UID].router == nil {
		t.Fatalf("cache %v: want beta only (the Proxy router is on another plane)", r.together.m)
	}

	// beta moves onto alpha's hostname: a new generation is compiled again.
	beta.Spec.GatewayRef.Hostnames = []string{"a.example.com"}
	beta.Generation = 2
	if d := checkWith(t, r, alpha); !d.HasErrors() || !strings.Contains(d.Err().Error(), "GatewayRoutesOverlap") {
		t.Fatalf("overlap after beta's new generation not seen: %v", d)
	}

	// Apart again, but beta's backend now names an InferenceService that
	// does not exist until it is created: the namespace's references are
	// part of the key.
	beta.Spec.GatewayRef.Hostnames = []string{"b.example.com"}
	beta.Spec.Backends[0].InferenceServiceRef.Name = "m1"
	beta.Generation = 3
	if d := checkWith(t, r, alpha); d.HasErrors() {
		t.Fatalf("apart again: %v", d)
	}
	entry := r.together.m[beta.UID]
	c.objs = append(c.objs, isvcObj("m1", "model-1"))
	checkWith(t, r, alpha)
	if r.together.m[beta.UID].refs == entry.refs {
		t.Error("a new InferenceService in the namespace did not change the references' key")
	}

	// beta is deleted: forgotten.
	c.objs = c.objs[:1]
	c.objs = append(c.objs, alpha, proxy)
	checkWith(t, r, alpha)
	if len(r.together.m) != 0 {
		t.Errorf("cache %v after beta is gone", r.together.m)
	}
}

// TestCheckTogetherKeepsOtherPlanesCompiled: a reconcile of a router on
// another plane or Gateway, or of the router itself, keeps what was
// compiled for the others: in a fleet of several planes the next router in
// the queue is usually of another plane, and dropping the entries made
// nearly every reconcile recompile every router on its Gateway (half of the
// controller's CPU at 5,000 routers).
func TestCheckTogetherKeepsOtherPlanesCompiled(t *testing.T) {
	alpha, beta := gatewayRouter("alpha", "a.example.com"), gatewayRouter("beta", "b.example.com")
	one, two := agentGatewayRouter("one"), agentGatewayRouter("two")
	c := &listClient{objs: []client.Object{isvcObj("m0", "model-0"), alpha, beta, one, two}}
	r := &Reconciler{Client: c, Registry: builtin.Registry()}

	checkWith(t, r, alpha) // compiles beta
	betaIR := r.together.m[beta.UID].router
	if betaIR == nil {
		t.Fatalf("cache %v: beta not compiled", r.together.m)
	}
	checkWith(t, r, one)  // another plane: compiles two
	checkWith(t, r, beta) // compiles alpha
	checkWith(t, r, alpha)
	if got := r.together.m[beta.UID].router; got != betaIR {
		t.Error("beta was compiled again after reconciles of another plane's router and of beta itself")
	}
	if r.together.m[two.UID].router == nil || r.together.m[alpha.UID].router == nil {
		t.Errorf("cache %v: want alpha, beta and two compiled", r.together.m)
	}
}

// TestCheckTogetherFindsTheRoutersOnThePlanesGateway: an AgentGateway
// router that also carries a spec.gatewayRef (ignored on its plane, with a
// FieldIgnored warning) is compared with the routers on its
// agentGatewayRef, not with those of the ignored reference: its overlap
// with another router on the same agentgateway Gateway is refused in its
// own reconcile, as in the other router's.
func TestCheckTogetherFindsTheRoutersOnThePlanesGateway(t *testing.T) {
	one, two := agentGatewayRouter("one"), agentGatewayRouter("two")
	one.Spec.DefaultRoute, two.Spec.DefaultRoute = "a", "a" // both take every model
	one.Spec.GatewayRef = &v1.RouterGatewayRef{Name: "envoy"}
	r := &Reconciler{Client: &listClient{objs: []client.Object{isvcObj("m0", "model-0"), one, two}}, Registry: builtin.Registry()}
	for _, mr := range []*v1.ModelRouter{one, two} {
		if d := checkWith(t, r, mr); !d.HasErrors() || !strings.Contains(d.Err().Error(), "GatewayRoutesOverlap") {
			t.Errorf("router %s: the overlap on Gateway ns/agw not refused: %v", mr.Name, d)
		}
	}
}
