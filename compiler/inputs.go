package compiler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// RouterSource is a ModelRouter and the file it came from ("" from a cluster).
type RouterSource struct {
	File   string
	Router *v1.ModelRouter
}

// References resolves what a router refers to. The CLI answers from its input
// files, the controller from what it read from the API server: the compiler
// itself never talks to a cluster.
type References interface {
	// InferenceService returns the named InferenceService, or false when it is not known.
	InferenceService(namespace, name string) (*v1.InferenceService, bool)
	// ModelPools returns the ModelPools in a namespace.
	ModelPools(namespace string) []*v1.ModelPool
}

// Inputs is everything decoded from a set of files.
type Inputs struct {
	Routers           []RouterSource
	InferenceServices []*v1.InferenceService
	Pools             []*v1.ModelPool
}

var _ References = (*Inputs)(nil)

// InferenceService implements References.
func (in *Inputs) InferenceService(namespace, name string) (*v1.InferenceService, bool) {
	for _, s := range in.InferenceServices {
		if s.Name == name && namespaceOf(s.Namespace) == namespace {
			return s, true
		}
	}
	return nil, false
}

// ModelPools implements References.
func (in *Inputs) ModelPools(namespace string) []*v1.ModelPool {
	var out []*v1.ModelPool
	for _, p := range in.Pools {
		if namespaceOf(p.Namespace) == namespace {
			out = append(out, p)
		}
	}
	return out
}

func namespaceOf(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

const groupVersion = "inference.llmkube.dev/v1alpha1"

// Decode reads one file of multi-document YAML or JSON and adds what it holds.
// ModelRouters are decoded strictly: an unknown, misspelled or duplicated
// field is an error with its path. InferenceServices and ModelPools are read
// through views of the few fields the compiler needs, so their other fields
// are accepted as they are. A v1 List is flattened. Other kinds are skipped
// with a warning.
func (in *Inputs) Decode(file string, data []byte) diag.List {
	var diags diag.List
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			diags = append(diags, fileErr(file, "", "", "InvalidYAML", "document %d: %v", doc, err))
			break
		}
		diags = append(diags, in.decodeDocument(file, doc, raw)...)
	}
	return diags
}

