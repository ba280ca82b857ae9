// Package wellknown holds the facts the compiler, the targets, the controller
// and the router-proxy must agree on: header names, paths, ports, the
// provider table, and the small rules (capabilities, globs, timeouts) that
// every data plane implements the same way. It is a leaf: it imports only
// the standard library, so the router-proxy can use it without Kubernetes.
//
// One home per fact: when a value here changes, every plane and the runtime
// change with it.
package wellknown

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// Request headers the router reads.
const (
	// ClassificationHeader carries the request's data classification unless
	// spec.policy.dataClassification.headerKey names another.
	ClassificationHeader = "x-llmkube-classification"
	// TeamHeader carries the caller's team for team budgets, and receives the
	// verified JWT team claim, unless the spec names another.
	TeamHeader = "x-llmkube-team"
	// TaskComplexityHeader carries the request's complexity hint.
	TaskComplexityHeader = "x-llmkube-task-complexity"
)

// The router-proxy's files, ports and admin paths.
const (
	// AuditFilePath is where a file audit sink writes unless the spec says otherwise.
	AuditFilePath = "/var/log/mlx-router/audit.log"
	// ConfigMount is where the router-proxy's configuration is mounted read-only.
	ConfigMount = "/etc/llmkube/router"
	// ConfigFile is the router-proxy's configuration under ConfigMount: the
	// key of the runtime config in the ConfigMap the Proxy target emits (and
	// the request-path model reads).
	ConfigFile = "config.json"
	// APIKeysMount is where the Secrets of policy.auth.apiKeys are mounted
	// read-only, each in its own directory (APIKeysDir).
	APIKeysMount = "/etc/llmkube/api-keys"
	// AdminPort serves /metrics, /ready and StatusPath.
	AdminPort int32 = 9090
	// StatusPath is the admin endpoint that serves the proxy's live status as JSON.
	StatusPath = "/status"
	// ConfigHashEnv carries the SHA-256 of the runtime config the pod's
	// template was rendered with (its router-config-hash annotation, by the
	// downward API). The router-proxy refuses to start on a config file with
	// another hash: a pod never serves one generation's config under another
	// generation's Deployment (docs/reliability.md#one-generation-per-pod).
	ConfigHashEnv = "LLMKUBE_CONFIG_SHA256"
	// BudgetStorePasswordEnv carries the budget store's password into the
	// router-proxy (from the operator's Secret).
	BudgetStorePasswordEnv = "LLMKUBE_BUDGET_STORE_PASSWORD"
	// OTLPEndpointEnv is the OpenTelemetry SDK's collector base URL: the
	// operator's --otlp-endpoint, rendered into every router-proxy when set.
	// With it the router-proxy exports traces and GenAI metrics, and its
	// audit log when the config's audit sink is otlp (the sink itself comes
	// from the config, never from the environment).
	OTLPEndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// OTLPHeadersEnv is the SDK's export headers (--otlp-header or
	// --otlp-headers-secret), in its KEY=VALUE,... form.
	OTLPHeadersEnv = "OTEL_EXPORTER_OTLP_HEADERS"
)

// Pod-level balancing defaults (spec.backends[].balancing): the compiler
// fills them into the spec, the router-proxy and the simulator apply them to
// a config that omits them.
const (
	BalancingBlockBytes  = 1024
	BalancingMaxBlocks   = 16384
	BalancingSessionIdle = 30 * time.Minute
)

// Health probe defaults (spec.backends[].healthCheck): the compiler fills
// them into the spec, the router-proxy applies them to a config that omits
// them.
const (
	HealthInterval = 10 * time.Second
	HealthTimeout  = 2 * time.Second
)

// Budget and ModelPool defaults: the compiler fills them into the spec, the
// router-proxy applies them to a config that omits them.
const (
	// BudgetWindow is a budget's rolling window when it names none
	// (spec.policy.budgets[].windowSeconds).
	BudgetWindow = time.Hour
	// RateLimitWindow is every policy.rateLimits counter's sliding window
	// (the limits are per minute; docs/rate-limits.md).
	RateLimitWindow = time.Minute
	// PoolSwapBudget bounds a hold for a ModelPool member when the pool
	// sets no swapBudget: the ModelPool CRD's own default (300s).
	PoolSwapBudget = 5 * time.Minute
)

// Upstream quota holds (docs/upstream-quota.md): how long the router-proxy
// skips an external backend whose provider refused a request for its
// quota, when the spec (spec.proxy.rateLimitHold, quotaExhaustedHold)
// names none.
const (
	// RateLimitHold is the hold of a rate limit whose answer announced no
	// reset: short, since most limits are per second or per minute and a
	// hold too short costs one round trip.
	RateLimitHold = time.Second
	// QuotaExhaustedHold is the hold of a spent quota (insufficient_quota
	// and its equivalents), which no reset header describes; it also caps
	// a rate limit's announced reset.
	QuotaExhaustedHold = 10 * time.Minute
)

// A rule's strategies (spec.rules[].route.strategy), spelled once for the
// API, the IR, the router-proxy's config and the planes' tables.
const (
	StrategyPrimaryFallback = "primary-fallback"
	StrategyWeighted        = "weighted"
	StrategyShadow          = "shadow"
)

