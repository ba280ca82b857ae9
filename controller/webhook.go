package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets"
)

// WebhookPath is where the validating webhook is served.
const WebhookPath = "/validate-inference-llmkube-dev-v1alpha1-modelrouter"

// +kubebuilder:webhook:path=/validate-inference-llmkube-dev-v1alpha1-modelrouter,mutating=false,failurePolicy=fail,sideEffects=None,groups=inference.llmkube.dev,resources=modelrouters,verbs=create;update,versions=v1alpha1,name=vmodelrouter.inference.llmkube.dev,admissionReviewVersions=v1

// Validator is the ModelRouter validating webhook: the compiler's own
// validation (frontend and the data plane's checks), with the same reasons
// and field paths as `llmkube-compile validate`. It reads nothing from the
// cluster: what a router references is checked by the reconciler.
type Validator struct {
	Registry *targets.Registry
}

var _ admission.Validator[*v1.ModelRouter] = (*Validator)(nil)

// SetupWebhookWithManager registers the webhook with mgr's webhook server.
func (v *Validator) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &v1.ModelRouter{}).WithValidator(v).Complete()
}

// ValidateCreate implements admission.Validator.
func (v *Validator) ValidateCreate(_ context.Context, mr *v1.ModelRouter) (admission.Warnings, error) {
	return v.Validate(mr)
}

// ValidateUpdate implements admission.Validator. An update that leaves the
// spec unchanged (metadata, finalizers) is always let through, so a router
// that a newer compiler finds invalid can still be deleted or relabelled.
func (v *Validator) ValidateUpdate(_ context.Context, old, mr *v1.ModelRouter) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, mr.Spec) {
		return nil, nil
	}
	return v.Validate(mr)
}

// ValidateDelete implements admission.Validator.
func (v *Validator) ValidateDelete(context.Context, *v1.ModelRouter) (admission.Warnings, error) {
	return nil, nil
}

// noRefs knows no InferenceService or ModelPool: the webhook is pure.
type noRefs struct{}

func (noRefs) InferenceService(string, string) (*v1.InferenceService, bool) { return nil, false }
func (noRefs) ModelPools(string) []*v1.ModelPool                            { return nil }

// clusterOnlyReasons are findings about cluster state, not the spec; the
// reconciler reports them.
var clusterOnlyReasons = map[string]bool{
	"InferenceServiceNotFound":    true,
	"InferenceServiceNotReady":    true,
	ReasonDataPlaneNotImplemented: true,
}

// Validate compiles mr without cluster references and returns its errors as
// one Invalid error (every problem at once) and its warnings.
func (v *Validator) Validate(mr *v1.ModelRouter) (admission.Warnings, error) {
	_, diags := pipeline.CompileRouter(compiler.RouterSource{Router: mr}, noRefs{}, v.Registry, pipeline.Options{})
	var errs field.ErrorList
	var warnings admission.Warnings
	for _, d := range diags.Sorted() {
		if clusterOnlyReasons[d.Reason] {
			continue
		}
		if d.Severity == diag.Warning {
			warnings = append(warnings, fmt.Sprintf("%s: %s (%s)", d.Field, d.Message, d.Reason))
			continue
		}
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: d.Field, BadValue: field.OmitValueType{}, Detail: fmt.Sprintf("%s (%s)", d.Message, d.Reason)})
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	return warnings, apierrors.NewInvalid(v1.GroupVersion.WithKind("ModelRouter").GroupKind(), mr.Name, errs)
}
