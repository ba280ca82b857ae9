package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// helmBin is the helm CLI `make helm` builds from the module proxy ($HELM).
func helmBin(t *testing.T) string {
	t.Helper()
	return testenv.MakeVar(t, "HELM", "helm")
}

func helmTemplate(t *testing.T, ns string, set ...string) []byte {
	t.Helper()
	args := []string{"template", "llmkube", filepath.Join("..", "..", "charts", "llmkube-compile"), "--namespace", ns, "--include-crds"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(helmBin(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestHelmChartInstallAndControllerProcess renders the chart with the helm
// CLI, applies every object strictly, and runs the controller process as the
// chart's ServiceAccount with leader election.
func TestHelmChartInstallAndControllerProcess(t *testing.T) {
	e, admin := newEnv(t)
	ctx := context.Background()
	const ns = "llmkube-system"
	if err := e.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, helmTemplate(t, ns, "otlp.endpoint=http://otel-collector.observability:4318", "otlp.headers.x-tenant=platform",
		"budgetStore.url=redis://redis.platform:6379/0", "budgetStore.passwordSecret=redis-auth/password", "budgetStore.failure=open"))
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
		if err := e.ApplyStrict(ctx, o); err != nil {
			t.Fatalf("applying %s: %v", testenv.Describe(o), err)
		}
	}
	for _, k := range []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
		if !kinds[k] {
			t.Errorf("the chart renders no %s", k)
		}
	}
	d := &appsv1.Deployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "llmkube-llmkube-compile"}, d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != images.ControllerRef() {
		t.Errorf("chart deploys %s, want %s (the image make images builds)", c.Image, images.ControllerRef())
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--leader-elect", "--otlp-endpoint=http://otel-collector.observability:4318", "--otlp-header=x-tenant=platform", "--webhook-port=0"} {
		if !strings.Contains(args, want) {
			t.Errorf("controller args %q lack %s", args, want)
		}
	}
	// The controller process runs with the chart's budget store and OTLP
	// settings and hands them to every router-proxy it deploys.
	var storeArgs, otlpArgs []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--budget-store") {
			storeArgs = append(storeArgs, a)
		}
		if strings.HasPrefix(a, "--otlp-") {
			otlpArgs = append(otlpArgs, a)
		}
	}
	if len(storeArgs) != 3 {
		t.Errorf("chart budget store args %q, want --budget-store, --budget-store-failure and --budget-store-password-secret", storeArgs)
	}
	runControllerAs(t, e, admin, serviceAccountKubeconfig(t, e, ns, "llmkube-llmkube-compile"), ns, append(storeArgs, otlpArgs...), func(dep *appsv1.Deployment) {
		assertProxyHasChartSettings(t, dep)
	})
	applyWebhookChart(ctx, t, e, admin, ns)
}

// assertProxyHasChartSettings checks that a router-proxy the controller
// deployed got the chart's budget store (its flags, its password from
// Secret redis-auth/password) and OTLP collector (the router's audit sink
// is the default, stdout: the proxy still gets the collector, for its
// traces and GenAI metrics).
func assertProxyHasChartSettings(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	pc := dep.Spec.Template.Spec.Containers[0]
	args := strings.Join(pc.Args, " ")
	if !strings.Contains(args, "--budget-store redis://redis.platform:6379/0") || !strings.Contains(args, "--budget-store-failure open") {
		t.Errorf("router-proxy args %q lack the chart's budget store", args)
	}
	env := map[string]string{}
	for _, ev := range pc.Env {
		env[ev.Name] = ev.Value
	}
	if env[wellknown.OTLPEndpointEnv] != "http://otel-collector.observability:4318" || env[wellknown.OTLPHeadersEnv] != "x-tenant=platform" {
		t.Errorf("router-proxy env %+v lacks the chart's OTLP collector", pc.Env)
	}
	i := slices.IndexFunc(pc.Env, func(e corev1.EnvVar) bool { return e.Name == wellknown.BudgetStorePasswordEnv })
	if i < 0 || pc.Env[i].ValueFrom == nil || pc.Env[i].ValueFrom.SecretKeyRef == nil ||
		pc.Env[i].ValueFrom.SecretKeyRef.Name != "redis-auth" || pc.Env[i].ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("router-proxy env %+v does not read %s from Secret redis-auth/password", pc.Env, wellknown.BudgetStorePasswordEnv)
	}
}

// applyWebhookChart renders the chart with the webhook on: its Service and
// configuration are accepted too, and the configuration points at the
// release's Service.
func applyWebhookChart(ctx context.Context, t *testing.T, e *testenv.Env, admin client.Client, ns string) {
	t.Helper()
	whObjs := objectsOf(t, helmTemplate(t, ns, "webhook.enabled=true", "webhook.caBundle="+base64.StdEncoding.EncodeToString([]byte("not-a-real-ca"))))
	var vwc *unstructured.Unstructured
	for _, o := range whObjs {
		if o.GetKind() == "ValidatingWebhookConfiguration" {
			vwc = o
		}
		if o.GetKind() == "Service" || o.GetKind() == "Deployment" {
			if err := e.ApplyStrict(ctx, o); err != nil {
				t.Fatalf("applying %s: %v", testenv.Describe(o), err)
			}
		}
	}
	if vwc == nil {
		t.Fatal("webhook.enabled renders no ValidatingWebhookConfiguration")
	}
	path, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
	b, _ := yaml.Marshal(path)
	if !strings.Contains(string(b), "/validate-inference-llmkube-dev-v1alpha1-modelrouter") || !strings.Contains(string(b), "name: llmkube-llmkube-compile-webhook") {
		t.Errorf("webhooks do not point at the release's Service:\n%s", b)
	}
	// Applied last and deleted at once: with failurePolicy Fail and no pod
	// behind the Service, it would refuse every later router.
	if err := e.ApplyStrict(ctx, vwc); err != nil {
		t.Fatalf("applying %s: %v", testenv.Describe(vwc), err)
	}
	if err := admin.Delete(ctx, vwc); err != nil {
		t.Fatal(err)
	}
}

// TestHelmChartVersions: the chart installs this release.
func TestHelmChartVersions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "charts", "llmkube-compile", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != version.Release || "v"+chart.Version != version.Release {
		t.Errorf("Chart.yaml version %s appVersion %s, want the release %s", chart.Version, chart.AppVersion, version.Release)
	}
}
