package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSortedOrdersListIndexesNumerically(t *testing.T) {
	var l List
	l.Errorf("spec.rules[10].name", "A", "x")
	l.Errorf("spec.rules[2].name", "A", "x")
	l.Warnf("spec.rules[1].match.headers[X]", "B", "x")
	l.Errorf("spec.backends", "C", "x")
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
	l.Warnf("spec.y", "W", "just a note")
	assert.NoError(t, l.Err(), "warnings are not errors")
	l = append(l, d)
	assert.EqualError(t, l.Err(), d.String())
	assert.Len(t, l.Warnings(), 1)
	assert.Len(t, l.WithObject("g.yaml", "ModelRouter/s").Errors(), 1)
	assert.Equal(t, "g.yaml", l.WithObject("g.yaml", "ModelRouter/s")[0].File, "unattributed diagnostics get the file")
}
