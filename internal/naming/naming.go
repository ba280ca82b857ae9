// Package naming builds every generated object name and the stable labels, in
// one place, so two routers in one namespace never collide and every target
// agrees on what a name is.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Label keys stamped on every generated object.
const (
	LabelApp       = "app"
	LabelRouter    = "inference.llmkube.dev/model-router"
	LabelName      = "app.kubernetes.io/name"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelPartOf    = "app.kubernetes.io/part-of"

	// LabelRouterNamespace names the router's namespace on objects generated
	// outside it (the AgentGateway model-extraction policy in a Gateway's
	// namespace), which carry no owner reference: the controller's finalizer
	// finds them by this label, LabelRouter and LabelManagedBy.
	LabelRouterNamespace = "inference.llmkube.dev/model-router-namespace"
	// LabelInferenceService is the label the LLMKube operator sets on every
	// inference pod of an InferenceService, valued with its name.
	LabelInferenceService = "inference.llmkube.dev/service"

	// ManagedBy is the managed-by label value and the server-side apply field manager.
	ManagedBy = "llmkube-compile"
	// ConfigHashAnnotation carries the runtime config's hash on the ConfigMap and the pod template.
	ConfigHashAnnotation = "inference.llmkube.dev/router-config-hash"
)

// maxLabel is the longest DNS-1035 label / label value.
const maxLabel = 63

// DNSLabel turns base plus suffix into a valid DNS-1035 label of at most 63
// characters. Dots and other invalid characters become '-', a leading digit
// gets an "r" prefix, and a name that would be too long is cut and given a
// hash of the full name so distinct inputs stay distinct.
func DNSLabel(base, suffix string) string {
	full := sanitize(base)
	if full != base {
		// Sanitising folds distinct names together (my.router, my-router):
		// keep them apart with a hash of the name as written.
		full += "-" + shortHash(base)
	}
	if suffix != "" {
		full += "-" + sanitize(suffix)
	}
	if full == "" || full[0] < 'a' || full[0] > 'z' {
		full = "r" + full
	}
	return truncate(full, maxLabel)
}

// LabelValue turns a name into a valid label value (at most 63 characters).
func LabelValue(name string) string {
	if len(name) <= maxLabel {
		return name
	}
	return truncate(name, maxLabel)
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	h := shortHash(s)
	head := strings.TrimRight(s[:max-len(h)-1], "-.")
	return head + "-" + h
}

// shortHash is 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

