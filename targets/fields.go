package targets

import (
	"fmt"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
)

// Fields is implemented by a target whose plane does not read every field
// of the spec: its field table, applied by the frontend (compiler.FieldRule).
type Fields interface {
	Fields() []compiler.FieldRule
}

// FieldTables returns the field tables of the registered planes, for
// compiler.Options.
func (r *Registry) FieldTables() compiler.FieldTables {
	return func(dp ir.DataPlane) []compiler.FieldRule {
		if f, ok := r.targets[dp].(Fields); ok {
			return f.Fields()
		}
		return nil
	}
}

// ProxyWorkloadFields are the rows every plane that does not run the
// router-proxy shares: its workload and its Service. withTimeouts adds the
// proxy's timeouts, for a plane that does not read them either.
func ProxyWorkloadFields(dp ir.DataPlane, withTimeouts bool) []compiler.FieldRule {
	names := []string{"replicas", "image", "imagePullSecrets", "resources", "serviceName", "nodeSelector", "tolerations", "affinity",
		"topologySpreadConstraints", "runtimeClassName", "podLabels", "podAnnotations", "revisionHistoryLimit", "drainTimeout"}
	if withTimeouts {
		names = append(names, "responseHeaderTimeout", "streamIdleTimeout", "quarantineDuration")
	}
	var out []compiler.FieldRule
	for _, n := range names {
		out = append(out, compiler.FieldRule{Path: "spec.proxy." + n,
			Why: fmt.Sprintf("spec.proxy.%s configures the router-proxy, which dataPlane %s does not run; it is ignored", n, dp)})
	}
	return append(out, compiler.FieldRule{Path: "spec.endpoint",
		Why: fmt.Sprintf("spec.endpoint configures the router-proxy's Service, which dataPlane %s does not create; it is ignored", dp)})
}
