// Package agentgateway is the AgentGateway data plane: it compiles a router
// onto a pre-installed agentgateway Gateway, in one of the two modes
// spec.agentGatewayRef.routing selects.
//
//   - InferencePool (the default): one Gateway API Inference Extension
//     InferencePool per referenced InferenceService, one HTTPRoute whose rules
//     match the model header and route each rule to its first ready backend's
//     pool, and one PreRouting AgentgatewayPolicy on the Gateway that copies
//     the body's model into that header.
//   - Model: one AgentgatewayModel per backend behind one catch-all HTTPRoute
//     (agentgateway's model router).
//
// See docs/targets/agentgateway.md for the field mapping.
package agentgateway

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	giev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets"
)

const component = "agentgateway"

// GVKs of every kind this target emits.
var (
	InferencePoolGVK      = schema.GroupVersion(giev1.GroupVersion).WithKind("InferencePool")
	HTTPRouteGVK          = schema.GroupVersion(gwv1.GroupVersion).WithKind("HTTPRoute")
	AgentgatewayPolicyGVK = GroupVersion.WithKind("AgentgatewayPolicy")
	AgentgatewayModelGVK  = GroupVersion.WithKind("AgentgatewayModel")
)

// Target emits the AgentGateway data plane.
type Target struct{}

// New returns the AgentGateway target.
func New() *Target { return &Target{} }

// DataPlane implements targets.Target.
func (*Target) DataPlane() ir.DataPlane { return ir.DataPlaneAgentGateway }

// Kinds implements targets.Target.
func (*Target) Kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{InferencePoolGVK, HTTPRouteGVK, AgentgatewayPolicyGVK, AgentgatewayModelGVK}
}

var _ targets.CrossNamespace = (*Target)(nil)

// CrossNamespaceKinds implements targets.CrossNamespace: the
// model-extraction AgentgatewayPolicy lives in the Gateway's namespace.
func (*Target) CrossNamespaceKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{AgentgatewayPolicyGVK}
}

// Compile implements targets.Target.
func (*Target) Compile(r *ir.Router) (*targets.Result, diag.List) {
	e := &emitter{r: r, owners: targets.OwnerReferences(r)}
	if r.AgentGateway == nil {
		// The frontend refuses dataPlane AgentGateway without agentGatewayRef.
		e.diags.ErrorAt(diag.Spec("agentGatewayRef"), ReasonAgentGatewayRefRequired,
			"dataPlane AgentGateway attaches the router to a pre-installed agentgateway Gateway; set spec.agentGatewayRef.name")
		return nil, e.diags
	}
	e.g = r.AgentGateway
	e.gwNamespace = e.g.Namespace // defaulted to the router's by the frontend
	e.checkIgnored()
	if e.g.Routing == ir.AgentGatewayRoutingModel {
		e.modelRouting()
	} else {
		e.poolRouting()
	}
	e.authPolicy()
	if e.routed {
		e.servingPolicies()
		e.upstreamModelPolicies()
	}
	for _, x := range e.expressions {
		if err := CheckExpression(x); err != nil {
			e.diags.ErrorAt(diag.Spec("agentGatewayRef"), targets.ReasonInternalError, "generated CEL does not type-check: %v", err)
		}
	}
	for _, x := range e.bodies {
		if err := CheckBody(x); err != nil {
			e.diags.ErrorAt(diag.Spec("agentGatewayRef"), targets.ReasonInternalError, "generated CEL does not type-check: %v", err)
		}
	}
	for _, x := range e.conditions {
		if err := CheckCondition(x); err != nil {
			e.diags.ErrorAt(diag.Spec("policy", "auth"), targets.ReasonInternalError, "generated CEL does not type-check: %v", err)
		}
	}
	if e.diags.HasErrors() {
		return nil, e.diags
	}
	res, diags := targets.NewResult(e.objects, e.summary())
	return res, append(e.diags, diags...)
}

type emitter struct {
	r           *ir.Router
	g           *ir.AgentGateway
	gwNamespace string
	owners      []metav1.OwnerReference
	diags       diag.List
	objects     []targets.Typed
	// expressions are every CEL header-value expression emitted, and
	// conditions every CEL authorization condition, and bodies every body
	// transformation, type-checked before output.
	expressions []string
	conditions  []string
	bodies      []string
	// servedBy maps each HTTPRoute rule (its section name) to the backend
	// that serves it (routing InferencePool), for the allowlists.
	servedBy map[string]served
	// routed is true once the HTTPRoute is emitted.
	routed     bool
	pools      int
	routeRules int
}

func (e *emitter) add(obj runtime.Object, gvk schema.GroupVersionKind) {
	e.objects = append(e.objects, targets.Typed{Obj: obj, GVK: gvk})
}

func (e *emitter) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: e.r.Namespace, Labels: naming.ObjectLabels(e.r.Name, component), OwnerReferences: e.owners}
}

