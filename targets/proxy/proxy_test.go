package proxy_test

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets/proxy"
)

func compile(t *testing.T, spec string) (*ir.Router, map[string]*unstructured.Unstructured) {
	t.Helper()
	doc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat, namespace: ns}\nspec:\n" + spec
	in := &compiler.Inputs{}
	d := in.Decode("t.yaml", []byte(doc))
	require.False(t, d.HasErrors(), "%v", d.Err())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	res, diags := proxy.New().Compile(r)
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	assert.NotEmpty(t, res.Summary)
	assert.Subset(t, proxy.New().Kinds(), res.Kinds(), "every emitted kind is listed in Kinds()")
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range res.Objects {
		byKey[o.GetKind()+"/"+o.GetName()] = o
	}
	return r, byKey
}

func as[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	require.NotNil(t, u)
	var out T
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out))
	return &out
}

const backends = `  backends:
    - name: local
      inferenceServiceRef: {name: qwen}
    - name: cloud
      external: {provider: openai, model: gpt-5, credentialsSecretRef: {name: openai}}
    - name: cloud-two
      external: {provider: openai, model: gpt-5-mini, credentialsSecretRef: {name: other}}
  defaultRoute: local
`

func TestObjectsAndConfigHash(t *testing.T) {
	_, objs := compile(t, backends)
	assert.Len(t, objs, 4)
	cm := as[corev1.ConfigMap](t, objs["ConfigMap/chat-router-proxy"])
	data := cm.Data[proxy.ConfigFile]
	sum := sha256.Sum256([]byte(data))
	hash := hex.EncodeToString(sum[:])
	assert.Equal(t, hash, cm.Annotations["inference.llmkube.dev/router-config-hash"])
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	assert.Equal(t, hash, d.Spec.Template.Annotations["inference.llmkube.dev/router-config-hash"])

	cfg, err := proxyapi.Parse(strings.NewReader(data))
	require.NoError(t, err, "the proxy accepts what the compiler emits")
	assert.Equal(t, "chat", cfg.Router.Name)
	assert.Len(t, cfg.Backends, 3)

	for _, o := range objs {
		assert.Equal(t, "ns", o.GetNamespace())
		assert.Equal(t, "chat", o.GetLabels()["inference.llmkube.dev/model-router"])
		assert.Equal(t, "llmkube-compile", o.GetLabels()["app.kubernetes.io/managed-by"])
		assert.Empty(t, o.GetOwnerReferences(), "no uid offline, so no owner reference")
	}
	assert.NotContains(t, objs, "ServiceAccount/chat-router-proxy", "no RBAC without pools or endpoint resolution")
	assert.False(t, *d.Spec.Template.Spec.AutomountServiceAccountToken)
}

// TestConfigHashFromThePodsAnnotation: the router-proxy learns the hash of
// the config its template was rendered with from the pod's own annotation
// (the downward API), which is the ConfigMap's hash: the proxy refuses a
// mounted file of another generation (cmd/router-proxy
// TestConfigOfAnotherGenerationIsRefused).
func TestConfigHashFromThePodsAnnotation(t *testing.T) {
	_, objs := compile(t, backends)
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	cm := as[corev1.ConfigMap](t, objs["ConfigMap/chat-router-proxy"])
	var ref *corev1.ObjectFieldSelector
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == wellknown.ConfigHashEnv {
			ref = e.ValueFrom.FieldRef
		}
	}
	require.NotNil(t, ref, "no %s", wellknown.ConfigHashEnv)
	assert.Equal(t, "metadata.annotations['inference.llmkube.dev/router-config-hash']", ref.FieldPath)
	hash := d.Spec.Template.Annotations["inference.llmkube.dev/router-config-hash"]
	sum := sha256.Sum256([]byte(cm.Data[proxy.ConfigFile]))
	assert.Equal(t, hex.EncodeToString(sum[:]), hash)
}

