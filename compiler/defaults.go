package compiler

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/images"
)

// Every default the reference states lives here and nowhere else: the CRD
// carries none, the targets and the runtime read them already applied.
const (
	DefaultDataPlane            = v1.DefaultDataPlane
	DefaultRouteStrategy        = v1.DefaultRouteStatic
	DefaultStrategy             = v1.StrategyPrimaryFallback
	DefaultPoolActivation       = v1.PoolActivationWait
	DefaultWeight         int32 = 1
	DefaultResolution           = v1.ResolutionService
	DefaultBalancingMode        = v1.BalancingRoundRobin

	DefaultClassificationMode   = v1.ClassificationHeaderOnly
	DefaultClassificationHeader = wellknown.ClassificationHeader
	// DefaultTeamHeader is the budget and JWT team header.
	DefaultTeamHeader    = wellknown.TeamHeader
	DefaultAuditSink     = v1.SinkStdout
	DefaultAuditFilePath = wellknown.AuditFilePath
	DefaultBudgetWindow  = int32(wellknown.BudgetWindow / time.Second)
	DefaultBlockBytes    = int32(wellknown.BalancingBlockBytes)
	DefaultMaxBlocks     = int32(wellknown.BalancingMaxBlocks)
	DefaultHeaderTimeout = "120s"
	DefaultStreamIdle    = "300s"
	DefaultQuarantine    = "15s"
	DefaultReplicas      = int32(1)
	DefaultRevisionLimit = int32(3)
	// DefaultMaxUnavailable is the router-proxy PodDisruptionBudget's
	// maxUnavailable: a drain evicts one replica at a time.
	DefaultMaxUnavailable = int32(1)
	DefaultEndpointType   = v1.EndpointTypeClusterIP
	DefaultEndpointPort   = int32(8080)
	DefaultEndpointPath   = "/v1/chat/completions"
	DefaultRouting        = v1.RoutingInferencePool
	DefaultHealthInterval = int32(wellknown.HealthInterval / time.Second)
	DefaultHealthTimeout  = int32(wellknown.HealthTimeout / time.Second)
	DefaultLocalHealth    = "/health"

	// DefaultSwapBudget is the ModelPool CRD's own default, applied to pools
	// read from files, which never passed through the API server.
	DefaultSwapBudget = wellknown.PoolSwapBudget
	// DefaultBudgetStoreFailure is the operator's --budget-store-failure
	// when a budget store is set without one.
	DefaultBudgetStoreFailure = wellknown.BudgetStoreFailClosed

	// ConventionalServicePort is assumed for an InferenceService absent from the input.
	ConventionalServicePort = int32(8080)
	// DefaultNamespace is used for objects that name none.
	DefaultNamespace = "default"
)

// DefaultSensitiveClassifications trigger fail-closed validation.
// The upstream quota holds (extensions; docs/upstream-quota.md), as the
// spec writes durations: the router-proxy's own defaults.
var (
	DefaultRateLimitHold      = wellknown.RateLimitHold.String()
	DefaultQuotaExhaustedHold = wellknown.QuotaExhaustedHold.String()
)

func DefaultSensitiveClassifications() []string { return wellknown.DetectorClasses() }

// DefaultOutputModalities is what a model produces unless it says otherwise.
func DefaultOutputModalities() []string { return []string{"text"} }

// setDefaults fills every unset field of spec that has a default. It runs on a
// copy; the input object is never changed.
func setDefaults(r *v1.ModelRouter, opts Options) {
	s := &r.Spec
	fill(&r.Namespace, DefaultNamespace)
	if opts.DataPlane != "" {
		s.DataPlane = v1.DataPlane(opts.DataPlane)
	}
	fill(&s.DataPlane, DefaultDataPlane)
	fill(&s.DefaultRouteStrategy, DefaultRouteStrategy)
	for i := range s.Backends {
		defaultBackend(&s.Backends[i])
	}
	for i := range s.Rules {
		rule := &s.Rules[i]
		fill(&rule.Route.Strategy, DefaultStrategy)
		fill(&rule.Route.PoolActivation, DefaultPoolActivation)
	}
	if s.GatewayRef != nil && s.GatewayRef.Namespace == "" {
		s.GatewayRef.Namespace = r.Namespace
	}
	if g := s.AgentGatewayRef; g != nil {
		fill(&g.Namespace, r.Namespace)
		fill(&g.Routing, DefaultRouting)
	}
	defaultEndpoint(s)
	defaultPolicy(s)
	defaultProxy(s, opts)
}

