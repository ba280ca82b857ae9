package classifier

import "bytes"

// Context words: a detector that a pattern alone would make noisy (a bare
// nine-digit number, an ICD-10-shaped token) fires only with one of these
// words near it, matched case-insensitively at a word's start.

// cueWindow is how far before (and, for ICD-10 codes, after) a candidate
// its context words are looked for.
const cueWindow = 48

// cueKind is a list of context words, as a bit: one pass over a window
// finds the words of several lists.
type cueKind uint8

const (
	cueSSN cueKind = 1 << iota
	cuePhone
	cueMRN
	cueICD
	cueHealth
)

// cue is one context word (lowercase, a stem: it matches at a word's start).
type cue struct {
	word  string
	kinds cueKind
}

// cueIndex holds the context words by their first letter.
var cueIndex [26][]cue

func addCues(k cueKind, words ...string) {
	for _, w := range words {
		cueIndex[w[0]-'a'] = append(cueIndex[w[0]-'a'], cue{w, k})
	}
}

func init() {
	addCues(cueSSN, "ssn", "social security", "soc sec", "social sec", "ss#", "ss #", "ss no", "taxpayer id", "itin", "irs")
	addCues(cuePhone, "phone", "tel:", "tel.", "tel ", "tel#", "telephone", "call", "mobile", "cell", "fax", "whatsapp", "sms", "text me", "reach me", "contact", "landline")
	addCues(cueMRN, "mrn", "medical record", "mr#", "mr #", "mr no", "chart no", "chart #", "chart number", "patient id", "patient #", "patient no", "patient number", "record number", "hospital number", "health record", "nhs number")
	addCues(cueICD, "icd", "diagnos", "dx", "ddx", "condition", "disease", "disorder", "patient", "clinical", "medical", "comorbid")
	addCues(cueHealth, healthTerms...)
}

// cuesIn returns which of the want lists have a word starting in
// t[from:to], matched case-insensitively at a word's start: one pass over
// the window, whatever the number of lists and words.
func (sc *scanner) cuesIn(t []byte, from, to int, want cueKind) cueKind {
	from, to = max(from, 0), min(to, len(t))
	sc.steps += max(to-from, 0)
	var found cueKind
	for i := from; i < to; i++ {
		c := t[i] | 0x20
		if c < 'a' || c > 'z' || (i > 0 && isLetter(t[i-1])) {
			continue
		}
		for _, e := range cueIndex[c-'a'] {
			if e.kinds&want&^found != 0 && hasPrefixFold(t[i:], e.word) {
				found |= e.kinds & want
				if found == want {
					return found
				}
			}
		}
	}
	return found
}

