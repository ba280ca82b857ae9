// Package diag holds the diagnostics every compiler stage returns: errors that
// refuse an input and warnings that do not. Each carries the object it is
// about, the field path inside it, a stable CamelCase reason and a message, so
// that the CLI, the webhook and the reconciler report the same thing.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Severity separates problems that refuse an input from notes that do not.
type Severity int

const (
	Error Severity = iota
	Warning
)

// MarshalText writes the severity as its name (error, warning).
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one finding about one field of one object.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// File is the input file the object came from, empty when it came from a cluster.
	File string `json:"file,omitempty"`
	// Object is "Kind/name" (or "Kind/namespace/name" when the namespace matters).
	Object string `json:"object,omitempty"`
	// Field is the field path, e.g. spec.backends[0].name. Empty for whole-object findings.
	Field string `json:"field,omitempty"`
	// Reason is a stable CamelCase identifier, e.g. DuplicateBackendName.
	Reason string `json:"reason"`
	// Message says what is wrong and, where it helps, what to do.
	Message string `json:"message"`
}

// String renders the CLI line format: FILE: Kind/NAME: FIELD.PATH: MESSAGE (Reason).
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		b.WriteString(": ")
	}
	if d.Object != "" {
		b.WriteString(d.Object)
		b.WriteString(": ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	if d.Reason != "" {
		fmt.Fprintf(&b, " (%s)", d.Reason)
	}
	return b.String()
}

// List is an ordered collection of diagnostics.
type List []Diagnostic

// HasErrors reports whether any diagnostic refuses the input.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (l List) Errors() List {
	return l.filter(func(d Diagnostic) bool { return d.Severity == Error })
}

// Warnings returns only the warnings.
func (l List) Warnings() List {
	return l.filter(func(d Diagnostic) bool { return d.Severity == Warning })
}

// OfReason returns only the diagnostics of the given reason, in order.
func (l List) OfReason(reason string) List {
	return l.filter(func(d Diagnostic) bool { return d.Reason == reason })
}

func (l List) filter(keep func(Diagnostic) bool) List {
	var out List
	for _, d := range l {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// WithObject returns a copy in which every diagnostic without an object or
// file is attributed to the given ones.
func (l List) WithObject(file, object string) List {
	out := make(List, len(l))
	for i, d := range l {
		if d.File == "" {
			d.File = file
		}
		if d.Object == "" {
			d.Object = object
		}
		out[i] = d
	}
	return out
}

// Sorted returns the diagnostics ordered by file, object, field and reason, so
// output does not depend on the order checks ran in.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		if a.Field != b.Field {
			return fieldKey(a.Field) < fieldKey(b.Field)
		}
		return a.Reason < b.Reason
	})
	return out
}

// fieldKey pads list indexes so spec.rules[2] sorts before spec.rules[10].
func fieldKey(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '[' {
			j := i + 1
			for j < len(path) && path[j] >= '0' && path[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(path) && path[j] == ']' {
				fmt.Fprintf(&b, "[%010s]", path[i+1:j])
				i = j
				continue
			}
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// Err converts the errors in the list into a Go error, or nil when there are none.
func (l List) Err() error {
	errs := l.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &ListError{List: errs}
}

// ListError is an error carrying every problem found.
type ListError struct{ List List }

func (e *ListError) Error() string {
	lines := make([]string, len(e.List))
	for i, d := range e.List {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Field paths are typed: apimachinery's field.Path, whose String() is the
// API server's notation (spec.backends[2].name, spec.rules[0].match.headers[X-Team]),
// so every stage and every plane names a field the same way, and the webhook
// hands the same path back to the API server. A path is built with Child,
// Index and Key from the roots below (or field.NewPath for another object's
// fields); no stage concatenates path strings. The paths the JSON decoder
// reports arrive as strings and are passed on as they are.

// Spec is the path of spec, or of spec.<names...>: Spec("policy", "auth") is
// spec.policy.auth.
func Spec(names ...string) *field.Path { return field.NewPath("spec", names...) }

// Backend is the path of spec.backends[i].
func Backend(i int) *field.Path { return Spec("backends").Index(i) }

// Rule is the path of spec.rules[i].
func Rule(i int) *field.Path { return Spec("rules").Index(i) }

// Budget is the path of spec.policy.budgets[i].
func Budget(i int) *field.Path { return Spec("policy", "budgets").Index(i) }

// FieldString is a path as a Diagnostic's Field holds it: "" for nil (a
// finding about the whole object).
func FieldString(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// ErrorAt appends an error about the field at p (nil: the whole object), the
// way every stage reports one.
func (l *List) ErrorAt(p *field.Path, reason, format string, args ...any) {
	*l = append(*l, Diagnostic{Severity: Error, Field: FieldString(p), Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// WarnAt appends a warning about the field at p (nil: the whole object).
func (l *List) WarnAt(p *field.Path, reason, format string, args ...any) {
	*l = append(*l, Diagnostic{Severity: Warning, Field: FieldString(p), Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// ReasonsByField maps each diagnostic's field path to its reason (the last
// one when a field has several).
func (l List) ReasonsByField() map[string]string {
	out := make(map[string]string, len(l))
	for _, d := range l {
		out[d.Field] = d.Reason
	}
	return out
}
