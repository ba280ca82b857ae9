package wellknown

import (
	"net/netip"
	"strings"
)

// PlainHTTPHost reports whether host (a URL's hostname, without port or
// brackets) may be reached in plain http for something whose integrity
// authentication rests on, such as the signing keys of policy.auth.jwt: a
// loopback host, a name only the cluster's DNS resolves (a Service's short
// short name "keycloak", or one under .svc, .svc.cluster.local or
// .cluster.local), or a private, link-local or loopback address (the
// pod, Service and node networks). A public name or address is not: anyone
// on the path could substitute the keys. Documented in
// docs/router-proxy.md#authentication.
func PlainHTTPHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" {
		return false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast()
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	for _, suffix := range []string{".svc", ".svc.cluster.local", ".cluster.local"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	// A single label is a Service of the pod's namespace (resolv.conf's
	// search path). "name.namespace" is not taken: it reads like
	// "example.com"; write name.namespace.svc.
	return !strings.Contains(h, ".")
}