// hasPrefixFold reports whether t starts with the lowercase word, ASCII
// case-insensitively.
func hasPrefixFold(t []byte, word string) bool {
	if len(t) < len(word) {
		return false
	}
	for k := range len(word) {
		c := t[k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[k] {
			return false
		}
	}
	return true
}

// healthTerms are the stems of words about a person's health: a diagnosis,
// a condition, a treatment. Next to a personal identifier they make the
// text protected health information (phi).
var healthTerms = []string{
	"diagnos", "prognos", "prescri", "medication", "dosage", "treatment", "therapy", "chemo", "radiotherapy",
	"surgery", "surgical", "hospitali", "admitted to", "discharge", "symptom", "cancer", "tumor", "tumour",
	"carcinoma", "leukemia", "leukaemia", "lymphoma", "melanoma", "diabet", "hiv", "aids", "hepatitis", "tuberculosis",
	"asthma", "copd", "hypertension", "depress", "anxiety", "bipolar", "schizophren", "ptsd", "adhd", "autis",
	"dementia", "alzheimer", "parkinson", "epilep", "seizure", "stroke", "heart attack", "myocardial", "cardiac",
	"pregnan", "miscarriage", "abortion", "sexually transmitted", "sti test", "chlamydia", "syphilis", "gonorrh", "herpes",
	"overdose", "rehab", "addiction", "substance use", "opioid", "insulin", "metformin", "lisinopril", "sertraline",
	"antidepress", "blood pressure", "blood test", "lab result", "biopsy", "mri", "ct scan", "x-ray", "allerg",
	"covid", "tested positive", "mental health", "psychiatr", "icu", "dialysis", "transplant", "infection",
	"disease", "disorder", "illness", "injury", "fracture", "medical history", "clinic", "physician", "oncolog",
	"vaccin", "immuniz", "a1c", "cholesterol", "obesity", "kidney", "liver", "cirrhosis", "sclerosis",
}

// healthWindow is how far from an identifier a health term is looked for.
const healthWindow = 512

// healthTerms fires HealthTerm when a health word is within healthWindow of
// one of the text's identifiers.
func (sc *scanner) healthTerms(t []byte) {
	if sc.found.Has(HealthTerm) {
		return
	}
	end := -1
	for k := range sc.nids {
		from, to := max(sc.ids[k]-healthWindow, end, 0), min(sc.ids[k]+healthWindow, len(t))
		if from >= to {
			continue
		}
		end = to
		if sc.cuesIn(t, from, to, cueHealth) != 0 {
			sc.found |= Set(HealthTerm)
			return
		}
	}
}

// nameCueWords introduce a person's name in a clinical or form-like text.
var nameCueWords = [][]byte{[]byte("atient"), []byte("ATIENT"), []byte("ame:"), []byte("AME:"), []byte("Mr. "), []byte("Mrs. "), []byte("Ms. ")}

// birthCueWords mark a date of birth, itself an identifier.
var birthCueWords = [][]byte{[]byte("DOB"), []byte("dob"), []byte("D.O.B"), []byte("birth"), []byte("Birth"), []byte("BIRTH"), []byte("born"), []byte("Born")}

// identifierCueWords are both, searched for once per text.
var identifierCueWords = append(append([][]byte{}, nameCueWords...), birthCueWords...)

func hasNameCue(t []byte) bool {
	for _, c := range identifierCueWords {
		if bytes.Contains(t, c) {
			return true
		}
	}
	return false
}

// notNames follow "patient" without naming one.
var notNames = map[string]bool{"Care": true, "Portal": true, "Safety": true, "Services": true, "Service": true, "Experience": true,
	"Education": true, "Information": true, "Access": true, "Support": true, "Records": true, "Record": true, "Engagement": true,
	"Advocate": true, "Advocacy": true, "Rights": true, "Satisfaction": true, "Outcomes": true, "Data": true, "Privacy": true,
	"Name": true, "The": true, "This": true, "A": true, "An": true}

// nameCues records a name after "patient", "name:", "Mr." and the like (two
// capitalized words: Patient Jane Roe, Name: John Smith) as an identifier,
// then looks for health terms near it.
func (sc *scanner) nameCues(t []byte) {
	sc.nids = 0
	for _, c := range nameCueWords {
		off := 0
		for sc.nids < len(sc.ids) {
			k := bytes.Index(t[off:], c)
			if k < 0 {
				break
			}
			at := off + k + len(c)
			off = at
			if twoNames(t, at) {
				sc.identifier(at)
			}
		}
	}
	for _, c := range birthCueWords {
		if k := bytes.Index(t, c); k >= 0 && birthDate(t, k+len(c)) {
			sc.identifier(k)
		}
	}
	if sc.nids > 0 {
		sc.healthTerms(t)
	}
}

// birthDate reports whether a date (a group of digits) follows a birth
// word within a few bytes: DOB 03/14/1962, born on 3 March 1962.
func birthDate(t []byte, p int) bool {
	for end := min(p+24, len(t)); p < end; p++ {
		if isDigit(t[p]) {
			return true
		}
	}
	return false
}

// twoNames reports whether t at p (after spaces and a ':') holds two
// capitalized words that are not notNames.
func twoNames(t []byte, p int) bool {
	for p < len(t) && (t[p] == ' ' || t[p] == ':') {
		p++
	}
	for range 2 {
		if p >= len(t) || t[p] < 'A' || t[p] > 'Z' {
			return false
		}
		q := p + 1
		for q < len(t) && t[q] >= 'a' && t[q] <= 'z' {
			q++
		}
		if q-p < 2 || q-p > 20 || notNames[string(t[p:q])] {
			return false
		}
		p = q
		if p < len(t) && t[p] == ' ' {
			p++
		}
	}
	return true
}
