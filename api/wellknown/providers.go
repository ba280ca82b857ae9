package wellknown

// Credential purposes: what a Secret key is used for. The router-proxy and
// the gateway targets read credentials by purpose, never by key.
const (
	PurposeAPIKey          = "apiKey"
	PurposeAWSAccessKeyID  = "awsAccessKeyId"
	PurposeAWSSecretKey    = "awsSecretAccessKey"
	PurposeAWSSessionToken = "awsSessionToken"
	PurposeAWSRegion       = "awsRegion"
	PurposeGoogleSAJSON    = "googleServiceAccountJSON"
)

// Provider names, as spec.backends[].external.provider spells them.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderBedrock   = "bedrock"
	ProviderVertexAI  = "vertex_ai"
	ProviderLiteLLM   = "litellm"
)

// CredentialKey is one conventional key of a provider's credentials Secret.
type CredentialKey struct {
	Purpose string
	Key     string
	// Optional keys may be absent: the backend serves without them.
	Optional bool
}

// ProviderInfo is everything the compiler and the router-proxy know about
// one external provider. Adding a provider is one row here, plus its
// translator in package providers when it does not speak OpenAI.
type ProviderInfo struct {
	// URL is the published base URL; empty when it depends on the
	// credentials (Bedrock's region) or must be given (LiteLLM).
	URL string
	// HealthPath is the default active health-check path; empty for none.
	HealthPath string
	// Credentials are the conventional Secret keys.
	Credentials []CredentialKey
	// Translated is true when the provider does not speak the OpenAI API and
	// the router-proxy translates requests and answers.
	Translated bool
}

// Providers is the provider table.
var Providers = map[string]ProviderInfo{
	ProviderAnthropic: {URL: "https://api.anthropic.com", HealthPath: "/v1/models", Translated: true,
		Credentials: []CredentialKey{{Purpose: PurposeAPIKey, Key: "ANTHROPIC_API_KEY"}}},
	ProviderOpenAI: {URL: "https://api.openai.com", HealthPath: "/v1/models",
		Credentials: []CredentialKey{{Purpose: PurposeAPIKey, Key: "OPENAI_API_KEY"}}},
	ProviderLiteLLM: {HealthPath: "/health/liveliness",
		Credentials: []CredentialKey{{Purpose: PurposeAPIKey, Key: "LITELLM_MASTER_KEY"}}},
	ProviderBedrock: {Translated: true, Credentials: []CredentialKey{
		{Purpose: PurposeAWSAccessKeyID, Key: "AWS_ACCESS_KEY_ID"},
		{Purpose: PurposeAWSSecretKey, Key: "AWS_SECRET_ACCESS_KEY"},
		{Purpose: PurposeAWSSessionToken, Key: "AWS_SESSION_TOKEN", Optional: true},
		{Purpose: PurposeAWSRegion, Key: "AWS_REGION", Optional: true},
	}},
	ProviderVertexAI: {URL: "https://aiplatform.googleapis.com", Translated: true,
		Credentials: []CredentialKey{{Purpose: PurposeGoogleSAJSON, Key: "GOOGLE_APPLICATION_CREDENTIALS_JSON"}}},
}

// OptionalCredential reports whether a backend can serve without the
// credential of this purpose.
func OptionalCredential(purpose string) bool {
	for _, p := range Providers {
		for _, c := range p.Credentials {
			if c.Purpose == purpose {
				return c.Optional
			}
		}
	}
	return false
}
