// Package platform holds the settings a platform operator gives the tools
// that the ModelRouter API does not carry: which router-proxy image to deploy,
// the OpenTelemetry collector every router-proxy exports to (traces, GenAI
// metrics, and `sink: otlp` audit records) and the shared budget store. The
// CLI (render, validate, diff) and the controller bind the same flags from
// this one struct, so a router renders the same way from a laptop and in the
// cluster.
package platform

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// Flag names, written once: the CLI, the controller and the docs use these.
const (
	FlagProxyImage         = "proxy-image"
	FlagOTLPEndpoint       = "otlp-endpoint"
	FlagOTLPHeader         = "otlp-header"
	FlagOTLPHeadersSecret  = "otlp-headers-secret"
	FlagBudgetStore        = "budget-store"
	FlagBudgetStoreSecret  = "budget-store-password-secret"
	FlagBudgetStoreFailure = "budget-store-failure"
	otlpHeadersSecretUsage = "Secret NAME/KEY in the router's namespace whose value is the OTLP headers (k=v,k2=v2), for credentials; rendered as a secretKeyRef, never as a value"
)

// Settings are the operator's settings. The zero value is valid: the
// default router-proxy image, and no OTLP collector (so `sink: otlp` is
// refused, never silently lost).
type Settings struct {
	// ProxyImage is deployed when a router does not set spec.proxy.image.
	ProxyImage string
	// OTLP is where every router-proxy exports its traces and GenAI metrics,
	// and its audit records when its sink is otlp.
	OTLP OTLP
	// BudgetStore shares the router-proxy's budget counters across replicas
	// and restarts; the zero value keeps them in memory, per replica.
	BudgetStore BudgetStore
}

// BudgetStore is a Redis the router-proxies keep their budgets in and share
// their upstream quota holds on.
type BudgetStore struct {
	// URL is redis://HOST:PORT/DB (rediss:// for TLS).
	URL string
	// PasswordSecret, NAME/KEY, names a Secret key in the router's
	// namespace holding the password.
	PasswordSecret string
	// Failure is closed (the default: 503 while the store is down) or open
	// (serve and count per replica until it is back).
	Failure string
}

// OTLP is an OTLP/HTTP collector, handed to the router-proxy through the
// OpenTelemetry SDK's standard environment (OTEL_EXPORTER_OTLP_*).
type OTLP struct {
	// Endpoint is the collector's base URL (http or https), for example
	// http://otel-collector.observability:4318.
	Endpoint string
	// Headers are sent with every export (non-secret values only).
	Headers map[string]string
	// HeadersSecret, NAME/KEY, names a Secret key in the router's namespace
	// holding the headers, for tokens.
	HeadersSecret string
}

// Bind registers the settings' flags on fs.
func (s *Settings) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&s.ProxyImage, FlagProxyImage, s.ProxyImage, "router-proxy image to deploy when a router does not set spec.proxy.image (default: the image of this release)")
	s.BindOTLP(fs)
}

// BindOTLP binds only the OTLP collector settings: for a command that checks
// routers but deploys nothing (validate), where an image would be ignored.
func (s *Settings) BindOTLP(fs *pflag.FlagSet) {
	fs.StringVar(&s.OTLP.Endpoint, FlagOTLPEndpoint, s.OTLP.Endpoint, "OTLP/HTTP collector URL every router-proxy exports its traces and GenAI metrics to, and its audit log when policy.auditLog.sink is otlp (rendered as "+wellknown.OTLPEndpointEnv+")")
	fs.StringToStringVar(&s.OTLP.Headers, FlagOTLPHeader, s.OTLP.Headers, "OTLP export header KEY=VALUE (repeatable; rendered as "+wellknown.OTLPHeadersEnv+")")
	fs.StringVar(&s.OTLP.HeadersSecret, FlagOTLPHeadersSecret, s.OTLP.HeadersSecret, otlpHeadersSecretUsage)
	fs.StringVar(&s.BudgetStore.URL, FlagBudgetStore, s.BudgetStore.URL, "redis://HOST:PORT/DB the router-proxies keep budget counters and upstream quota holds in, shared across replicas and restarts (default: in memory, per replica)")
	fs.StringVar(&s.BudgetStore.PasswordSecret, FlagBudgetStoreSecret, s.BudgetStore.PasswordSecret, "Secret NAME/KEY in the router's namespace holding the budget store's password (a secretKeyRef)")
	fs.StringVar(&s.BudgetStore.Failure, FlagBudgetStoreFailure, s.BudgetStore.Failure, "while the budget store is down: closed (default) refuses with 503, open serves and counts per replica until it is back")
}

