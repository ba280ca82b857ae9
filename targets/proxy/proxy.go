// Package proxy is the default data plane: the router-proxy's runtime config
// plus the ConfigMap, Deployment, Service and admin Service that run it (and,
// when the proxy needs to read the cluster, its ServiceAccount and RBAC).
package proxy

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets"
)

// Container contract of the router-proxy image.
const (
	ContainerName = "router-proxy"
	// HTTPPort serves OpenAI-compatible traffic; every Service targets it.
	HTTPPort int32 = 8080
	// AdminPort serves /metrics, /ready and the status endpoint.
	AdminPort = wellknown.AdminPort
	// ConfigDir is where the ConfigMap is mounted.
	ConfigDir = wellknown.ConfigMount
	// ConfigFile is the key of the runtime config in the ConfigMap.
	ConfigFile = wellknown.ConfigFile
	// drainMargin is added to drainTimeout for terminationGracePeriodSeconds so
	// the kubelet does not SIGKILL before the drain ends.
	drainMargin = 5
	component   = "router-proxy"
)

// Target emits the Proxy data plane.
type Target struct{}

// New returns the Proxy target.
func New() *Target { return &Target{} }

// DataPlane implements targets.Target.
func (*Target) DataPlane() ir.DataPlane { return ir.DataPlaneProxy }

// Kinds implements targets.Target.
func (*Target) Kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		rbacv1.SchemeGroupVersion.WithKind("Role"),
		rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
	}
}

// Compile implements targets.Target.
func (*Target) Compile(r *ir.Router) (*targets.Result, diag.List) {
	var diags diag.List
	if r.Policy.Audit.Sink == ir.AuditSinkOTLP && r.OTLP == nil {
		// Without a collector the SDK exports to localhost:4318 inside the
		// pod, where nothing listens: every audit record would be lost.
		diags.ErrorAt(diag.Spec("policy", "auditLog", "sink"), ReasonOTLPEndpointMissing,
			"sink otlp needs the operator's OTLP collector: set --%s (CLI and controller) or the Helm value otlp.endpoint", platform.FlagOTLPEndpoint)
		return nil, diags
	}
	cfg := RuntimeConfig(r)
	if err := cfg.Validate(); err != nil {
		// The frontend guarantees these invariants; reaching here is a compiler bug.
		diags.ErrorAt(diag.Spec(), targets.ReasonInternalError, "generated router-proxy config is invalid: %v", err)
		return nil, diags
	}
	data, err := proxyapi.Marshal(cfg)
	if err != nil {
		diags.ErrorAt(diag.Spec(), targets.ReasonInternalError, "marshal router-proxy config: %v", err)
		return nil, diags
	}
	hash := proxyapi.Hash(data)

	e := &emitter{r: r, name: naming.ProxyName(r.Name), owners: targets.OwnerReferences(r)}
	typed := []targets.Typed{
		{Obj: e.configMap(data, hash), GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		{Obj: e.deployment(hash), GVK: appsv1.SchemeGroupVersion.WithKind("Deployment")},
		{Obj: e.service(), GVK: corev1.SchemeGroupVersion.WithKind("Service")},
		{Obj: e.adminService(), GVK: corev1.SchemeGroupVersion.WithKind("Service")},
	}
	if rules := e.rbacRules(); len(rules) > 0 {
		typed = append(typed,
			targets.Typed{Obj: e.serviceAccount(), GVK: corev1.SchemeGroupVersion.WithKind("ServiceAccount")},
			targets.Typed{Obj: e.role(rules), GVK: rbacv1.SchemeGroupVersion.WithKind("Role")},
			targets.Typed{Obj: e.roleBinding(), GVK: rbacv1.SchemeGroupVersion.WithKind("RoleBinding")},
		)
	}
	if r.Proxy.MaxUnavailable > 0 {
		typed = append(typed, targets.Typed{Obj: e.disruptionBudget(), GVK: policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")})
	}
	res, more := targets.NewResult(typed, summary(r))
	return res, append(diags, more...)
}

type emitter struct {
	r      *ir.Router
	name   string
	owners []metav1.OwnerReference
}

func (e *emitter) meta(name string) metav1.ObjectMeta {
	labels := naming.ObjectLabels(e.r.Name, component)
	for k, v := range naming.SelectorLabels(e.r.Name) {
		labels[k] = v
	}
	return metav1.ObjectMeta{Name: name, Namespace: e.r.Namespace, Labels: labels, OwnerReferences: e.owners}
}

func (e *emitter) configMap(data []byte, hash string) *corev1.ConfigMap {
	m := e.meta(e.name)
	m.Annotations = map[string]string{naming.ConfigHashAnnotation: hash}
	return &corev1.ConfigMap{ObjectMeta: m, Data: map[string]string{ConfigFile: string(data)}}
}

// rbacRules lists what the proxy reads from the API server: to
// activate ModelPool members or to watch EndpointSlices. The default
// (service resolution, no pools) needs no RBAC and mounts no token.
func (e *emitter) rbacRules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	if members, leases := e.poolObjects(); len(members) > 0 {
		// Exactly what activation uses (routerproxy/activation/kube): read and
		// scale the pool members, and hold each pool's swap Lease. create
		// cannot be limited by name (the name is not known to the
		// authorizer before the object exists).
		rules = append(rules,
			rbacv1.PolicyRule{APIGroups: []string{"inference.llmkube.dev"}, Resources: []string{"inferenceservices"}, ResourceNames: members, Verbs: []string{"get", "patch"}},
			rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: leases, Verbs: []string{"get", "update"}},
		)
	}
	for i := range e.r.Backends {
		if e.r.Backends[i].Local != nil && e.r.Backends[i].Resolution == ir.ResolutionEndpoint {
			// The Service maps its port to the pods' target port, which the
			// EndpointSlices carry under the Service port's name.
			rules = append(rules,
				rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}},
				rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}})
			break
		}
	}
	return rules
}