func TestCredentialsAreReferencesScopedPerBackend(t *testing.T) {
	_, objs := compile(t, backends)
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	env := d.Spec.Template.Spec.Containers[0].Env
	require.Len(t, env, 3)
	// The first is the config's generation (TestConfigHashFromThePodsAnnotation).
	assert.Equal(t, wellknown.ConfigHashEnv, env[0].Name)
	env = env[1:]
	assert.Equal(t, "LLMKUBE_CLOUD_OPENAI_API_KEY", env[0].Name)
	assert.Equal(t, "openai", env[0].ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, "OPENAI_API_KEY", env[0].ValueFrom.SecretKeyRef.Key)
	assert.Equal(t, "LLMKUBE_CLOUD_TWO_OPENAI_API_KEY", env[1].Name)
	assert.Equal(t, "other", env[1].ValueFrom.SecretKeyRef.Name)
	for _, e := range env {
		assert.Empty(t, e.Value, "never a literal value")
	}
}

func TestServiceExposure(t *testing.T) {
	_, objs := compile(t, backends+`  endpoint: {type: NodePort, port: 80, nodePort: 30080, externalTrafficPolicy: Local}
  proxy: {serviceName: llmkube}
`)
	svc := as[corev1.Service](t, objs["Service/llmkube"])
	assert.Equal(t, corev1.ServiceTypeNodePort, svc.Spec.Type)
	assert.EqualValues(t, 80, svc.Spec.Ports[0].Port)
	assert.EqualValues(t, 8080, svc.Spec.Ports[0].TargetPort.IntValue(), "targetPort is always the container port")
	assert.EqualValues(t, 30080, svc.Spec.Ports[0].NodePort)
	assert.Equal(t, corev1.ServiceExternalTrafficPolicyLocal, svc.Spec.ExternalTrafficPolicy)
	assert.Contains(t, objs, "Service/chat-router-proxy-admin", "admin Service keeps its generated name")
	assert.NotContains(t, objs, "Service/chat-router-proxy")
	assert.Contains(t, objs, "Deployment/chat-router-proxy")
}

func TestDeploymentPassthroughAndMerges(t *testing.T) {
	_, objs := compile(t, backends+`  proxy:
    replicas: 3
    drainTimeout: 90s
    revisionHistoryLimit: 0
    runtimeClassName: gvisor
    nodeSelector: {pool: cpu}
    imagePullSecrets: [{name: regcred}]
    tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
    topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: chat-router-proxy}}
    podLabels: {app: hijack, team: a}
    podAnnotations: {inference.llmkube.dev/router-config-hash: nope, note: hi}
    resources: {requests: {cpu: 100m}}
`)
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	s := d.Spec
	assert.EqualValues(t, 3, *s.Replicas)
	assert.EqualValues(t, 0, *s.RevisionHistoryLimit)
	assert.EqualValues(t, 95, *s.Template.Spec.TerminationGracePeriodSeconds, "drain + 5s")
	assert.Contains(t, strings.Join(s.Template.Spec.Containers[0].Args, " "), "--shutdown-timeout 1m30s")
	assert.Equal(t, "gvisor", *s.Template.Spec.RuntimeClassName)
	assert.Equal(t, map[string]string{"pool": "cpu"}, s.Template.Spec.NodeSelector)
	assert.Equal(t, "regcred", s.Template.Spec.ImagePullSecrets[0].Name)
	assert.Equal(t, "gpu", s.Template.Spec.Tolerations[0].Key)
	assert.Equal(t, "chat-router-proxy", s.Template.Labels["app"], "operator label wins")
	assert.Equal(t, "a", s.Template.Labels["team"])
	assert.NotEqual(t, "nope", s.Template.Annotations["inference.llmkube.dev/router-config-hash"], "operator annotation wins")
	assert.Equal(t, "hi", s.Template.Annotations["note"])
	assert.Equal(t, map[string]string{"app": "chat-router-proxy", "inference.llmkube.dev/model-router": "chat"}, s.Selector.MatchLabels)
	require.NotNil(t, s.Strategy.RollingUpdate)
	assert.EqualValues(t, 0, s.Strategy.RollingUpdate.MaxSurge.IntValue())
	assert.EqualValues(t, 1, s.Strategy.RollingUpdate.MaxUnavailable.IntValue())
	assert.Equal(t, "100m", s.Template.Spec.Containers[0].Resources.Requests.Cpu().String())
	assert.Nil(t, s.Template.Spec.Containers[0].Resources.Limits, "explicit resources pass through unchanged")
}