// Validate reports every malformed setting, each naming its flag.
func (s *Settings) Validate() error {
	errs := append(s.OTLP.problems(), s.BudgetStore.problems()...)
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

// problems are the OTLP settings' malformed ones.
func (o OTLP) problems() []string {
	var errs []string
	if e := o.Endpoint; e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Sprintf("--%s %q: must be an http:// or https:// URL with a host", FlagOTLPEndpoint, e))
		}
	}
	if len(o.Headers) > 0 && o.HeadersSecret != "" {
		errs = append(errs, fmt.Sprintf("--%s and --%s are exclusive: both set %s", FlagOTLPHeader, FlagOTLPHeadersSecret, wellknown.OTLPHeadersEnv))
	}
	for k, v := range o.Headers {
		if k == "" || strings.ContainsAny(k, "=, \t") || strings.ContainsAny(v, ",\r\n") {
			errs = append(errs, fmt.Sprintf("--%s %q: a header name may not be empty or hold '=', ',' or spaces, and a value may not hold ',' or a line break", FlagOTLPHeader, k+"="+v))
		}
	}
	if hs := o.HeadersSecret; hs != "" {
		if _, _, ok := o.SecretRef(); !ok {
			errs = append(errs, fmt.Sprintf("--%s %q: must be NAME/KEY", FlagOTLPHeadersSecret, hs))
		}
	}
	return errs
}

// problems are the budget store settings' malformed ones (none when no
// store is set).
func (bs BudgetStore) problems() []string {
	if bs.URL == "" && bs.PasswordSecret == "" && bs.Failure == "" {
		return nil
	}
	var errs []string
	if u, err := url.Parse(bs.URL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		errs = append(errs, fmt.Sprintf("--%s %q: must be a redis:// or rediss:// URL with a host", FlagBudgetStore, bs.URL))
	} else if u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			errs = append(errs, fmt.Sprintf("--%s: put the password in a Secret (--%s), not in the URL: it would be rendered into the Deployment", FlagBudgetStore, FlagBudgetStoreSecret))
		}
	}
	if bs.PasswordSecret != "" {
		if _, _, ok := secretRef(bs.PasswordSecret); !ok {
			errs = append(errs, fmt.Sprintf("--%s %q: must be NAME/KEY", FlagBudgetStoreSecret, bs.PasswordSecret))
		}
	}
	switch bs.Failure {
	case "", wellknown.BudgetStoreFailClosed, wellknown.BudgetStoreFailOpen:
	default:
		errs = append(errs, fmt.Sprintf("--%s %q: must be %s or %s", FlagBudgetStoreFailure, bs.Failure, wellknown.BudgetStoreFailClosed, wellknown.BudgetStoreFailOpen))
	}
	return errs
}

// SecretRef splits HeadersSecret into the Secret's name and key.
func (o OTLP) SecretRef() (name, key string, ok bool) {
	return secretRef(o.HeadersSecret)
}

// secretRef splits a NAME/KEY flag value into the Secret's name and key;
// ok is false unless both are set and the key holds no other slash.
func secretRef(s string) (name, key string, ok bool) {
	name, key, ok = strings.Cut(s, "/")
	return name, key, ok && name != "" && key != "" && !strings.Contains(key, "/")
}

// HeaderValue is Headers in OTEL_EXPORTER_OTLP_HEADERS form, sorted by key
// so the output is deterministic ("" when there are none).
func (o OTLP) HeaderValue() string {
	keys := make([]string, 0, len(o.Headers))
	for k := range o.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = url.PathEscape(k) + "=" + url.PathEscape(o.Headers[k])
	}
	return strings.Join(parts, ",")
}
