package compiler

// The strict decoder's errors: every unknown, duplicated or mistyped field of
// a ModelRouter as a diagnostic with its path (and the nearest known field as
// a hint), and the file-level diagnostics of Decode.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// maxTypeErrors bounds how many mistyped values one object reports.
const maxTypeErrors = 64

// decodeStrict decodes a ModelRouter and reports every unknown or duplicated
// field and every value of the wrong type with its path. A mistyped value is
// removed and the document decoded again, so one mistake hides no other and
// into holds everything that did decode.
func decodeStrict(file, object string, js []byte, into *v1.ModelRouter) diag.List {
	var diags diag.List
	for range maxTypeErrors {
		*into = v1.ModelRouter{}
		strict, err := kjson.UnmarshalStrict(js, into)
		if err == nil {
			for _, e := range strict {
				diags = append(diags, strictErr(file, object, e))
			}
			return diags
		}
		d := typeErr(file, object, js, err)
		diags = append(diags, d)
		cleaned, ok := removePath(js, d.Field)
		if !ok {
			// Not locatable: decode leniently what can be.
			*into = v1.ModelRouter{}
			_ = kjson.UnmarshalCaseSensitivePreserveInts(js, into)
			return diags
		}
		js = cleaned
	}
	return diags
}

// strictErr reports an unknown or duplicated field; an unknown field gets
// the nearest known field's name as a hint.
func strictErr(file, object string, e error) diag.Diagnostic {
	var fe kjson.FieldError
	path := ""
	if errors.As(e, &fe) {
		path = fe.FieldPath()
	}
	if strings.HasPrefix(e.Error(), "duplicate field") {
		return fileErr(file, object, path, ReasonDuplicateField, "field is set more than once")
	}
	msg := "unknown field; check the spelling against the ModelRouter reference"
	if near := nearestField(path); near != "" {
		msg = fmt.Sprintf("unknown field; did you mean %s?", near)
	}
	return fileErr(file, object, path, ReasonUnknownField, "%s", msg)
}

// listIndex matches the list indexes of a field path ("[2]").
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// nearestField is the known sibling of an unknown field whose name is
// closest to it (at most a third of its letters off), or "".
func nearestField(path string) string {
	schema := listIndex.ReplaceAllString(path, "[]")
	dot := strings.LastIndex(schema, ".")
	if dot < 0 {
		return ""
	}
	parent, name := schema[:dot+1], schema[dot+1:]
	best, bestDist := "", len(name)/3+1
	for p := range specPaths {
		sib, ok := strings.CutPrefix(p, parent)
		if !ok || strings.ContainsAny(sib, ".[") {
			continue
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(sib)); d < bestDist || (d == bestDist && sib < best) {
			best, bestDist = sib, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// removePath deletes the value at a field path (spec.backends[2].weight)
// from a JSON document.
func removePath(js []byte, path string) ([]byte, bool) {
	if path == "" {
		return nil, false
	}
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return nil, false
	}
	segs := strings.Split(path, ".")
	cur := doc
	for i, seg := range segs {
		name, idx := seg, -1
		if j := strings.IndexByte(seg, '['); j >= 0 {
			name = seg[:j]
			n, err := strconv.Atoi(strings.TrimSuffix(seg[j+1:], "]"))
			if err != nil {
				return nil, false
			}
			idx = n
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if i == len(segs)-1 && idx < 0 {
			if _, ok := m[name]; !ok {
				return nil, false
			}
			delete(m, name)
			out, err := json.Marshal(doc)
			return out, err == nil
		}
		cur = m[name]
		if idx >= 0 {
			list, ok := cur.([]any)
			if !ok || idx >= len(list) {
				return nil, false
			}
			if i == len(segs)-1 {
				m[name] = append(list[:idx:idx], list[idx+1:]...)
				out, err := json.Marshal(doc)
				return out, err == nil
			}
			cur = list[idx]
		}
	}
	return nil, false
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
	return fileErr(file, object, path, ReasonInvalidType, "%s", msg)
}

// indexPath restores the list indexes the JSON decoder leaves out of a type
// error's field path: it walks the document and returns the first path to a
// value of the JSON kind the decoder refused (e.g. spec.backends[2].weight).
func indexPath(js []byte, fields []string, kind string) (string, bool) {
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return "", false
	}
	var walk func(v any, rest []string, prefix *field.Path) (*field.Path, bool)
	walk = func(v any, rest []string, prefix *field.Path) (*field.Path, bool) {
		if list, ok := v.([]any); ok {
			for i, item := range list {
				if p, ok := walk(item, rest, prefix.Index(i)); ok {
					return p, true
				}
			}
			return nil, false
		}
		if len(rest) == 0 {
			return prefix, jsonKind(v) == kind
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		child, ok := m[rest[0]]
		if !ok {
			return nil, false
		}
		if prefix == nil {
			return walk(child, rest[1:], field.NewPath(rest[0]))
		}
		return walk(child, rest[1:], prefix.Child(rest[0]))
	}
	p, ok := walk(doc, fields, nil)
	return diag.FieldString(p), ok
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
