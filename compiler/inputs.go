package compiler

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
	// Foreign are the gateway objects of ForeignKinds given beside the
	// routers: what other teams have on the same Gateway, which the
	// data planes' neighbour checks (targets.Neighbours) read.
	Foreign []*unstructured.Unstructured
	// Namespace, when set, is kubectl's -n: it fills every object that names
	// no namespace, and an object that names another one is an error.
	Namespace string
	// sources records where each object was first defined, to refuse a
	// second definition (DuplicateObject).
	sources map[string]string
	// skipped counts the objects that are not inputs, by kind, and the
	// files they came from, for one summary (Ignored).
	skipped      map[string]int
	skippedFiles []string
}

// ForeignKinds are the kinds of gateway objects an input may carry besides
// routers: what other teams have on the same Gateway. They are read by the
// neighbour checks and the routing-test models, not ignored.
var ForeignKinds = map[string]bool{
	"Gateway": true, "HTTPRoute": true, "AIGatewayRoute": true, "AIServiceBackend": true, "BackendSecurityPolicy": true, "Backend": true,
	"SecurityPolicy": true, "BackendTrafficPolicy": true, "ClientTrafficPolicy": true,
	"AgentgatewayPolicy": true, "AgentgatewayModel": true, "InferencePool": true,
}

// Ignored is one warning for every object of every file decoded so far that
// is not an input of the compiler (a companion Secret, a Deployment, ...),
// counted by kind; nil when there is none.
func (in *Inputs) Ignored() diag.List {
	if len(in.skipped) == 0 {
		return nil
	}
	kinds := make([]string, 0, len(in.skipped))
	n := 0
	for k, c := range in.skipped {
		kinds = append(kinds, fmt.Sprintf("%s (%d)", k, c))
		n += c
	}
	sort.Strings(kinds)
	d := diag.Diagnostic{Severity: diag.Warning, Reason: ReasonIgnoredObject,
		Message: fmt.Sprintf("%d object(s) that are not inputs of the compiler are ignored: %s", n, strings.Join(kinds, ", "))}
	if len(in.skippedFiles) == 1 {
		d.File = in.skippedFiles[0]
	} else {
		d.Message += fmt.Sprintf(" (in %d files)", len(in.skippedFiles))
	}
	return diag.List{d}
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
// and counted for one summary warning (Ignored).
//
// A problem in one document never hides another: an unknown field or a value
// of the wrong type is reported, the rest of the object is still decoded, and
// the object still goes through the whole checklist (its output is withheld
// because the input has errors).
func (in *Inputs) Decode(file string, data []byte) diag.List {
	var diags diag.List
	skipped := map[string]int{}
	defer func() {
		if len(skipped) == 0 {
			return
		}
		if in.skipped == nil {
			in.skipped = map[string]int{}
		}
		for k, c := range skipped {
			in.skipped[k] += c
		}
		in.skippedFiles = append(in.skippedFiles, file)
	}()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	starts := DocumentStarts(data)
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			diags = append(diags, fileErr(file, "", "", ReasonInvalidYAML, "document %d: %v%s", doc, err, templateHint(data)))
			break
		}
		first := 1
		if doc <= len(starts) {
			first = starts[doc-1]
		}
		diags = append(diags, in.decodeDocument(file, doc, first, raw, skipped)...)
	}
	return diags
}

// DocumentStarts is the line of the file each document of a multi-document
// YAML file starts on, as utilyaml's YAMLReader splits them: a document is
// a run of lines between separator lines (a line that starts with "---").
// Every reader of multi-document files (routing tests too) numbers a YAML
// error's lines from the file's with it and FileLines.
func DocumentStarts(data []byte) []int {
	var starts []int
	inDoc := false
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("---")):
			inDoc = false
		case !inDoc:
			starts = append(starts, i+1)
			inDoc = true
		}
	}
	return starts
}

// yamlLine matches the line numbers of the YAML parser's errors.
var yamlLine = regexp.MustCompile(`\bline ([0-9]+)`)

// FileLines is a YAML error's message with the lines it names, counted
// from its document, renumbered from the file's first line: the document
// starts on line first.
func FileLines(err error, first int) string {
	return yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, convErr := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if convErr != nil {
			return m
		}
		return "line " + strconv.Itoa(n+first-1)
	})
}

// templateHint recognises a Helm (or other Go) template passed by mistake.
func templateHint(data []byte) string {
	if bytes.Contains(data, []byte("{{")) {
		return "; this looks like a Helm template: render it first (helm template ... | llmkube-compile validate -f -)"
	}
	return ""
}

