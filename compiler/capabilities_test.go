package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/capability"
)

// TestIgnoredRowsWalkTheSpecAsWritten: list elements fan out with their
// index, Value and Unless narrow a row, and unset fields never warn.
func TestIgnoredRowsWalkTheSpecAsWritten(t *testing.T) {
	spec := &v1.ModelRouterSpec{DefaultRoute: "a", Backends: []v1.RouterBackend{
		{Name: "a", Resolution: v1.ResolutionEndpoint, Timeout: "5s"},
		{Name: "b", Resolution: v1.ResolutionService},
		{Name: "c", Timeout: "9s"},
	}}
	rules := capability.Table{Rows: []capability.Row{
		{Path: "spec.backends[*].timeout", Verdict: capability.Ignored, Message: "timeouts are ignored"},
		{Path: "spec.backends[*].resolution", Value: "endpoint", Verdict: capability.Ignored, Message: "endpoint resolution is ignored"},
		{Path: "spec.endpoint", Verdict: capability.Ignored, Message: "never set here"},
		{Path: "spec.backends[*].name", Unless: &capability.FieldValue{Path: "spec.backends[*].resolution", Value: "service"}, Verdict: capability.Ignored, Message: "b's resolution turns it off"},
		{Path: "spec.defaultRoute", Unless: &capability.FieldValue{Path: "spec.dataPlane", Value: "Gateway"}, Verdict: capability.Ignored, Message: "Unless does not hold"},
	}}
	got := map[string]string{}
	for _, d := range capabilities(spec, spec, rules) {
		assert.Equal(t, "FieldIgnored", d.Reason)
		got[d.Field] = d.Message
	}
	assert.Equal(t, map[string]string{
		"spec.backends[0].timeout":    "timeouts are ignored",
		"spec.backends[2].timeout":    "timeouts are ignored",
		"spec.backends[0].resolution": "endpoint resolution is ignored",
		"spec.defaultRoute":           "Unless does not hold",
	}, got)
}
