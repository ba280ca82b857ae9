package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

// env is the package's one API server.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.RunMain(m, &env) }

// TestContextEndsWithTheTest: Context's context is live during the test,
// bounded by CallTimeout, and cancelled when the test ends.
func TestContextEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("calls", func(t *testing.T) {
		ctx = testenv.Context(t)
		require.NoError(t, ctx.Err())
		deadline, ok := ctx.Deadline()
		require.True(t, ok, "bounded")
		assert.WithinDuration(t, time.Now().Add(testenv.CallTimeout), deadline, time.Minute)
	})
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "cancelled when the test ended")
}

func TestStartedServer(t *testing.T) {
	t.Logf("etcd + kube-apiserver start and CRD install took %s (CRDs: %d in %s)",
		env.StartDuration, len(env.CRDs), env.CRDInstallDuration)
	require.NotNil(t, env.Config)
	require.NotNil(t, env.Client)
	// Start(t) hands back the package's shared server once StartMain ran.
	assert.Same(t, env, testenv.Start(t))

	// The API server is the one built from k8s.io/kubernetes v1.37.2.
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	v, err := dc.ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, "v1.37.2", v.GitVersion)
	var nsList corev1.NamespaceList
	require.NoError(t, env.Client.List(testenv.Context(t), &nsList))
	assert.NotEmpty(t, nsList.Items)
}

func TestCRDSelection(t *testing.T) {
	names := map[string]bool{}
	for _, c := range env.CRDs {
		assert.False(t, names[c.Name], "CRD %s installed twice", c.Name)
		names[c.Name] = true
	}
	for _, want := range []string{
		"httproutes.gateway.networking.k8s.io",
		"gateways.gateway.networking.k8s.io",
		"referencegrants.gateway.networking.k8s.io",
		"gatewayclasses.gateway.networking.k8s.io",
		"inferencepools.inference.networking.k8s.io",
		"inferenceobjectives.inference.networking.x-k8s.io",
		"inferenceobjectives.llm-d.ai",
		"aigatewayroutes.aigateway.envoyproxy.io", // license comment + `---` first
		"aiservicebackends.aigateway.envoyproxy.io",
		"backendsecuritypolicies.aigateway.envoyproxy.io",
		"backends.gateway.envoyproxy.io",
		"backendtrafficpolicies.gateway.envoyproxy.io",
		"securitypolicies.gateway.envoyproxy.io",
		"clienttrafficpolicies.gateway.envoyproxy.io", // from the envoyproxy/gateway module
		"agentgatewaybackends.agentgateway.dev",
		"agentgatewaypolicies.agentgateway.dev",
		"agentgatewaymodels.agentgateway.dev",
		"modelrouters.inference.llmkube.dev",
		"inferenceservices.inference.llmkube.dev",
		"modelpools.inference.llmkube.dev",
	} {
		assert.True(t, names[want], "CRD %s not installed", want)
	}

	// With a generated CRD in config/crd, ours replaces the upstream ModelRouter.
	own := filepath.Join(env.RepoRoot, "config", "crd", "inference.llmkube.dev_modelrouters.yaml")
	if _, err := os.Stat(own); err == nil {
		data, err := os.ReadFile(own)
		require.NoError(t, err)
		var ours apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.Unmarshal(data, &ours))
		found := 0
		for _, c := range env.CRDs {
			if c.Name == "modelrouters.inference.llmkube.dev" {
				found++
				assert.Equal(t, ours.Spec, c.Spec, "config/crd's ModelRouter CRD replaces ../shared/crds/llmkube's")
			}
		}
		assert.Equal(t, 1, found)
	}

	// agentgateway/release-v1.4.1 duplicates the top-level files and is excluded:
	// loading it too would have made LoadCRDs fail on a duplicate name.
	_, err := testenv.LoadCRDs(env.RepoRoot)
	require.NoError(t, err)
}

func TestMissingAssetsFailWithHint(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := testenv.AssetsDir()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make envtest")

	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err = testenv.AssetsDir()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kube-apiserver")
	assert.Contains(t, err.Error(), "make envtest")
}

const validCore = `
# leading comment, then an empty document
---
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: placeholder
data:
  key: value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: placeholder
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: registry.example/web:1.0
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: placeholder
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
`

func TestValidCoreObjectsApply(t *testing.T) {
	ctx := testenv.Context(t)
	ns := env.NewNamespace(t)
	errs := env.ApplyYAMLInNamespace(ctx, ns, []byte(validCore))
	require.Empty(t, errs)

	var dep appsv1.Deployment
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &dep))
	assert.Equal(t, "registry.example/web:1.0", dep.Spec.Template.Spec.Containers[0].Image)
	var svc corev1.Service
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &svc))
	assert.NotEmpty(t, svc.Spec.ClusterIP, "the API server allocated a ClusterIP")
	var cm corev1.ConfigMap
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cfg"}, &cm))
	assert.Equal(t, "value", cm.Data["key"])

	// Server-side apply is idempotent: the same documents apply again.
	require.Empty(t, env.ApplyYAMLInNamespace(ctx, ns, []byte(validCore)))
}