// decodeDocument decodes document doc of a file, which starts on the file's
// line first (the lines a YAML error names are the file's).
func (in *Inputs) decodeDocument(file string, doc, first int, raw []byte, skipped map[string]int) diag.List {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return diag.List{fileErr(file, "", "", ReasonInvalidYAML, "document %d: %s%s", doc, FileLines(err, first), templateHint(raw))}
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
		return diag.List{fileErr(file, "", "", ReasonInvalidDocument, "document %d is not a Kubernetes object: expected a mapping with apiVersion, kind and metadata", doc)}
	}
	if head.Kind == "" || head.APIVersion == "" {
		return diag.List{fileErr(file, "", "", ReasonInvalidDocument, "document %d has no apiVersion or kind", doc)}
	}
	object := head.Kind + "/" + head.Metadata.Name
	if head.APIVersion == "v1" && head.Kind == "List" {
		var diags diag.List
		for i, item := range head.Items {
			b, err := yaml.Marshal(item)
			if err != nil {
				diags = append(diags, fileErr(file, "", field.NewPath("items").Index(i).String(), ReasonInvalidDocument, "%v", err))
				continue
			}
			diags = append(diags, in.decodeDocument(file, doc, first, b, skipped)...)
		}
		return diags
	}
	if head.APIVersion != groupVersion {
		if strings.HasPrefix(head.APIVersion, "inference.llmkube.dev/") {
			return diag.List{fileErr(file, object, "apiVersion", ReasonUnsupportedVersion, "apiVersion %q is not supported; use %s", head.APIVersion, groupVersion)}
		}
		if ForeignKinds[head.Kind] {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				return diag.List{fileErr(file, object, "", ReasonInvalidDocument, "%v", err)}
			}
			if u.GetNamespace() == "" {
				u.SetNamespace(cmp.Or(in.Namespace, DefaultNamespace))
			}
			in.Foreign = append(in.Foreign, u)
			return nil
		}
		skipped[head.Kind]++
		return nil
	}
	switch head.Kind {
	case "ModelRouter":
		r := &v1.ModelRouter{}
		diags := decodeStrict(file, object, js, r)
		if !in.admit(file, object, head.Kind, &r.ObjectMeta, &diags) {
			return diags
		}
		in.Routers = append(in.Routers, RouterSource{File: file, Router: r})
		return diags
	case "InferenceService":
		s := &v1.InferenceService{}
		return in.reference(file, object, head.Kind, js, s, &s.ObjectMeta, func() { in.InferenceServices = append(in.InferenceServices, s) })
	case "ModelPool":
		p := &v1.ModelPool{}
		return in.reference(file, object, head.Kind, js, p, &p.ObjectMeta, func() { in.Pools = append(in.Pools, p) })
	default:
		skipped[head.Kind]++
		return nil
	}
}

// reference decodes a referenced kind leniently into obj and, admitted,
// keeps it.
func (in *Inputs) reference(file, object, kind string, js []byte, obj any, m *metav1.ObjectMeta, keep func()) diag.List {
	diags := decodeLenient(file, object, js, obj)
	if !diags.HasErrors() && in.admit(file, object, kind, m, &diags) {
		keep()
	}
	return diags
}

// admit checks an object's metadata as the API server would (name a DNS
// subdomain, namespace a DNS label), applies -n, and refuses a second
// definition of the same object. It reports whether the object joins the
// input: an object with no usable name or a duplicate does not.
func (in *Inputs) admit(file, object, kind string, m *metav1.ObjectMeta, diags *diag.List) bool {
	switch {
	case in.Namespace != "" && m.Namespace == "":
		m.Namespace = in.Namespace
	case in.Namespace != "" && m.Namespace != in.Namespace:
		*diags = append(*diags, fileErr(file, object, "metadata.namespace", ReasonNamespaceMismatch,
			"the object names namespace %q but -n/--namespace is %q; remove one or make them agree", m.Namespace, in.Namespace))
	}
	if m.Name == "" {
		*diags = append(*diags, fileErr(file, object, "metadata.name", ReasonRequired, "metadata.name is required"))
		return false
	}
	for _, msg := range apivalidation.NameIsDNSSubdomain(m.Name, false) {
		*diags = append(*diags, fileErr(file, object, "metadata.name", ReasonInvalidName, "%q is not a valid name: %s", m.Name, msg))
	}
	if m.Namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(m.Namespace, false) {
			*diags = append(*diags, fileErr(file, object, "metadata.namespace", ReasonInvalidName, "%q is not a valid namespace: %s", m.Namespace, msg))
		}
	}
	key := kind + " " + namespaceOf(m.Namespace) + "/" + m.Name
	if prev, dup := in.sources[key]; dup {
		*diags = append(*diags, fileErr(file, object, "metadata.name", ReasonDuplicateObject,
			"%s %s/%s is also defined in %s; the same object may be defined only once", kind, namespaceOf(m.Namespace), m.Name, prev))
		return false
	}
	if in.sources == nil {
		in.sources = map[string]string{}
	}
	in.sources[key] = file
	return true
}
