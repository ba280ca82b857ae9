package agentgateway_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// TestCheckOneIsCheckTogetherForOneRouter: the controller checks the router
// it reconciles with CheckOne (linear in the routers on the data plane);
// for every router of a mix that meets in every way the check knows (one
// listener or several, a catch-all default, Model routing, another
// Gateway) it says exactly what CheckTogether says for it when that router
// comes first (messages name the router's own side first).
func TestCheckOneIsCheckTogetherForOneRouter(t *testing.T) {
	otherGW := func(doc, gw string) string { return strings.Replace(doc, "{name: gw", "{name: "+gw, 1) }
	docs := []string{
		router("chat", scoped(chatRouter, "")),
		router("models", scoped(modelsRouter, "")),
		router("chat-http", strings.Replace(scoped(chatRouter, ", sectionName: http"), "qwen-epp", "qwen2-epp", 1)),
		router("models-https", scoped(modelsRouter, ", sectionName: https")),
		router("mm", modelMode),
		router("far", otherGW(scoped(chatRouter, ""), "gw2")),
		router("far-models", otherGW(scoped(modelsRouter, ""), "gw3")),
	}
	in := &compiler.Inputs{}
	require.False(t, in.Decode("t.yaml", []byte(sharedISVCs+strings.Join(docs, "\n"))).HasErrors())
	var rs []*ir.Router
	for _, rt := range in.Routers {
		r, diags := compiler.Compile(rt.Router, in, compiler.Options{})
		require.False(t, diags.HasErrors(), "%v", diags.Err())
		rs = append(rs, r)
	}
	target := agentgateway.New()
	all := target.CheckTogether(rs)
	refused := map[string]bool{}
	for i, r := range rs {
		others := append(append([]*ir.Router{}, rs[:i]...), rs[i+1:]...)
		got := target.CheckOne(r, others)
		assert.Equal(t, target.CheckTogether(append([]*ir.Router{r}, others...))[0], got, "router %s", r.Name)
		assert.Equal(t, len(all[i]), len(got), "router %s", r.Name)
		refused[r.Name] = got.HasErrors()
	}
	assert.Equal(t, map[string]bool{"chat": true, "models": true, "chat-http": true, "models-https": true, "mm": true, "far": false, "far-models": false}, refused)
	assert.Empty(t, target.CheckOne(rs[0], nil), "alone")
}
