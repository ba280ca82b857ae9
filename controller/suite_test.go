package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/poll"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

var (
	env      *testenv.Env
	k8s      client.Client // admin client with our scheme
	rec      *recordingClient
	reconc   *controller.Reconciler
	statuses = &statusStub{m: map[string][]byte{}}
	scheme   = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1.AddToScheme(scheme)
	wh := &envtest.WebhookInstallOptions{Paths: []string{filepath.Join("..", "config", "webhook")}}
	var stop func()
	env, stop = testenv.StartMainWithOptions(testenv.Options{Webhook: wh})
	code := func() int {
		var err error
		k8s, err = client.New(env.Config, client.Options{Scheme: scheme})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r, done, err := startManager(ctx, env, builtin.Registry(), wh)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		reconc = r
		go playGatewayControllers(ctx, k8s)
		defer func() { cancel(); <-done }()
		return m.Run()
	}()
	stop()
	os.Exit(code)
}

// startManager runs the controller (and, with wh, the webhook) against env.
func startManager(ctx context.Context, e *testenv.Env, reg *targets.Registry, wh *envtest.WebhookInstallOptions) (*controller.Reconciler, chan struct{}, error) {
	return startManagerWith(ctx, e.Config, reg, wh, nil)
}

// startManagerWith runs the controller with cfg (for example a config that
// impersonates the controller's ServiceAccount); tune, when set, adjusts the
// manager's options.
func startManagerWith(ctx context.Context, cfg *rest.Config, reg *targets.Registry, wh *envtest.WebhookInstallOptions, tune func(*ctrl.Options)) (*controller.Reconciler, chan struct{}, error) {
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Two managers (the shared API server's and a dedicated one) run in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if wh != nil {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir})
	}
	if tune != nil {
		tune(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	rc := &recordingClient{Client: mgr.GetClient()}
	if rec == nil {
		rec = rc
	}
	r := &controller.Reconciler{
		Client:           rc,
		Registry:         reg,
		Operator:         platform.Settings{ProxyImage: "example.test/router-proxy:test"},
		GetStatus:        statuses.get,
		CRDRetryInterval: 2 * time.Second,
		RecheckInterval:  3 * time.Second,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, nil, err
	}
	if wh != nil {
		if err := (&controller.Validator{Registry: reg}).SetupWebhookWithManager(mgr); err != nil {
			return nil, nil, err
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if wh != nil {
		// Wait until the webhook serves.
		deadline := time.Now().Add(60 * time.Second)
		for mgr.GetWebhookServer().StartedChecker()(nil) != nil {
			if time.Now().After(deadline) {
				return nil, nil, errors.New("webhook server did not start")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return r, done, nil
}

// statusStub answers the proxy admin status per URL; unknown URLs are unreachable.
type statusStub struct {
	mu    sync.Mutex
	m     map[string][]byte
	calls map[string]int
}

func (s *statusStub) get(_ context.Context, url string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[url]++
	if b, ok := s.m[url]; ok {
		return b, nil
	}
	return nil, errors.New("connection refused")
}

// reads is how many times the controller has read url: once per
// reconcile of the router whose admin status it is.
func (s *statusStub) reads(url string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[url]
}

func (s *statusStub) set(url string, v any) {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[url] = b
}

// op is one write the controller made.
type op struct {
	verb, kind, namespace, name string
}

// recordingClient records every write the controller makes.
type recordingClient struct {
	client.Client
	mu  sync.Mutex
	ops []op
}

func (c *recordingClient) record(verb string, obj runtime.Object, ns, name string) {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			kind = gvks[0].Kind
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops = append(c.ops, op{verb, kind, ns, name})
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.record("create", obj, obj.GetNamespace(), obj.GetName())
	return c.Client.Create(ctx, obj, opts...)
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.record("update", obj, obj.GetNamespace(), obj.GetName())
	return c.Client.Update(ctx, obj, opts...)
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.record("patch", obj, obj.GetNamespace(), obj.GetName())
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *recordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.record("delete", obj, obj.GetNamespace(), obj.GetName())
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *recordingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	b, _ := json.Marshal(obj)
	var m unstructured.Unstructured
	_ = json.Unmarshal(b, &m.Object)
	c.record("apply", &m, m.GetNamespace(), m.GetName())
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *recordingClient) Status() client.SubResourceWriter {
	return &recordingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type recordingStatus struct {
	client.SubResourceWriter
	c *recordingClient
}

func (s *recordingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.c.record("status-update", obj, obj.GetNamespace(), obj.GetName())
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *recordingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.record("status-patch", obj, obj.GetNamespace(), obj.GetName())
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// opsIn returns the writes made in namespace ns so far.
func (c *recordingClient) opsIn(ns string) []op {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []op
	for _, o := range c.ops {
		if o.namespace == ns {
			out = append(out, o)
		}
	}
	return out
}

// ---- helpers ----

const waitFor = 90 * time.Second

// eventually polls f until it returns nil or the (generous) bound passes.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	poll.Until(t, waitFor, 150*time.Millisecond, what, f)
}

// ctxT is the context of a test's calls to the API server.
var ctxT = testenv.Context

// mustApply creates or updates objects from YAML in ns (admin client, SSA).
func mustApply(t *testing.T, ctx context.Context, ns, doc string) []*unstructured.Unstructured {
	t.Helper()
	objs := testenv.Objects(t, doc)
	for _, o := range objs {
		o.SetNamespace(ns)
		if err := env.ApplyStrict(ctx, o); err != nil {
			t.Fatalf("applying %s: %v", testenv.Describe(o), err)
		}
	}
	return objs
}

// setRouterSpec replaces a router's spec from YAML (the spec: body only).
func setRouterSpec(t *testing.T, ctx context.Context, ns, name, specYAML string) {
	t.Helper()
	var spec v1.ModelRouterSpec
	if err := yaml.UnmarshalStrict([]byte(specYAML), &spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "update router spec", func() error {
		mr := &v1.ModelRouter{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
			return err
		}
		mr.Spec = spec
		return k8s.Update(ctx, mr)
	})
}

func getRouter(t *testing.T, ctx context.Context, ns, name string) *v1.ModelRouter {
	t.Helper()
	mr := &v1.ModelRouter{}
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
		t.Fatal(err)
	}
	return mr
}

// waitCondition waits for a condition of the current generation.
func waitCondition(t *testing.T, ctx context.Context, ns, name, typ string, status metav1.ConditionStatus, reason string) *v1.ModelRouter {
	t.Helper()
	var mr *v1.ModelRouter
	eventually(t, fmt.Sprintf("%s=%s/%s", typ, status, reason), func() error {
		mr = &v1.ModelRouter{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(mr.Status.Conditions, typ)
		if c == nil {
			return fmt.Errorf("no %s condition; conditions: %+v", typ, mr.Status.Conditions)
		}
		if c.ObservedGeneration != mr.Generation || c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("%s is %s/%s (%s) at generation %d of %d", typ, c.Status, c.Reason, c.Message, c.ObservedGeneration, mr.Generation)
		}
		return nil
	})
	return mr
}

func waitPhase(t *testing.T, ctx context.Context, ns, name string, phase v1.Phase) *v1.ModelRouter {
	t.Helper()
	var mr *v1.ModelRouter
	eventually(t, "phase "+string(phase), func() error {
		mr = &v1.ModelRouter{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mr); err != nil {
			return err
		}
		if mr.Status.Phase != phase {
			return fmt.Errorf("phase %q, conditions %+v", mr.Status.Phase, mr.Status.Conditions)
		}
		return nil
	})
	return mr
}

// markDeploymentReady sets a Deployment's status as the deployment controller
// would (no kube-controller-manager runs in envtest).
func markDeploymentReady(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	markDeploymentReadyIn(t, ctx, k8s, ns, name)
}

func markDeploymentReadyIn(t *testing.T, ctx context.Context, k8s client.Client, ns, name string) {
	t.Helper()
	eventually(t, "mark Deployment ready", func() error {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, ReadyReplicas: n, AvailableReplicas: n, UpdatedReplicas: n}
		return k8s.Status().Update(ctx, d)
	})
}

// setISVCStatus sets an InferenceService's status phase and ready replicas.
// readyISVCs applies the test InferenceServices (qwen, llama) in ns and
// marks the named ones Ready.
func readyISVCs(t *testing.T, ctx context.Context, ns string, ready ...string) {
	t.Helper()
	mustApply(t, ctx, ns, isvcs)
	for _, name := range ready {
		setISVCStatus(t, ctx, ns, name, "Ready", 1)
	}
}

func setISVCStatus(t *testing.T, ctx context.Context, ns, name, phase string, ready int64) {
	t.Helper()
	eventually(t, "set InferenceService status", func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1.GroupVersion.WithKind("InferenceService"))
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
		_ = unstructured.SetNestedField(u.Object, ready, "status", "readyReplicas")
		_ = unstructured.SetNestedField(u.Object, ready, "status", "replicas")
		return k8s.Status().Update(ctx, u)
	})
}

// inventory lists the objects of the given kinds labelled for router in ns.
func inventory(t *testing.T, ctx context.Context, ns, router string, lists ...client.ObjectList) []string {
	t.Helper()
	var out []string
	for _, l := range lists {
		if err := k8s.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"inference.llmkube.dev/model-router": router}); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(l)
		for _, it := range items {
			o := it.(client.Object)
			kind := strings.TrimSuffix(fmt.Sprintf("%T", l), "List")
			kind = kind[strings.LastIndex(kind, ".")+1:]
			out = append(out, kind+"/"+o.GetName())
		}
	}
	return out
}

func proxyKinds() []client.ObjectList {
	return []client.ObjectList{&corev1.ConfigMapList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