func TestNoDrainRendersNothing(t *testing.T) {
	_, objs := compile(t, backends+"  proxy: {replicas: 2}\n")
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	assert.Nil(t, d.Spec.Template.Spec.TerminationGracePeriodSeconds)
	assert.NotContains(t, strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "), "--shutdown-timeout")
	assert.Nil(t, d.Spec.Strategy.RollingUpdate, "surge is fine without hard spreading")
}

// TestPodDisruptionBudget: more than one replica gets a budget that lets a
// drain evict one pod at a time, selecting exactly the Deployment's pods;
// one replica gets none unless asked; enabled: false and maxUnavailable
// override it.
func TestPodDisruptionBudget(t *testing.T) {
	const name = "PodDisruptionBudget/chat-router-proxy"
	_, objs := compile(t, backends+"  proxy: {replicas: 3}\n")
	pdb := as[policyv1.PodDisruptionBudget](t, objs[name])
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MaxUnavailable)
	assert.Nil(t, pdb.Spec.MinAvailable)
	assert.Equal(t, d.Spec.Selector, pdb.Spec.Selector, "the budget covers exactly the Deployment's pods")
	assert.Equal(t, "ns", pdb.Namespace)

	_, objs = compile(t, backends)
	assert.NotContains(t, objs, name, "one replica: a budget would block drains or allow everything")

	_, objs = compile(t, backends+"  proxy: {replicas: 3, podDisruptionBudget: {maxUnavailable: 2}}\n")
	assert.Equal(t, intstr.FromInt32(2), *as[policyv1.PodDisruptionBudget](t, objs[name]).Spec.MaxUnavailable)

	_, objs = compile(t, backends+"  proxy: {replicas: 3, podDisruptionBudget: {enabled: false}}\n")
	assert.NotContains(t, objs, name)

	_, objs = compile(t, backends+"  proxy: {podDisruptionBudget: {enabled: true}}\n")
	assert.Contains(t, objs, name, "asked for with one replica")
}

func TestRequiredAntiAffinityDisablesSurge(t *testing.T) {
	_, objs := compile(t, backends+`  proxy:
    replicas: 2
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: chat-router-proxy}}
`)
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	require.NotNil(t, d.Spec.Strategy.RollingUpdate)
	assert.EqualValues(t, 0, d.Spec.Strategy.RollingUpdate.MaxSurge.IntValue())
}

func TestAuditFileGetsAWritableVolume(t *testing.T) {
	_, objs := compile(t, backends+"  policy: {auditLog: {sink: file, filePath: /var/log/llmkube/audit.log}}\n")
	d := as[appsv1.Deployment](t, objs["Deployment/chat-router-proxy"])
	mounts := d.Spec.Template.Spec.Containers[0].VolumeMounts
	require.Len(t, mounts, 2)
	assert.Equal(t, "/var/log/llmkube", mounts[1].MountPath)
	assert.NotNil(t, d.Spec.Template.Spec.Volumes[1].EmptyDir)
}

