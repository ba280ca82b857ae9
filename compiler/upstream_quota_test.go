package compiler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
)

// The upstream quota holds are lowered for the router-proxy (defaults when
// unset) and ignored, with a warning, by a plane that holds no backend.
func TestUpstreamQuotaHolds(t *testing.T) {
	out, diags := vtCompile(t, "", nil)
	require.False(t, diags.HasErrors(), "%v", diags)
	assert.Equal(t, time.Second, out.Timeouts.RateLimitHold)
	assert.Equal(t, 10*time.Minute, out.Timeouts.QuotaExhaustedHold)

	out, diags = vtCompile(t, "", func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.Proxy = &v1.ProxySpec{RateLimitHold: "5s", QuotaExhaustedHold: "1h"}
	})
	require.False(t, diags.HasErrors(), "%v", diags)
	assert.Equal(t, 5*time.Second, out.Timeouts.RateLimitHold)
	assert.Equal(t, time.Hour, out.Timeouts.QuotaExhaustedHold)

	_, diags = vtCompile(t, ir.DataPlaneGateway, func(r *v1.ModelRouter, _ *Inputs) {
		r.Spec.DataPlane = v1.DataPlaneGateway
		r.Spec.GatewayRef = &v1.RouterGatewayRef{Name: "gw"}
		r.Spec.Proxy = &v1.ProxySpec{QuotaExhaustedHold: "1h"}
	})
	require.False(t, diags.HasErrors(), "%v", diags)
	var warned bool
	for _, d := range diags {
		if d.Field == "spec.proxy.quotaExhaustedHold" {
			warned = d.Reason == ReasonFieldIgnored
			assert.Contains(t, d.Message, "a provider's 429 reaches the client")
		}
	}
	assert.True(t, warned, "%v", diags)
}
