package envoyai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// crdDir holds the upstream CRDs (../shared/crds next to the repository
// root; see its SOURCES.md).
var crdDir = filepath.Join("..", "..", "..", "shared", "crds", "envoy-ai-gateway")

// crdSchema is the openAPIV3Schema of the version the model follows.
func crdSchema(t *testing.T, file string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(crdDir, file))
	if os.IsNotExist(err) {
		t.Skipf("%s: the upstream CRDs are not next to the repository", crdDir)
	}
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(data, &crd))
	require.Equal(t, "aigateway.envoyproxy.io", crd.Spec.Group)
	for _, v := range crd.Spec.Versions {
		if crd.Spec.Group+"/"+v.Name == aiGroupVersion {
			require.True(t, v.Storage && v.Served, "%s %s", file, v.Name)
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("%s has no version %s", file, aiGroupVersion)
	return nil
}

var metaType = reflect.TypeFor[metav1.ObjectMeta]()

// followSchema reports every JSON field of typ (at path) that the schema
// does not declare, or declares with another type.
func followSchema(typ reflect.Type, s *apiextensionsv1.JSONSchemaProps, path string, bad *[]string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == metaType || typ == reflect.TypeFor[json.RawMessage]() {
		return // metadata is the API server's; status is not read
	}
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Int32: "integer", reflect.Int64: "integer",
		reflect.Bool: "boolean", reflect.Slice: "array", reflect.Struct: "object"}[typ.Kind()]
	if s.Type != want {
		*bad = append(*bad, path+": the model reads "+typ.String()+" ("+want+"), the CRD declares "+s.Type)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		followSchema(typ.Elem(), s.Items.Schema, path+"[]", bad)
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				followSchema(f.Type, s, path, bad)
				continue
			}
			if name == "" || name == "-" {
				*bad = append(*bad, path+"."+f.Name+": no JSON name")
				continue
			}
			p, ok := s.Properties[name]
			if !ok {
				*bad = append(*bad, strings.TrimPrefix(path+"."+name, ".")+": not declared by the CRD")
				continue
			}
			followSchema(f.Type, &p, strings.TrimPrefix(path+"."+name, "."), bad)
		}
	}
}

// TestTypesFollowTheCRDs: every field the model decodes, at every depth
// (Gateway API's ParentReference included), is declared by the real CRD
// with the same JSON type, and the enums the model checks are the CRD's.
// With decode refusing fields the structs lack, an object field the CRD
// does not declare can never reach the model unnoticed.
func TestTypesFollowTheCRDs(t *testing.T) {
	for file, typ := range map[string]reflect.Type{
		"aigateway.envoyproxy.io_aigatewayroutes.yaml":         reflect.TypeFor[aiGatewayRoute](),
		"aigateway.envoyproxy.io_aiservicebackends.yaml":       reflect.TypeFor[aiServiceBackend](),
		"aigateway.envoyproxy.io_backendsecuritypolicies.yaml": reflect.TypeFor[backendSecurityPolicy](),
	} {
		var bad []string
		followSchema(typ, crdSchema(t, file), "", &bad)
		assert.Empty(t, bad, "%s: the model's %s differs from the CRD", file, typ)
	}
	enum := func(s apiextensionsv1.JSONSchemaProps) []string {
		var out []string
		for _, e := range s.Enum {
			var v string
			require.NoError(t, json.Unmarshal(e.Raw, &v))
			out = append(out, v)
		}
		return out
	}
	route := crdSchema(t, "aigateway.envoyproxy.io_aigatewayroutes.yaml")
	headers := route.Properties["spec"].Properties["rules"].Items.Schema.Properties["matches"].Items.Schema.Properties["headers"].Items.Schema
	assert.ElementsMatch(t, enum(headers.Properties["type"]), headerMatchTypes)
	assert.Equal(t, `"Exact"`, string(headers.Properties["type"].Default.Raw), "an absent type is Exact")
	bsp := crdSchema(t, "aigateway.envoyproxy.io_backendsecuritypolicies.yaml")
	for _, typ := range credentialTypes {
		assert.Contains(t, enum(bsp.Properties["spec"].Properties["type"]), typ)
	}
}

// TestDecodeRefusesUnknownFields: a field the CRD does not declare (a
// misspelling), or one it declares that the model does not follow, is an
// error naming it, not ignored.
func TestDecodeRefusesUnknownFields(t *testing.T) {
	route := func(ref map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": aiGroupVersion, "kind": "AIGatewayRoute",
			"metadata": map[string]any{"name": "r", "namespace": "ns"},
			"spec": map[string]any{
				"parentRefs": []any{map[string]any{"name": "eg"}},
				"rules":      []any{map[string]any{"name": "a", "backendRefs": []any{ref}}},
			},
		}}
	}
	gw := Gateway{Namespace: "ns", Name: "eg"}
	_, err := New(gw, []*unstructured.Unstructured{route(map[string]any{"name": "b", "weight": int64(1)})})
	require.NoError(t, err)
	for field, ref := range map[string]map[string]any{
		"weigth":         {"name": "b", "weigth": int64(1)},
		"headerMutation": {"name": "b", "headerMutation": map[string]any{"remove": []any{"x"}}},
		"InferencePool":  {"name": "b", "group": "inference.networking.k8s.io", "kind": "InferencePool"},
	} {
		_, err := New(gw, []*unstructured.Unstructured{route(ref)})
		require.Error(t, err, field)
		assert.Contains(t, err.Error(), field)
	}
	old := route(map[string]any{"name": "b"})
	old.SetAPIVersion("aigateway.envoyproxy.io/v1alpha1")
	_, err = New(gw, []*unstructured.Unstructured{old})
	assert.ErrorContains(t, err, "v1alpha1")
	typo := route(map[string]any{"name": "b"})
	rule := typo.Object["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	rule["matches"] = []any{map[string]any{"headers": []any{map[string]any{"name": ModelHeader, "type": "Regex", "value": "m"}}}}
	_, err = New(gw, []*unstructured.Unstructured{typo})
	assert.ErrorContains(t, err, `type "Regex"`)
}

