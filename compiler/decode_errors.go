package compiler

// The strict decoder's errors: every unknown, duplicated or mistyped field of
// a ModelRouter as a diagnostic with its path (and the nearest known field as
// a hint), and the file-level diagnostics of Decode.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
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
		d, at := typeErr(file, object, js, err)
		diags = append(diags, d)
		cleaned, ok := removeAt(js, at)
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

// jsonStep is one step into a JSON document: an object's key, or a list's
// index (key "").
type jsonStep struct {
	key   string
	index int
}

// removeAt deletes the value at a path of steps from a JSON document.
func removeAt(js []byte, at []jsonStep) ([]byte, bool) {
	if len(at) == 0 {
		return nil, false
	}
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return nil, false
	}
	cur := doc
	for _, st := range at[:len(at)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[st.key]
		case []any:
			if st.key != "" || st.index >= len(c) {
				return nil, false
			}
			cur = c[st.index]
		default:
			return nil, false
		}
	}
	last := at[len(at)-1]
	switch c := cur.(type) {
	case map[string]any:
		if _, ok := c[last.key]; !ok || last.key == "" {
			return nil, false
		}
		delete(c, last.key)
	case []any:
		// A list item is emptied, not removed: the items after it keep
		// their indexes for the errors still to come.
		if last.key != "" || last.index >= len(c) {
			return nil, false
		}
		c[last.index] = nil
	default:
		return nil, false
	}
	out, err := json.Marshal(doc)
	return out, err == nil
}

// decodeLenient accepts fields the view does not model but still refuses
// values of the wrong type.
func decodeLenient(file, object string, js []byte, into any) diag.List {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, into); err != nil {
		d, _ := typeErr(file, object, js, err)
		return diag.List{d}
	}
	return nil
}

// typeErr reports a value of the wrong type at its full field path, list
// indexes and map keys included (spec.rules[0].match.headers[X-Team]), and
// returns where the value is, for decodeStrict to remove it.
func typeErr(file, object string, js []byte, err error) (diag.Diagnostic, []jsonStep) {
	msg := err.Error()
	path := ""
	var at []jsonStep
	// "json: cannot unmarshal string into Go struct field ModelRouter.spec.backends.weight of type int32"
	if i := strings.Index(msg, "Go struct field "); i >= 0 {
		rest := msg[i+len("Go struct field "):]
		if j := strings.Index(rest, " of type "); j >= 0 {
			fieldPath := rest[:j]
			if k := strings.Index(fieldPath, "."); k >= 0 {
				fieldPath = fieldPath[k+1:]
			}
			path = fieldPath
			got, _, _ := strings.Cut(strings.TrimPrefix(msg[:i], "json: cannot unmarshal "), " ")
			fields := strings.Split(fieldPath, ".")
			if off, ok := typeErrOffset(err); ok {
				at, ok = valueAt(js, off, strings.TrimSpace(got))
				if ok {
					path = diag.FieldString(stepsPath(at, fields))
				}
			}
			msg = "wrong type: expected " + rest[j+len(" of type "):]
		}
	}
	return fileErr(file, object, path, ReasonInvalidType, "%s", msg), at
}

// typeErrOffset is the byte offset of a type error in the document.
// sigs.k8s.io/json returns its own copy of encoding/json's
// *UnmarshalTypeError, from an internal package no one can name: its Offset
// field is read by name.
func typeErrOffset(err error) (int, bool) {
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	f := v.FieldByName("Offset")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return 0, false
	}
	return int(f.Int()), true
}

// valueAt is the path to the innermost value of the JSON kind the decoder
// refused (kind: "string", "number", "bool", "array", "object") that offset
// off is in, or just past: the decoder refuses a literal at its end, a list
// or an object one byte in (where a list's first item starts: the kind
// tells them apart).
func valueAt(js []byte, off int, kind string) ([]jsonStep, bool) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var found []jsonStep
	// value reads one value at path and reports whether it, or a value
	// inside it, is the one.
	var value func(path []jsonStep) (bool, error)
	value = func(path []jsonStep) (bool, error) {
		start := int(dec.InputOffset())
		for start < len(js) && strings.IndexByte(" \t\r\n,:", js[start]) >= 0 {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		inner := false
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false, err
				}
				key, _ := k.(string)
				ok, err := value(append(slices.Clip(path), jsonStep{key: key}))
				if err != nil {
					return false, err
				}
				inner = inner || ok
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				ok, err := value(append(slices.Clip(path), jsonStep{index: i}))
				if err != nil {
					return false, err
				}
				inner = inner || ok
			}
			_, err = dec.Token()
		}
		if err != nil || inner {
			return inner, err
		}
		if end := int(dec.InputOffset()); start < off && off <= end && jsonTokenKind(tok) == kind {
			found = slices.Clone(path)
			return true, nil
		}
		return false, nil
	}
	ok, err := value(nil)
	return found, ok && err == nil
}

// jsonTokenKind names the value a token starts the way encoding/json's
// type errors do.
func jsonTokenKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case json.Delim:
		if tok == json.Delim('[') {
			return "array"
		}
		return "object"
	}
	return "null"
}

// stepsPath is the field path of a value's steps: a key is a field's name
// while the steps follow the decoder's struct field path (fields), and a
// map key past it; an index is a list index.
func stepsPath(at []jsonStep, fields []string) *field.Path {
	var p *field.Path
	n := 0
	for _, st := range at {
		switch {
		case st.key == "":
			p = p.Index(st.index)
		case n < len(fields) && st.key == fields[n]:
			n++
			if p == nil {
				p = field.NewPath(st.key)
			} else {
				p = p.Child(st.key)
			}
		default:
			p = p.Key(st.key)
		}
	}
	return p
}

func fileErr(file, object, field, reason, format string, args ...any) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, File: file, Object: object, Field: field, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