// poolObjects lists the pooled backends' members and their pools' Leases,
// sorted.
func (e *emitter) poolObjects() (members, leases []string) {
	seenM, seenL := map[string]bool{}, map[string]bool{}
	for i := range e.r.Backends {
		p := e.r.Backends[i].Pool
		if p == nil {
			continue
		}
		for _, m := range p.Members {
			if !seenM[m] {
				seenM[m] = true
				members = append(members, m)
			}
		}
		if l := wellknown.PoolLeaseName(p.Pool); !seenL[l] {
			seenL[l] = true
			leases = append(leases, l)
		}
	}
	sort.Strings(members)
	sort.Strings(leases)
	return members, leases
}

func (e *emitter) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: e.meta(e.name)}
}

func (e *emitter) role(rules []rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: e.meta(e.name), Rules: rules}
}

func (e *emitter) roleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: e.meta(e.name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: e.name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: e.name, Namespace: e.r.Namespace}},
	}
}

func (e *emitter) service() *corev1.Service {
	x := e.r.Exposure
	port := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: x.Port, TargetPort: intstr.FromInt32(HTTPPort)}
	if x.Type == corev1.ServiceTypeNodePort {
		port.NodePort = x.NodePort
	}
	return &corev1.Service{
		ObjectMeta: e.meta(e.r.Proxy.ServiceName),
		Spec: corev1.ServiceSpec{
			Type:                  x.Type,
			Selector:              naming.SelectorLabels(e.r.Name),
			Ports:                 []corev1.ServicePort{port},
			ExternalTrafficPolicy: x.ExternalTrafficPolicy,
		},
	}
}

func (e *emitter) adminService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: e.meta(naming.ProxyAdminServiceName(e.r.Name)),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: naming.SelectorLabels(e.r.Name),
			Ports:    []corev1.ServicePort{{Name: "admin", Protocol: corev1.ProtocolTCP, Port: AdminPort, TargetPort: intstr.FromInt32(AdminPort)}},
		},
	}
}

