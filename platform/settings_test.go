package platform

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, args ...string) (Settings, error) {
	t.Helper()
	var s Settings
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s.Bind(fs)
	require.NoError(t, fs.Parse(args))
	return s, s.Validate()
}

func TestFlags(t *testing.T) {
	s, err := parse(t, "--proxy-image=r/p:1", "--otlp-endpoint=https://otel:4318", "--otlp-header=b=2 x", "--otlp-header=a=1")
	require.NoError(t, err)
	assert.Equal(t, "r/p:1", s.ProxyImage)
	assert.Equal(t, "a=1,b=2%20x", s.OTLP.HeaderValue(), "sorted, percent-encoded as OTEL_EXPORTER_OTLP_HEADERS expects")

	s, err = parse(t, "--otlp-endpoint=http://otel:4318", "--otlp-headers-secret=otlp-auth/headers")
	require.NoError(t, err)
	name, key, ok := s.OTLP.SecretRef()
	assert.True(t, ok)
	assert.Equal(t, []string{"otlp-auth", "headers"}, []string{name, key})
}

func TestValidateNamesTheFlag(t *testing.T) {
	for args, want := range map[string]string{
		"--otlp-endpoint=otel:4318":                   "--otlp-endpoint",
		"--otlp-headers-secret=just-a-name":           "--otlp-headers-secret",
		"--otlp-header=a=1 --otlp-headers-secret=s/k": "exclusive",
		"--otlp-header=a=1,2":                         "--otlp-header",
	} {
		_, err := parse(t, splitArgs(args)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
	}
}

func splitArgs(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if r == ' ' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += string(r)
	}
	return append(out, cur)
}