// crdCheck checks an object against a CRD's structural schema as the API
// server's decoding does, without the CEL rules and value bounds (the
// envtest API server runs those on the goldens:
// test/apiserver TestGoldenOutputIsAccepted): unknown fields (pruning),
// JSON types and enums.
type crdCheck struct {
	structural *structuralschema.Structural
}

func newCRDCheck(t *testing.T, file string) crdCheck {
	t.Helper()
	var internal apiextensions.JSONSchemaProps
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crdSchema(t, file), &internal, nil))
	s, err := structuralschema.NewStructural(&internal)
	require.NoError(t, err)
	return crdCheck{structural: s}
}

func (c crdCheck) errors(u *unstructured.Unstructured) []string {
	var out []string
	for _, p := range pruning.PruneWithOptions(u.DeepCopy().Object, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		out = append(out, p+": unknown field")
	}
	spec, ok := c.structural.Properties["spec"]
	if v, found := u.Object["spec"]; ok && found {
		checkValue(v, &spec, "spec", &out)
	}
	return out
}

// checkValue compares a value's JSON type and enum with its schema.
func checkValue(v any, s *structuralschema.Structural, path string, out *[]string) {
	if s == nil || s.XIntOrString || s.XPreserveUnknownFields {
		return
	}
	kind := map[string]bool{
		"object":  reflect.TypeOf(v) == reflect.TypeFor[map[string]any](),
		"array":   reflect.TypeOf(v) == reflect.TypeFor[[]any](),
		"string":  reflect.TypeOf(v) == reflect.TypeFor[string](),
		"boolean": reflect.TypeOf(v) == reflect.TypeFor[bool](),
		"integer": reflect.TypeOf(v) == reflect.TypeFor[int64]() || reflect.TypeOf(v) == reflect.TypeFor[float64]() && v.(float64) == float64(int64(v.(float64))),
		"number":  reflect.TypeOf(v) == reflect.TypeFor[int64]() || reflect.TypeOf(v) == reflect.TypeFor[float64](),
	}
	if ok, known := kind[s.Type]; known && !ok {
		*out = append(*out, fmt.Sprintf("%s: %T, the CRD declares %s", path, v, s.Type))
		return
	}
	if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
		found := false
		for _, e := range s.ValueValidation.Enum {
			found = found || reflect.DeepEqual(e.Object, v)
		}
		if !found {
			*out = append(*out, fmt.Sprintf("%s: %v is not in the CRD's enum", path, v))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if p, ok := s.Properties[k]; ok {
				checkValue(val, &p, path+"."+k, out)
			} else if s.AdditionalProperties != nil {
				checkValue(val, s.AdditionalProperties.Structural, path+"."+k, out)
			}
		}
	case []any:
		for i, val := range x {
			checkValue(val, s.Items, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// TestGoldenObjectsMeetTheCRDs: every AI Gateway object of every Gateway
// golden meets the real CRD's schema, and the model decodes it.
func TestGoldenObjectsMeetTheCRDs(t *testing.T) {
	checks := map[string]crdCheck{
		"AIGatewayRoute":        newCRDCheck(t, "aigateway.envoyproxy.io_aigatewayroutes.yaml"),
		"AIServiceBackend":      newCRDCheck(t, "aigateway.envoyproxy.io_aiservicebackends.yaml"),
		"BackendSecurityPolicy": newCRDCheck(t, "aigateway.envoyproxy.io_backendsecuritypolicies.yaml"),
	}
	files, err := filepath.Glob("../../golden/*/gateway.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var objs []*unstructured.Unstructured
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				break
			} else {
				require.NoError(t, err, f)
			}
			if len(u.Object) == 0 {
				continue
			}
			objs = append(objs, u)
			if c, ok := checks[u.GetKind()]; ok && u.GetAPIVersion() == aiGroupVersion {
				seen++
				assert.Empty(t, c.errors(u), "%s: %s %s", f, u.GetKind(), u.GetName())
			}
		}
		_, err = New(Gateway{Namespace: "default", Name: "eg"}, objs)
		assert.NoError(t, err, f)
		_, err = Synthesize(objs)
		assert.NoError(t, err, f)
	}
	assert.NotZero(t, seen)
	// The check itself refuses a misspelled field and a value off the enum.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": aiGroupVersion, "kind": "AIGatewayRoute", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"rules": []any{map[string]any{"matches": []any{map[string]any{"headers": []any{
			map[string]any{"name": ModelHeader, "type": "Regex", "value": "m", "vaule": "m"}}}}}}},
	}}
	errs := strings.Join(checks["AIGatewayRoute"].errors(bad), "\n")
	assert.Contains(t, errs, "vaule: unknown field")
	assert.Contains(t, errs, "Regex is not in the CRD's enum")
}
