package compiler

// Resolution: what a router's references point at, computed once (resolve)
// after defaulting and read by validation and lowering: each local backend's
// InferenceService and its readiness, ModelPool membership, the endpoint
// picker each backend ends up with, and what lowering derives from them
// (the local backend's Service and port, its context window, the pool).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
)

// resolution is what the router's references resolved to, computed once and
// shared by validation and lowering.
type resolution struct {
	// isvc maps a backend name to its InferenceService; nil when absent from the input.
	isvc map[string]*v1.InferenceService
	// pool maps a backend name to the ModelPool its InferenceService belongs to.
	pool map[string]*v1.ModelPool
	// ready maps a backend name to its InferenceService's readiness
	// (inferenceServiceReady), for the backends found in the input.
	ready map[string]bool
	// missing are the backends whose InferenceService authoritative
	// references lack: not ready.
	missing []string
	// pickers is each backend's effective endpoint picker, by index.
	pickers []effectivePicker
	diags   diag.List
}

func resolve(r *v1.ModelRouter, refs References, authoritative bool) *resolution {
	res := &resolution{isvc: map[string]*v1.InferenceService{}, pool: map[string]*v1.ModelPool{}, ready: map[string]bool{},
		pickers: effectivePickers(&r.Spec)}
	pools := refs.ModelPools(r.Namespace)
	for i, b := range r.Spec.Backends {
		if b.InferenceServiceRef == nil || b.InferenceServiceRef.Name == "" {
			continue
		}
		name := b.InferenceServiceRef.Name
		if s, ok := refs.InferenceService(r.Namespace, name); ok {
			res.isvc[b.Name] = s
			res.ready[b.Name] = inferenceServiceReady(s)
		} else if authoritative {
			res.missing = append(res.missing, b.Name)
			res.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), ReasonInferenceServiceNotFound,
				"InferenceService %s/%s does not exist; backend %q is not ready and its rules fail over until it does",
				r.Namespace, name, b.Name)
		} else {
			res.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), ReasonInferenceServiceNotFound,
				"InferenceService %s/%s is not in the input; assuming Service %q on port %d and that it is ready",
				r.Namespace, name, naming.InferenceServiceServiceName(name), ConventionalServicePort)
		}
		for _, p := range pools {
			for _, m := range p.Spec.Members {
				if m.InferenceServiceRef.Name == name {
					res.pool[b.Name] = p
				}
			}
		}
		// A pool member that is not resident is stopped by design; any other
		// InferenceService that is not ready is worth a word, since rules that
		// name it fail over (or, fail-closed, refuse) until it is.
		if s := res.isvc[b.Name]; s != nil && res.pool[b.Name] == nil && !res.ready[b.Name] {
			res.diags.WarnAt(diag.Backend(i).Child("inferenceServiceRef", "name"), ReasonInferenceServiceNotReady,
				"InferenceService %s/%s is not ready (phase %q); traffic for backend %q fails over until it is", r.Namespace, name, s.Status.Phase, b.Name)
		}
	}
	return res
}

// local resolves a local backend's InferenceService to the Service and pods
// requests go to, its readiness, and the context window it publishes (0 when
// unknown): the conventions (Service <name>, port 8080) unless the
// InferenceService says otherwise.
func (res *resolution) local(b *v1.RouterBackend) (*ir.LocalBackend, int64) {
	var ctxLen int64
	isvc := res.isvc[b.Name]
	local := &ir.LocalBackend{
		InferenceService: b.InferenceServiceRef.Name,
		ServiceName:      naming.InferenceServiceServiceName(b.InferenceServiceRef.Name),
		Port:             ConventionalServicePort,
		Ready:            true,
		PodSelector:      naming.InferenceServicePodSelector(b.InferenceServiceRef.Name),
	}
	if slices.Contains(res.missing, b.Name) {
		local.Ready = false
	}
	if isvc != nil {
		local.Found = true
		local.Runtime = isvc.Spec.Runtime
		local.ModelRef = isvc.Spec.ModelRef
		local.Ready = res.ready[b.Name]
		if e := isvc.Spec.Endpoint; e != nil && e.Port != nil {
			local.Port = *e.Port
		}
		if p := isvc.Spec.ContainerPort; p != nil && *p > 0 {
			local.TargetPort = *p
		}
		ctxLen = contextLength(isvc)
	}
	if local.TargetPort == 0 {
		local.TargetPort = local.Port
	}
	return local, ctxLen
}

// membership is the ModelPool a backend's InferenceService belongs to, as
// the IR carries it (swap budget defaulted); nil outside a pool.
func (res *resolution) membership(backend string) *ir.PoolMembership {
	p := res.pool[backend]
	if p == nil {
		return nil
	}
	budget := DefaultSwapBudget
	if p.Spec.SwapBudget != "" {
		budget = mustDuration(p.Spec.SwapBudget)
	}
	m := &ir.PoolMembership{Pool: p.Name, Default: p.Spec.Default, SwapBudget: budget}
	for _, mem := range p.Spec.Members {
		m.Members = append(m.Members, mem.InferenceServiceRef.Name)
	}
	return m
}

// inferenceServiceReady is true unless the status says the service is not
// ready: a Ready or Available condition wins, then the phase, then the replica
// counts. An InferenceService with no status yet is assumed ready.
func inferenceServiceReady(s *v1.InferenceService) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == "Ready" || c.Type == "Available" {
			return c.Status == "True"
		}
	}
	switch s.Status.Phase {
	case "":
	case "Ready", "Running":
		return true
	default:
		return false
	}
	if s.Status.DesiredReplicas > 0 && s.Status.ReadyReplicas == 0 {
		return false
	}
	return true
}

