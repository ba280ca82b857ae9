//go:build e2ecluster

// Package cluster runs the in-cluster half of the project in a real one-node
// Kubernetes (`make e2e-cluster`, hack/cluster): the shipped images as
// containers under a real kubelet, requests through real Services and
// kube-proxy, names through the cluster DNS, rollouts, EndpointSlices,
// leader election and the webhook, installed the ways users install them.
//
// The tests drive the cluster as a user does: the real kubectl and helm
// binaries, llmkube-compile built from this tree, and HTTP from the host to
// ClusterIPs. They run only under the e2ecluster build tag, against the
// cluster in $KUBECONFIG.
package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/llmkube/llmkube-compile/test/poll"
)

// env is what every scenario shares: clients, the binaries, the repository.
type env struct {
	root      string // repository root
	bin       string // llmkube-compile built from this tree
	helm      string
	stubImage string
	kube      kubernetes.Interface
	dyn       dynamic.Interface
}

var e *env

func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster tests:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	os.Exit(code)
}

func setup() (int, error) {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		return 1, err
	}
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		return 1, fmt.Errorf("KUBECONFIG is unset: run these through `make e2e-cluster`")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return 1, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 1, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 1, err
	}
	tmp, err := os.MkdirTemp("", "llmkube-cluster-")
	if err != nil {
		return 1, err
	}
	bin := filepath.Join(tmp, "llmkube-compile")
	build := exec.Command("go", "build", "-o", bin, "./cmd/llmkube-compile")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("building llmkube-compile: %v\n%s", err, out)
	}
	e = &env{root: root, bin: bin, helm: os.Getenv("HELM"), stubImage: os.Getenv("STUBMODEL_IMAGE"), kube: kube, dyn: dyn}
	if e.helm == "" || e.stubImage == "" {
		return 1, fmt.Errorf("HELM and STUBMODEL_IMAGE must be set (make e2e-cluster sets them)")
	}
	return 0, nil
}

// run runs a command from the repository root and returns its stdout; a
// failure ends the test with its stderr.
func run(t testing.TB, stdin string, name string, args ...string) string {
	t.Helper()
	out, err := tryRun(stdin, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out
}

func tryRun(stdin string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = e.root
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v\n%s", err, stderr.String())
	}
	return stdout.String(), nil
}

func kubectl(t testing.TB, args ...string) string { t.Helper(); return run(t, "", "kubectl", args...) }

// apply applies manifests the way the docs tell users to.
func apply(t testing.TB, manifests string) {
	t.Helper()
	run(t, manifests, "kubectl", "apply", "--server-side", "-f", "-")
}

// eventually polls cond until it holds or timeout passes; the last error
// it returned is the failure message.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	poll.Until(t, timeout, 500*time.Millisecond, what, cond)
}

// namespace creates a namespace for one scenario and deletes it after.
func namespace(t *testing.T, name string) string {
	t.Helper()
	apply(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+name+"\n")
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, name)
		}
		_, _ = tryRun("", "kubectl", "delete", "namespace", name, "--wait=true", "--timeout=120s")
	})
	return name
}

// dump logs what a failed scenario left in its namespace.
func dump(t *testing.T, ns string) {
	out, _ := tryRun("", "kubectl", "-n", ns, "get", "all,modelrouters,endpointslices,events", "-o", "wide")
	t.Logf("namespace %s:\n%s", ns, out)
	out, _ = tryRun("", "kubectl", "-n", ns, "logs", "--all-containers", "--prefix", "--tail=40", "-l", "inference.llmkube.dev/model-router")
	t.Logf("router-proxy logs:\n%s", out)
}

var modelRouters = schema.GroupVersionResource{Group: "inference.llmkube.dev", Version: "v1alpha1", Resource: "modelrouters"}

func getRouter(t testing.TB, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := e.dyn.Resource(modelRouters).Namespace(ns).Get(context.Background(), name, metaGet)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// podsOf lists the pods a label selector picks, less those terminating.
func podsOf(t testing.TB, ns, selector string) []corev1.Pod {
	t.Helper()
	l, err := e.kube.CoreV1().Pods(ns).List(context.Background(), listOpts(selector))
	if err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	return pods
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
