// Package aigateway is the Gateway data plane: it compiles a router onto a
// pre-installed Envoy AI Gateway (Envoy Gateway underneath). It emits, per
// router, a Backend and an AIServiceBackend per backend, a
// BackendSecurityPolicy per credentialed external backend, the
// AIGatewayRoute(s), BackendTrafficPolicies for failover, health, timeouts
// and budgets, and a SecurityPolicy for JWT and allowlists (with a
// ClientTrafficPolicy removing the client's team header); or it refuses
// what the gateway cannot express, with a reason and a field path.
//
// The emitter is one step per kind it emits, one file per kind, run in
// order by Compile (as Envoy Gateway's translator runs a ProcessX step per
// kind); rules.go and match.go plan the routes every routing kind reads.
package aigateway

import (
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

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

// emitter is what every step shares: the router, the diagnostics and the
// objects emitted so far. What a step hands a later one is its return
// value, typed (aiBackends, routePlan, aiRoutes), never a field here
// or an object to search.
type emitter struct {
	r       *ir.Router
	diags   diag.List
	objects []targets.Typed
}

// Compile implements targets.Target: the steps in order, one per kind it
// emits, each reading the IR and what the steps before it hand on:
//
//	step                         file                      emits                  hands on
//	refuseUnsupported,           aigateway.go,             -                      -
//	refuseAllowlistGlobs         securitypolicy.go
//	backends                     backend.go                Backend                []servedBackend: each one's schema
//	aiServiceBackends            aiservicebackend.go       AIServiceBackend       aiBackends: each backend's name and model
//	backendSecurityPolicies      backendsecuritypolicy.go  BackendSecurityPolicy  how many
//	buildRules                   rules.go                  -                      the generated rules, in order
//	checkBudgetSpan              backendtrafficpolicy.go   -                      - (the policies' budget check, early)
//	applyOrderAndLimits          rules.go                  -                      routePlan: the rules rewritten for
//	                                                                              precedence, packed into routes
//	routesFor                    aigatewayroute.go         AIGatewayRoute         aiRoutes: names, each rule's, costs
//	trafficPolicies              backendtrafficpolicy.go   BackendTrafficPolicy   how many budgets
//	securityPolicy               securitypolicy.go         SecurityPolicy         -
//	clientPolicy                 clienttrafficpolicy.go    ClientTrafficPolicy    -
//
// The checks that need only the IR and the rules run even when an earlier
// one failed, so that a router's problems come in one pass; the objects
// that need rules in their final order are emitted only when nothing did.
func (*Target) Compile(r *ir.Router) (*targets.Result, diag.List) {
	e := &emitter{r: r}
	if r.Gateway == nil {
		// The frontend requires gatewayRef on Gateway; this is a compiler bug.
		e.diags.ErrorAt(diag.Spec("gatewayRef"), targets.ReasonInternalError, "no gateway reference reached the Gateway target")
		return nil, e.diags
	}
	e.refuseUnsupported()
	e.refuseAllowlistGlobs()
	bk := e.aiServiceBackends(e.backends())
	out := compiled{bsps: e.backendSecurityPolicies(bk)}
	rules := e.buildRules(bk)
	e.checkBudgetSpan(rules)
	if e.diags.HasErrors() {
		return nil, e.diags
	}
	out.plan = e.applyOrderAndLimits(rules)
	if e.diags.HasErrors() {
		return nil, e.diags
	}
	out.routes = e.routesFor(out.plan, bk)
	out.budgets = e.trafficPolicies(out.plan, out.routes)
	e.securityPolicy(out.plan, out.routes)
	e.clientPolicy()
	if e.diags.HasErrors() {
		return nil, e.diags
	}
	res, diags := targets.NewResult(e.objects, e.summary(out))
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

// compiled is what the summary counts, from the steps' hand-offs.
type compiled struct {
	plan    routePlan
	routes  aiRoutes
	budgets int // budgets compiled into rate limits
	bsps    int // BackendSecurityPolicies
}

// summary says what was compiled, for status.
func (e *emitter) summary(c compiled) string {
	spec := 0
	seen := map[int]bool{}
	for _, g := range c.plan.rules {
		if g.origin >= 0 && !seen[g.origin] {
			seen[g.origin] = true
			spec++
		}
	}
	parts := []string{
		plural(len(e.r.Backends), "backend"),
		plural(spec, "rule"),
	}
	if e.r.Default.Strategy == ir.DefaultBackendNameMatch {
		parts = append(parts, "BackendNameMatch")
	}
	if e.r.Default.Backend != "" {
		parts = append(parts, "default route")
	}
	if c.budgets > 0 {
		parts = append(parts, plural(c.budgets, "budget"))
	}
	if c.bsps > 0 {
		parts = append(parts, plural(c.bsps, "upstream credential"))
	}
	if a := e.r.Policy.Auth; a != nil && a.JWT != nil {
		parts = append(parts, "JWT enforced")
		if n := len(a.Allowlists); n > 0 {
			parts = append(parts, plural(n, "team allowlist"))
		}
	}
	s := strings.Join(parts, ", ")
	gw := e.r.Gateway
	s += fmt.Sprintf(" on gateway %s/%s", gw.Namespace, gw.Name)
	if len(c.routes.names) > 1 {
		s += fmt.Sprintf(" (%d AIGatewayRoutes)", len(c.routes.names))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
