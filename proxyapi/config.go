// Package proxyapi is the contract between the compiler's Proxy target and the
// router-proxy: the versioned JSON config the proxy loads. It imports no
// Kubernetes package, so the proxy binary stays small and the contract can be
// read without the API types.
package proxyapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// APIVersion identifies this config schema. A proxy refuses a config whose
// apiVersion it does not know, so a new field can never be silently ignored
// by an older proxy.
const APIVersion = "router-proxy.llmkube.dev/v1"

// Config is the router-proxy's whole configuration.
type Config struct {
	APIVersion string       `json:"apiVersion"`
	Router     RouterInfo   `json:"router"`
	Timeouts   Timeouts     `json:"timeouts"`
	Backends   []Backend    `json:"backends"`
	Rules      []Rule       `json:"rules,omitempty"`
	Default    DefaultRoute `json:"defaultRoute"`
	Policy     Policy       `json:"policy"`
	// MCP, when set, serves /mcp (spec.mcpServer.enabled).
	MCP *MCP `json:"mcp,omitempty"`
}

// RouterInfo names the ModelRouter this config serves (metric labels, audit).
type RouterInfo struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Timeouts are the proxy-wide timeouts.
type Timeouts struct {
	// ResponseHeader caps the wait for upstream response headers; rule and
	// backend timeouts only tighten it.
	ResponseHeader Duration `json:"responseHeader"`
	// StreamIdle aborts a body that sends no byte for this long; 0 disables.
	StreamIdle Duration `json:"streamIdle"`
	// Quarantine is how long a failed backend is skipped.
	Quarantine Duration `json:"quarantine"`
	// RateLimitHold is how long an external backend is skipped after its
	// provider's rate limit when the answer announced no reset; 0: the
	// default (wellknown.RateLimitHold).
	RateLimitHold Duration `json:"rateLimitHold,omitzero"`
	// QuotaExhaustedHold is how long an external backend is skipped after
	// its provider said its quota is spent, and the longest a rate limit's
	// announced reset holds it; 0: the default (wellknown.QuotaExhaustedHold).
	QuotaExhaustedHold Duration `json:"quotaExhaustedHold,omitzero"`
}

// setHoldDefaults fills the upstream quota holds the config omits.
func (t *Timeouts) setHoldDefaults() {
	if t.RateLimitHold.Duration <= 0 {
		t.RateLimitHold.Duration = wellknown.RateLimitHold
	}
	if t.QuotaExhaustedHold.Duration <= 0 {
		t.QuotaExhaustedHold.Duration = wellknown.QuotaExhaustedHold
	}
}

// Backend kinds.
const (
	KindLocal    = "local"
	KindExternal = "external"
)

// Backend tiers: a cloud backend's requests leave the cluster.
const (
	TierLocal = "local"
	TierCloud = "cloud"
)