func (in *Inputs) decodeDocument(file string, doc int, raw []byte) diag.List {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return diag.List{fileErr(file, "", "", "InvalidYAML", "document %d: %v", doc, err)}
	}
	if string(js) == "null" {
		return nil
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Items []any `json:"items"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &head); err != nil {
		return diag.List{fileErr(file, "", "", "InvalidDocument", "document %d is not a Kubernetes object: expected a mapping with apiVersion, kind and metadata", doc)}
	}
	if head.Kind == "" || head.APIVersion == "" {
		return diag.List{fileErr(file, "", "", "InvalidDocument", "document %d has no apiVersion or kind", doc)}
	}
	object := head.Kind + "/" + head.Metadata.Name
	if head.APIVersion == "v1" && head.Kind == "List" {
		var diags diag.List
		for i, item := range head.Items {
			b, err := yaml.Marshal(item)
			if err != nil {
				diags = append(diags, fileErr(file, "", diag.ItemPath("items", i), "InvalidDocument", "%v", err))
				continue
			}
			diags = append(diags, in.decodeDocument(file, doc, b)...)
		}
		return diags
	}
	if head.APIVersion != groupVersion {
		if strings.HasPrefix(head.APIVersion, "inference.llmkube.dev/") {
			return diag.List{fileErr(file, object, "apiVersion", "UnsupportedVersion", "apiVersion %q is not supported; use %s", head.APIVersion, groupVersion)}
		}
		return diag.List{{Severity: diag.Warning, File: file, Object: object, Reason: "IgnoredObject",
			Message: fmt.Sprintf("%s %s is not an input of the compiler and is ignored", head.APIVersion, head.Kind)}}
	}
	switch head.Kind {
	case "ModelRouter":
		r := &v1.ModelRouter{}
		if d := decodeStrict(file, object, js, r); d.HasErrors() {
			return d
		}
		if r.Name == "" {
			return diag.List{fileErr(file, object, "metadata.name", "Required", "metadata.name is required")}
		}
		for _, existing := range in.Routers {
			if existing.Router.Name == r.Name && namespaceOf(existing.Router.Namespace) == namespaceOf(r.Namespace) {
				return diag.List{fileErr(file, object, "metadata.name", "DuplicateObject",
					"ModelRouter %s/%s is also defined in %s", namespaceOf(r.Namespace), r.Name, existing.File)}
			}
		}
		in.Routers = append(in.Routers, RouterSource{File: file, Router: r})
	case "InferenceService":
		s := &v1.InferenceService{}
		if d := decodeLenient(file, object, js, s); d.HasErrors() {
			return d
		}
		in.InferenceServices = append(in.InferenceServices, s)
	case "ModelPool":
		p := &v1.ModelPool{}
		if d := decodeLenient(file, object, js, p); d.HasErrors() {
			return d
		}
		in.Pools = append(in.Pools, p)
	default:
		return diag.List{{Severity: diag.Warning, File: file, Object: object, Reason: "IgnoredObject",
			Message: fmt.Sprintf("kind %s is not an input of the compiler and is ignored", head.Kind)}}
	}
	return nil
}

// decodeStrict decodes and reports every unknown or duplicated field with its path.
func decodeStrict(file, object string, js []byte, into any) diag.List {
	strict, err := kjson.UnmarshalStrict(js, into)
	var diags diag.List
	if err != nil {
		diags = append(diags, typeErr(file, object, js, err))
		return diags
	}
	for _, e := range strict {
		var fe kjson.FieldError
		path := ""
		if errors.As(e, &fe) {
			path = fe.FieldPath()
		}
		reason, msg := "UnknownField", "unknown field; check the spelling against the ModelRouter reference"
		if strings.HasPrefix(e.Error(), "duplicate field") {
			reason, msg = "DuplicateField", "field is set more than once"
		}
		diags = append(diags, fileErr(file, object, path, reason, "%s", msg))
	}
	return diags
}

// decodeLenient accepts fields the view does not model but still refuses
// values of the wrong type.
func decodeLenient(file, object string, js []byte, into any) diag.List {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, into); err != nil {
		return diag.List{typeErr(file, object, js, err)}
	}
	return nil
}

func typeErr(file, object string, js []byte, err error) diag.Diagnostic {
	msg := err.Error()
	path := ""
	// "json: cannot unmarshal string into Go struct field ModelRouter.spec.backends.weight of type int32"
	if i := strings.Index(msg, "Go struct field "); i >= 0 {
		rest := msg[i+len("Go struct field "):]
		if j := strings.Index(rest, " of type "); j >= 0 {
			field := rest[:j]
			if k := strings.Index(field, "."); k >= 0 {
				field = field[k+1:]
			}
			path = field
			got := strings.TrimPrefix(msg[:i], "json: cannot unmarshal ")
			got = strings.TrimSuffix(got, " into ")
			if indexed, ok := indexPath(js, strings.Split(field, "."), got); ok {
				path = indexed
			}
			msg = "wrong type: expected " + rest[j+len(" of type "):]
		}
	}
	return fileErr(file, object, path, "InvalidType", "%s", msg)
}

// indexPath restores the list indexes the JSON decoder leaves out of a type
// error's field path: it walks the document and returns the first path to a
// value of the JSON kind the decoder refused (e.g. spec.backends[2].weight).
func indexPath(js []byte, fields []string, kind string) (string, bool) {
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return "", false
	}
	var walk func(v any, rest []string, prefix string) (string, bool)
	walk = func(v any, rest []string, prefix string) (string, bool) {
		if list, ok := v.([]any); ok {
			for i, item := range list {
				if p, ok := walk(item, rest, diag.ItemPath(prefix, i)); ok {
					return p, true
				}
			}
			return "", false
		}
		if len(rest) == 0 {
			return prefix, jsonKind(v) == kind
		}
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		child, ok := m[rest[0]]
		if !ok {
			return "", false
		}
		next := rest[0]
		if prefix != "" {
			next = prefix + "." + rest[0]
		}
		return walk(child, rest[1:], next)
	}
	return walk(doc, fields, "")
}

// jsonKind names a decoded JSON value the way encoding/json's errors do.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}

func fileErr(file, object, field, reason, format string, args ...any) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, File: file, Object: object, Field: field, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
