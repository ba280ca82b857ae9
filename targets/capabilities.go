package targets

import (
	"fmt"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
)

// Capabilities returns the capability tables of the registered planes, for
// compiler.Options.Planes; a plane this build does not hold has an empty
// table.
func (r *Registry) Capabilities() planes.Tables {
	return func(dp ir.DataPlane) planes.Table {
		if t, ok := r.targets[dp]; ok {
			return t.Capabilities()
		}
		return planes.Table{}
	}
}

// ProxyWorkloadFields are the rows every plane that does not run the
// router-proxy shares: its workload and its Service, ignored. withTimeouts
// adds the proxy's timeouts, for a plane that does not read them either.
func ProxyWorkloadFields(dp ir.DataPlane, withTimeouts bool) []planes.Capability {
	names := []string{"replicas", "image", "imagePullSecrets", "resources", "serviceName", "nodeSelector", "tolerations", "affinity",
		"topologySpreadConstraints", "runtimeClassName", "podLabels", "podAnnotations", "revisionHistoryLimit", "drainTimeout", "podDisruptionBudget"}
	if withTimeouts {
		names = append(names, "responseHeaderTimeout", "streamIdleTimeout", "quarantineDuration")
	}
	var out []planes.Capability
	for _, n := range names {
		out = append(out, planes.Capability{Path: "spec.proxy." + n, Verdict: planes.Ignored,
			Message: fmt.Sprintf("spec.proxy.%s configures the router-proxy, which dataPlane %s does not run; it is ignored", n, dp)})
	}
	return append(out, planes.Capability{Path: "spec.endpoint", Verdict: planes.Ignored,
		Message: fmt.Sprintf("spec.endpoint configures the router-proxy's Service, which dataPlane %s does not create; it is ignored", dp)})
}
