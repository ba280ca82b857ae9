package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// TestAttachesTo: a Gateway event reaches the routers whose gatewayRef or
// agentGatewayRef names it; an empty namespace is the router's own.
func TestAttachesTo(t *testing.T) {
	mr := func(gw *v1.RouterGatewayRef, ag *v1.AgentGatewayRef) *v1.ModelRouter {
		return &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: "team"}, Spec: v1.ModelRouterSpec{GatewayRef: gw, AgentGatewayRef: ag}}
	}
	for _, c := range []struct {
		name     string
		r        *v1.ModelRouter
		ns, gw   string
		attaches bool
	}{
		{"gatewayRef in the router's namespace", mr(&v1.RouterGatewayRef{Name: "g"}, nil), "team", "g", true},
		{"gatewayRef elsewhere", mr(&v1.RouterGatewayRef{Name: "g", Namespace: "infra"}, nil), "infra", "g", true},
		{"gatewayRef, other namespace", mr(&v1.RouterGatewayRef{Name: "g", Namespace: "infra"}, nil), "team", "g", false},
		{"gatewayRef, other name", mr(&v1.RouterGatewayRef{Name: "g"}, nil), "team", "h", false},
		{"agentGatewayRef", mr(nil, &v1.AgentGatewayRef{Name: "a", Namespace: "infra"}), "infra", "a", true},
		{"agentGatewayRef, default namespace", mr(nil, &v1.AgentGatewayRef{Name: "a"}), "team", "a", true},
		{"no reference", mr(nil, nil), "team", "g", false},
	} {
		if got := attachesTo(c.r, c.ns, c.gw); got != c.attaches {
			t.Errorf("%s: attachesTo(%s/%s) = %v", c.name, c.ns, c.gw, got)
		}
	}
}
