package controller_test

import (
	"github.com/llmkube/llmkube-compile/targets"
	"github.com/llmkube/llmkube-compile/targets/agentgateway"
)

func agentgatewayTarget() targets.Target { return agentgateway.New() }
