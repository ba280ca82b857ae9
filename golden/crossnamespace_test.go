package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// TestCrossNamespaceKindsDeclared: the controller prunes objects outside a
// router's namespace only among the kinds the targets declare
// (targets.CrossNamespace); every object any case renders outside its
// router's namespace is of such a kind, or it would never be pruned.
func TestCrossNamespaceKindsDeclared(t *testing.T) {
	reg := builtin.Registry()
	declared := map[string]bool{}
	for _, k := range reg.CrossNamespaceKinds() {
		declared[k.String()] = true
	}
	found := 0
	for _, c := range Cases(t) {
		data, err := os.ReadFile(c.Input)
		require.NoError(t, err)
		in := &compiler.Inputs{}
		require.False(t, in.Decode(filepath.Base(c.Input), data).HasErrors())
		for _, dp := range c.DataPlane {
			for _, rt := range in.Routers {
				r, diags := compiler.Compile(rt.Router, in, compiler.Options{DataPlane: dp, Operator: c.Operator, Planes: reg.Capabilities()})
				if diags.HasErrors() {
					continue // refused alone; the golden test covers it
				}
				target, err := reg.Get(r.DataPlane)
				require.NoError(t, err)
				res, diags := target.Compile(r)
				if diags.HasErrors() {
					continue
				}
				for _, o := range res.Objects {
					if o.GetNamespace() == "" || o.GetNamespace() == r.Namespace {
						continue
					}
					found++
					assert.True(t, declared[o.GroupVersionKind().String()], "%s (%s): %s %s/%s is outside the router's namespace %s; declare its kind in the target's CrossNamespaceKinds",
						c.Name, r.DataPlane, o.GetKind(), o.GetNamespace(), o.GetName(), r.Namespace)
				}
			}
		}
	}
	assert.Positive(t, found, "no case renders an object in another namespace: the check proves nothing")
}
