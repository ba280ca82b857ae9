// Package aigateway is the Gateway data plane: it compiles a router onto a
// pre-installed Envoy AI Gateway (Envoy Gateway underneath). It emits, per
// router, a Backend and an AIServiceBackend per backend, a
// BackendSecurityPolicy per credentialed external backend, the
// AIGatewayRoute(s), BackendTrafficPolicies for failover, health, timeouts
// and budgets, and a SecurityPolicy for JWT and allowlists; or it refuses
// what the gateway cannot express, with a reason and a field path.
package aigateway

import (
	"fmt"
	"net"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

const component = "gateway"

// CRD limits that bind the generated objects. The AIGatewayRoute holds at
// most 15 rules (its controller appends a 16th, route-not-found, to the
// HTTPRoute). The generated HTTPRoute allows 64 matches and 16 backendRefs
// per rule and fewer than 128 matches in all (route-not-found takes one).
const (
	MaxRulesPerRoute      = 15
	MaxMatchesPerRule     = 64
	MaxBackendRefsPerRule = 16
	MaxMatchesPerRoute    = 126
	MaxHeadersPerMatch    = 16
)

// Generated rule names. Spec rule names cannot contain '.', so these never
// collide with them.
const (
	nameMatchPrefix = "llmkube.name-match."
	defaultRuleName = "llmkube.default-route"
	partSeparator   = ".part-"
)

var (
	gvkBackend     = egv1a1.GroupVersion.WithKind("Backend")
	gvkBTP         = egv1a1.GroupVersion.WithKind("BackendTrafficPolicy")
	gvkSP          = egv1a1.GroupVersion.WithKind("SecurityPolicy")
	gvkCTP         = egv1a1.GroupVersion.WithKind("ClientTrafficPolicy")
	gvkAIBackend   = AIGroupVersion.WithKind("AIServiceBackend")
	gvkRoute       = AIGroupVersion.WithKind("AIGatewayRoute")
	gvkBSP         = AIGroupVersion.WithKind("BackendSecurityPolicy")
	gatewayAPIGrp  = gwapiv1.Group(gwapiv1.GroupName)
	httpRouteKind  = gwapiv1.Kind("HTTPRoute")
	egGroup        = egv1a1.GroupVersion.Group
	aiGatewayGroup = AIGroupVersion.Group
)

// Target emits the Gateway data plane.
type Target struct{}

// New returns the Gateway target.
func New() *Target { return &Target{} }

// DataPlane implements targets.Target.
func (*Target) DataPlane() ir.DataPlane { return ir.DataPlaneGateway }

// Kinds implements targets.Target.
func (*Target) Kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{gvkBackend, gvkAIBackend, gvkBSP, gvkRoute, gvkBTP, gvkSP, gvkCTP}
}

var _ targets.CrossNamespace = (*Target)(nil)

// CrossNamespaceKinds implements targets.CrossNamespace: the
// ClientTrafficPolicy of a router with policy.auth lives in the Gateway's
// namespace.
func (*Target) CrossNamespaceKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{gvkCTP}
}

type emitter struct {
	r       *ir.Router
	diags   diag.List
	objects []targets.Typed
	// per backend name
	aiName   map[string]string
	override map[string]string
	routes   []string
	budgets  int
	usdCost  *usdCost
	bsps     int
	rules    []*genRule
}

// Compile implements targets.Target.
func (*Target) Compile(r *ir.Router) (*targets.Result, diag.List) {
	e := &emitter{r: r, aiName: map[string]string{}, override: map[string]string{}}
	if r.Gateway == nil {
		// The frontend requires gatewayRef on Gateway; this is a compiler bug.
		e.diags.ErrorAt(diag.Spec("gatewayRef"), targets.ReasonInternalError, "no gateway reference reached the Gateway target")
		return nil, e.diags
	}
	e.refuseUnsupported()
	e.refuseAllowlistGlobs()
	e.backends()
	rules := e.buildRules()
	e.rules = rules
	e.checkBudgetSpan()
	if !e.diags.HasErrors() {
		chunks := e.applyOrderAndLimits(rules)
		if !e.diags.HasErrors() {
			e.routesFor(chunks)
			e.trafficPolicies(rules)
			e.securityPolicy()
		}
	}
	if e.diags.HasErrors() {
		return nil, e.diags
	}
	res, diags := targets.NewResult(e.objects, e.summary())
	return res, append(e.diags, diags...)
}

func (e *emitter) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       e.r.Namespace,
		Labels:          naming.ObjectLabels(e.r.Name, component),
		OwnerReferences: targets.OwnerReferences(e.r),
	}
}

func (e *emitter) add(obj runtime.Object, gvk schema.GroupVersionKind) {
	e.objects = append(e.objects, targets.Typed{Obj: obj, GVK: gvk})
}