// Backend is one dispatch destination.
type Backend struct {
	Name string `json:"name"`
	// ModelID is the id published on /v1/models and matched by BackendNameMatch.
	ModelID string `json:"modelId"`
	Kind    string `json:"kind"`
	Tier    string `json:"tier"`
	// URL is the upstream base URL. Empty only for a Bedrock backend whose
	// region comes from its credentials at run time.
	URL      string `json:"url,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Model is the model name every request carries to this backend (the
	// client's is replaced): an external backend's model, a local backend's
	// served model name. Empty: the client's model is sent as it is.
	Model string `json:"model,omitempty"`
	// LearnModel (local backends) says Model is an assumption: the proxy
	// sends the first id the backend's GET /v1/models lists instead, once it
	// has read it.
	LearnModel bool `json:"learnModel,omitempty"`
	// ModelNames are the names the backend's model goes by for allowlists
	// (the compiler's ir.Backend.ModelNames: name, displayName, the
	// external model, the InferenceService and its modelRef); written
	// when policy.auth.allowlists are set. Unset, AllowNames falls back
	// to name, modelId and model.
	ModelNames   []string     `json:"modelNames,omitempty"`
	Credentials  []Credential `json:"credentials,omitempty"`
	Capabilities []string     `json:"capabilities,omitempty"`
	Weight       int32        `json:"weight"`
	Timeout      Duration     `json:"timeout,omitzero"`
	HealthCheck  HealthCheck  `json:"healthCheck"`
	Cost         *Cost        `json:"cost,omitempty"`
	Pool         *Pool        `json:"pool,omitempty"`
	ModelInfo    ModelInfo    `json:"modelInfo"`
	// Endpoints is set for endpoint resolution: the proxy watches the
	// Service's EndpointSlices and balances across ready pods.
	Endpoints *Endpoints `json:"endpoints,omitempty"`
}

// AllowNames are the names an allowlist entry matches to let a team be
// served by the backend: ModelNames, else its name, model id and model.
func (b *Backend) AllowNames() []string {
	if len(b.ModelNames) > 0 {
		return b.ModelNames
	}
	return wellknown.ModelNames(b.Name, b.ModelID, b.Model)
}

// Credential says which environment variable holds which credential.
type Credential struct {
	Purpose string `json:"purpose"`
	Env     string `json:"env"`
}

// HealthCheck is the backend's active probe.
type HealthCheck struct {
	Path     string   `json:"path"`
	Interval Duration `json:"interval"`
	Timeout  Duration `json:"timeout"`
}

// Cost is the price per million tokens as exact decimal strings.
type Cost struct {
	PromptUSD     string `json:"promptUSD,omitempty"`
	CompletionUSD string `json:"completionUSD,omitempty"`
}

// Pool is a backend's ModelPool membership.
type Pool struct {
	Name             string   `json:"name"`
	InferenceService string   `json:"inferenceService"`
	Members          []string `json:"members"`
	Default          string   `json:"default,omitempty"`
	SwapBudget       Duration `json:"swapBudget,omitzero"`
}

// ModelInfo is what /v1/models publishes beyond the id.
type ModelInfo struct {
	ContextLength    int64    `json:"contextLength,omitempty"`
	InputModalities  []string `json:"inputModalities"`
	OutputModalities []string `json:"outputModalities"`
}

// Endpoints configures pod-level resolution and balancing.
type Endpoints struct {
	Service   string    `json:"service"`
	Namespace string    `json:"namespace"`
	Port      int32     `json:"port"`
	Balancing Balancing `json:"balancing"`
}

// Balancing places requests on pods.
type Balancing struct {
	Mode            string           `json:"mode"`
	PrefixAffinity  *PrefixAffinity  `json:"prefixAffinity,omitempty"`
	SessionAffinity *SessionAffinity `json:"sessionAffinity,omitempty"`
}

// PrefixAffinity remembers prompt blocks per pod.
type PrefixAffinity struct {
	BlockBytes           int32 `json:"blockBytes"`
	MaxBlocksPerEndpoint int32 `json:"maxBlocksPerEndpoint"`
}

// SessionAffinity binds sessions to pods.
type SessionAffinity struct {
	Headers     []string `json:"headers"`
	IdleTimeout Duration `json:"idleTimeout"`
}

// The contract's vocabulary, spelled once: the compiler writes these values
// and the proxy reads them.

// Strategy is how a rule dispatches among its backends.
type Strategy string

const (
	StrategyPrimaryFallback Strategy = wellknown.StrategyPrimaryFallback
	StrategyWeighted        Strategy = wellknown.StrategyWeighted
	StrategyShadow          Strategy = wellknown.StrategyShadow
)

// The classification modes (policy.classification.mode).
const (
	ClassificationHeaderOnly = "header-only"
	ClassificationDetector   = "detector"
	ClassificationHybrid     = "hybrid"
)

// DefaultStrategy is how the default route picks a backend.
type DefaultStrategy string

const (
	DefaultStatic           DefaultStrategy = "Static"
	DefaultBackendNameMatch DefaultStrategy = "BackendNameMatch"
)

// PoolActivation is what a rule does when its backend is a ModelPool
// member that is not resident.
type PoolActivation string

const (
	PoolActivationWait   PoolActivation = wellknown.PoolActivationWait
	PoolActivationIfIdle PoolActivation = wellknown.PoolActivationIfIdle
)

// The balancing modes (endpoints.balancing.mode).
const (
	BalancingRoundRobin = "RoundRobin"
	BalancingLoadAware  = "LoadAware"
)

// The budget scopes (policy.budgets[].scope): every request, one rule's
// (RuleName), or one team's (the HeaderKey header, one count per team).
const (
	ScopeRouter = "router"
	ScopeRule   = "rule"
	ScopeTeam   = "team"
)

// AuditSink is where audit entries go.
type AuditSink string

const (
	SinkStdout AuditSink = "stdout"
	SinkFile   AuditSink = "file"
	SinkOTLP   AuditSink = "otlp"
)

// Rule is one routing rule; rules are evaluated in order, first match wins.
type Rule struct {
	Name  string `json:"name"`
	Match Match  `json:"match"`
	// Backends are the rule's candidates in order: only backends that
	// advertise every required capability are listed.
	Backends       []string       `json:"backends"`
	Strategy       Strategy       `json:"strategy"`
	PoolActivation PoolActivation `json:"poolActivation"`
	FailClosed     bool           `json:"failClosed"`
	Timeout        Duration       `json:"timeout,omitzero"`
}

// Match holds a rule's ANDed conditions.
type Match struct {
	Models               []string      `json:"models,omitempty"`
	Headers              []HeaderMatch `json:"headers,omitempty"`
	DataClassification   []string      `json:"dataClassification,omitempty"`
	TaskComplexity       string        `json:"taskComplexity,omitempty"`
	RequiredCapabilities []string      `json:"requiredCapabilities,omitempty"`
	LatencySLO           Duration      `json:"latencySLO,omitzero"`
}

// HeaderMatch is an exact-value header match; Name is lowercase.
type HeaderMatch struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DefaultRoute is what happens when no rule matches.
type DefaultRoute struct {
	Strategy DefaultStrategy `json:"strategy"`
	Backend  string          `json:"backend,omitempty"`
}

// MCP is spec.mcpServer: the router-proxy serves /mcp.
type MCP struct {
	// ResourceURL is the endpoint as clients reach it: the protected
	// resource of the RFC 9728 metadata and the audience every token names.
	ResourceURL string `json:"resourceURL"`
}

// Policy holds classification, budgets, audit and auth settings.
type Policy struct {
	Classification Classification `json:"classification"`
	Budgets        []Budget       `json:"budgets,omitempty"`
	Audit          Audit          `json:"audit"`
	// Auth is enforced before any routing or budget; nil lets every caller in.
	Auth *Auth `json:"auth,omitempty"`
	// RateLimits are counted per verified team or API key, beside the
	// budgets and in the same store.
	RateLimits []RateLimit `json:"rateLimits,omitempty"`
}

// The rate-limit scopes (policy.rateLimits[].scope): one counter per
// verified team, or per API key name.
const (
	RateLimitScopeTeam = "team"
	RateLimitScopeKey  = "key"
)

// RateLimit caps the requests and tokens per minute (over a sliding window
// of wellknown.RateLimitWindow) of each team or API key of its scope.
type RateLimit struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// Teams and Keys, when set, are the only teams and key names counted.
	Teams []string `json:"teams,omitempty"`
	Keys  []string `json:"keys,omitempty"`
	// The caps; 0 is unset.
	RequestsPerMinute     int64 `json:"requestsPerMinute,omitempty"`
	InputTokensPerMinute  int64 `json:"inputTokensPerMinute,omitempty"`
	OutputTokensPerMinute int64 `json:"outputTokensPerMinute,omitempty"`
}

// Auth is policy.auth: JWT authentication and per-team model allowlists.
type Auth struct {
	JWT *JWT `json:"jwt,omitempty"`
	// Allowlists, when set, deny every team and model they do not list.
	// They require JWT or API keys: a team is only ever a verified one.
	Allowlists []Allowlist `json:"allowlists,omitempty"`
	// APIKeys admit callers by keys read from mounted Secrets (apikeys.go).
	APIKeys []APIKeySource `json:"apiKeys,omitempty"`
}

// JWT configures bearer-token verification.
type JWT struct {
	Provider string `json:"provider,omitempty"`
	// Issuer must equal the token's iss claim.
	Issuer string `json:"issuer"`
	// JWKSURI serves the issuer's signing keys.
	JWKSURI string `json:"jwksURI"`
	// TeamClaim is the claim naming the caller's team.
	TeamClaim string `json:"teamClaim"`
	// HeaderKey receives the verified team; a client-sent value is removed.
	HeaderKey string `json:"headerKey"`
	// Audiences, when set, are the aud values the HTTP API accepts a token
	// for (one must be named); see HTTPAudiences for the MCP resource.
	Audiences []string `json:"audiences,omitempty"`
}

// HTTPAudiences are the audiences the HTTP API (/v1/...) accepts a token
// for: policy.auth.jwt.audiences and, with MCP, the MCP resource URL (the
// MCP endpoint's tokens are this router's, and a tool call is served by the
// HTTP API's handler with the caller's token). Empty: no audience is
// checked. /mcp itself accepts only the resource URL (docs/mcp.md).
func (c *Config) HTTPAudiences() []string {
	var out []string
	if a := c.Policy.Auth; a != nil && a.JWT != nil {
		out = append(out, a.JWT.Audiences...)
	}
	if c.MCP != nil && c.MCP.ResourceURL != "" && !slices.Contains(out, c.MCP.ResourceURL) {
		out = append(out, c.MCP.ResourceURL)
	}
	return out
}

// Allowlist grants one team its models (globs; none means every model).
type Allowlist struct {
	Team   string   `json:"team"`
	Models []string `json:"models,omitempty"`
}

// Classification says where a request's classification comes from.
type Classification struct {
	// Mode is header-only (the header's values), detector (the content
	// classifier's) or hybrid (both); "" is header-only.
	Mode      string   `json:"mode"`
	HeaderKey string   `json:"headerKey"`
	Sensitive []string `json:"sensitive"`
}

// Budget caps tokens and cost over a rolling window.
type Budget struct {
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	RuleName  string   `json:"ruleName,omitempty"`
	HeaderKey string   `json:"headerKey,omitempty"`
	MaxTokens int64    `json:"maxTokens,omitempty"`
	MaxUSD    string   `json:"maxUSD,omitempty"`
	Window    Duration `json:"window"`
}

// Audit configures audit entries.
type Audit struct {
	Sink               AuditSink `json:"sink"`
	FilePath           string    `json:"filePath,omitempty"`
	IncludeRequestBody bool      `json:"includeRequestBody"`
	CallerHeader       string    `json:"callerHeader,omitempty"`
	LogClientAddress   bool      `json:"logClientAddress"`
	TrustedProxyCIDRs  []string  `json:"trustedProxyCIDRs,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("1m30s"),
// never as integer nanoseconds.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// IsZero lets the omitzero tag drop unset durations.
func (d Duration) IsZero() bool { return d.Duration == 0 }

// Marshal renders the config as indented JSON with a trailing newline. The
// bytes are deterministic: the config hash is computed over them.
func Marshal(c *Config) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Hash is the SHA-256 (hex) of a config file's bytes: the generation the
// compiler stamps on the ConfigMap and the pod template, and the one
// LoadGeneration checks the mounted file against.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Parse decodes a config strictly (an unknown field is an error) and validates it.
func Parse(r io.Reader) (*Config, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode router-proxy config: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode router-proxy config: trailing data after the JSON object")
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) {
	c, _, err := LoadGeneration(path, "")
	return c, err
}

// LoadGeneration is Load for a file that must have the SHA-256 want (hex;
// "" accepts any): the hash its pod's template was rendered with. A file
// with another hash is another generation's ConfigMap (the Deployment not
// yet updated, or already updated past it); serving it would mix two
// generations in one pod (docs/reliability.md#one-generation-per-pod). It
// returns the file's SHA-256.
func LoadGeneration(path, want string) (*Config, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	got := Hash(b)
	if want != "" && got != want {
		return nil, "", fmt.Errorf("%s has SHA-256 %s but this pod was rendered for %s (%s): the config belongs to another generation of the router; not serving it",
			path, got, want, wellknown.ConfigHashEnv)
	}
	c, err := Parse(bytes.NewReader(b))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return c, got, nil
}

// SetDefaults fills the fields a hand-written config may leave out. The
// compiler always writes them (from the same api/wellknown defaults); they
// are applied here once, at load, so the engine reads every value as set.
func (c *Config) SetDefaults() {
	if c.Policy.Classification.HeaderKey == "" {
		c.Policy.Classification.HeaderKey = wellknown.ClassificationHeader
	}
	if c.Policy.Classification.Mode == "" {
		c.Policy.Classification.Mode = ClassificationHeaderOnly
	}
	if a := c.Policy.Auth; a != nil && a.JWT != nil && a.JWT.HeaderKey == "" {
		a.JWT.HeaderKey = wellknown.TeamHeader
	}
	if c.Policy.Audit.Sink == SinkFile && c.Policy.Audit.FilePath == "" {
		c.Policy.Audit.FilePath = wellknown.AuditFilePath
	}
	c.Timeouts.setHoldDefaults()
	for i := range c.Backends {
		b := &c.Backends[i]
		if p := b.Pool; p != nil && p.SwapBudget.Duration <= 0 {
			p.SwapBudget.Duration = wellknown.PoolSwapBudget
		}
		if b.HealthCheck.Interval.Duration <= 0 {
			b.HealthCheck.Interval.Duration = wellknown.HealthInterval
		}
		if b.HealthCheck.Timeout.Duration <= 0 {
			b.HealthCheck.Timeout.Duration = wellknown.HealthTimeout
		}
	}
	for i := range c.Policy.Budgets {
		b := &c.Policy.Budgets[i]
		if b.HeaderKey == "" && b.Scope == ScopeTeam {
			b.HeaderKey = wellknown.TeamHeader
		}
		if b.Window.Duration <= 0 {
			b.Window.Duration = wellknown.BudgetWindow
		}
	}
}

// Validate checks the invariants the proxy relies on. The compiler guarantees
// them; the proxy checks again because the file may have been written by hand.
// Each section is checked by its own method; the errors keep the order of the
// sections so a hand-written file reads its problems top to bottom.
func (c *Config) Validate() error {
	errs := c.validateTop(nil)
	backends, errs := c.validateBackends(errs)
	errs = c.validatePolicy(errs)
	rules, errs := c.validateRules(backends, errs)
	errs = c.validateMCP(errs)
	errs = c.validateDefault(backends, errs)
	errs = c.validateAuth(errs)
	errs = c.validateBudgets(rules, errs)
	errs = c.validateRateLimits(errs)
	return errors.Join(errs...)
}

// validateTop checks the fields outside any list: version, that there is
// something to route to, and the timeouts.
func (c *Config) validateTop(errs []error) []error {
	if c.APIVersion != APIVersion {
		errs = append(errs, fmt.Errorf("apiVersion %q is not supported (want %q)", c.APIVersion, APIVersion))
	}
	if len(c.Backends) == 0 {
		errs = append(errs, errors.New("backends: at least one backend is required"))
	}
	if c.Timeouts.ResponseHeader.Duration <= 0 {
		errs = append(errs, errors.New("timeouts.responseHeader must be positive"))
	}
	if c.Timeouts.StreamIdle.Duration < 0 || c.Timeouts.Quarantine.Duration < 0 || c.Timeouts.RateLimitHold.Duration < 0 || c.Timeouts.QuotaExhaustedHold.Duration < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	return errs
}

// validateBackends checks each backend and returns the set of their names,
// which rules and the default route reference.
func (c *Config) validateBackends(errs []error) (map[string]bool, []error) {
	names := map[string]bool{}
	for i, b := range c.Backends {
		if b.Name == "" {
			errs = append(errs, fmt.Errorf("backends[%d].name is required", i))
		}
		if names[b.Name] {
			errs = append(errs, fmt.Errorf("backends[%d].name %q is duplicated", i, b.Name))
		}
		names[b.Name] = true
		errs = c.Backends[i].validate(i, errs)
	}
	return names, errs
}

// validate checks one backend's own fields; i is its index for the field path.
func (b *Backend) validate(i int, errs []error) []error {
	if b.Kind != KindLocal && b.Kind != KindExternal {
		errs = append(errs, fmt.Errorf("backends[%d].kind %q must be %q or %q", i, b.Kind, KindLocal, KindExternal))
	}
	if b.Tier != TierLocal && b.Tier != TierCloud {
		errs = append(errs, fmt.Errorf("backends[%d].tier %q must be %s or %s", i, b.Tier, TierLocal, TierCloud))
	}
	if b.URL == "" && !(b.Kind == KindExternal && b.Provider == wellknown.ProviderBedrock) {
		errs = append(errs, fmt.Errorf("backends[%d].url is required", i))
	}
	return errs
}

// validatePolicy checks the classification mode and the audit caller header.
func (c *Config) validatePolicy(errs []error) []error {
	switch c.Policy.Classification.Mode {
	case ClassificationHeaderOnly, ClassificationDetector, ClassificationHybrid:
	default:
		// A mode this proxy does not know could be a classifier it lacks:
		// serving without it would send unlabelled sensitive data anywhere.
		errs = append(errs, fmt.Errorf("policy.classification.mode %q is not supported (want %s, %s or %s)", c.Policy.Classification.Mode, ClassificationHeaderOnly, ClassificationDetector, ClassificationHybrid))
	}
	if wellknown.IsCredentialHeader(c.Policy.Audit.CallerHeader) {
		errs = append(errs, fmt.Errorf("policy.audit.callerHeader %q carries a credential and would be written to every audit entry", c.Policy.Audit.CallerHeader))
	}
	return errs
}

// validateRules checks each rule against the backend names and returns the
// set of rule names, which rule-scoped budgets reference.
func (c *Config) validateRules(backends map[string]bool, errs []error) (map[string]bool, []error) {
	rules := map[string]bool{}
	for i, r := range c.Rules {
		if rules[r.Name] {
			errs = append(errs, fmt.Errorf("rules[%d].name %q is duplicated", i, r.Name))
		}
		rules[r.Name] = true
		for j, b := range r.Backends {
			if !backends[b] {
				errs = append(errs, fmt.Errorf("rules[%d].backends[%d] references unknown backend %q", i, j, b))
			}
		}
		switch r.Strategy {
		case StrategyPrimaryFallback, StrategyWeighted, StrategyShadow:
		default:
			errs = append(errs, fmt.Errorf("rules[%d].strategy %q is not supported", i, r.Strategy))
		}
	}
	return rules, errs
}

// validateMCP checks the MCP section, when there is one.
func (c *Config) validateMCP(errs []error) []error {
	if c.MCP == nil {
		return errs
	}
	if u, err := url.Parse(c.MCP.ResourceURL); err != nil || !u.IsAbs() || u.Host == "" {
		errs = append(errs, fmt.Errorf("mcp.resourceURL %q must be an absolute URL", c.MCP.ResourceURL))
	}
	if c.Policy.Auth == nil || c.Policy.Auth.JWT == nil {
		errs = append(errs, errors.New("mcp requires policy.auth.jwt: the router-proxy serves no anonymous MCP"))
	}
	return errs
}

// validateDefault checks the default route against the backend names.
func (c *Config) validateDefault(backends map[string]bool, errs []error) []error {
	if c.Default.Backend != "" && !backends[c.Default.Backend] {
		errs = append(errs, fmt.Errorf("defaultRoute.backend references unknown backend %q", c.Default.Backend))
	}
	switch c.Default.Strategy {
	case DefaultStatic, DefaultBackendNameMatch:
	default:
		errs = append(errs, fmt.Errorf("defaultRoute.strategy %q is not supported", c.Default.Strategy))
	}
	return errs
}

// validateAuth checks the JWT verifier and that allowlists have one to name
// their teams.
func (c *Config) validateAuth(errs []error) []error {
	a := c.Policy.Auth
	if a == nil {
		return errs
	}
	if j := a.JWT; j != nil {
		if u, err := url.Parse(j.JWKSURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("policy.auth.jwt.jwksURI %q must be an http(s) URL", j.JWKSURI))
		}
		if j.Issuer == "" || j.TeamClaim == "" {
			errs = append(errs, errors.New("policy.auth.jwt: issuer and teamClaim are required"))
		}
	}
	return a.validateAPIKeys(errs)
}

// validateBudgets checks that rule-scoped budgets name a rule that exists.
func (c *Config) validateBudgets(rules map[string]bool, errs []error) []error {
	for i, b := range c.Policy.Budgets {
		if b.Scope == ScopeRule && !rules[b.RuleName] {
			errs = append(errs, fmt.Errorf("policy.budgets[%d].ruleName references unknown rule %q", i, b.RuleName))
		}
	}
	return errs
}
