//go:build e2ecluster

package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// llmkubeCRDs installs the CRDs of the LLMKube operator a router references
// (InferenceService, ModelPool): a prerequisite of the controller, as in a
// cluster where LLMKube runs.
func llmkubeCRDs(t *testing.T) {
	t.Helper()
	for _, f := range []string{"inference.llmkube.dev_inferenceservices.yaml", "inference.llmkube.dev_modelpools.yaml"} {
		run(t, "", "kubectl", "apply", "--server-side", "-f", filepath.Join(e.root, "..", "shared", "crds", "llmkube", f))
	}
}

// routerPhase is status.phase of a ModelRouter and its conditions that are
// not as a Ready router has them, for failure messages.
func routerPhase(u *unstructured.Unstructured) (phase string, notReady []string) {
	phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Degraded") == (m["status"] == "True") {
			notReady = append(notReady, fmt.Sprintf("%s=%s %s: %s", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return phase, notReady
}

// cell is the value under column col of a kubectl table row.
func cell(header, row, col string) string {
	at := strings.Index(header, col)
	if at < 0 || at >= len(row) {
		return ""
	}
	end := len(row)
	if next := strings.IndexFunc(header[at+len(col):], func(r rune) bool { return r != ' ' }); next >= 0 {
		end = min(at+len(col)+next, len(row))
	}
	return strings.TrimSpace(row[at:end])
}

// quickstartWithProvider is examples/quickstart.yaml with its Anthropic
// backend's url pointed at a stub in the cluster: nothing leaves this
// machine, and the router can be all Ready (with the real provider
// unreachable the controller rightly reports it Degraded).
func quickstartWithProvider(t *testing.T, ns string) string {
	t.Helper()
	apply(t, stubModel("fake-anthropic", ns, 1, 0))
	// The provider is up before the router starts, as in production: while
	// it is down the router-proxy falls back to the in-cluster model (the
	// quickstart's cloud rule is not fail-closed), which the test would
	// take for a routing error.
	kubectl(t, "-n", ns, "rollout", "status", "deploy/fake-anthropic", "--timeout=120s")
	apply(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: anthropic-credentials\n  namespace: "+ns+"\nstringData:\n  ANTHROPIC_API_KEY: sk-ant-e2e\n")
	quickstart, err := readFile(filepath.Join(e.root, "examples", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const at = "        provider: anthropic\n"
	if !strings.Contains(quickstart, at) {
		t.Fatalf("examples/quickstart.yaml has no %q", at)
	}
	return strings.Replace(quickstart, at, at+"        url: http://fake-anthropic."+ns+".svc.cluster.local:8000\n", 1)
}

// waitRouterReady waits for the controller to report the router Ready.
func waitRouterReady(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 120*time.Second, "ModelRouter "+ns+"/"+name+" Ready", func() error {
		phase, notReady := routerPhase(getRouter(t, ns, name))
		if phase != "Ready" || len(notReady) > 0 {
			return errorf("phase %q; %s", phase, strings.Join(notReady, "; "))
		}
		return nil
	})
}

// waitGone waits until the objects of kind a router owned are deleted.
func waitGone(t *testing.T, ns, selector string, kinds ...string) {
	t.Helper()
	eventually(t, 120*time.Second, "the router's objects deleted", func() error {
		out, err := tryRun("", "kubectl", "-n", ns, "get", strings.Join(kinds, ","), "-l", selector, "-o", "name")
		if err != nil {
			return err
		}
		if s := strings.TrimSpace(out); s != "" {
			return errorf("still there: %s", strings.ReplaceAll(s, "\n", ", "))
		}
		return nil
	})
}

// The controller installed as docs/controller.md says (kubectl apply
// --server-side -k config/default) turns the quickstart ModelRouter into a
// running router: Ready pods, answers through its Service, status Ready and
// `kubectl get modelrouter` columns that say so. A spec change under steady
// load rolls the router-proxy with no failed request; deleting the router
// removes everything it owned.
func TestControllerKustomizeQuickstart(t *testing.T) {
	llmkubeCRDs(t)
	run(t, "", "kubectl", "apply", "--server-side", "-k", "config/default")
	// Uninstalled as installed, after the scenario's namespace is gone (the
	// controller removes its routers' finalizers first).
	t.Cleanup(func() {
		if out, err := tryRun("", "kubectl", "delete", "-k", "config/default", "--ignore-not-found", "--wait=true", "--timeout=120s"); err != nil {
			t.Errorf("kubectl delete -k config/default: %v\n%s", err, out)
		}
	})
	kubectl(t, "-n", "llmkube-compile-system", "rollout", "status", "deploy/llmkube-compile-controller", "--timeout=120s")
	checkHardened(t, podsOf(t, "llmkube-compile-system", "app.kubernetes.io/name=llmkube-compile")[0], "manager", "")

	ns := namespace(t, "team-a")
	apply(t, stubModel("qwen3-coder", ns, 2, 50*time.Millisecond))
	apply(t, quickstartWithProvider(t, ns))
	waitRouterReady(t, ns, "chat")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/chat-router-proxy", "--timeout=120s")
	checkHardened(t, podsOf(t, ns, "app=chat-router-proxy")[0], "router-proxy", "/etc/llmkube/router")

	cols := kubectl(t, "-n", ns, "get", "modelrouter", "chat")
	t.Logf("kubectl get modelrouter:\n%s", cols)
	lines := strings.Split(strings.TrimSpace(cols), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get modelrouter printed %q", cols)
	}
	// kubectl pads columns to the header's offsets; an unset spec.dataPlane
	// (the default, Proxy) is an empty DATAPLANE cell.
	for col, want := range map[string]string{"NAME": "chat", "DATAPLANE": "", "PHASE": "Ready"} {
		if got := cell(lines[0], lines[1], col); got != want {
			t.Errorf("column %s is %q, want %q", col, got, want)
		}
	}

	base := serviceURL(t, ns, "chat-router-proxy")
	// The router-proxy may have started before the model pods were Ready:
	// its next health probe (1 s after a failed one, doubling up to the
	// 10 s interval) brings the backend back.
	eventually(t, 30*time.Second, "a PII request answered by the in-cluster model", func() error {
		r, err := chat(base, "qwen3-coder", pii)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(r.servedBy, "qwen3-coder-") {
			return errorf("%d %s", r.status, r.body)
		}
		return nil
	})
	// Every other request takes the vision-to-cloud rule to the provider
	// (here the stub behind its url), translated to Anthropic's API. A
	// provider the router-proxy found down before its endpoints were
	// programmed is back after its next health probe.
	eventually(t, 30*time.Second, "a plain request answered by the provider", func() error {
		r, err := chat(base, "qwen3-coder", nil)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(r.servedBy, "fake-anthropic-") {
			return errorf("answered by %q: %d %s", r.servedBy, r.status, r.body)
		}
		return nil
	})

	// A spec change under steady load: the controller renders a new config,
	// the Deployment rolls, no request fails.
	before := podsOf(t, ns, "app=chat-router-proxy")[0].Name
	l := startLoad(base, "qwen3-coder", pii, 4, 20*time.Millisecond)
	time.Sleep(2 * time.Second)
	run(t, "", "kubectl", "-n", ns, "patch", "modelrouter", "chat", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/policy/budgets/0/maxUSD","value":"400"}]`)
	eventually(t, 120*time.Second, "the router-proxy rolled", func() error {
		pods := podsOf(t, ns, "app=chat-router-proxy")
		if len(pods) != 1 || pods[0].Name == before || pods[0].DeletionTimestamp != nil {
			return errorf("pods %d, first %s", len(pods), pods[0].Name)
		}
		return nil
	})
	kubectl(t, "-n", ns, "rollout", "status", "deploy/chat-router-proxy", "--timeout=120s")
	time.Sleep(2 * time.Second)
	l.finish(t, "rollout under load")

	// Deleting the router removes what it owned.
	kubectl(t, "-n", ns, "delete", "modelrouter", "chat", "--wait=true", "--timeout=120s")
	waitGone(t, ns, "inference.llmkube.dev/model-router=chat", "deployments", "services", "configmaps", "pods", "serviceaccounts", "roles", "rolebindings")
	if _, err := e.dyn.Resource(modelRouters).Namespace(ns).Get(context.Background(), "chat", metaGet); !apierrors.IsNotFound(err) {
		t.Errorf("the ModelRouter is still there: %v", err)
	}
}
