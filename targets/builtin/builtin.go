// Package builtin lists the data-plane targets compiled into this build.
package builtin

import (
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
	"github.com/llmkube/llmkube-compile/targets/aigateway"
	"github.com/llmkube/llmkube-compile/targets/proxy"
)

// Registry returns the registry of every built target.
func Registry() *targets.Registry {
	return targets.NewRegistry(proxy.New(), agentgateway.New(), aigateway.New())
}