func (e *emitter) deployment(hash string) *appsv1.Deployment {
	p := e.r.Proxy
	selector := naming.SelectorLabels(e.r.Name)

	// Operator keys win over the user's pod labels and annotations.
	podLabels := map[string]string{}
	for k, v := range p.PodLabels {
		podLabels[k] = v
	}
	for k, v := range selector {
		podLabels[k] = v
	}
	podAnnotations := map[string]string{}
	for k, v := range p.PodAnnotations {
		podAnnotations[k] = v
	}
	podAnnotations[naming.ConfigHashAnnotation] = hash
	podAnnotations["prometheus.io/scrape"] = "true"
	podAnnotations["prometheus.io/port"] = fmt.Sprint(AdminPort)
	podAnnotations["prometheus.io/path"] = "/metrics"

	args := []string{
		"--config", path.Join(ConfigDir, ConfigFile),
		"--listen", fmt.Sprintf(":%d", HTTPPort),
		"--admin-listen", fmt.Sprintf(":%d", AdminPort),
	}
	if bs := e.r.Policy.BudgetStore; bs != nil {
		args = append(args, "--budget-store", bs.URL, "--budget-store-failure", bs.Failure)
	}
	var grace *int64
	if d := e.r.Timeouts.Drain; d > 0 {
		args = append(args, "--shutdown-timeout", d.String())
		g := int64(math.Ceil(d.Seconds())) + drainMargin
		grace = &g
	}

	volumes := []corev1.Volume{{
		Name:         "router-config",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: e.name}}},
	}}
	mounts := []corev1.VolumeMount{{Name: "router-config", MountPath: ConfigDir, ReadOnly: true}}
	if a := e.r.Policy.Audit; a.Sink == ir.AuditSinkFile {
		// The root filesystem is read-only: the audit file needs a writable volume.
		volumes = append(volumes, corev1.Volume{Name: "audit-log", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "audit-log", MountPath: path.Dir(a.FilePath)})
	}
	kv, km := e.apiKeyVolumes()
	volumes, mounts = append(volumes, kv...), append(mounts, km...)

	f, t := false, true
	uid := int64(65532)
	container := corev1.Container{
		Name:            ContainerName,
		Image:           p.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            args,
		Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
			{Name: "admin", ContainerPort: AdminPort, Protocol: corev1.ProtocolTCP},
		},
		Env:          append(append(append(append(e.configHashEnv(), e.credentialEnv()...), e.otlpEnv()...), e.budgetStoreEnv()...), e.poolEnv()...),
		VolumeMounts: mounts,
		Resources:    resources(p.Resources),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: &f,
			ReadOnlyRootFilesystem:   &t,
			RunAsNonRoot:             &t,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")}},
			PeriodSeconds:    10,
			TimeoutSeconds:   2,
			FailureThreshold: 3,
		},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("admin")}},
			PeriodSeconds:    5,
			TimeoutSeconds:   2,
			FailureThreshold: 3,
		},
	}

	podSpec := corev1.PodSpec{
		Containers:                    []corev1.Container{container},
		Volumes:                       volumes,
		TerminationGracePeriodSeconds: grace,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   &t,
			RunAsUser:      &uid,
			RunAsGroup:     &uid,
			FSGroup:        &uid,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Affinity:                  p.Affinity,
		Tolerations:               p.Tolerations,
		TopologySpreadConstraints: p.TopologySpreadConstraints,
		NodeSelector:              p.NodeSelector,
		ImagePullSecrets:          p.ImagePullSecrets,
	}
	if p.RuntimeClassName != "" {
		rc := p.RuntimeClassName
		podSpec.RuntimeClassName = &rc
	}
	if len(e.rbacRules()) > 0 {
		podSpec.ServiceAccountName = e.name
	} else {
		podSpec.AutomountServiceAccountToken = &f
	}

	replicas := p.Replicas
	history := p.RevisionHistoryLimit
	d := &appsv1.Deployment{
		ObjectMeta: e.meta(e.name),
		Spec: appsv1.DeploymentSpec{
			Replicas:             &replicas,
			RevisionHistoryLimit: &history,
			Selector:             &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
				Spec:       podSpec,
			},
		},
	}
	if replicas > 1 && surgeCannotSchedule(&p) {
		// A surge pod could never be placed next to its siblings: replace in place.
		zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
		d.Spec.Strategy = appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &one},
		}
	}
	return d
}

// disruptionBudget bounds voluntary evictions (a node drain, a cluster
// upgrade) of the router-proxy's pods, so they leave one at a time and the
// others keep serving. It selects the Deployment's pods by the same labels.
func (e *emitter) disruptionBudget() *policyv1.PodDisruptionBudget {
	maxUnavailable := intstr.FromInt32(e.r.Proxy.MaxUnavailable)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: e.meta(e.name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: naming.SelectorLabels(e.r.Name)},
		},
	}
}

