package wellknown

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"qwen3-*", "qwen3-8b", true}, {"qwen3-*", "qwen2", false}, {"*", "", true}, {"*", "a/b", true},
		{"*coder*", "org/coder-7b", true}, {"gpt-?", "gpt-5", true}, {"gpt-?", "gpt-55", false},
		{"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false}, {"exact", "exact", true}, {"exact", "exactly", false},
	} {
		assert.Equal(t, c.want, Glob(c.p, c.s), "%q ~ %q", c.p, c.s)
	}
}

// TestGlobRE2 checks that the RE2 translation the gateway planes emit
// matches exactly what Glob matches, on ASCII.
func TestGlobRE2(t *testing.T) {
	globs := []string{"qwen3-*", "*", "*coder*", "gpt-?", "a*b*c", "exact", "a.b+c", "(x)|[y]"}
	subjects := []string{"", "qwen3-8b", "qwen2", "a/b", "org/coder-7b", "gpt-5", "gpt-55", "axxbyyc", "axxbyy", "exact", "exactly", "a.b+c", "aXb+c", "(x)|[y]"}
	for _, g := range globs {
		re := regexp.MustCompile("^(?s)" + GlobRE2(g) + "$")
		for _, s := range subjects {
			assert.Equal(t, Glob(g, s), re.MatchString(s), "%q ~ %q (re %s)", g, s, re)
		}
	}
}

func TestHeaderTimeout(t *testing.T) {
	def := 2 * time.Minute
	assert.Equal(t, def, HeaderTimeout(0, 0, def))
	assert.Equal(t, 5*time.Second, HeaderTimeout(5*time.Second, 9*time.Second, def), "rule wins")
	assert.Equal(t, 9*time.Second, HeaderTimeout(0, 9*time.Second, def), "then backend")
	assert.Equal(t, def, HeaderTimeout(time.Hour, 0, def), "capped at the proxy default")
}

func TestProviderTable(t *testing.T) {
	assert.True(t, OptionalCredential(PurposeAWSRegion))
	assert.True(t, OptionalCredential(PurposeAWSSessionToken))
	assert.False(t, OptionalCredential(PurposeAPIKey))
	for name, p := range Providers {
		assert.NotEmpty(t, p.Credentials, name)
	}
	assert.True(t, IsCredentialHeader("authorization"))
	assert.False(t, IsCredentialHeader("x-llmkube-client"))
}

func BenchmarkGlob(b *testing.B) {
	for b.Loop() {
		Glob("*coder*-instruct-?", "org/deepseek-coder-v2-instruct-q")
	}
}

func TestPlainHTTPHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "::1": true, "keycloak": true,
		"keycloak.auth.svc": true, "keycloak.auth.svc.cluster.local": true, "10.96.0.12": true,
		"172.18.0.2": true, "fd00::1": true, "idp.example.com": false, "keycloak.auth": false,
		"8.8.8.8": false, "2001:db8::1": false, "": false, "evil.svc.example.com": false,
	} {
		assert.Equal(t, want, PlainHTTPHost(host), host)
	}
}
