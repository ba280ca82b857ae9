package classifier

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// adversarial are texts that make pattern scanners backtrack or look
// around at every byte: each is repeated to a size.
var adversarial = map[string]string{
	"digits and spaces":   "1 ",
	"digit groups":        "123-45-",
	"ats":                 "a@",
	"local parts":         "aaaaaaaaaa.",
	"domains":             "@a.b.c.d.e.f",
	"iban starts":         "DE89 ",
	"icd codes":           "E11.9 diagnosis ",
	"phones with parens":  "(555) ",
	"plus signs":          "+1 ",
	"cue words":           "ssn phone mrn dob ",
	"identifier and term": "jane@example.com diabetes ",
	"names":               "Patient Jane Roe ",
	"all digits":          "4",
}

// TestScanIsLinear holds the look-arounds to a constant number of bytes
// read per byte of text, on inputs built to defeat them, at two sizes:
// linear time measured as work, not on a clock.
func TestScanIsLinear(t *testing.T) {
	for name, unit := range adversarial {
		t.Run(name, func(t *testing.T) {
			work := func(n int) int {
				var sc scanner
				text := []byte(strings.Repeat(unit, n/len(unit)+1))
				sc.text(text)
				return sc.steps
			}
			small, large := work(8<<10), work(64<<10)
			assert.LessOrEqual(t, small, 3000*(8<<10), "steps per byte")
			assert.LessOrEqual(t, float64(large), 8.5*float64(max(small, 1)), "work grows linearly: %d at 8 KiB, %d at 64 KiB", small, large)
		})
	}
}

func TestBodyOverLimitIsSensitive(t *testing.T) {
	body := append(append([]byte(`{"model":"m","input":"`), bytes.Repeat([]byte("a"), MaxBodyBytes)...), `"}`...)
	got := Body(body)
	assert.True(t, got.Has(BodyOverLimit))
	assert.Equal(t, []string{ClassPHI, ClassPII}, got.Classes(), "a body too large to read is classified as everything the detectors yield")
	assert.Equal(t, []string{"body-over-limit"}, got.Names())
}
