package naming

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDNSLabelIsValidAndStable(t *testing.T) {
	cases := []string{"chat", "my.router", "9lives", strings.Repeat("a", 80), strings.Repeat("b", 250) + ".x", "UPPER"}
	for _, c := range cases {
		for _, suffix := range []string{"router-proxy", "router-proxy-admin"} {
			got := DNSLabel(c, suffix)
			assert.Empty(t, validation.IsDNS1035Label(got), "%q -> %q", c, got)
			assert.Equal(t, got, DNSLabel(c, suffix), "deterministic")
		}
	}
	assert.Equal(t, "chat-router-proxy", ProxyName("chat"))
	assert.Equal(t, "chat-router-proxy-admin", ProxyAdminServiceName("chat"))
}

func TestLongNamesStayDistinct(t *testing.T) {
	a := DNSLabel(strings.Repeat("a", 70)+"1", "router-proxy")
	b := DNSLabel(strings.Repeat("a", 70)+"2", "router-proxy")
	assert.NotEqual(t, a, b)
	assert.LessOrEqual(t, len(a), 63)
}

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("x", 100)
	v := LabelValue(long)
	assert.Empty(t, validation.IsValidLabelValue(v))
	assert.Equal(t, "short", LabelValue("short"))
}

func TestSanitisedNamesStayDistinct(t *testing.T) {
	a, b := ProxyName("my.router"), ProxyName("my-router")
	assert.NotEqual(t, a, b, "a dotted name and its dashed twin must not share objects")
	assert.Equal(t, "my-router-router-proxy", b, "names that need no sanitising are unchanged")
	assert.Empty(t, validation.IsDNS1035Label(a))
}

func TestGatewayNumberedNames(t *testing.T) {
	assert.Equal(t, Scoped("chat"), GatewayRouteName("chat", 0))
	assert.Equal(t, Scoped("chat", "part-2"), GatewayRouteName("chat", 1))
	assert.Equal(t, Scoped("chat", "traffic-3"), GatewayTrafficPolicyName("chat", 2))
	assert.Equal(t, "allow-team-a-0", GatewayAllowRuleName("Team A", 0))
}

// TestInferenceServiceServiceName: the operator's Service for a dotted
// InferenceService has dashes; the pod label keeps the raw name.
func TestInferenceServiceServiceName(t *testing.T) {
	assert.Equal(t, "llama-3-1-8b", InferenceServiceServiceName("llama-3.1-8b"))
	assert.Equal(t, "qwen3", InferenceServiceServiceName("qwen3"))
	assert.Equal(t, map[string]string{LabelInferenceService: "llama-3.1-8b"}, InferenceServicePodSelector("llama-3.1-8b"))
}

// TestGatewayJWTProviderNameIsQualified: Envoy Gateway refuses a whole
// SecurityPolicy whose provider name is not a qualified name (egctl x
// translate v1.9.1 said so of "ml/tenants/keycloak"); the name is each
// router's own.
func TestGatewayJWTProviderNameIsQualified(t *testing.T) {
	long := strings.Repeat("r", 240)
	seen := map[string]bool{}
	for _, c := range [][3]string{
		{"ml", "tenants", "keycloak"},
		{"ml", "tenants.v2", "keycloak"},
		{"ml", "other", "keycloak"},
		{"other", "tenants", "keycloak"},
		{"ml", "tenants", "Key Cloak / realm"},
		{"ml", "tenants", strings.Repeat("p", 80)},
		{"team-with-a-long-namespace-name-of-sixty-three-characters-xxxx", long, "corp"},
	} {
		n := GatewayJWTProviderName(c[0], c[1], c[2])
		assert.Empty(t, validation.IsQualifiedName(n), "%q", n)
		assert.False(t, seen[n], "%q named twice", n)
		seen[n] = true
	}
	assert.Equal(t, "tenants.ml/keycloak", GatewayJWTProviderName("ml", "tenants", "keycloak"))
}
