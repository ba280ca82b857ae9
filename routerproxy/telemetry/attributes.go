package telemetry

import (
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// The routing decision's attributes, beside the GenAI conventions' own.
// docs/observability.md lists each.
const (
	AttrRouter        = "llmkube.router"
	AttrRule          = "llmkube.rule"
	AttrBackend       = "llmkube.backend"
	AttrTier          = "llmkube.tier"
	AttrOutcome       = "llmkube.outcome"
	AttrAttempts      = "llmkube.attempts"
	AttrAttempt       = "llmkube.attempt"
	AttrAttemptResult = "llmkube.attempt.result"
	AttrShadow        = "llmkube.shadow"
	AttrStream        = "llmkube.stream"
	AttrBudgetVerdict = "llmkube.budget.verdict"
	AttrBudget        = "llmkube.budget"
	AttrSLOPromoted   = "llmkube.slo_promoted"
	AttrPool          = "llmkube.pool"
	AttrPoolHoldMs    = "llmkube.pool.hold_ms"
	AttrTeam          = "llmkube.team"
	AttrTokensEst     = "llmkube.usage.estimated"
	// The request's classifications, where they came from, and the content
	// classifier's detectors that fired (never what they matched).
	AttrClassification       = "llmkube.classification"
	AttrClassificationSource = "llmkube.classification.source"
	AttrDetectors            = "llmkube.classifier.detectors"
)

// Budget verdicts (llmkube.budget.verdict).
const (
	BudgetAdmitted         = "admitted"
	BudgetExceeded         = "exceeded"
	BudgetStoreUnavailable = "store_unavailable"
)

// ProviderLocal is gen_ai.provider.name for an in-cluster backend (an
// LLMKube InferenceService or ModelPool member): the conventions have no
// value for self-hosted models, and the serving runtime is not known here.
const ProviderLocal = "llmkube"

// providerNames maps spec.backends[].external.provider to the conventions'
// gen_ai.provider.name; LiteLLM has no registered value and keeps its own.
var providerNames = map[string]string{
	wellknown.ProviderOpenAI:    semconv.GenAIProviderNameOpenAI.Value.AsString(),
	wellknown.ProviderAnthropic: semconv.GenAIProviderNameAnthropic.Value.AsString(),
	wellknown.ProviderBedrock:   semconv.GenAIProviderNameAWSBedrock.Value.AsString(),
	wellknown.ProviderVertexAI:  semconv.GenAIProviderNameGCPVertexAI.Value.AsString(),
	wellknown.ProviderLiteLLM:   wellknown.ProviderLiteLLM,
}

// Operation is gen_ai.operation.name for a serving path.
func Operation(path string) string {
	switch path {
	case "/v1/chat/completions":
		return semconv.GenAIOperationNameChat.Value.AsString()
	case "/v1/responses": // OpenAI's Responses API generates a chat turn too
		return semconv.GenAIOperationNameChat.Value.AsString()
	case "/v1/completions":
		return semconv.GenAIOperationNameTextCompletion.Value.AsString()
	case "/v1/embeddings":
		return semconv.GenAIOperationNameEmbeddings.Value.AsString()
	}
	return path
}

// Backend is what the spans and metrics say of one backend, resolved once.
type Backend struct {
	Name, Tier, Provider, Model string
	// External backends get no trace context (docs/observability.md).
	External bool
	// attrs are the attempt span's fixed attributes.
	attrs []attribute.KeyValue
}

func newBackend(b *proxyapi.Backend) Backend {
	out := Backend{Name: b.Name, Tier: b.Tier, Provider: ProviderLocal, Model: b.ModelID, External: b.Kind == proxyapi.KindExternal}
	if out.External {
		if p, ok := providerNames[b.Provider]; ok {
			out.Provider = p
		} else {
			out.Provider = b.Provider
		}
		if b.Model != "" {
			out.Model = b.Model
		}
	}
	if out.Model == "" {
		out.Model = b.Name
	}
	out.attrs = []attribute.KeyValue{
		semconv.GenAIProviderNameKey.String(out.Provider),
		semconv.GenAIRequestModelKey.String(out.Model),
		attribute.String(AttrBackend, b.Name),
		attribute.String(AttrTier, b.Tier),
	}
	if b.Pool != nil {
		out.attrs = append(out.attrs, attribute.String(AttrPool, b.Pool.Name))
	}
	base := b.URL
	if base == "" && out.External {
		base = wellknown.Providers[b.Provider].URL // the provider's published URL
	}
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		host, port := u.Hostname(), u.Port()
		out.attrs = append(out.attrs, semconv.ServerAddressKey.String(host))
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		if p, err := strconv.Atoi(port); err == nil {
			out.attrs = append(out.attrs, semconv.ServerPortKey.Int(p))
		}
	}
	return out
}
