package compiler

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/llmkube/llmkube-compile/diag"
)

// checkPassthrough validates the Kubernetes settings the Proxy target copies
// onto its pod template and the AgentGateway target onto its HTTPRoute, with
// the API machinery's own rules, so a value the API server would refuse is
// refused here, offline, with its path. (The full pod validation lives in
// k8s.io/kubernetes, which a compiler should not import; these are the rules
// a hand-written spec most often breaks.)
func (v *validator) checkPassthrough() {
	var errs field.ErrorList
	if p := v.s.Proxy; p != nil {
		base := field.NewPath("spec", "proxy")
		errs = append(errs, metav1validation.ValidateLabels(p.PodLabels, base.Child("podLabels"))...)
		errs = append(errs, apivalidation.ValidateAnnotations(p.PodAnnotations, base.Child("podAnnotations"))...)
		errs = append(errs, metav1validation.ValidateLabels(p.NodeSelector, base.Child("nodeSelector"))...)
		if rc := p.RuntimeClassName; rc != "" {
			for _, msg := range validation.IsDNS1123Subdomain(rc) {
				errs = append(errs, field.Invalid(base.Child("runtimeClassName"), rc, msg))
			}
		}
		for i, s := range p.ImagePullSecrets {
			path := base.Child("imagePullSecrets").Index(i).Child("name")
			if s.Name == "" {
				errs = append(errs, field.Required(path, "the Secret's name"))
			}
			for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
				if s.Name != "" {
					errs = append(errs, field.Invalid(path, s.Name, msg))
				}
			}
		}
		for i, t := range p.Tolerations {
			errs = append(errs, validateToleration(t, base.Child("tolerations").Index(i))...)
		}
		for i, c := range p.TopologySpreadConstraints {
			errs = append(errs, validateSpread(c, base.Child("topologySpreadConstraints").Index(i))...)
		}
		if a := p.Affinity; a != nil {
			errs = append(errs, validateAffinity(a, base.Child("affinity"))...)
		}
		if r := p.Resources; r != nil {
			errs = append(errs, validateResources(r, base.Child("resources"))...)
		}
	}
	if g := v.s.AgentGatewayRef; g != nil {
		errs = append(errs, validateHostnames(g.Hostnames, field.NewPath("spec", "agentGatewayRef", "hostnames"))...)
	}
	if g := v.s.GatewayRef; g != nil {
		errs = append(errs, validateHostnames(g.Hostnames, field.NewPath("spec", "gatewayRef", "hostnames"))...)
	}
	for _, e := range errs {
		reason := ReasonInvalidValue
		switch e.Type {
		case field.ErrorTypeRequired:
			reason = "Required"
		case field.ErrorTypeNotSupported:
			reason = ReasonNotSupported
		}
		v.diags = append(v.diags, diag.Diagnostic{Severity: diag.Error, Field: e.Field, Reason: reason, Message: e.ErrorBody()})
	}
}

// gatewayHostname is the Gateway API Hostname pattern.
// validateHostnames checks Gateway API hostnames: each a lowercase DNS
// name, optionally "*."-prefixed, and none twice.
func validateHostnames(hs []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, h := range hs {
		switch {
		case !gatewayHostname.MatchString(h) || len(h) > 253:
			errs = append(errs, field.Invalid(path.Index(i), h,
				"must be a lowercase DNS name, optionally starting with \"*.\" (Gateway API hostname)"))
		case seen[h]:
			errs = append(errs, field.Duplicate(path.Index(i), h))
		}
		seen[h] = true
	}
	return errs
}

var gatewayHostname = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

var (
	tolerationOperators = sets.New[corev1.TolerationOperator]("", corev1.TolerationOpExists, corev1.TolerationOpEqual, "Lt", "Gt")
	taintEffects        = sets.New[corev1.TaintEffect]("", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
	whenUnsatisfiable   = sets.New[corev1.UnsatisfiableConstraintAction](corev1.DoNotSchedule, corev1.ScheduleAnyway)
	selectorOpts        = metav1validation.LabelSelectorValidationOptions{}
)

func validateToleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(path.Child("key"), t.Key, msg))
		}
	}
	if !tolerationOperators.Has(t.Operator) {
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []string{"Equal", "Exists", "Lt", "Gt"}))
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "operator must be Exists when key is empty"))
	}
	if t.Operator == corev1.TolerationOpExists && t.Value != "" {
		errs = append(errs, field.Invalid(path.Child("value"), t.Value, "value must be empty when operator is Exists"))
	}
	if !taintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
	}
	return errs
}

func validateSpread(c corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew < 1 {
		errs = append(errs, field.Invalid(path.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "a node label key"))
	} else {
		for _, msg := range validation.IsQualifiedName(c.TopologyKey) {
			errs = append(errs, field.Invalid(path.Child("topologyKey"), c.TopologyKey, msg))
		}
	}
	if !whenUnsatisfiable.Has(c.WhenUnsatisfiable) {
		errs = append(errs, field.NotSupported(path.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{"DoNotSchedule", "ScheduleAnyway"}))
	}
	if c.MinDomains != nil {
		if *c.MinDomains < 1 {
			errs = append(errs, field.Invalid(path.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
		}
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			errs = append(errs, field.Invalid(path.Child("minDomains"), *c.MinDomains, "may only be set with whenUnsatisfiable DoNotSchedule"))
		}
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, selectorOpts, path.Child("labelSelector"))...)
	return errs
}

func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	term := func(t corev1.PodAffinityTerm, p *field.Path) {
		if t.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "a node label key"))
		} else {
			for _, msg := range validation.IsQualifiedName(t.TopologyKey) {
				errs = append(errs, field.Invalid(p.Child("topologyKey"), t.TopologyKey, msg))
			}
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(t.LabelSelector, selectorOpts, p.Child("labelSelector"))...)
		errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, selectorOpts, p.Child("namespaceSelector"))...)
	}
	weighted := func(w corev1.WeightedPodAffinityTerm, p *field.Path) {
		if w.Weight < 1 || w.Weight > 100 {
			errs = append(errs, field.Invalid(p.Child("weight"), w.Weight, "must be in the range 1-100"))
		}
		term(w.PodAffinityTerm, p.Child("podAffinityTerm"))
	}
	if pa := a.PodAffinity; pa != nil {
		for i, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			term(t, path.Child("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(i))
		}
		for i, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			weighted(w, path.Child("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution").Index(i))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			term(t, path.Child("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(i))
		}
		for i, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			weighted(w, path.Child("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").Index(i))
		}
	}
	if na := a.NodeAffinity; na != nil {
		for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			if p.Weight < 1 || p.Weight > 100 {
				errs = append(errs, field.Invalid(path.Child("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("weight"), p.Weight, "must be in the range 1-100"))
			}
		}
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil && len(r.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(path.Child("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"), "at least one term"))
		}
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for name, q := range list.rl {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Child(list.name).Key(string(name)), q.String(), "must not be negative"))
			}
		}
	}
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to the %s limit of %s", name, lim.String())))
		}
	}
	return errs
}