func sanitize(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// ProxyName is the router-proxy Deployment, ConfigMap and default Service name.
func ProxyName(router string) string { return DNSLabel(router, "router-proxy") }

// ProxyAdminServiceName is the admin Service's name.
func ProxyAdminServiceName(router string) string { return DNSLabel(router, "router-proxy-admin") }

// SelectorLabels are the immutable labels the proxy Deployment and Services select on.
func SelectorLabels(router string) map[string]string {
	return map[string]string{
		LabelApp:    ProxyName(router),
		LabelRouter: LabelValue(router),
	}
}

// ObjectLabels are the stable labels on every object generated for a router;
// the controller's inventory selects on LabelRouter and LabelManagedBy.
func ObjectLabels(router, component string) map[string]string {
	l := map[string]string{
		LabelRouter:    LabelValue(router),
		LabelName:      "llmkube",
		LabelManagedBy: ManagedBy,
		LabelPartOf:    "llmkube",
	}
	if component != "" {
		l[LabelComponent] = component
	}
	return l
}

// InferenceServiceServiceName is the Service the LLMKube operator creates for
// an InferenceService: its name with dots turned into dashes (a Service name
// is a DNS-1035 label; the operator's sanitizeDNSName). InferenceService
// names are DNS subdomains, so nothing else needs changing. Pods keep the
// raw name in their label (InferenceServicePodSelector).
func InferenceServiceServiceName(inferenceService string) string {
	return strings.ReplaceAll(inferenceService, ".", "-")
}

// InferenceServicePodSelector selects an InferenceService's inference pods in
// its namespace, by the label the LLMKube operator sets on them.
func InferenceServicePodSelector(inferenceService string) map[string]string {
	return map[string]string{LabelInferenceService: LabelValue(inferenceService)}
}

// AgentGatewayPoolName is the InferencePool generated for a router's InferenceService.
func AgentGatewayPoolName(router, inferenceService string) string {
	return DNSLabel(router, inferenceService+"-pool")
}

// AgentGatewayRouteName is the HTTPRoute a router attaches to its agentgateway Gateway.
func AgentGatewayRouteName(router string) string { return DNSLabel(router, "agentgateway") }

// AgentGatewayAuthPolicyName is the AgentgatewayPolicy that enforces a
// router's policy.auth on its HTTPRoute.
func AgentGatewayAuthPolicyName(router string) string { return DNSLabel(router, "agentgateway-auth") }

// AgentGatewayServingAuthPolicyName is the AgentgatewayPolicy that admits,
// on the HTTPRoute rules a backend serves, only the teams whose allowlist
// names its model.
func AgentGatewayServingAuthPolicyName(router, backend string) string {
	return DNSLabel(router, backend+"-allowlist")
}

// AgentGatewayUpstreamModelPolicyName is the AgentgatewayPolicy that, on
// the HTTPRoute rules a backend serves, rewrites the request's model to the
// name its runtime serves.
func AgentGatewayUpstreamModelPolicyName(router, backend string) string {
	return DNSLabel(router, backend+"-model-name")
}

// AgentGatewayModelName is the AgentgatewayModel generated for a router's backend.
func AgentGatewayModelName(router, backend string) string { return DNSLabel(router, backend+"-model") }

// AgentGatewayPolicyName is the model-extraction AgentgatewayPolicy. In the
// router's own namespace it is <router>-model-extraction; in a Gateway's
// namespace, where routers of several namespaces may meet, a hash of the
// router's namespace and name keeps it unique.
func AgentGatewayPolicyName(routerNamespace, router string, crossNamespace bool) string {
	if !crossNamespace {
		return DNSLabel(router, "model-extraction")
	}
	sum := sha256.Sum256([]byte(routerNamespace + "/" + router))
	h := hex.EncodeToString(sum[:])[:8]
	return DNSLabel(router, "model-extraction-"+h)
}

// Scoped names an object generated for one router: the router's name, then
// parts, as one DNS-1035 label (hash-truncated when too long). Two routers
// in a namespace never share a scoped name unless the pipeline's collision
// check reports it.
func Scoped(router string, parts ...string) string {
	return DNSLabel(router, strings.Join(parts, "-"))
}

// SubdomainPart is a name part that must stay a valid DNS-1123 subdomain
// label (lowercase alphanumerics and '-'), hash-truncated to max characters.
func SubdomainPart(s string, max int) string {
	out := sanitize(s)
	if out == "" {
		out = "x"
	}
	return truncate(out, max)
}

// GatewayRouteName names the n-th AIGatewayRoute of a router (n from 0): the
// router's scoped name, then "-part-2", "-part-3" when its rules are split
// over several routes.
func GatewayRouteName(router string, n int) string { return numbered(router, "part", n) }

// GatewayTrafficPolicyName names the n-th BackendTrafficPolicy of a router
// (n from 0): the router's scoped name, then "-traffic-2", ...
func GatewayTrafficPolicyName(router string, n int) string { return numbered(router, "traffic", n) }

// GatewayBackendName names the AIServiceBackend (and Backend) of one router backend.
func GatewayBackendName(router, backend string) string { return Scoped(router, backend) }

// GatewaySecurityPolicyName names the router's SecurityPolicy.
func GatewaySecurityPolicyName(router string) string { return Scoped(router) }

// GatewayRuleSecurityPolicyName is the SecurityPolicy on one rule (HTTPRoute
// section) of a router's route whose backends some team may not use.
func GatewayRuleSecurityPolicyName(router, rule string) string {
	return DNSLabel(router, "allow-"+rule)
}

// GatewayAllowRuleName names the authorization rule of the i-th allowlist
// entry inside the SecurityPolicy.
func GatewayAllowRuleName(team string, i int) string {
	return fmt.Sprintf("allow-%s-%d", SubdomainPart(team, 40), i)
}

func numbered(router, kind string, n int) string {
	if n == 0 {
		return Scoped(router)
	}
	return Scoped(router, fmt.Sprintf("%s-%d", kind, n+1))
}

// AnnotationBudgetRules, on a BackendTrafficPolicy, names the budget each
// of its global rate-limit rules counts for, in rule order, comma-separated
// (a budget with both maxTokens and maxUSD has two rules). Envoy Gateway's
// rules carry no name of their own.
const AnnotationBudgetRules = "inference.llmkube.dev/budget-rules"

// GatewayJWTProviderName names the JWT provider of a router's SecurityPolicy.
// Envoy Gateway stores a verified token's claims under the provider's name
// (jwt_authn payload_in_metadata) and the authorization rules read them from
// there, so the name must be the router's alone: two routers, or a foreign
// policy, naming their providers alike would read each other's claims.
// Envoy Gateway also requires a qualified name (a label key: an optional DNS
// subdomain prefix, "/", and at most 63 characters of [A-Za-z0-9-_.]), and
// refuses the whole SecurityPolicy otherwise. It is
// "<router>.<namespace>/<provider>": a namespace has no dot, so the prefix
// names one router; a part that does not fit is sanitized and hash-cut.
func GatewayJWTProviderName(routerNamespace, router, provider string) string {
	prefix := router + "." + routerNamespace
	if len(prefix) > 253 {
		prefix = truncate(prefix, 253)
	}
	name := provider
	if !qualifiedNamePart(name) {
		name = SubdomainPart(provider, 63)
	}
	return prefix + "/" + name
}

// qualifiedNamePart reports whether s is the name part of a label key.
func qualifiedNamePart(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// GatewayAuthenticatedRuleName names the authorization rule that admits any
// token the router's own provider verified (a router with JWT and no
// allowlists).
const GatewayAuthenticatedRuleName = "allow-verified-token"

// GatewayClientPolicyName names the ClientTrafficPolicy that removes the
// client's copy of a router's verified header on its Gateway. Like the
// agentgateway model-extraction policy it lives in the Gateway's namespace;
// there a hash of the router's namespace and name keeps it unique.
func GatewayClientPolicyName(routerNamespace, router string, crossNamespace bool) string {
	if !crossNamespace {
		return DNSLabel(router, "client-headers")
	}
	sum := sha256.Sum256([]byte(routerNamespace + "/" + router))
	return DNSLabel(router, "client-headers-"+hex.EncodeToString(sum[:])[:8])
}

// ProxyAPIKeysVolumeName is the router-proxy pod's volume holding the
// Secret of policy.auth.apiKeys named secretName (a volume name is a DNS
// label; a Secret name may be a longer subdomain, so the name is hashed
// when it does not fit).
func ProxyAPIKeysVolumeName(secretName string) string { return DNSLabel(secretName, "api-keys") }
