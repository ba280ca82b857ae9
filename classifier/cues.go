package classifier

import "bytes"

// Context words: a detector that a pattern alone would make noisy (a bare
// nine-digit number, an ICD-10-shaped token) fires only with one of these
// words near it, matched case-insensitively at a word's start.

// cueWindow is how far before (and, for ICD-10 codes, after) a candidate
// its context words are looked for.
const cueWindow = 48

var (
	ssnCues   = words("ssn", "social security", "soc sec", "social sec", "ss#", "ss #", "ss no", "taxpayer id", "itin")
	phoneCues = words("phone", "tel:", "tel.", "tel ", "tel#", "telephone", "call", "mobile", "cell", "fax", "whatsapp", "sms", "text me", "reach me", "contact", "landline")
	mrnCues   = words("mrn", "medical record", "mr#", "mr #", "mr no", "chart no", "chart #", "chart number", "patient id", "patient #", "patient no", "patient number", "record number", "hospital number", "health record", "nhs number")
	dobCues   = words("dob", "d.o.b", "date of birth", "birth date", "birthdate", "born")
	icdCues   = words("icd", "diagnos", "dx", "ddx", "condition", "disease", "disorder", "patient", "clinical", "medical", "comorbid")
)

func words(w ...string) [][]byte {
	out := make([][]byte, len(w))
	for i, s := range w {
		out[i] = []byte(s)
	}
	return out
}

// hasCue reports whether the lowercased window holds one of cues at a
// word's start.
func hasCue(w []byte, cues [][]byte) bool {
	for _, c := range cues {
		off := 0
		for {
			k := bytes.Index(w[off:], c)
			if k < 0 {
				break
			}
			if at := off + k; at == 0 || !isLetter(w[at-1]) {
				return true
			}
			off += k + 1
		}
	}
	return false
}

// healthTerms are the stems of words about a person's health: a diagnosis,
// a condition, a treatment. Next to a personal identifier they make the
// text protected health information (phi).
var healthTerms = words(
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
)

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
		if hasCue(sc.lowerWindow(t, from, to), healthTerms) {
			sc.found |= Set(HealthTerm)
			return
		}
	}
}

// nameCueWords introduce a person's name in a clinical or form-like text.
var nameCueWords = [][]byte{[]byte("atient"), []byte("ATIENT"), []byte("ame:"), []byte("AME:"), []byte("Mr. "), []byte("Mrs. "), []byte("Ms. ")}

func hasNameCue(t []byte) bool {
	for _, c := range nameCueWords {
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
	if sc.nids > 0 {
		sc.healthTerms(t)
	}
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
