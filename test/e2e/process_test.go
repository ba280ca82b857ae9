// Package e2e tests the programs users run, as processes: the
// llmkube-controller binary built with its release flags and started with its
// real command line against a real kube-apiserver (envtest), installed the
// ways users install it (kubectl apply -k config/default, the Helm chart),
// running as the ServiceAccount the install creates, with leader election.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/test/poll"
	"github.com/llmkube/llmkube-compile/test/syncbuf"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// stampedVersion and stampedCommit are linked into the binaries under test,
// as `make binaries` and `make images` do.
const (
	stampedVersion = "v9.8.7-e2e"
	stampedCommit  = "0123456789abcdef0123456789abcdef01234567"
	versionPkg     = "github.com/llmkube/llmkube-compile/internal/version"
	waitFor        = 2 * time.Minute
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binary builds the project's commands once per test run and returns the
// path of one of them.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "llmkube-e2e-bin-")
		if buildErr != nil {
			return
		}
		root, err := testenv.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-ldflags",
			"-X "+versionPkg+".Version="+stampedVersion+" -X "+versionPkg+".Commit="+stampedCommit,
			"-o", binDir+string(os.PathSeparator), "./cmd/llmkube-controller", "./cmd/llmkube-compile", "./cmd/router-proxy")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// proc is a running binary.
type proc struct {
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
	err  error
}

func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), out: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), p.out.String())
		}
	})
	return p
}