// surgeCannotSchedule is true when a DoNotSchedule spread constraint or a
// required pod anti-affinity would keep an extra (surge) pod pending.
func surgeCannotSchedule(p *ir.ProxyDeployment) bool {
	for _, c := range p.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule {
			return true
		}
	}
	return p.Affinity != nil && p.Affinity.PodAntiAffinity != nil &&
		len(p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// credentialEnv exposes each external backend's Secret keys as environment
// variables scoped to that backend, as references, never values. Scoping the
// variable name to the backend lets two backends use different Secrets with
// the same conventional key. The references are optional so a missing key
// marks only its backend unhealthy instead of stopping the whole proxy.
func (e *emitter) credentialEnv() []corev1.EnvVar {
	var env []corev1.EnvVar
	for i := range e.r.Backends {
		x := e.r.Backends[i].External
		if x == nil || x.CredentialsSecret == "" {
			continue
		}
		for _, c := range x.Credentials {
			optional := true
			env = append(env, corev1.EnvVar{
				Name: c.Env,
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: x.CredentialsSecret},
					Key:                  c.Key,
					Optional:             &optional,
				}},
			})
		}
	}
	sort.SliceStable(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	return env
}

// budgetStoreEnv hands the router-proxy the budget store's password from
// its Secret.
func (e *emitter) budgetStoreEnv() []corev1.EnvVar {
	bs := e.r.Policy.BudgetStore
	if bs == nil || bs.PasswordSecret == "" {
		return nil
	}
	return []corev1.EnvVar{{Name: wellknown.BudgetStorePasswordEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: bs.PasswordSecret}, Key: bs.PasswordKey,
	}}}}
}

// configHashEnv hands the router-proxy the hash of the config its template
// was rendered with, from the pod's own annotation, so a pod that mounts
// another generation's ConfigMap (the controller stopped between the two
// writes) refuses to start instead of serving it.
func (e *emitter) configHashEnv() []corev1.EnvVar {
	return []corev1.EnvVar{{Name: wellknown.ConfigHashEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		APIVersion: "v1", FieldPath: "metadata.annotations['" + naming.ConfigHashAnnotation + "']"}}}}
}

// poolEnv names the pod to the router-proxy: the holder identity of the
// pools' swap Leases, unique per replica.
func (e *emitter) poolEnv() []corev1.EnvVar {
	if !e.r.HasPooledBackend() {
		return nil
	}
	return []corev1.EnvVar{{Name: wellknown.PodNameEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
}

// otlpEnv points the router-proxy's OpenTelemetry exporter at the operator's
// collector through the SDK's standard variables, whatever the audit sink:
// the proxy exports its traces and GenAI metrics there, and its audit log
// only when the config's sink is otlp. Header credentials stay in their
// Secret. Without an operator endpoint it renders nothing.
func (e *emitter) otlpEnv() []corev1.EnvVar {
	o := e.r.OTLP
	if o == nil {
		return nil
	}
	env := []corev1.EnvVar{{Name: wellknown.OTLPEndpointEnv, Value: o.Endpoint}}
	switch {
	case o.HeadersSecret != "":
		env = append(env, corev1.EnvVar{Name: wellknown.OTLPHeadersEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.HeadersSecret},
			Key:                  o.HeadersSecretKey,
		}}})
	case o.Headers != "":
		env = append(env, corev1.EnvVar{Name: wellknown.OTLPHeadersEnv, Value: o.Headers})
	}
	return env
}

// resources passes the spec's requirements through; with none at all it
// requests a small footprint and caps memory, leaving CPU unthrottled.
func resources(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	if len(r.Requests) > 0 || len(r.Limits) > 0 || len(r.Claims) > 0 {
		return r
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
}

func summary(r *ir.Router) string {
	parts := []string{plural(len(r.Backends), "backend"), plural(len(r.Rules), "rule")}
	if n := len(r.Policy.Budgets); n > 0 {
		parts = append(parts, plural(n, "budget"))
	}
	if r.Default.Backend != "" {
		parts = append(parts, "default route "+r.Default.Backend)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

var _ targets.Target = (*Target)(nil)