func TestApplyCreatesMissingNamespace(t *testing.T) {
	ctx := testenv.Context(t)
	objs := testenv.Objects(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: created-by-apply-strict
`)
	require.NoError(t, env.ApplyStrict(ctx, objs[0]))
	var ns corev1.Namespace
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: "created-by-apply-strict"}, &ns))
	assert.NotEmpty(t, objs[0].GetUID(), "obj holds what the server stored")
}

const bogusDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bogus
  namespace: placeholder
spec:
  selector:
    matchLabels: {app: bogus}
  template:
    metadata:
      labels: {app: bogus}
    spec:
      containers:
      - name: app
        image: registry.example/web:1.0
        bogus: true
`

func TestUnknownFieldRejected(t *testing.T) {
	ctx := testenv.Context(t)
	ns := env.NewNamespace(t)

	obj := testenv.Objects(t, bogusDeployment)[0]
	env.SetNamespace(ns, obj)
	require.Equal(t, ns, obj.GetNamespace())
	err := env.ApplyStrict(ctx, obj)
	require.Error(t, err, "server-side apply must reject an unknown field")
	assert.Contains(t, err.Error(), "bogus")
	t.Logf("apply error: %v", err)

	obj = testenv.Objects(t, bogusDeployment)[0]
	env.SetNamespace(ns, obj)
	err = env.CreateStrict(ctx, obj)
	require.Error(t, err, "strict create must reject an unknown field")
	assert.Contains(t, err.Error(), "spec.template.spec.containers[0].bogus")
	t.Logf("create error: %v", err)

	var dep appsv1.Deployment
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bogus"}, &dep)
	assert.True(t, apierrors.IsNotFound(err), "nothing was stored: %v", err)

	// Through ApplyYAML, the error names the document's kind and name.
	errs := env.ApplyYAMLInNamespace(ctx, ns, []byte(validCore+"---\n"+bogusDeployment))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "Deployment "+ns+"/bogus")
	assert.Contains(t, errs[0].Error(), "bogus")
}

func TestDuplicateKeyRejected(t *testing.T) {
	_, err := testenv.DecodeYAML([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n"))
	require.Error(t, err)
	errs := env.ApplyYAML(testenv.Context(t), []byte("apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: a, namespace: default}\n"))
	require.Len(t, errs, 1)
}

func inferencePool(ns, body string) string {
	return `
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata:
  name: pool
  namespace: ` + ns + `
spec:
` + body
}

func TestInferencePoolSchemaAndCEL(t *testing.T) {
	ctx := testenv.Context(t)
	ns := env.NewNamespace(t)

	valid := inferencePool(ns, `
  selector:
    matchLabels: {app: vllm}
  targetPorts:
  - number: 8000
  endpointPickerRef:
    name: pool-epp
    port:
      number: 9002
`)
	require.Empty(t, env.ApplyYAML(ctx, []byte(valid)))
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("inference.networking.k8s.io/v1")
	got.SetKind("InferencePool")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, got))
	kind, _, _ := unstructured.NestedString(got.Object, "spec", "endpointPickerRef", "kind")
	assert.Equal(t, "Service", kind, "schema default applied by the server")

	cases := []struct {
		name, body string
		wantErr    []string
	}{
		{
			name: "cel-port-required-for-service",
			body: `
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: pool-epp}
`,
			wantErr: []string{"port is required when kind is 'Service'"},
		},
		{
			name: "cel-unique-ports",
			body: `
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: 8000}, {number: 8000}]
  endpointPickerRef: {name: pool-epp, port: {number: 9002}}
`,
			wantErr: []string{"port number must be unique"},
		},
		{
			name: "schema-maximum",
			body: `
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: 70000}]
  endpointPickerRef: {name: pool-epp, port: {number: 9002}}
`,
			wantErr: []string{"spec.targetPorts[0].number", "65535"},
		},
		{
			name: "schema-required",
			body: `
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: pool-epp, port: {number: 9002}}
`,
			wantErr: []string{"spec.selector", "Required"},
		},
		{
			name: "unknown-field",
			body: `
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: pool-epp, port: {number: 9002}}
  bogusField: 1
`,
			wantErr: []string{"bogusField"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			errs := env.ApplyYAML(ctx, []byte(inferencePool(ns, tc.body)))
			require.Len(t, errs, 1, "the API server must reject this InferencePool")
			for _, want := range tc.wantErr {
				assert.Contains(t, errs[0].Error(), want)
			}
			assert.Contains(t, errs[0].Error(), "InferencePool "+ns+"/pool")
			t.Logf("rejected: %v", errs[0])

			// A strict create (no server-side apply) is rejected the same way.
			obj := testenv.Objects(t, inferencePool(ns, tc.body))[0]
			err := env.CreateStrict(ctx, obj)
			require.Error(t, err)
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestHTTPRouteAccepted(t *testing.T) {
	ctx := testenv.Context(t)
	ns := env.NewNamespace(t)
	route := `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: llm
  namespace: somewhere-else
spec:
  parentRefs:
  - name: gateway
  hostnames: ["llm.example.com"]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /v1}
    backendRefs:
    - group: inference.networking.k8s.io
      kind: InferencePool
      name: pool
  - backendRefs:
    - name: web
      port: 80
`
	require.Empty(t, env.ApplyYAMLInNamespace(ctx, ns, []byte(route)))
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("gateway.networking.k8s.io/v1")
	got.SetKind("HTTPRoute")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "llm"}, got))
	rules, _, _ := unstructured.NestedSlice(got.Object, "spec", "rules")
	assert.Len(t, rules, 2)

	// The HTTPRoute CEL rules run too: a core Service backendRef needs a port.
	bad := strings.Replace(route, "      port: 80\n", "", 1)
	bad = strings.Replace(bad, "name: llm", "name: llm-bad", 1)
	errs := env.ApplyYAMLInNamespace(ctx, ns, []byte(bad))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "port")
	t.Logf("rejected: %v", errs[0])
}

func TestSetNamespaceLeavesClusterScopedAlone(t *testing.T) {
	objs := testenv.Objects(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: example.com/controller}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
`)
	env.SetNamespace("target", objs...)
	assert.Equal(t, "", objs[0].GetNamespace())
	assert.Equal(t, "target", objs[1].GetNamespace())
	require.NoError(t, env.ApplyStrict(testenv.Context(t), objs[0]))
}