func defaultBackend(b *v1.RouterBackend) {
	// Tier: an external provider egresses the cluster unless the spec attests
	// otherwise. Upstream defaulted every backend to local, which let a
	// fail-closed PII rule reach a cloud provider.
	if b.Tier == "" {
		if b.External != nil {
			b.Tier = v1.TierCloud
		} else {
			b.Tier = v1.TierLocal
		}
	}
	setDefault(&b.Weight, DefaultWeight)
	if b.InferenceServiceRef != nil && b.Resolution == "" {
		b.Resolution = DefaultResolution
	}
	hc := present(&b.HealthCheck)
	if hc.Path == "" {
		if b.External != nil {
			hc.Path = wellknown.Providers[string(b.External.Provider)].HealthPath
		} else {
			hc.Path = DefaultLocalHealth
		}
	}
	setDefault(&hc.IntervalSeconds, DefaultHealthInterval)
	setDefault(&hc.TimeoutSeconds, DefaultHealthTimeout)
	if bal := b.Balancing; bal != nil {
		fill(&bal.Mode, DefaultBalancingMode)
		if pa := bal.PrefixAffinity; pa != nil {
			setDefault(&pa.BlockBytes, DefaultBlockBytes)
			setDefault(&pa.MaxBlocksPerEndpoint, DefaultMaxBlocks)
		}
		if sa := bal.SessionAffinity; sa != nil && sa.IdleTimeout == "" {
			sa.IdleTimeout = wellknown.BalancingSessionIdle.String()
		}
	}
	mi := present(&b.ModelInfo)
	if len(mi.OutputModalities) == 0 {
		mi.OutputModalities = DefaultOutputModalities()
	}
	if len(mi.InputModalities) == 0 {
		mi.InputModalities = []string{"text"}
		for _, c := range b.Capabilities {
			if c == "vision" {
				mi.InputModalities = []string{"text", "image"}
			}
		}
	}
}

func defaultEndpoint(s *v1.ModelRouterSpec) {
	e := present(&s.Endpoint)
	fill(&e.Type, DefaultEndpointType)
	setDefault(&e.Port, DefaultEndpointPort)
	fill(&e.Path, DefaultEndpointPath)
}

func defaultPolicy(s *v1.ModelRouterSpec) {
	p := present(&s.Policy)
	c := present(&p.Classification)
	fill(&c.Mode, DefaultClassificationMode)
	fill(&c.HeaderKey, DefaultClassificationHeader)
	if len(c.SensitiveClassifications) == 0 {
		c.SensitiveClassifications = DefaultSensitiveClassifications()
	}
	a := present(&p.AuditLog)
	fill(&a.Sink, DefaultAuditSink)
	fill(&a.FilePath, DefaultAuditFilePath)
	for i := range p.Budgets {
		b := &p.Budgets[i]
		if b.Scope == v1.ScopeTeam && b.HeaderKey == "" {
			b.HeaderKey = DefaultTeamHeader
		}
		setDefault(&b.WindowSeconds, DefaultBudgetWindow)
	}
	if p.Auth != nil && p.Auth.JWT != nil && p.Auth.JWT.HeaderKey == "" {
		p.Auth.JWT.HeaderKey = DefaultTeamHeader
	}
}

func defaultProxy(s *v1.ModelRouterSpec, opts Options) {
	p := present(&s.Proxy)
	setDefault(&p.Replicas, DefaultReplicas)
	setDefault(&p.RevisionHistoryLimit, DefaultRevisionLimit)
	fill(&p.Image, opts.Operator.ProxyImage)
	if p.Image == "" {
		// The router-proxy image of this release (one home: internal/images).
		p.Image = images.RouterProxyRef()
	}
	fill(&p.ResponseHeaderTimeout, DefaultHeaderTimeout)
	fill(&p.StreamIdleTimeout, DefaultStreamIdle)
	fill(&p.QuarantineDuration, DefaultQuarantine)
	fill(&p.RateLimitHold, DefaultRateLimitHold)
	fill(&p.QuotaExhaustedHold, DefaultQuotaExhaustedHold)
	if p.Resources == nil {
		p.Resources = &corev1.ResourceRequirements{}
	}
}

// fill sets an empty field to its default.
func fill[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}

// present sets an unset optional block to an empty one, whose fields then
// take their defaults, and returns it.
func present[T any](field **T) *T {
	if *field == nil {
		*field = new(T)
	}
	return *field
}

// setDefault points an unset optional field at its default.
func setDefault[T any](field **T, value T) {
	if *field == nil {
		*field = &value
	}
}
