package controller

import (
	"context"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
)

// clusterRefs answers the compiler's References from what was read from the
// API server for one router's namespace. It holds copies: the compiler never
// sees a client.
type clusterRefs struct {
	services map[string]*v1.InferenceService // namespace/name
	pools    map[string][]*v1.ModelPool      // namespace
}

var _ compiler.References = (*clusterRefs)(nil)

func (r *clusterRefs) InferenceService(namespace, name string) (*v1.InferenceService, bool) {
	s, ok := r.services[namespace+"/"+name]
	return s, ok
}

func (r *clusterRefs) ModelPools(namespace string) []*v1.ModelPool { return r.pools[namespace] }

// fingerprint names the exact references read: every InferenceService
// and ModelPool by name and resourceVersion. Two reads with the same
// fingerprint compile a router the same way.
func (r *clusterRefs) fingerprint() string {
	var parts []string
	for k, s := range r.services {
		parts = append(parts, "s "+k+"@"+s.ResourceVersion)
	}
	for _, ps := range r.pools {
		for _, p := range ps {
			parts = append(parts, "p "+p.Namespace+"/"+p.Name+"@"+p.ResourceVersion)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// readRefs lists the InferenceServices and ModelPools of a namespace. A kind
// whose CRD is not installed reads as empty (the compiler then warns about
// every reference it cannot find).
func readRefs(ctx context.Context, c client.Reader, namespace string) (*clusterRefs, error) {
	refs := &clusterRefs{services: map[string]*v1.InferenceService{}, pools: map[string][]*v1.ModelPool{}}
	var isvcs v1.InferenceServiceList
	if err := c.List(ctx, &isvcs, client.InNamespace(namespace)); err != nil && !meta.IsNoMatchError(err) {
		return nil, err
	}
	for i := range isvcs.Items {
		s := isvcs.Items[i].DeepCopy()
		refs.services[s.Namespace+"/"+s.Name] = s
	}
	var pools v1.ModelPoolList
	if err := c.List(ctx, &pools, client.InNamespace(namespace)); err != nil && !meta.IsNoMatchError(err) {
		return nil, err
	}
	for i := range pools.Items {
		p := pools.Items[i].DeepCopy()
		refs.pools[p.Namespace] = append(refs.pools[p.Namespace], p)
	}
	return refs, nil
}
