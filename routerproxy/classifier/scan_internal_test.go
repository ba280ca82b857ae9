package classifier

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// adversarial are texts that make pattern scanners backtrack or look
// around at every byte: each is repeated to a size.
var adversarial = map[string]string{
	"digits and spaces":    "1 ",
	"digit groups":         "123-45-",
	"ats":                  "a@",
	"local parts":          "aaaaaaaaaa.",
	"domains":              "@a.b.c.d.e.f",
	"iban starts":          "DE89 ",
	"icd codes":            "E11.9 diagnosis ",
	"phones with parens":   "(555) ",
	"plus signs":           "+1 ",
	"cue words":            "ssn phone mrn dob ",
	"identifier and term":  "jane@example.com diabetes ",
	"names":                "Patient Jane Roe ",
	"all digits":           "4",
	"given names":          "John Smith ",
	"name bigrams":         "Maria Lopez Maria ",
	"capitals":             "A B C D ",
	"accented names":       "Ágnes Földesy ",
	"surname first":        "Pisano, Fortunato, ",
	"names and health":     "John Smith pneumonia warfarin ",
	"name cues":            "Patient Mr. Name: my father ",
	"birth dates":          "DOB 11/02/1949 born 1962 ",
	"names with ages":      "Maha Cazares, 29, ",
	"id words":             "MRN no. Med. Rec. # NHS number phone: ",
	"dotted abbreviation":  "S.S.N. D.O.B. ",
	"fillers":              "is my no. the number ",
	"cue and dash digits":  "MRN-12345 PT-884213 ",
	"strong formats":       "1EG4-TE5-MK73 X1234567L RSSMRA85T10A562S AB123456C ",
	"national numbers":     "NHS 943 476 5919 BSN 111222333 ",
	"nir groups":           "1 21 10 2B 152 412 25 ",
	"iban national":        "NO 39 4750 07 95936 ",
	"phone labels":         "089 72 63 41 office ",
	"non-ASCII words":      "आधार é ü ",
	"icd with lexicon":     "I63.9 infarction ",
	"csv headers":          "name,dob,birth,",
	"name fields":          "name: a b given=",
	"health headers":       "name,diagnosis,dx\nToyokazu Koike,sepsis,",
	"sql values":           "(name, condition) VALUES ('Ab Cd', 'sepsis'), ",
	"caps surname first":   "\nKOIKE, TOYOKAZU sepsis ",
	"patient frames":       "note for Toyokazu Koike - ? sepsis Esjar Sturluson has Ab Cd attended with ",
	"ward lists":           "Handover: Ab Cd post-op Ef Gh: sepsis, Ij Kl (?DKA) KADYROV Ruslan sepsis ",
	"injuries and abbrevs": "broke her left ankle NSTEMI T2DM cáncer amoxicilline neumonía ",
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

// TestUnescapeAsJSONDecodes: the walk decodes a string's escapes as a
// JSON decoder does, whatever runs of plain bytes surround them.
func TestUnescapeAsJSONDecodes(t *testing.T) {
	for _, raw := range []string{
		`plain`, `a\nb`, `\"quoted\"`, `\\`, `tail\\`, `\u0034111 1111`, `x\u00e9y\tz`, `\ud83d\ude00 ok`, `lone \ud800 surrogate`,
		`{\"card\":\"4111\"}`, strings.Repeat(`abc\/`, 100),
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		assert.Equal(t, want, string(unescape(nil, []byte(raw))), raw)
	}
}

// TestCueBeforeLongMultibyteWord: a word before a number whose last
// character is a stray UTF-8 byte reaching past the id-word buffer (found
// by FuzzBody) is too long to be an id word, not a panic.
func TestCueBeforeLongMultibyteWord(t *testing.T) {
	for _, text := range []string{"\x960000000000000000000000000000000 00000", "é" + strings.Repeat("a", 31) + " 123456789", strings.Repeat("é", 20) + " 123 45 6789"} {
		for _, raw := range []string{text, `"` + text + `"`} {
			assert.NotPanics(t, func() { var sc scanner; sc.text([]byte(raw)) }, "%q", raw)
		}
	}
}
