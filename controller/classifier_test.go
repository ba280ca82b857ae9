package controller_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	proxytarget "github.com/llmkube/llmkube-compile/targets/proxy"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// TestClassifierModesThroughTheAPIServer: the webhook and the controller
// take classification modes detector and hybrid on dataPlane Proxy (the
// router is Validated and its router-proxy config carries the mode), and
// the webhook refuses them on the gateway planes with the reason that says
// what to do.
func TestClassifierModesThroughTheAPIServer(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	for _, mode := range []string{"detector", "hybrid"} {
		name := "classified-" + mode
		createRouter(t, ns, name, `
backends:
  - name: local
    tier: local
    external: {provider: litellm, model: qwen, url: "http://qwen.models.svc:8000"}
  - name: cloud
    external: {provider: openai, model: gpt-5}
rules:
  - name: sensitive
    match: {dataClassification: [pii, phi]}
    failClosed: true
    route: {backends: [local]}
defaultRoute: cloud
policy:
  classification: {mode: `+mode+`}
`)
		waitCondition(t, ctx, ns, name, "Validated", metav1.ConditionTrue, "")
		objs := converged(t, ns, name)
		var config string
		for k, o := range objs {
			if strings.HasPrefix(k, "ConfigMap/") {
				data, _, _ := unstructuredString(o.Object, "data", "config.json")
				config = data
			}
		}
		if !strings.Contains(config, `"mode": "`+mode+`"`) {
			t.Errorf("%s: the router-proxy config does not carry the mode:\n%s", mode, config)
		}
	}

	obj := testenv.Objects(t, `
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: on-gateway}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends:
    - name: cloud
      external: {provider: openai, model: gpt-5}
  defaultRoute: cloud
  policy:
    classification: {mode: detector}
`)[0]
	obj.SetNamespace(ns)
	err := k8s.Create(ctx, obj)
	if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.policy.classification.mode") || !strings.Contains(err.Error(), "(ClassifierRequiresProxy)") || !strings.Contains(err.Error(), "dataPlane: Proxy") {
		t.Errorf("want the Gateway router refused at spec.policy.classification.mode with ClassifierRequiresProxy, got: %v", err)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// TestMCPServingCondition: a Proxy router with spec.mcpServer reports
// MCPServing=True once its router-proxy is ready, naming the resource; the
// condition goes when MCP is switched off.
func TestMCPServingCondition(t *testing.T) {
	ctx := ctxT(t)
	ns := env.NewNamespace(t)
	readyISVCs(t, ctx, ns, "qwen", "llama")
	spec := routerSpec + `  auth:
    jwt: {provider: keycloak, issuer: "https://issuer.example/realms/lab", jwksURI: "https://issuer.example/realms/lab/certs", teamClaim: team}
mcpServer:
  enabled: true
  resourceURL: https://models.example.com/mcp
`
	mr := createRouter(t, ns, "agents", spec)
	statuses.set(proxytarget.StatusURL(mr), healthyProxy(mr, "qwen", "llama", "claude"))
	converged(t, ns, "agents")
	markDeploymentReady(t, ctx, ns, "agents-router-proxy")
	mr = waitCondition(t, ctx, ns, "agents", v1.ConditionMCPServing, metav1.ConditionTrue, "Serving")
	if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionMCPServing); !strings.Contains(c.Message, "https://models.example.com/mcp") || !strings.Contains(c.Message, "/mcp") {
		t.Errorf("MCPServing message: %q", c.Message)
	}
	setRouterSpec(t, ctx, ns, "agents", strings.Replace(spec, "enabled: true", "enabled: false", 1))
	eventually(t, "MCPServing removed", func() error {
		mr := getRouter(t, ctx, ns, "agents")
		v := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionValidated)
		if c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionMCPServing); c != nil || v == nil || v.ObservedGeneration != mr.Generation {
			return fmt.Errorf("MCPServing still %+v", c)
		}
		return nil
	})
}