// refuseUnsupported refuses what no Envoy AI Gateway object can carry.
// (What one field decides, such as shadow, a missing gatewayRef, the audit
// log's fields or detector/hybrid classification, the plane's capability
// table refuses in the frontend; latencySLOMs it ignores.)
func (e *emitter) refuseUnsupported() {
	r := e.r
	for i := range r.Backends {
		if p := r.Backends[i].Pool; p != nil {
			e.diags.ErrorAt(diag.Backend(i).Child("inferenceServiceRef"), ReasonModelPoolUnsupportedOnGateway,
				"InferenceService %q is a member of ModelPool %q; the gateway cannot swap pool members into the shared GPU slot, so requests for a non-resident member would fail. Use the Proxy data plane for pooled backends",
				r.Backends[i].Local.InferenceService, p.Pool)
		}
	}
}

// backends emits a Backend, an AIServiceBackend and, where credentials are
// needed, a BackendSecurityPolicy per backend.
// backendPath is the field path of a backend named by a rule.
func (e *emitter) backendPath(name string) *field.Path {
	b, _ := e.r.Backend(name)
	return diag.Backend(b.Index)
}

func (e *emitter) backends() {
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		name := naming.GatewayBackendName(e.r.Name, b.Name)
		e.aiName[b.Name] = name
		// Every backend is sent the model it serves (docs/router-proxy.md,
		// "Upstream requests"): the AI Gateway rewrites the body's model.
		e.override[b.Name] = b.UpstreamModel.Name
		if msg, ok := targets.AssumedUpstreamModel(ir.DataPlaneGateway, b); ok {
			e.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), targets.ReasonUpstreamModelAssumed, "%s", msg)
		}
		spec, schemaName, prefix, ok := e.backendSpec(i, b)
		if b.External != nil {
			e.credentials(i, b, name)
		}
		if !ok {
			continue
		}
		e.add(&egv1a1.Backend{ObjectMeta: e.meta(name), Spec: spec}, gvkBackend)
		e.add(&AIServiceBackend{
			ObjectMeta: e.meta(name),
			Spec: AIServiceBackendSpec{
				Schema:         VersionedAPISchema{Name: schemaName, Prefix: prefix},
				BackendRef:     BackendObjectRef{Group: egGroup, Kind: "Backend", Name: name},
				HeaderMutation: e.callerCredentials(b),
			},
		}, gvkAIBackend)
	}
}

// callerCredentials removes the caller's credentials on the way to a
// backend. Envoy Gateway forwards a verified JWT (its jwt_authn providers
// are built with forward: true), and the AI Gateway's upstream auth sets
// only the provider's own header (x-api-key for Anthropic) or nothing (a
// backend without credentials), so without this the caller's bearer token
// reached third-party providers. An external backend never receives a
// credential header of the caller's (wellknown.CredentialHeaders; the
// provider's key is set after the removal). A local backend keeps the
// client's headers as on the router-proxy (a runtime's --api-key is sent as
// Authorization), except that with policy.auth.jwt the Authorization header
// carried the caller's JWT, which the gateway consumed: it is removed too.
func (e *emitter) callerCredentials(b *ir.Backend) *HeaderMutation {
	var remove []string
	switch {
	case b.External != nil:
		for _, h := range wellknown.CredentialHeaders {
			remove = append(remove, strings.ToLower(h))
		}
	case e.r.Policy.Auth != nil && e.r.Policy.Auth.JWT != nil:
		remove = []string{"authorization"}
	default:
		return nil
	}
	return &HeaderMutation{Remove: remove}
}

func (e *emitter) backendSpec(i int, b *ir.Backend) (spec egv1a1.BackendSpec, schemaName, prefix string, ok bool) {
	if b.Local != nil {
		host := fmt.Sprintf("%s.%s.svc.cluster.local", b.Local.ServiceName, e.r.Namespace)
		spec.Endpoints = []egv1a1.BackendEndpoint{{FQDN: &egv1a1.FQDNEndpoint{Hostname: host, Port: b.Local.Port}}}
		// vLLM, llama.cpp and the other runtimes serve the OpenAI API under /v1.
		return spec, "OpenAI", "/v1", true
	}
	x := b.External
	up := b.Upstream
	p := diag.Backend(i).Child("external")
	if up.Host == "" {
		e.diags.ErrorAt(p.Child("url"), ReasonProviderHostUnknown,
			"provider %s has no fixed endpoint (the router-proxy derives it at run time), but the gateway needs the upstream host when the Backend is created; set url (for Bedrock https://bedrock-runtime.<region>.amazonaws.com)", x.Provider)
		return spec, "", "", false
	}
	switch x.Provider {
	case ir.ProviderOpenAI, ir.ProviderLiteLLM:
		schemaName = "OpenAI"
		// An OpenAI base URL names the API root ("/v1" by convention).
		prefix = up.Path
		if prefix == "" {
			prefix = "/v1"
		}
	case ir.ProviderAnthropic:
		schemaName = "Anthropic"
	case ir.ProviderBedrock:
		schemaName = "AWSBedrock"
	case ir.ProviderVertexAI:
		schemaName = "GCPVertexAI"
	}
	if schemaName != "OpenAI" && up.Path != "" {
		e.diags.ErrorAt(p.Child("url"), ReasonURLPathUnsupported,
			"the gateway's %s schema addresses the provider's API at its published paths and cannot prefix them with %q; remove the path from url", schemaName, up.Path)
		return spec, "", "", false
	}
	ep := egv1a1.BackendEndpoint{}
	if ip := net.ParseIP(up.Host); ip != nil {
		ep.IP = &egv1a1.IPEndpoint{Address: up.Host, Port: up.Port}
	} else {
		ep.FQDN = &egv1a1.FQDNEndpoint{Hostname: up.Host, Port: up.Port}
	}
	spec.Endpoints = []egv1a1.BackendEndpoint{ep}
	if up.Scheme == "https" {
		system := gwapiv1.WellKnownCACertificatesSystem
		spec.TLS = &egv1a1.BackendTLSSettings{WellKnownCACertificates: &system}
		if ep.FQDN != nil {
			sni := gwapiv1.PreciseHostname(up.Host)
			spec.TLS.SNI = &sni
		}
	}
	return spec, schemaName, prefix, true
}