// What a rule does when its backend is a ModelPool member that is not
// resident (spec.rules[].route.poolActivation), spelled once likewise.
const (
	PoolActivationWait   = "Wait"
	PoolActivationIfIdle = "IfIdle"
)

// The shared budget store's failure modes (the operator's and the
// router-proxy's --budget-store-failure, and the proxy's /status): what the
// router-proxy does while the store is down.
const (
	// BudgetStoreFailClosed (the default) refuses requests with 503.
	BudgetStoreFailClosed = "closed"
	// BudgetStoreFailOpen serves them and counts them per replica until the
	// store is back.
	BudgetStoreFailOpen = "open"
)

// CredentialHeaders carry credentials: they are never written to an audit
// entry as the caller (compared case-insensitively).
var CredentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

// IsCredentialHeader reports whether h is one of CredentialHeaders.
func IsCredentialHeader(h string) bool {
	for _, c := range CredentialHeaders {
		if strings.EqualFold(h, c) {
			return true
		}
	}
	return false
}

// HasCapabilities reports whether have contains every required capability.
func HasCapabilities(have, required []string) bool {
	for _, want := range required {
		found := false
		for _, c := range have {
			if c == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// HeaderTimeout resolves the response-header timeout of one dispatch:
// rule.timeout || backend.timeout || the proxy default, never above the
// proxy default (spec.proxy.responseHeaderTimeout is the ceiling; validation
// warns when a rule or backend asks for more).
func HeaderTimeout(rule, backend, proxyDefault time.Duration) time.Duration {
	d := proxyDefault
	switch {
	case rule > 0:
		d = rule
	case backend > 0:
		d = backend
	}
	return min(d, proxyDefault)
}

// AllowlistAllows reports whether an allowlist entry's models
// (policy.auth.allowlists[].models, globs) let its team use a model going
// by any of names: an entry without models allows every model. Every plane
// and the compiler's checks decide with it: the requested model is one
// name, a backend's model goes by several (ir.Backend.ModelNames).
func AllowlistAllows(models []string, names ...string) bool {
	if len(models) == 0 {
		return true
	}
	for _, g := range models {
		for _, n := range names {
			if n != "" && Glob(g, n) {
				return true
			}
		}
	}
	return false
}

// ModelNames is names without empty and repeated ones, in order: the names
// a backend's model goes by.
func ModelNames(names ...string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Glob matches s against a models glob: '*' matches any run of bytes
// (including '/'), '?' any single byte, everything else itself. This is the
// router-proxy's matcher and the meaning every plane reproduces.
func Glob(pattern, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				px++
				sx++
				continue
			default:
				if c == s[sx] {
					px++
					sx++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		px = starP + 1
		starS++
		sx = starS
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// IsGlob reports whether a models entry is a glob rather than a literal.
func IsGlob(s string) bool { return strings.ContainsAny(s, "*?") }

// GlobRE2 translates a models glob into the body of an RE2 pattern, neither
// anchored nor flagged: '*' becomes ".*", '?' ".", literal runs are quoted.
// RE2 matches runes where Glob matches bytes, so the two agree only on
// ASCII; a plane that cannot accept that difference refuses other globs.
func GlobRE2(glob string) string {
	var b strings.Builder
	lit := 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		if c != '*' && c != '?' {
			continue
		}
		b.WriteString(regexp.QuoteMeta(glob[lit:i]))
		if c == '*' {
			b.WriteString(".*")
		} else {
			b.WriteString(".")
		}
		lit = i + 1
	}
	b.WriteString(regexp.QuoteMeta(glob[lit:]))
	return b.String()
}

// ModelPool activation: the router-proxy makes a pool member resident by
// scaling its InferenceService, and serializes swaps across replicas (and
// across routers fronting the same pool) with one Lease per pool.
const (
	// PoolLeasePrefix names a pool's swap Lease: PoolLeasePrefix + pool, in
	// the pool's namespace.
	PoolLeasePrefix = "llmkube-pool-"
	// PoolSwapTargetAnnotation on the Lease names the member its holder is
	// making resident.
	PoolSwapTargetAnnotation = "inference.llmkube.dev/swap-target"
	// PodNameEnv carries the pod's name into the router-proxy (downward API):
	// it is the Lease holder identity.
	PodNameEnv = "POD_NAME"
	// MemberReadyPhase is the InferenceService status.phase of a member
	// that serves.
	MemberReadyPhase = "Ready"
	// MemberFailedPhase is the status.phase of a member that cannot load.
	MemberFailedPhase = "Failed"
)

// PoolLeaseName is the Lease that serializes a ModelPool's swaps.
func PoolLeaseName(pool string) string { return PoolLeasePrefix + pool }

// APIKeysDir is the directory the Secret of policy.auth.apiKeys named
// secretName is mounted at in the router-proxy (a Secret name is a DNS
// subdomain: no slash, so one directory level).
func APIKeysDir(secretName string) string { return APIKeysMount + "/" + secretName }