func TestPooledAndEndpointBackendsGetRBAC(t *testing.T) {
	doc := `apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: chat, namespace: ns, uid: 5f0e}
spec:
  backends:
    - name: a
      inferenceServiceRef: {name: a}
      resolution: endpoint
    - name: b
      inferenceServiceRef: {name: b}
  defaultRoute: a
  proxy: {replicas: 4}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelPool
metadata: {name: slot, namespace: ns}
spec: {members: [{inferenceServiceRef: {name: b}}, {inferenceServiceRef: {name: c}}], swapBudget: 2m}
`
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	res, _ := proxy.New().Compile(r)
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range res.Objects {
		kinds[o.GetKind()] = o
		require.Len(t, o.GetOwnerReferences(), 1, "uid known: owner reference on %s", o.GetKind())
		assert.Equal(t, "ModelRouter", o.GetOwnerReferences()[0].Kind)
	}
	require.Contains(t, kinds, "Role")
	require.Contains(t, kinds, "RoleBinding")
	require.Contains(t, kinds, "ServiceAccount")
	role := as[rbacv1.Role](t, kinds["Role"])
	assert.Equal(t, []rbacv1.PolicyRule{
		// Activation: exactly the members and the pool's Lease.
		{APIGroups: []string{"inference.llmkube.dev"}, Resources: []string{"inferenceservices"}, ResourceNames: []string{"b", "c"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"llmkube-pool-slot"}, Verbs: []string{"get", "update"}},
		// Endpoint resolution.
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	}, role.Rules)
	d := as[appsv1.Deployment](t, kinds["Deployment"])
	assert.EqualValues(t, 4, *d.Spec.Replicas, "honoured: the pool's Lease serializes swaps across replicas")
	assert.Equal(t, "chat-router-proxy", d.Spec.Template.Spec.ServiceAccountName)
	env := d.Spec.Template.Spec.Containers[0].Env
	require.NotEmpty(t, env)
	last := env[len(env)-1]
	assert.Equal(t, "POD_NAME", last.Name, "the Lease holder identity")
	assert.Equal(t, "metadata.name", last.ValueFrom.FieldRef.FieldPath)

	cfg, err := proxyapi.Parse(strings.NewReader(kinds["ConfigMap"].Object["data"].(map[string]any)[proxy.ConfigFile].(string)))
	require.NoError(t, err)
	require.NotNil(t, cfg.Backends[0].Endpoints)
	assert.Equal(t, "RoundRobin", cfg.Backends[0].Endpoints.Balancing.Mode)
	require.NotNil(t, cfg.Backends[1].Pool)
	assert.Equal(t, []string{"b", "c"}, cfg.Backends[1].Pool.Members)
	assert.Equal(t, "2m0s", cfg.Backends[1].Pool.SwapBudget.String())
}

// TestOTLPSinkNeedsTheOperatorsCollector: sink otlp without an endpoint is
// refused, never rendered to lose every record; with one, the SDK's standard
// variables point at it, and header credentials stay in their Secret.
func TestOTLPSinkNeedsTheOperatorsCollector(t *testing.T) {
	doc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat, namespace: ns}\nspec:\n" + backends + "  policy: {auditLog: {sink: otlp}}\n"
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
	render := func(s platform.Settings) (*appsv1.Deployment, diag.List) {
		r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{Operator: s})
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		res, diags := proxy.New().Compile(r)
		if diags.HasErrors() {
			return nil, diags
		}
		for _, o := range res.Objects {
			if o.GetKind() == "Deployment" {
				return as[appsv1.Deployment](t, o), diags
			}
		}
		t.Fatal("no Deployment")
		return nil, nil
	}
	_, diags := render(platform.Settings{})
	require.True(t, diags.HasErrors())
	assert.Equal(t, "spec.policy.auditLog.sink", diags.Errors()[0].Field)
	assert.Equal(t, "OTLPEndpointMissing", diags.Errors()[0].Reason)
	assert.Contains(t, diags.Errors()[0].Message, "--otlp-endpoint")

	d, _ := render(platform.Settings{OTLP: platform.OTLP{Endpoint: "http://otel:4318", HeadersSecret: "otlp/headers"}})
	env := map[string]corev1.EnvVar{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	assert.Equal(t, "http://otel:4318", env["OTEL_EXPORTER_OTLP_ENDPOINT"].Value)
	h := env["OTEL_EXPORTER_OTLP_HEADERS"]
	require.NotNil(t, h.ValueFrom)
	assert.Empty(t, h.Value)
	assert.Equal(t, "otlp", h.ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, "headers", h.ValueFrom.SecretKeyRef.Key)

}

