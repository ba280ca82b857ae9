package proxyplane

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/simulate"
)

// PlaneModel is the Proxy plane's request-path model: the router-proxy
// itself, one per router, built from the config its ConfigMap carries.
func PlaneModel() simulate.PlaneModel {
	return simulate.PlaneModel{DataPlane: ir.DataPlaneProxy, Serve: serveRouters, ModelsRefusals: true}
}

func serveRouters(routers []simulate.Compiled, _ []*unstructured.Unstructured) (map[string]simulate.Served, error) {
	out := map[string]simulate.Served{}
	for _, c := range routers {
		cfg := ""
		for _, o := range c.Objects {
			if o.GetKind() == "ConfigMap" {
				cfg, _, _ = unstructured.NestedString(o.Object, "data", wellknown.ConfigFile)
			}
		}
		pl, err := New([]byte(cfg))
		if err != nil {
			return nil, fmt.Errorf("ModelRouter %s: the rendered router-proxy config: %w", c.Key, err)
		}
		key := c.Key
		out[key] = simulate.Served{
			Serve:     pl.Serve,
			BackendID: func(b string) string { return b },
			Name:      func(id string) (string, string) { return key, id },
		}
	}
	return out, nil
}
