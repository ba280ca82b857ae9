package aigateway_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
)

// TestCheckOneIsCheckTogetherForOneRouter: the controller checks the router
// it reconciles with CheckOne (linear in the routers on the data plane);
// for every router of a mix that meets in every way the check knows
// (overlapping and disjoint hostnames and models, authenticated and not,
// another Gateway) it says exactly what CheckTogether says for it when
// that router comes first (messages name the router's own side first).
func TestCheckOneIsCheckTogetherForOneRouter(t *testing.T) {
	hosts := func(h string) string { return `, hostnames: ["` + h + `"]` }
	docs := isvc +
		hostRouter("h1", hosts("a.example.com"), jwtAuth(issuerA, "")) +
		hostRouter("h2", hosts("b.example.com"), "") +
		hostRouter("h3", hosts("*.example.com"), "") +
		hostRouter("h4", hosts("c.example.com"), jwtAuth(issuerB, "")) +
		routerDoc("r1", "m1", "") +
		routerDoc("r2", "m1", "") +
		routerDoc("r3", "m3", "") +
		strings.Replace(routerDoc("o1", "m1", ""), "ai-gateway", "other-gateway", 1) +
		strings.Replace(routerDoc("o2", "m2", ""), "ai-gateway", "other-gateway", 1)
	in := &compiler.Inputs{}
	require.False(t, in.Decode("input.yaml", []byte(docs)).HasErrors())
	var rs []*ir.Router
	for _, rt := range in.Routers {
		r, diags := compiler.Compile(rt.Router, in, compiler.Options{DataPlane: ir.DataPlaneGateway})
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		rs = append(rs, r)
	}
	target := aigateway.New()
	all := target.CheckTogether(rs)
	for i, r := range rs {
		others := append(append([]*ir.Router{}, rs[:i]...), rs[i+1:]...)
		got := target.CheckOne(r, others)
		assert.Equal(t, target.CheckTogether(append([]*ir.Router{r}, others...))[0], got, "router %s", r.Name)
		assert.Equal(t, all[i].HasErrors(), got.HasErrors(), "router %s", r.Name)
		assert.Equal(t, len(all[i]), len(got), "router %s", r.Name)
	}
	assert.Equal(t, map[string]bool{"h1": true, "h2": true, "h3": true, "h4": true, "r1": true, "r2": true, "r3": true, "o1": false, "o2": false},
		names(rs, all), "which routers the mix refuses")
	assert.Empty(t, target.CheckOne(rs[0], nil), "alone")
}

// names maps each router to whether it was refused.
func names(rs []*ir.Router, out []diag.List) map[string]bool {
	m := map[string]bool{}
	for i, r := range rs {
		m[r.Name] = out[i].HasErrors()
	}
	return m
}
