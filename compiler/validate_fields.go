package compiler

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// fieldRule is one row of the ModelRouter field table: the constraints the CRD
// schema states for a field. The API server enforces them on objects it
// admits; offline input never passes through it, so the compiler enforces
// them itself, for every data plane.
type fieldRule struct {
	required             bool
	enum                 []string
	pattern              *regexp.Regexp
	minLength, maxLength int    // characters; 0 means unbounded
	minItems, maxItems   int    // list items; 0 means unbounded
	minimum, maximum     *int64 // nil means unbounded
	// hint explains the pattern in words for the error message.
	hint string
}

const (
	nameHint    = "lowercase letters, digits and '-', starting with a letter or digit, at most 63 characters"
	decimalHint = `a non-negative decimal number written as a string, such as "0.25"`
	tokenHint   = "an HTTP header name (an RFC 7230 token: letters, digits and !#$%&'*+.^_|~-)"
)

// fieldTable holds every constraint of the reference's modelrouter-fields.tsv
// for spec fields, keyed by schema path ("[]" marks a list element), read
// from the generated CRD (fieldTableFromCRD). A test compares it with the
// TSV row by row. Fields of core Kubernetes types (affinity, tolerations,
// apiKeySecretRef, ...) are judged by the API server and are not walked.
var fieldTable = fieldTableFromCRD(patternHints)

// patternHints explain a field's pattern in words, for the error message.
var patternHints = map[string]string{
	"spec.agentGatewayRef.sectionName":                   "a DNS subdomain: lowercase letters, digits, '-' and '.'",
	"spec.backends[].costPerMillionTokens.completionUSD": decimalHint,
	"spec.backends[].costPerMillionTokens.promptUSD":     decimalHint,
	"spec.backends[].name":                               nameHint,
	"spec.policy.auditLog.callerHeader":                  tokenHint,
	"spec.policy.budgets[].maxUSD":                       decimalHint,
	"spec.policy.budgets[].name":                         nameHint,
	"spec.proxy.serviceName":                             "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter",
	"spec.rules[].name":                                  nameHint,
}

// checkFields walks the spec and applies the field table.
func (v *validator) checkFields() {
	walkFields(reflect.ValueOf(v.s).Elem(), diag.Spec(), "spec", &v.diags)
}

// apiPackage is the package whose structs the walk descends into; the core
// Kubernetes types the spec embeds are the API server's to judge.
var apiPackage = reflect.TypeFor[v1.ModelRouterSpec]().PkgPath()

func isAPIStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == apiPackage
}

// jsonName is a struct field's serialized name, "" for fields not serialized.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// walkFields applies the field table to every field of an API struct. path is
// the concrete field path (spec.backends[2].name), schema the table key
// (spec.backends[].name, a string: "[]" is no field path).
func walkFields(val reflect.Value, path *field.Path, schema string, diags *diag.List) {
	t := val.Type()
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name == "" {
			continue
		}
		fv, p, s := val.Field(i), path.Child(name), schema+"."+name
		if rule, ok := fieldTable[s]; ok {
			rule.check(fv, p, name, diags)
		}
		switch {
		case fv.Kind() == reflect.Pointer && !fv.IsNil() && isAPIStruct(fv.Type().Elem()):
			walkFields(fv.Elem(), p, s, diags)
		case isAPIStruct(fv.Type()):
			walkFields(fv, p, s, diags)
		case fv.Kind() == reflect.Slice && isAPIStruct(fv.Type().Elem()):
			for j := 0; j < fv.Len(); j++ {
				walkFields(fv.Index(j), p.Index(j), s+"[]", diags)
			}
		}
	}
}

// check applies one rule to one field value. An unset optional field is not
// checked; an unset required one is Required (a struct is judged by its own
// required fields instead). name is the field's own name, for the message.
func (rule fieldRule) check(fv reflect.Value, path *field.Path, name string, diags *diag.List) {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			if rule.required {
				diags.ErrorAt(path, ReasonRequired, "%s is required", name)
			}
			return
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		rule.checkString(fv.String(), path, name, diags)
	case reflect.Int, reflect.Int32, reflect.Int64:
		if rule.required && fv.Int() == 0 {
			diags.ErrorAt(path, ReasonRequired, "%s is required", name)
			return
		}
		rule.checkNumber(fv.Int(), path, diags)
	case reflect.Slice:
		rule.checkItems(fv, path, name, diags)
	}
}

func (rule fieldRule) checkString(s string, path *field.Path, name string, diags *diag.List) {
	if s == "" {
		if rule.required {
			diags.ErrorAt(path, ReasonRequired, "%s is required", name)
		}
		return
	}
	if len(rule.enum) > 0 && !slices.Contains(rule.enum, s) {
		diags.ErrorAt(path, ReasonNotSupported, "unsupported value %q: must be one of %s", s, strings.Join(rule.enum, ", "))
	}
	if rule.pattern != nil && !rule.pattern.MatchString(s) {
		diags.ErrorAt(path, ReasonInvalidFormat, "%q is not valid: it must be %s (pattern %s)", s, rule.hint, rule.pattern)
	}
	if n := len(s); rule.maxLength > 0 && n > rule.maxLength {
		diags.ErrorAt(path, ReasonTooLong, "%s is %d characters long; at most %d are allowed", name, n, rule.maxLength)
	} else if n < rule.minLength {
		diags.ErrorAt(path, ReasonTooShort, "%s is %d characters long; at least %d are required", name, n, rule.minLength)
	}
}

func (rule fieldRule) checkNumber(n int64, path *field.Path, diags *diag.List) {
	lo, hi := rule.minimum, rule.maximum
	if (lo == nil || n >= *lo) && (hi == nil || n <= *hi) {
		return
	}
	var want string
	switch {
	case lo != nil && hi != nil:
		want = fmt.Sprintf("between %d and %d", *lo, *hi)
	case lo != nil:
		want = fmt.Sprintf("at least %d", *lo)
	default:
		want = fmt.Sprintf("at most %d", *hi)
	}
	diags.ErrorAt(path, ReasonOutOfRange, "%d is out of range: it must be %s", n, want)
}

// checkItems bounds a list. nil is unset; an empty list that was written out
// counts as zero items.
func (rule fieldRule) checkItems(fv reflect.Value, path *field.Path, name string, diags *diag.List) {
	if fv.IsNil() {
		if rule.required {
			diags.ErrorAt(path, ReasonRequired, "%s is required", name)
		}
		return
	}
	n := fv.Len()
	switch {
	case rule.maxItems > 0 && n > rule.maxItems:
		diags.ErrorAt(path, ReasonTooMany, "%s has %d entries; at most %d are allowed", name, n, rule.maxItems)
	case n < rule.minItems:
		diags.ErrorAt(path, ReasonTooFew, "%s has %d entries; at least %d %s required", name, n, rule.minItems, plural(rule.minItems, "is", "are"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
