package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestSortedOrdersListIndexesNumerically(t *testing.T) {
	var l List
	l.ErrorAt(Rule(10).Child("name"), "A", "x")
	l.ErrorAt(Rule(2).Child("name"), "A", "x")
	l.WarnAt(Rule(1).Child("match", "headers").Key("X"), "B", "x")
	l.ErrorAt(Spec("backends"), "C", "x")
	got := []string{}
	for _, d := range l.Sorted() {
		got = append(got, d.Field)
	}
	assert.Equal(t, []string{"spec.backends", "spec.rules[1].match.headers[X]", "spec.rules[2].name", "spec.rules[10].name"}, got)
}

func TestStringAndErr(t *testing.T) {
	d := Diagnostic{File: "f.yaml", Object: "ModelRouter/r", Field: "spec.x", Reason: "Bad", Message: "is bad"}
	assert.Equal(t, "f.yaml: ModelRouter/r: spec.x: is bad (Bad)", d.String())
	var l List
	l.WarnAt(Spec("y"), "W", "just a note")
	assert.NoError(t, l.Err(), "warnings are not errors")
	l = append(l, d)
	assert.EqualError(t, l.Err(), d.String())
	assert.Len(t, l.Warnings(), 1)
	assert.Len(t, l.WithObject("g.yaml", "ModelRouter/s").Errors(), 1)
	assert.Equal(t, "g.yaml", l.WithObject("g.yaml", "ModelRouter/s")[0].File, "unattributed diagnostics get the file")
}

// TestFilters: Errors, Warnings and OfReason keep what they name, in order.
func TestFilters(t *testing.T) {
	var l List
	l.WarnAt(Spec("a"), "Dead", "x")
	l.ErrorAt(Spec("b"), "Bad", "x")
	l.WarnAt(Spec("c"), "Other", "x")
	l.ErrorAt(Spec("d"), "Dead", "x")
	fields := func(l List) []string {
		var out []string
		for _, d := range l {
			out = append(out, d.Field)
		}
		return out
	}
	assert.Equal(t, []string{"spec.b", "spec.d"}, fields(l.Errors()))
	assert.Equal(t, []string{"spec.a", "spec.c"}, fields(l.Warnings()))
	assert.Equal(t, []string{"spec.a", "spec.d"}, fields(l.OfReason("Dead")))
	assert.Equal(t, []string{"spec.a"}, fields(l.Warnings().OfReason("Dead")))
	assert.Empty(t, l.OfReason("Missing"))
}

// TestTypedPathsPrintAsBefore: a typed path prints the notation the string
// paths used (the goldens and the webhook depend on it).
func TestTypedPathsPrintAsBefore(t *testing.T) {
	for want, p := range map[string]interface{ String() string }{
		"spec":                                 Spec(),
		"spec.policy.auth.jwt":                 Spec("policy", "auth", "jwt"),
		"spec.backends[2].name":                Backend(2).Child("name"),
		"spec.rules[10].match.headers[X-Team]": Rule(10).Child("match", "headers").Key("X-Team"),
		"spec.policy.budgets[0].ruleName":      Budget(0).Child("ruleName"),
		"items[3]":                             field.NewPath("items").Index(3),
	} {
		assert.Equal(t, want, p.String())
	}
	assert.Equal(t, "", FieldString(nil), "a whole-object finding has no field")
	var l List
	l.ErrorAt(Rule(1).Child("name"), "A", "x %d", 1)
	l.WarnAt(nil, "B", "y")
	assert.Equal(t, Diagnostic{Severity: Error, Field: "spec.rules[1].name", Reason: "A", Message: "x 1"}, l[0])
	assert.Equal(t, Diagnostic{Severity: Warning, Reason: "B", Message: "y"}, l[1])
}
