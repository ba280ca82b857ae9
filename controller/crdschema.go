package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReasonCRDsOutdated: the plane's CRDs are served, but the installed
// version of one does not declare a field (or an enum value) that this
// router's objects use. Nothing is applied: server-side apply would refuse
// the object ("field not declared in schema") after the objects before it
// were written, and say nothing of what to install. The message names each
// field and the upstream release to install (docs/compatibility.md).
const ReasonCRDsOutdated = "CRDsOutdated"

// upstreamRelease says which upstream release to install for a field an
// installed CRD lacks: the first entry whose group matches and whose path
// prefix starts the field's path. The entries are the rows of
// docs/compatibility.md (TestCompatibilityDocNamesEveryRelease keeps them
// there); a group's entry without a path is the newest release checked.
var upstreamRelease = []struct{ group, path, release string }{
	{"agentgateway.dev", "spec.traffic.jwtAuthentication.providers[].jwks.remote.url", "agentgateway main at c22211981 or newer (v1.4.1, the newest release, lacks jwks.remote.url)"},
	{"agentgateway.dev", "", "agentgateway main at 75b4e6c or newer"},
	{"aigateway.envoyproxy.io", "", "Envoy AI Gateway v1.1.0 or newer"},
	{"gateway.envoyproxy.io", "", "Envoy Gateway v1.9.0 or newer"},
	{"gateway.networking.k8s.io", "", "Gateway API v1.6.1 (standard channel) or newer"},
	{"inference.networking.k8s.io", "", "Gateway API Inference Extension v1.6.0 or newer"},
}

func releaseFor(group, path string) string {
	for _, u := range upstreamRelease {
		if u.group == group && strings.HasPrefix(path, u.path) {
			return u.release
		}
	}
	return "a release of the " + group + " CRDs that declares it"
}

// crdSchemas caches the schema of each installed CRD by its
// resourceVersion, read from the metadata-only cache the CRD watch fills:
// a CRD is read in full at the first reconcile that needs it (at start)
// and again only when it changed.
type crdSchemas struct {
	mu sync.Mutex
	m  map[string]cachedCRD
}

type cachedCRD struct {
	rv  string
	crd *apiextensionsv1.CustomResourceDefinition
}

// outdatedFields checks every desired object of a CRD-backed kind against
// the installed CRD's schema for its version: each field the object sets
// that the schema does not declare, and each string value outside the
// schema's enum, is returned as one line naming the kind, the field path and
// the release to install. Built-in kinds are not checked.
func (r *Reconciler) outdatedFields(ctx context.Context, desired []*unstructured.Unstructured) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, obj := range desired {
		gvk := obj.GroupVersionKind()
		if builtinGroups[gvk.Group] {
			continue
		}
		s, err := r.crdSchema(ctx, gvk)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue // not a CRD (an aggregated API): nothing to compare
		}
		var found []string
		for k, v := range obj.Object {
			if k == "apiVersion" || k == "kind" || k == "metadata" || k == "status" {
				continue
			}
			p, ok := s.Properties[k]
			if !ok {
				if !preservesUnknown(s) {
					found = append(found, k+": not declared")
				}
				continue
			}
			checkSchema(v, p, k, &found)
		}
		for _, f := range found {
			path := f[:strings.Index(f, ":")]
			line := fmt.Sprintf("%s %s (install %s)", gvk.Kind, f, releaseFor(gvk.Group, path))
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func preservesUnknown(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// checkSchema compares a value with its schema (nil: the parent has no
// such property, reported by the caller).
func checkSchema(v any, s apiextensionsv1.JSONSchemaProps, path string, found *[]string) {
	if preservesUnknown(&s) {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if len(s.Properties) == 0 {
			if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				for k, val := range x {
					checkSchema(val, *s.AdditionalProperties.Schema, path+"."+k, found)
				}
			}
			return
		}
		for k, val := range x {
			p, ok := s.Properties[k]
			if !ok {
				*found = append(*found, path+"."+k+": not declared")
				continue
			}
			checkSchema(val, p, path+"."+k, found)
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, val := range x {
				checkSchema(val, *s.Items.Schema, path+"[]", found)
			}
		}
	case string:
		if len(s.Enum) == 0 {
			return
		}
		var allowed []string
		for _, e := range s.Enum {
			var ev any
			if json.Unmarshal(e.Raw, &ev) == nil && ev == x {
				return
			}
			allowed = append(allowed, string(e.Raw))
		}
		*found = append(*found, fmt.Sprintf("%s: value %q not in the installed enum [%s]", path, x, strings.Join(allowed, ", ")))
	}
}

// crdSchema is the openAPIV3Schema of gvk's version in its installed CRD,
// or nil when the kind is not served by a CRD.
func (r *Reconciler) crdSchema(ctx context.Context, gvk schema.GroupVersionKind) (*apiextensionsv1.JSONSchemaProps, error) {
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", gvk, err)
	}
	name := m.Resource.Resource + "." + gvk.Group
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	r.schemas.mu.Lock()
	c, ok := r.schemas.m[name]
	r.schemas.mu.Unlock()
	if !ok || c.rv != meta.GetResourceVersion() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", name, err)
		}
		c = cachedCRD{rv: crd.ResourceVersion, crd: crd}
		r.schemas.mu.Lock()
		if r.schemas.m == nil {
			r.schemas.m = map[string]cachedCRD{}
		}
		r.schemas.m[name] = c
		r.schemas.mu.Unlock()
	}
	for _, v := range c.crd.Spec.Versions {
		if v.Name == gvk.Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			return v.Schema.OpenAPIV3Schema, nil
		}
	}
	return nil, nil
}