// contextLength derives a backend's context window from its InferenceService:
// vLLM's maxModelLen (or --max-model-len in extraArgs), or llama.cpp's
// contextSize divided across parallelSlots. llama.cpp extraArgs that set
// those flags themselves, and other runtimes, publish none.
func contextLength(s *v1.InferenceService) int64 {
	switch s.Spec.Runtime {
	case v1.RuntimeVLLM:
		if v, ok := flagValue(s.Spec.ExtraArgs, "--max-model-len"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil && n > 0 {
				return n
			}
			return 0
		}
		if c := s.Spec.VLLMConfig; c != nil && c.MaxModelLen != nil && *c.MaxModelLen > 0 {
			return int64(*c.MaxModelLen)
		}
	case v1.RuntimeLlamaCpp, "":
		for _, f := range []string{"-c", "--ctx-size", "-np", "--parallel"} {
			if _, ok := flagValue(s.Spec.ExtraArgs, f); ok {
				return 0
			}
		}
		if s.Spec.ContextSize == nil || *s.Spec.ContextSize <= 0 {
			return 0
		}
		slots := int64(1)
		if s.Spec.ParallelSlots != nil && *s.Spec.ParallelSlots > 0 {
			slots = int64(*s.Spec.ParallelSlots)
		}
		return int64(*s.Spec.ContextSize) / slots
	}
	return 0
}

// upstreamModel is the model name a local backend's runtime serves, as far
// as its InferenceService says (docs/router-proxy.md, "Upstream requests"):
// a --served-model-name in extraArgs (vLLM and SGLang take it; extraArgs win
// over the operator's own flags), else for SGLang the modelRef the operator
// passes as --served-model-name. vLLM is handed the Model's source (an HF
// repo id or a path in the model cache), which is not on the
// InferenceService, and llama.cpp, TGI and generic runtimes pick their own
// id: the name is then assumed (modelRef, else the InferenceService's name,
// the name LLMKube's own gateway route sends) and the router-proxy learns the
// real one from the backend's /v1/models.
func (res *resolution) upstreamModel(b *v1.RouterBackend) ir.UpstreamModel {
	assumed := ir.UpstreamModel{Name: b.InferenceServiceRef.Name, Source: ir.UpstreamModelAssumed}
	isvc := res.isvc[b.Name]
	if isvc == nil {
		return assumed
	}
	if isvc.Spec.ModelRef != "" {
		assumed.Name = isvc.Spec.ModelRef
	}
	switch isvc.Spec.Runtime {
	case v1.RuntimeVLLM, v1.RuntimeSGLang:
		if v, ok := flagValue(isvc.Spec.ExtraArgs, "--served-model-name"); ok && v != "" && !strings.HasPrefix(v, "-") {
			return ir.UpstreamModel{Name: v, Source: ir.UpstreamModelServedName}
		}
		if isvc.Spec.Runtime == v1.RuntimeSGLang && isvc.Spec.ModelRef != "" {
			return ir.UpstreamModel{Name: isvc.Spec.ModelRef, Source: ir.UpstreamModelModelRef}
		}
	}
	return assumed
}

// flagValue finds "--flag value" or "--flag=value" in args.
func flagValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

// pickerRef is an Endpoint Picker Service.
type pickerRef struct {
	name string
	port int32
}

func (p pickerRef) String() string { return fmt.Sprintf("%s:%d", p.name, p.port) }

// pickerSource says where a backend's picker comes from.
type pickerSource int

const (
	pickerNone pickerSource = iota
	pickerOwn
	pickerSibling
	pickerDefault
)

// effectivePicker is the picker one backend ends up with.
type effectivePicker struct {
	ref    pickerRef
	source pickerSource
}

// effectivePickers gives each local backend (by index) its picker in the
// reference's order: its own, else one another backend on the same
// InferenceService names, else the router-wide default. resolve computes
// it once; validation and lowering read it.
func effectivePickers(s *v1.ModelRouterSpec) []effectivePicker {
	own := func(b *v1.RouterBackend) (pickerRef, bool) {
		if b.EndpointPicker == nil || b.EndpointPicker.Service == nil {
			return pickerRef{}, false
		}
		return pickerRef{b.EndpointPicker.Service.Name, b.EndpointPicker.Service.Port}, true
	}
	byService := map[string]pickerRef{}
	for i := range s.Backends {
		b := &s.Backends[i]
		if ref, ok := own(b); ok && b.InferenceServiceRef != nil {
			if _, seen := byService[b.InferenceServiceRef.Name]; !seen {
				byService[b.InferenceServiceRef.Name] = ref
			}
		}
	}
	out := make([]effectivePicker, len(s.Backends))
	for i := range s.Backends {
		b := &s.Backends[i]
		if b.InferenceServiceRef == nil {
			continue
		}
		if ref, ok := own(b); ok {
			out[i] = effectivePicker{ref, pickerOwn}
		} else if ref, ok := byService[b.InferenceServiceRef.Name]; ok {
			out[i] = effectivePicker{ref, pickerSibling}
		} else if g := s.AgentGatewayRef; g != nil && g.EndpointPicker != "" && g.EndpointPickerPort != nil {
			out[i] = effectivePicker{pickerRef{g.EndpointPicker, *g.EndpointPickerPort}, pickerDefault}
		}
	}
	return out
}

// resolvePickers gives each local backend its EPP in the reference's order
// (effectivePickers, computed once by resolve).
func resolvePickers(pickers []effectivePicker, out *ir.Router) {
	for i, p := range pickers {
		if p.source != pickerNone {
			out.Backends[i].EndpointPicker = &ir.ServiceRef{Name: p.ref.name, Port: p.ref.port}
		}
	}
}