// checkIgnored refuses what this plane cannot drop without weakening a
// control the spec asked for, where the message names more than the field.
// What it drops harmlessly, the audit log's fields and what the reference
// lists for each routing mode are in its capability table
// (capabilities.go), which the frontend applies.
func (e *emitter) checkIgnored() {
	poolMode := e.g.Routing != ir.AgentGatewayRoutingModel
	for i := range e.r.Backends {
		b := &e.r.Backends[i]
		p := diag.Backend(i)
		if b.External != nil && poolMode {
			e.diags.ErrorAt(p.Child("external"), ReasonUnsupportedOnAgentGateway,
				"backend %q is an external %s provider, but agentGatewayRef.routing InferencePool routes only to InferencePools, which select in-cluster pods; serve it through an InferenceService, or use the Proxy or Gateway data plane", b.Name, b.External.Provider)
		}
		if b.Pool != nil {
			e.diags.WarnAt(p.Child("inferenceServiceRef"), ReasonPoolActivationUnsupported,
				"InferenceService %q is a member of ModelPool %q, whose swaps the router-proxy performs; on AgentGateway nothing activates a member, so while it is not resident it counts as not ready",
				b.Local.InferenceService, b.Pool.Pool)
		}
	}
	pol := &e.r.Policy
	for i, b := range pol.Budgets {
		e.diags.ErrorAt(diag.Budget(i), ReasonUnsupportedOnAgentGateway,
			"budget %q is enforced by the router-proxy, which AgentGateway does not run; dropping it would lift the cap, so remove it or use the Proxy data plane", b.Name)
	}
	e.checkAuth()
}

// pool emits the InferencePool of one InferenceService, once.
func (e *emitter) pool(b *ir.Backend, i int, seen map[string]string) string {
	isvc := b.Local.InferenceService
	name := naming.AgentGatewayPoolName(e.r.Name, isvc)
	if _, ok := seen[isvc]; ok {
		return name
	}
	seen[isvc] = name
	if b.EndpointPicker == nil {
		// The frontend requires a picker for every local backend in InferencePool routing.
		e.diags.ErrorAt(diag.Backend(i).Child("endpointPicker"), ReasonEndpointPickerRequired,
			"backend %q has no endpoint picker for its InferencePool", b.Name)
		return name
	}
	selector := map[giev1.LabelKey]giev1.LabelValue{}
	for k, v := range b.Local.PodSelector {
		selector[giev1.LabelKey(k)] = giev1.LabelValue(v)
	}
	p := &giev1.InferencePool{
		ObjectMeta: e.meta(name),
		Spec: giev1.InferencePoolSpec{
			Selector:    giev1.LabelSelector{MatchLabels: selector},
			TargetPorts: []giev1.Port{{Number: giev1.PortNumber(b.Local.TargetPort)}},
			EndpointPickerRef: &giev1.EndpointPickerRef{
				Name: giev1.ObjectName(b.EndpointPicker.Name),
				Port: &giev1.Port{Number: giev1.PortNumber(b.EndpointPicker.Port)},
			},
		},
	}
	e.add(p, InferencePoolGVK)
	e.pools++
	return name
}

func (e *emitter) parentRef() gwv1.ParentReference {
	ref := gwv1.ParentReference{Name: gwv1.ObjectName(e.g.Name)}
	if e.gwNamespace != e.r.Namespace {
		ns := gwv1.Namespace(e.gwNamespace)
		ref.Namespace = &ns
	}
	if e.g.SectionName != "" {
		s := gwv1.SectionName(e.g.SectionName)
		ref.SectionName = &s
	}
	return ref
}

func (e *emitter) route(rules []gwv1.HTTPRouteRule) {
	hosts := make([]gwv1.Hostname, 0, len(e.g.Hostnames))
	for _, h := range e.g.Hostnames {
		hosts = append(hosts, gwv1.Hostname(h))
	}
	rt := &gwv1.HTTPRoute{
		ObjectMeta: e.meta(naming.AgentGatewayRouteName(e.r.Name)),
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{e.parentRef()}},
			Hostnames:       hosts,
			Rules:           rules,
		},
	}
	if len(hosts) == 0 {
		rt.Spec.Hostnames = nil
	}
	e.add(rt, HTTPRouteGVK)
	e.routed = true
	e.routeRules = len(rules)
}

// policy emits the model-extraction AgentgatewayPolicy on the Gateway, or on
// the router's listener when sectionName is set: reading request.body makes
// agentgateway buffer every request on its target before routing (up to
// 2 MiB or the end of the body), which would stall other teams' streaming
// uploads and gRPC streams on the Gateway's other listeners. Its targetRefs
// are same-namespace, so it lives in the Gateway's namespace; there it cannot
// carry an owner reference to the router and is labelled with the router's
// namespace for the controller's finalizer to delete it.
func (e *emitter) policy() {
	cross := e.gwNamespace != e.r.Namespace
	m := e.meta(naming.AgentGatewayPolicyName(e.r.Namespace, e.r.Name, cross))
	targets.ToGatewayNamespace(&m, e.gwNamespace, e.r)
	e.expressions = append(e.expressions, ModelExpression, ModelPresentExpression)
	e.add(&AgentgatewayPolicy{
		ObjectMeta: m,
		Spec: PolicySpec{
			TargetRefs: []PolicyTargetRef{{Group: gatewayAPIGroup, Kind: "Gateway", Name: e.g.Name, SectionName: e.g.SectionName}},
			Traffic: &TrafficPolicy{
				Phase: "PreRouting",
				Transformation: &Transformation{Request: &TransformationSpec{
					Set: []HeaderExpression{{Name: ModelHeader, Value: ModelExpression}, {Name: ModelPresentHeader, Value: ModelPresentExpression}},
				}},
			},
		},
	}, AgentgatewayPolicyGVK)
}

func (e *emitter) summary() string {
	var parts []string
	if e.g.Routing == ir.AgentGatewayRoutingModel {
		parts = append(parts, fmt.Sprintf("Model routing: %d models", len(e.r.Backends)))
	} else {
		parts = append(parts, fmt.Sprintf("InferencePool routing: %d route rules", e.routeRules))
	}
	if e.pools > 0 {
		parts = append(parts, fmt.Sprintf("%d pools", e.pools))
	}
	parts = append(parts, fmt.Sprintf("on Gateway %s/%s", e.gwNamespace, e.g.Name))
	return strings.Join(parts, ", ")
}
