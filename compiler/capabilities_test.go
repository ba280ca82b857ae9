package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/planes"
)

// TestIgnoredRowsWalkTheSpecAsWritten: list elements fan out with their
// index, Value and Unless narrow a row, and unset fields never warn.
func TestIgnoredRowsWalkTheSpecAsWritten(t *testing.T) {
	spec := &v1.ModelRouterSpec{DefaultRoute: "a", Backends: []v1.RouterBackend{
		{Name: "a", Resolution: v1.ResolutionEndpoint, Timeout: "5s"},
		{Name: "b", Resolution: v1.ResolutionService},
		{Name: "c", Timeout: "9s"},
	}}
	rules := planes.Table{Rows: []planes.Capability{
		{Path: "spec.backends[*].timeout", Verdict: planes.Ignored, Message: "timeouts are ignored"},
		{Path: "spec.backends[*].resolution", Value: "endpoint", Verdict: planes.Ignored, Message: "endpoint resolution is ignored"},
		{Path: "spec.endpoint", Verdict: planes.Ignored, Message: "never set here"},
		{Path: "spec.backends[*].name", Unless: &planes.FieldValue{Path: "spec.backends[*].resolution", Value: "service"}, Verdict: planes.Ignored, Message: "b's resolution turns it off"},
		{Path: "spec.defaultRoute", Unless: &planes.FieldValue{Path: "spec.dataPlane", Value: "Gateway"}, Verdict: planes.Ignored, Message: "Unless does not hold"},
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
