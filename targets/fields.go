package targets

import (
	"fmt"

	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/planes"
)

// Fields is implemented by a target whose plane does not read every field
// of the spec: its field table, applied by the frontend (compiler.Options.Fields).
type Fields interface {
	Fields() []planes.FieldRule
}

// FieldTables returns the field tables of the registered planes, for
// compiler.Options.Fields.
func (r *Registry) FieldTables() planes.FieldTables {
	return func(dp ir.DataPlane) []planes.FieldRule {
		if f, ok := r.targets[dp].(Fields); ok {
			return f.Fields()
		}
		return nil
	}
}

// ProxyWorkloadFields are the rows every plane that does not run the
// router-proxy shares: its workload and its Service. withTimeouts adds the
// proxy's timeouts, for a plane that does not read them either.
func ProxyWorkloadFields(dp ir.DataPlane, withTimeouts bool) []planes.FieldRule {
	names := []string{"replicas", "image", "imagePullSecrets", "resources", "serviceName", "nodeSelector", "tolerations", "affinity",
		"topologySpreadConstraints", "runtimeClassName", "podLabels", "podAnnotations", "revisionHistoryLimit", "drainTimeout", "podDisruptionBudget"}
	if withTimeouts {
		names = append(names, "responseHeaderTimeout", "streamIdleTimeout", "quarantineDuration")
	}
	var out []planes.FieldRule
	for _, n := range names {
		out = append(out, planes.FieldRule{Path: "spec.proxy." + n,
			Why: fmt.Sprintf("spec.proxy.%s configures the router-proxy, which dataPlane %s does not run; it is ignored", n, dp)})
	}
	return append(out, planes.FieldRule{Path: "spec.endpoint",
		Why: fmt.Sprintf("spec.endpoint configures the router-proxy's Service, which dataPlane %s does not create; it is ignored", dp)})
}
