package apiserver

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

// agentgatewayGoldens are the golden outputs holding agentgateway.dev objects.
func agentgatewayGoldens(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../golden/*/*.yaml")
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(string(data), "apiVersion: agentgateway.dev/") {
			out = append(out, f)
		}
	}
	require.GreaterOrEqual(t, len(out), 18, "every AgentGateway golden output")
	return out
}

// TestAgentGatewayOutputOnRelease141 is the measurement behind the
// AgentGateway rows of docs/compatibility.md: every golden output of the
// AgentGateway plane applied strictly to an API server holding the
// agentgateway CRDs of release v1.4.1 (shared/crds/agentgateway/
// release-v1.4.1) instead of main. TestGoldenOutputIsAccepted proves all of
// them on main. v1.4.1 refuses exactly the outputs that use a field it lacks:
// a JWT provider's jwks.remote.url (main c22211981) and an
// AgentgatewayModel's HTTPRoute parent (main cdb0bc90d).
func TestAgentGatewayOutputOnRelease141(t *testing.T) {
	old := testenv.StartOwn(t, testenv.Options{SharedRelease: map[string]string{"agentgateway": "agentgateway/release-v1.4.1"}})
	refused := map[string]string{}
	for _, f := range agentgatewayGoldens(t) {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		objs := decode(t, f)
		ns := old.NewNamespace(t)
		old.SetNamespace(ns, objs...)
		var errs []string
		for _, o := range objs {
			if err := old.ApplyStrict(testenv.Context(t), o); err != nil {
				errs = append(errs, testenv.Describe(o)+": "+err.Error())
			}
		}
		if len(errs) > 0 {
			refused[name] = strings.Join(errs, "\n")
		}
	}
	// The measurement: v1.4.1 refuses an output exactly when it has a JWT
	// provider, and only for jwks.remote.url.
	for _, f := range agentgatewayGoldens(t) {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		jwt := strings.Contains(string(data), "jwtAuthentication:")
		msg, isRefused := refused[name]
		if !assert.Equal(t, jwt, isRefused, "%s: has a JWT provider %v, refused by v1.4.1 %v: %s", name, jwt, isRefused, msg) || !isRefused {
			continue
		}
		for _, line := range strings.Split(msg, "\n") {
			assert.Contains(t, line, ".jwks.remote.url: field not declared in schema", name)
		}
	}
	var names []string
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("agentgateway v1.4.1 refuses: %v", names)
}
