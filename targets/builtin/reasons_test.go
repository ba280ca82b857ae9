package builtin_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/reasonscan"
)

const module = "github.com/llmkube/llmkube-compile/"

// TestEmittersGiveOnlyDeclaredReasons: an emitter gives no diagnostic its
// plane's capability table does not name (a row's reason or Emits), each
// reason a named constant; and the table declares nothing the emitter
// never gives (Emits, feature rows).
func TestEmittersGiveOnlyDeclaredReasons(t *testing.T) {
	reg := builtin.Registry()
	for _, dp := range capability.Planes() {
		target, err := reg.Get(dp)
		require.NoError(t, err)
		table := target.Capabilities()
		dir := filepath.Join("..", "..", strings.TrimPrefix(reflect.TypeOf(target).Elem().PkgPath(), module))
		uses, bad, err := reasonscan.Emitted(dir)
		require.NoError(t, err)
		assert.Empty(t, bad, "%s: reasons not named", dp)

		declared := map[string]bool{}
		for _, r := range table.Emits {
			declared[r] = true
		}
		for _, r := range table.Rows {
			declared[r.Reason] = r.Reason != ""
		}
		emitted := map[string]bool{}
		for _, u := range uses {
			emitted[u.Reason] = true
			assert.True(t, declared[u.Reason], "%s: %s gives %s, which the plane's capability table does not name", dp, u.At, u.Reason)
		}
		for _, r := range table.Emits {
			assert.True(t, emitted[r], "%s: Emits names %s, which the emitter never gives", dp, r)
		}
		for _, r := range table.Rows {
			if r.Feature != "" && !r.Feature.PerRequest() {
				assert.True(t, emitted[r.Reason], "%s: feature %s's reason %s is never given by the emitter", dp, r.Feature, r.Reason)
			}
		}
	}
}