// credentials maps an external backend's Secret onto a
// BackendSecurityPolicy, or refuses.
func (e *emitter) credentials(i int, b *ir.Backend, name string) {
	x := b.External
	p := diag.Backend(i).Child("external", "credentialsSecretRef")
	switch x.Provider {
	case ir.ProviderBedrock, ir.ProviderVertexAI:
		if x.CredentialsSecret == "" {
			e.diags.ErrorAt(p, ReasonCredentialsRequired,
				"the gateway must sign every %s request, so the backend needs credentials; set credentialsSecretRef (and see the next refusal for the layout)", x.Provider)
			return
		}
		want := "an AWS shared-credentials file under key \"credentials\" plus the region on the policy"
		if x.Provider == ir.ProviderVertexAI {
			want = "a service-account file plus the GCP project name and region on the policy"
		}
		keys := make([]string, 0, len(x.Credentials))
		for _, c := range x.Credentials {
			keys = append(keys, c.Key)
		}
		e.diags.ErrorAt(p, ReasonCredentialsLayoutUnsupported,
			"Secret %q holds %s as separate keys (%s), the layout the router-proxy reads; the gateway's BackendSecurityPolicy needs %s, which this Secret layout and ModelRouter do not provide. Use the Proxy data plane for this backend",
			x.CredentialsSecret, x.Provider, strings.Join(keys, ", "), want)
		return
	}
	if x.CredentialsSecret == "" {
		return
	}
	spec := BackendSecurityPolicySpec{
		TargetRefs: []PolicyTargetRef{{Group: aiGatewayGroup, Kind: "AIServiceBackend", Name: name}},
	}
	key := &SecretAPIKey{SecretRef: SecretRef{Name: x.CredentialsSecret}}
	if x.Provider == ir.ProviderAnthropic {
		spec.Type, spec.AnthropicAPIKey = "AnthropicAPIKey", key
	} else {
		spec.Type, spec.APIKey = "APIKey", key
	}
	e.add(&BackendSecurityPolicy{ObjectMeta: e.meta(name), Spec: spec}, gvkBSP)
	e.bsps++
	conventional := ""
	if len(x.Credentials) > 0 {
		conventional = x.Credentials[0].Key
	}
	e.diags.WarnAt(p, ReasonGatewaySecretKey,
		"the gateway reads the API key from key \"apiKey\" of Secret %q, the router-proxy from key %s; the Secret must hold the key under \"apiKey\" for the gateway (a missing key fails every request to %s)",
		x.CredentialsSecret, conventional, b.Name)
}

// gwDuration formats a duration in the Gateway API format
// (^([0-9]{1,5}(h|m|s|ms)){1,4}$); ok is false when it has sub-millisecond
// precision or too many hours.
func gwDuration(d time.Duration) (string, bool) {
	if d < 0 || d%time.Millisecond != 0 {
		return "", false
	}
	if d == 0 {
		return "0s", true
	}
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	s := d / time.Second
	d -= s * time.Second
	ms := d / time.Millisecond
	if h > 99999 {
		return "", false
	}
	var b strings.Builder
	for _, part := range []struct {
		n    time.Duration
		unit string
	}{{h, "h"}, {m, "m"}, {s, "s"}, {ms, "ms"}} {
		if part.n > 0 {
			fmt.Fprintf(&b, "%d%s", part.n, part.unit)
		}
	}
	return b.String(), true
}

func (e *emitter) duration(at *field.Path, d time.Duration) string {
	s, ok := gwDuration(d)
	if !ok {
		e.diags.ErrorAt(at, ReasonDurationNotExpressible,
			"%s cannot be written as a Gateway API duration (whole milliseconds, at most 99999h); round it to milliseconds", d)
	}
	return s
}
