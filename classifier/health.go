package classifier

// Health terms next to identifiers, and the identifiers a text names in words: a person's name, a date of birth.

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

// identifierCue records the identifier a word at t[i] introduces: a name
// after "Patient", "Name:", "Mr.", "Mrs." or "Ms." (Patient Jane Roe, Name:
// John Smith), or a date of birth after "DOB", "birth" or "born". A name is
// an identifier only where the text says so; the health-term detector then
// looks for health words next to it.
func (sc *scanner) identifierCue(t []byte, i int) {
	if identifierFollows(t, i) {
		sc.identifier(i)
	}
}

// identifierFollows reports whether the word at t[i] (or "Name" before the
// ':' at t[i]) introduces an identifier the text then holds.
func identifierFollows(t []byte, i int) bool {
	if t[i] == ':' {
		return i >= 4 && hasPrefixFold(t[i-4:], "name") && (i == 4 || !isLetter(t[i-5])) && twoNames(t, i+1)
	}
	if i > 0 && isLetter(t[i-1]) {
		return false // not a word's start
	}
	w := t[i:]
	switch {
	case hasPrefixFold(w, "patient"):
		return twoNames(t, i+len("patient"))
	case hasPrefixFold(w, "mr. ") || hasPrefixFold(w, "ms. ") || hasPrefixFold(w, "mrs. "):
		return t[i] == 'M' && twoNames(t, i+3+boolInt(t[i+2] == 's'))
	case hasPrefixFold(w, "dob") || hasPrefixFold(w, "d.o.b") || hasPrefixFold(w, "birth") || hasPrefixFold(w, "born"):
		return birthDate(t, i+3)
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notNames follow "patient" without naming one.
var notNames = map[string]bool{"Care": true, "Portal": true, "Safety": true, "Services": true, "Service": true, "Experience": true,
	"Education": true, "Information": true, "Access": true, "Support": true, "Records": true, "Record": true, "Engagement": true,
	"Advocate": true, "Advocacy": true, "Rights": true, "Satisfaction": true, "Outcomes": true, "Data": true, "Privacy": true,
	"Name": true, "The": true, "This": true, "A": true, "An": true}

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
