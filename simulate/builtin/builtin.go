// Package builtin lists the request-path models of this build, one line
// per plane, as targets/builtin lists the targets: what `llmkube-compile
// test` and `explain` run a router's requests through (package
// routingtest). The controller and the router-proxy do not link it.
package builtin

import (
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
	"github.com/llmkube/llmkube-compile/simulate/agentgateway"
	"github.com/llmkube/llmkube-compile/simulate/envoyai"
	"github.com/llmkube/llmkube-compile/simulate/proxyplane"
)

// Models are the request-path models of every plane of this build.
func Models() []simulate.PlaneModel {
	return []simulate.PlaneModel{proxyplane.PlaneModel(), envoyai.PlaneModel(), agentgateway.PlaneModel()}
}

// Get returns the model of a data plane; false when this build has none.
func Get(dp ir.DataPlane) (simulate.PlaneModel, bool) {
	for _, m := range Models() {
		if m.DataPlane == dp {
			return m, true
		}
	}
	return simulate.PlaneModel{}, false
}