// stop sends SIGTERM and requires a clean exit (status 0) in time.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("no exit within 60s of SIGTERM")
	}
	if p.err != nil {
		t.Fatalf("exit after SIGTERM: %v, want status 0", p.err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitReady polls the controller's /readyz.
func (p *proc) waitReady(t *testing.T, probePort int) {
	t.Helper()
	eventually(t, "controller /readyz", func() error {
		select {
		case <-p.done:
			return fmt.Errorf("exited: %v", p.err)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	})
}

// eventually polls f until it returns nil or waitFor passes.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	poll.Until(t, waitFor, 200*time.Millisecond, what, f)
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1.AddToScheme(s)
	return s
}()

// newEnv starts a dedicated API server (one controller per API server, so
// two tests' controllers never reconcile each other's routers).
func newEnv(t *testing.T) (*testenv.Env, client.Client) {
	t.Helper()
	e := testenv.StartOwn(t, testenv.Options{})
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

// serviceAccountKubeconfig writes a kubeconfig that acts as the install's
// ServiceAccount: the identity, and so the RBAC, the controller has in a cluster.
func serviceAccountKubeconfig(t *testing.T, e *testenv.Env, ns, sa string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "controller.kubeconfig")
	if err := e.WriteKubeconfig(path, "system:serviceaccount:"+ns+":"+sa, "system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"); err != nil {
		t.Fatal(err)
	}
	return path
}

const routerDoc = `
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: llama-3-8b
spec:
  modelRef: llama-3-1-8b-instruct
  runtime: vllm
  vllmConfig:
    maxModelLen: 8192
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata:
  name: e2e
spec:
  backends:
    - name: llama
      inferenceServiceRef:
        name: llama-3-8b
  defaultRoute: llama
  policy:
    budgets: # counted in the operator's budget store when it has one
      - name: daily-tokens
        scope: router
        maxTokens: 1000000
        windowSeconds: 86400
`

// startController starts the controller binary as kubeconfig's identity,
// with leader election in installNS, and waits until it is ready.
func startController(t *testing.T, kubeconfig, installNS string, extra ...string) *proc {
	t.Helper()
	probe := freePort(t)
	args := append([]string{
		"--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", installNS,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probe),
		"--webhook-port", "0",
		"--proxy-image", "example.test/router-proxy:e2e"}, extra...)
	p := start(t, binary(t, "llmkube-controller"), args...)
	p.waitReady(t, probe)
	return p
}

// runControllerAs starts the controller binary with kubeconfig, leader
// election in installNS, and proves it reconciles: a router gets its objects
// and goes Ready, the Lease names a holder, deleting the router removes its
// objects, and SIGTERM exits 0.
//
// extra are further controller flags (the chart's operator settings);
// checkProxy, when set, judges the router-proxy Deployment it applied.
func runControllerAs(t *testing.T, e *testenv.Env, admin client.Client, kubeconfig, installNS string, extra []string, checkProxy func(*appsv1.Deployment)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := startController(t, kubeconfig, installNS, extra...)

	ns := e.NewNamespace(t)
	if errs := e.ApplyYAMLInNamespace(ctx, ns, []byte(routerDoc)); len(errs) > 0 {
		t.Fatal(errs)
	}
	dep := &appsv1.Deployment{}
	eventually(t, "router-proxy Deployment applied by the controller", func() error {
		return admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "e2e-router-proxy"}, dep)
	})
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "example.test/router-proxy:e2e" {
		t.Errorf("proxy image %q, want the --proxy-image flag's", img)
	}
	if checkProxy != nil {
		checkProxy(dep)
	}
	// No kube-controller-manager runs in envtest: play the deployment controller.
	eventually(t, "mark Deployment ready", func() error {
		d := &appsv1.Deployment{}
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "e2e-router-proxy"}, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
		return admin.Status().Update(ctx, d)
	})
	eventually(t, "router Ready", func() error {
		mr := &v1.ModelRouter{}
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "e2e"}, mr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(mr.Status.Conditions, v1.ConditionAvailable)
		if mr.Status.Phase != v1.PhaseReady || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != mr.Generation {
			return fmt.Errorf("phase %q, conditions %+v", mr.Status.Phase, mr.Status.Conditions)
		}
		return nil
	})
	lease := &coordinationv1.Lease{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: installNS, Name: "llmkube-controller.inference.llmkube.dev"}, lease); err != nil {
		t.Fatalf("leader-election Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease has no holder: %+v", lease.Spec)
	}

	if err := admin.Delete(ctx, &v1.ModelRouter{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "router and its objects removed", func() error {
		for _, o := range []client.Object{&v1.ModelRouter{}, &appsv1.Deployment{}, &corev1.ConfigMap{}, &corev1.Service{}} {
			name := "e2e-router-proxy"
			if _, ok := o.(*v1.ModelRouter); ok {
				name = "e2e"
			}
			err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, o)
			if err == nil {
				return fmt.Errorf("%T %s still exists", o, name)
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	p.stop(t)
	if !strings.Contains(p.out.String(), stampedVersion) {
		t.Errorf("the controller's start-up log does not name its version %s", stampedVersion)
	}
}

// TestBinariesVersionAndHelp runs each binary's --version and --help.
func TestBinariesVersionAndHelp(t *testing.T) {
	for _, name := range []string{"llmkube-controller", "llmkube-compile", "router-proxy"} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(binary(t, name), "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("--version: %v\n%s", err, out)
			}
			want := name + " " + stampedVersion + " (commit " + stampedCommit + ", go"
			if !strings.HasPrefix(string(out), want) {
				t.Errorf("--version printed %q, want prefix %q", out, want)
			}
			out, err = exec.Command(binary(t, name), "--help").CombinedOutput()
			if err != nil {
				t.Fatalf("--help exits non-zero: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "-version") {
				t.Errorf("--help does not list --version:\n%s", out)
			}
		})
	}
	out, err := exec.Command(binary(t, "llmkube-compile"), "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"version": "` + stampedVersion + `"`, `"commit": "` + stampedCommit + `"`, `"goVersion": "go`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version -o json lacks %s:\n%s", want, out)
		}
	}
	help, _ := exec.Command(binary(t, "llmkube-controller"), "--help").CombinedOutput()
	for _, flag := range []string{"--kubeconfig", "--leader-elect", "--proxy-image", "--otlp-endpoint", "--webhook-port", "--zap-log-level", "--max-concurrent-reconciles", "--pprof-bind-address"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("controller --help lacks %s", flag)
		}
	}
	bad := exec.Command(binary(t, "llmkube-controller"), "--max-concurrent-reconciles", "0")
	if out, err := bad.CombinedOutput(); bad.ProcessState == nil || bad.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--max-concurrent-reconciles 0: must be at least 1") {
		t.Errorf("--max-concurrent-reconciles 0: exit %v, %v, output %q; want exit 2 naming the flag", bad.ProcessState, err, out)
	}
	// The binaries stamped with a release deploy that release's images.
	render, err := exec.Command(binary(t, "llmkube-compile"), "render", "-f", filepath.Join("..", "..", "examples", "quickstart.yaml")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "image: " + images.Registry + "/" + images.RouterProxy + ":" + stampedVersion; !strings.Contains(string(render), want) {
		t.Errorf("render of a %s build does not deploy %q", stampedVersion, want)
	}
}

// TestControllerPprofIsOptIn: the controller serves Go's profiler only with
// --pprof-bind-address; by default its one listener is the probe port (the
// metrics and the webhook are off here too).
func TestControllerPprofIsOptIn(t *testing.T) {
	e, _ := newEnv(t)
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig, ""); err != nil {
		t.Fatal(err)
	}
	ns := e.NewNamespace(t)
	for _, on := range []bool{false, true} {
		pprofPort := freePort(t)
		var extra []string
		if on {
			extra = []string{"--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", pprofPort)}
		}
		p := startController(t, kubeconfig, ns, extra...)
		wantN, want := 1, "the probe port"
		if on {
			wantN, want = 2, "the probe port and the profiler's"
		}
		if ports := listeningPorts(t, p.cmd.Process.Pid); len(ports) != wantN {
			t.Errorf("--pprof-bind-address set %v: the controller listens on %v, want %s", on, ports, want)
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/goroutine?debug=1", pprofPort))
		switch {
		case on && err != nil:
			t.Errorf("--pprof-bind-address: %v", err)
		case on:
			body := new(bytes.Buffer)
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), "goroutine profile:") {
				t.Errorf("--pprof-bind-address: /debug/pprof/goroutine answered %d %.200q", resp.StatusCode, body.String())
			}
		case err == nil:
			resp.Body.Close()
			t.Errorf("without --pprof-bind-address, port %d answered %d", pprofPort, resp.StatusCode)
		}
		p.stop(t)
	}
}

// listeningPorts are the TCP ports a process listens on: its socket
// descriptors (/proc/<pid>/fd) matched by inode against the listening
// sockets of /proc/net/tcp and tcp6.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			// sl local_address rem_address st ... inode (field 10); st 0A is LISTEN.
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			var port int
			if _, err := fmt.Sscanf(hexPort, "%X", &port); err != nil {
				t.Fatalf("%s: local address %q", table, f[1])
			}
			ports = append(ports, port)
		}
	}
	return ports
}

// TestKubectlInstallAndControllerProcess is the install a user runs:
// `kubectl apply --server-side -k config/default`, then the controller binary
// as the ServiceAccount it created.
func TestKubectlInstallAndControllerProcess(t *testing.T) {
	// kubectl of the API server's release, built beside it by
	// hack/install-envtest.sh (make envtest).
	assets, err := testenv.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(assets, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("%v: run make envtest (hack/install-envtest.sh builds kubectl)", err)
	}
	e, admin := newEnv(t)
	adminKC := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := e.WriteKubeconfig(adminKC, ""); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "--kubeconfig", adminKC, "apply", "--server-side", "--validate=strict", "-k", filepath.Join("..", "..", "config", "default")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default: %v\n%s", err, out)
	}
	t.Logf("kubectl apply:\n%s", out)
	const ns = "llmkube-compile-system"
	d := &appsv1.Deployment{}
	if err := admin.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "llmkube-compile-controller"}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != images.ControllerRef() {
		t.Errorf("installed controller image %q, want %s", img, images.ControllerRef())
	}
	runControllerAs(t, e, admin, serviceAccountKubeconfig(t, e, ns, "llmkube-compile-controller"), ns, nil, nil)
}

// objectsOf decodes manifests and orders them for install.
func objectsOf(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs := testenv.Objects(t, string(data))
	rank := map[string]int{"Namespace": 0, "CustomResourceDefinition": 1, "ServiceAccount": 2}
	r := func(o *unstructured.Unstructured) int {
		if n, ok := rank[o.GetKind()]; ok {
			return n
		}
		return 10
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for i := 0; i <= 10; i++ {
		for _, o := range objs {
			if r(o) == i {
				out = append(out, o)
			}
		}
	}
	return out
}