// TestOperatorCollectorReachesEveryProxy: the operator's collector is
// rendered into every router-proxy, whatever its audit sink, so each exports
// its traces and GenAI metrics; the audit sink stays the config's (stdout
// here: the router-proxy picks its sink from policy.audit.sink, never from
// the environment). Without an operator endpoint nothing is rendered, so
// the Deployment of an existing router does not change on upgrade.
func TestOperatorCollectorReachesEveryProxy(t *testing.T) {
	for _, policy := range []string{"", "  policy: {auditLog: {sink: stdout}}\n", "  policy: {auditLog: {sink: file}}\n"} {
		doc := "apiVersion: inference.llmkube.dev/v1alpha1\nkind: ModelRouter\nmetadata: {name: chat, namespace: ns}\nspec:\n" + backends + policy
		in := &compiler.Inputs{}
		require.False(t, in.Decode("t.yaml", []byte(doc)).HasErrors())
		render := func(s platform.Settings) (*appsv1.Deployment, *proxyapi.Config, string) {
			r, diags := compiler.Compile(in.Routers[0].Router, in, compiler.Options{Operator: s})
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			res, diags := proxy.New().Compile(r)
			require.False(t, diags.HasErrors(), "%v", diags.Err())
			var d *appsv1.Deployment
			var data string
			for _, o := range res.Objects {
				switch o.GetKind() {
				case "Deployment":
					d = as[appsv1.Deployment](t, o)
				case "ConfigMap":
					data = as[corev1.ConfigMap](t, o).Data[proxy.ConfigFile]
				}
			}
			require.NotNil(t, d)
			cfg, err := proxyapi.Parse(strings.NewReader(data))
			require.NoError(t, err)
			return d, cfg, data
		}
		otel := func(d *appsv1.Deployment) map[string]corev1.EnvVar {
			env := map[string]corev1.EnvVar{}
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if strings.HasPrefix(e.Name, "OTEL_") {
					env[e.Name] = e
				}
			}
			return env
		}
		name := cmp.Or(policy, "no policy")

		bare, bareCfg, bareData := render(platform.Settings{})
		assert.Empty(t, otel(bare), "%s: no operator endpoint renders no OTEL_ variable", name)

		d, cfg, data := render(platform.Settings{OTLP: platform.OTLP{Endpoint: "http://otel:4318", Headers: map[string]string{"x-tenant": "edge"}}})
		env := otel(d)
		assert.Equal(t, map[string]corev1.EnvVar{
			wellknown.OTLPEndpointEnv: {Name: wellknown.OTLPEndpointEnv, Value: "http://otel:4318"},
			wellknown.OTLPHeadersEnv:  {Name: wellknown.OTLPHeadersEnv, Value: "x-tenant=edge"},
		}, env, "%s: the operator's collector reaches the proxy", name)
		assert.NotEqual(t, proxyapi.SinkOTLP, cfg.Policy.Audit.Sink, "%s: the audit sink is not switched to otlp", name)
		assert.Equal(t, bareCfg.Policy.Audit.Sink, cfg.Policy.Audit.Sink, name)
		assert.Equal(t, bareData, data, "%s: the runtime config does not depend on the collector", name)
		if strings.Contains(policy, "stdout") || policy == "" {
			assert.Contains(t, []proxyapi.AuditSink{"", proxyapi.SinkStdout}, cfg.Policy.Audit.Sink, "%s: audit stays on stdout", name)
		}

		// With the variables removed, the Deployment is the one rendered
		// without an endpoint: nothing else changes.
		var kept []corev1.EnvVar
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if !strings.HasPrefix(e.Name, "OTEL_") {
				kept = append(kept, e)
			}
		}
		d.Spec.Template.Spec.Containers[0].Env = kept
		assert.Equal(t, bare, d, name)
	}
}
