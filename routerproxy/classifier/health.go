package classifier

import (
	"math/bits"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier/lexicon"
)

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
	"self harm", "self-harm", "suicid", "lithium", "alcohol withdrawal", "alcohol dependence", "gi bleed", "post-op", "postop", "abx",
	// admitted to a hospital, in the languages of the names the detectors read
	"ricoverat", "ingresado por", "ingresada por", "internado por", "internada por", "hospitalis", "hospitaliz",
}

// healthWindow is how far from an identifier a health term is looked for;
// nameHealthWindow bounds the sentence around a bare name (no cue word
// introduced it) its health term must be in.
const (
	healthWindow     = 512
	nameHealthWindow = 256
	birthNameWindow  = 256
)

// The kinds of identifier the health-term detector reads around.
const (
	idNumber = iota // a detection: an SSN, an email, a record number...
	idName          // a person's name
	idBirth         // a date of birth
)

// healthTerms fires HealthTerm when a health word is within healthWindow of
// one of the text's identifiers, and PersonNameWithBirthDate when a name
// and a date of birth are within birthNameWindow of each other.
func (sc *scanner) healthTerms(t []byte) {
	for a := range sc.nids {
		if sc.idKind[a] != idName || sc.found.Has(PersonNameWithBirthDate) {
			continue
		}
		for b := range sc.nids {
			if sc.idKind[b] == idBirth && abs(sc.ids[a]-sc.ids[b]) <= birthNameWindow {
				sc.found |= Set(PersonNameWithBirthDate)
			}
		}
		// The birth words of other languages (geb., née le, nato il,
		// född) are looked for around names only.
		if !sc.found.Has(PersonNameWithBirthDate) && sc.birthNear(t, max(sc.ids[a]-birthNameWindow/2, 0), min(sc.ids[a]+birthNameWindow/2, len(t))) {
			sc.found |= Set(PersonNameWithBirthDate)
		}
	}
	if sc.found.Has(HealthTerm) {
		return
	}
	end := -1
	for k := range sc.nids {
		from, to := sc.ids[k]-healthWindow, sc.ids[k]+healthWindow
		if sc.idKind[k] == idName && !sc.cuedName[k] {
			// A bare name's health term is in its own sentence or the
			// next: a colleague's name signing an email about a
			// guideline is not a patient's.
			from, to = sentenceAround(t, sc.ids[k], nameHealthWindow)
			if noteSections(t, sc.ids[k], min(sc.ids[k]+nameHealthWindow, len(t))) {
				// A note in sections (SOAP's S:, O:, A:, P:) is about one
				// patient from its first line to its plan.
				to = min(sc.ids[k]+nameHealthWindow, len(t))
			}
		}
		from, to = max(from, end, 0), min(to, len(t))
		if from >= to {
			continue
		}
		end = max(end, to)
		if sc.healthIn(t, from, to) {
			sc.found |= Set(HealthTerm)
			return
		}
	}
}

// noteSections reports whether t[from:to] holds a clinical note's section
// labels at a line's start: "\nA:", "\nP:", "\nAssessment:", "\nPlan:".
func noteSections(t []byte, from, to int) bool {
	for p := from; p+3 < to; p++ {
		if t[p] != '\n' {
			continue
		}
		q := t[p+1 : to]
		if hasPrefixFold(q, "a: ") || hasPrefixFold(q, "p: ") || hasPrefixFold(q, "assessment:") || hasPrefixFold(q, "plan:") || hasPrefixFold(q, "dx:") || hasPrefixFold(q, "impression:") {
			return true
		}
	}
	return false
}

// sentenceAround returns the sentence holding t[at] and the one after it
// (a note's next sentence is about the same patient: "Eva Kleist
// restless. Hx CHF."), at most limit bytes either side: a sentence ends at a '.', '!', '?' or ';' before a space or a line's
// end (not an abbreviation's dot: Dr., Mr., S.), or at a blank line.
func sentenceAround(t []byte, at, limit int) (int, int) {
	from, to := max(at-limit, 0), min(at+limit, len(t))
	for p := at - 1; p > from; p-- {
		if sentenceEndAt(t, p) {
			from = p + 1
			break
		}
	}
	for p, ends := at, 0; p < to; p++ {
		if sentenceEndAt(t, p) {
			if ends++; ends == 2 {
				to = p + 1
				break
			}
		}
	}
	return from, to
}

func sentenceEndAt(t []byte, p int) bool {
	switch c := t[p]; c {
	case '\n':
		return p+1 < len(t) && t[p+1] == '\n'
	case '.', '!', '?', ';':
		if p+1 < len(t) && t[p+1] != ' ' && t[p+1] != '\n' {
			return false
		}
		if c == '.' {
			// An abbreviation: a word of one to three letters starting
			// with a capital (Dr., Mr., Hx., S.).
			w := p
			for w > 0 && p-w < 4 && isLetter(t[w-1]) {
				w--
			}
			if p-w >= 1 && p-w <= 3 && isUpperASCII(t[w]) && (w == 0 || !isWordByte(t[w-1])) {
				return false
			}
		}
		return true
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// healthIn reports whether a health term starts at a word of t[from:to]:
// a stem of healthTerms, a word of the lexicon's health vocabulary
// (conditions, procedures, medications: pneumonia, sepsis, warfarin), or
// one of its phrases (atrial fibrillation, admitted with).
func (sc *scanner) healthIn(t []byte, from, to int) bool {
	sc.steps += to - from
	for i := from; i < to; i++ {
		c := t[i]
		if !isLetter(c) || (i > 0 && isLetter(t[i-1])) {
			continue
		}
		for _, w := range stemIndex[bits.TrailingZeros32(uint32(cueHealth))][(c|0x20)-'a'] {
			if hasPrefixFold(t[i:], w) {
				return true
			}
		}
		j := i + 1
		for j < len(t) && isLetter(t[j]) {
			j++
		}
		if lexicon.HealthWord(t[i:j]) || lexicon.HealthPhrase(t, i) > 0 || clinicalAbbrev(t, i, j) || injuryAt(t, i, j) || cognateAt(t, i, j) {
			return true
		}
		i = j
	}
	return false
}

// birthWords introduce a date of birth in the languages the detectors
// cover; the English ones (DOB, born, birth) are read in the main pass.
var birthWords = []string{"geb.", "geboren", "geburtsdatum", "né le", "née le", "né ", "née ", "date de naissance", "nato il", "nata il",
	"nato ", "nata ", "data di nascita", "nacido", "nacida", "fecha de nacimiento", "nascido", "nascida", "data de nascimento",
	"född", "födelsedatum", "født", "fødselsdato", "geboortedatum", "urodzon", "data urodzenia", "syntynyt", "dob", "d.o.b",
	"birth", "born", "b. "}

// birthNear reports whether a birth word followed by a date starts at a
// word of t[from:to].
func (sc *scanner) birthNear(t []byte, from, to int) bool {
	sc.steps += to - from
	for i := from; i < to; i++ {
		if i > 0 && isWordByte(t[i-1]) || !isLetter(t[i]) {
			continue
		}
		if birthWordAt(t, i) {
			return true
		}
	}
	return false
}

// birthWordAt reports whether a birth word of birthWords starts at t[i]
// and a date follows it within 40 bytes (The birthday on file for Dmitri
// Volkov is 1984-08-08).
func birthWordAt(t []byte, i int) bool {
	for _, w := range birthWords {
		if w[0] != t[i]|0x20 || !hasPrefixFold(t[i:], w) {
			continue
		}
		for p := i + len(w); p < len(t) && p < i+len(w)+40; p++ {
			if isDigit(t[p]) {
				if dateAt(t, p) {
					return true
				}
				break
			}
		}
	}
	return false
}

// nameCues introduce a person's name: a title, a form's label, a role;
// kinCues after "my ". nameCueIndex holds them by first letter, so a stop
// at a letter compares a few.
var (
	nameCues = []string{"patient", "pt", "name", "mr", "mrs", "ms", "miss", "mx", "caller", "applicant", "passenger", "guest",
		"client", "resident", "employee", "attn", "patient name", "full name", "i'm", "i am", "my name is", "named",
		"mme", "mlle", "m.", "herr", "frau", "sr", "sra", "srta", "sig", "dhr", "mevr", "titular", "intestatario", "paciente",
		"patiënt", "nom", "nome", "nombre", "namn", "navn", "naam",
		// a record's name fields (FHIR, CSV, forms): one word is a name there
		"given", "family", "first_name", "last_name", "firstname", "lastname", "surname", "forename", "given_name", "family_name"}
	kinCues = []string{"mom", "mum", "mother", "dad", "father", "wife", "husband", "son", "daughter", "brother", "sister",
		"partner", "friend", "grandmother", "grandfather", "grandma", "grandpa", "aunt", "uncle", "child", "baby", "fiancé",
		"fiance", "boyfriend", "girlfriend", "colleague"}
	// nameCueIndex holds the name cues by their first two letters (a
	// second byte that is no letter counts as 26).
	nameCueIndex = func() (idx [26][27][]string) {
		for _, c := range nameCues {
			idx[c[0]-'a'][shapeIndex(c[1])] = append(idx[c[0]-'a'][shapeIndex(c[1])], c)
		}
		return idx
	}()
)

// identifierCue judges a word at t[i] that may introduce an identifier in
// words: a person's name after a title or label (Patient Jane Roe, Name:
// John Smith, Mr Takeda, my father Leif Ranheim), a date of birth after
// "DOB", "born", "date of birth", "b.". It returns the index of the last
// byte it read, or i.
func (sc *scanner) identifierCue(t []byte, i int) int {
	c := t[i] | 0x20
	if c < 'a' || c > 'z' || (i > 0 && isLetter(t[i-1])) {
		return i // not a word's start
	}
	if c == 'd' || c == 'b' || c == 'c' || c == 'p' || c == 'm' {
		if j, ok := sc.fieldOrKinCue(t, i, c); ok {
			return j
		}
	}
	// A title or a label before a name. (Here, not in a function of its
	// own: every word's start comes this way.)
	second := 26
	if i+1 < len(t) {
		second = shapeIndex(lower(t[i+1]))
	}
	for _, cue := range nameCueIndex[c-'a'][second] {
		if hasPrefixFold(t[i:], cue) {
			if j := sc.cuedNameAfter(t, i, i+len(cue), cue); j > i {
				return j
			}
		}
	}
	return i
}

// fieldOrKinCue judges the cues that start with d, b, c, p or m at t[i]: a
// date of birth's cue, a table of people and their dates of birth or
// conditions, my and a kin word. ok is false when none is there.
func (sc *scanner) fieldOrKinCue(t []byte, i int, c byte) (int, bool) {
	if (c == 'd' || c == 'b') && birthCue(t, i) {
		sc.identifier(i, idBirth)
		return i, true
	}
	if (c == 'd' || c == 'b') && birthColumn(t, i) && sc.csvHeaderAt(t, i) {
		sc.identifier(i, idName) // a table of people and their dates of birth
		sc.identifier(i, idBirth)
		e := i
		for e < len(t) && t[e] != '\n' {
			e++
		}
		return e - 1, true
	}
	if (c == 'd' || c == 'c' || c == 'p') && i >= sc.headerEnd && healthField(t, i) {
		sc.healthTable(t, i)
		return i, true
	}
	if c == 'm' && hasPrefixFold(t[i:], "my ") {
		return sc.kinCue(t, i)
	}
	return i, false
}

// birthColumn reports whether a date of birth's column name starts at
// t[i], with room for a header after it.
func birthColumn(t []byte, i int) bool {
	return (hasPrefixFold(t[i:], "birth") || hasPrefixFold(t[i:], "dob") || hasPrefixFold(t[i:], "date_of_birth")) && i+8 < len(t)
}

// healthTable judges the header with a health field at t[i]: a table or
// an SQL column list with a name field and a health field, whose rows are
// people and their conditions.
func (sc *scanner) healthTable(t []byte, i int) {
	sc.headerEnd = i + 1
	for sc.headerEnd < len(t) && sc.headerEnd-i < 256 && t[sc.headerEnd] != '\n' {
		sc.headerEnd++
	}
	if rows := sc.healthHeaderAt(t, i); rows > 0 {
		sc.identifier(rows, idName)
		sc.cuedName[sc.nids-1] = true
	}
}

// kinCue judges "my" and a kin word at t[i] (my father Leif Ranheim): the
// name after it, or a patient in lower case. ok is false when no kin word
// follows.
func (sc *scanner) kinCue(t []byte, i int) (int, bool) {
	for _, kin := range kinCues {
		if hasPrefixFold(t[i+3:], kin) {
			if j := sc.cuedNameAfter(t, i, i+3+len(kin), "my "+kin); j > i {
				return j, true
			}
			return sc.kinLowerPatient(t, i, i+3+len(kin)), true
		}
	}
	return i, false
}

// cuedNameAfter records the name after the cue at t[i:p], if one follows
// it, and returns the index of its last byte, or i.
func (sc *scanner) cuedNameAfter(t []byte, i, p int, cue string) int {
	if p < len(t) && isLetter(t[p]) {
		return i // Patients, Mrs, named
	}
	if isTitle(cue) && !isUpperASCII(t[i]) {
		return i // a title is capitalized: "180 ms. Order" is no Ms. Order
	}
	e, ok := namesAfter(t, p, cue)
	if !ok {
		return i
	}
	sc.identifier(i, idName)
	sc.cuedName[sc.nids-1] = true
	return e - 1
}

// namesAfter reads the name after a name cue ending at t[p] (over '.',
// ':', '=', '"' and spaces): two capitalized words that are not
// notNames, one after a title (Mr Takeda), or a surname, a comma and a
// given name. It returns the end of the name.
func namesAfter(t []byte, p int, cue string) (int, bool) {
	p = skipCueGap(t, p)
	title := isTitle(cue)
	e1, ok := nameWord(t, p)
	if !ok {
		return capsOrLowerNameAfter(t, p, cue, title)
	}
	if notNames[string(t[p:e1])] {
		return p, false
	}
	if e1 < len(t) && (t[e1] == ',' || t[e1] == '/') {
		q := e1 + 1
		if q < len(t) && t[q] == ' ' {
			q++
		}
		if e2, ok := nameWord(t, q); ok {
			return e2, true // NAME: Vestergaard, Frederikke
		}
	}
	if e1 < len(t) && t[e1] == ' ' {
		if e2, ok := nameWord(t, e1+1); ok && !notNames[string(t[e1+1:e2])] {
			return e2, true
		}
	}
	return e1, title || isNameField(cue) || givenName(t[p:e1]) || surname(t[p:e1])
}

// skipCueGap skips what separates a name cue from its name: up to five
// spaces, colons, dots, equals signs, quotes, underscores and brackets,
// and a form's gender suffix (Patient/in:).
func skipCueGap(t []byte, p int) int {
	for k := 0; p < len(t) && k < 5 && (t[p] == ' ' || t[p] == ':' || t[p] == '.' || t[p] == '=' || t[p] == '"' || t[p] == '_' || t[p] == '\'' || t[p] == '['); k++ {
		p++
	}
	if p+3 < len(t) && t[p] == '/' && isLetter(t[p+1]) && isLetter(t[p+2]) && t[p+3] == ':' {
		p += 4 // Patient/in:
		for p < len(t) && t[p] == ' ' {
			p++
		}
	}
	return p
}

// capsOrLowerNameAfter reads a name at t[p] that is no capitalized word:
// a surname in capitals after a title, then the given name (Mme
// RUNÓLFSDÓTTIR Eyþóra, M. LESPÉRANCE Donat); a name in capitals after a
// form's label (PATIENT: KOWALSKI, ANNA); a name in lower case after kin
// or a name label (my father leif ranheim, name: leena sasi).
func capsOrLowerNameAfter(t []byte, p int, cue string, title bool) (int, bool) {
	if title {
		if e := capsWord(t, p); e > p && e < len(t) && t[e] == ' ' {
			if e2, ok := nameWord(t, e+1); ok {
				return e2, true
			}
		}
	}
	if e := capsWord(t, p); e > p && e+2 < len(t) && t[e] == ',' && t[e+1] == ' ' {
		if e2 := capsWord(t, e+2); e2 > e+2 {
			return e2, true
		}
	}
	if kinship(cue) || cue == "name" {
		return lowerName(t, p)
	}
	return p, false
}

// isTitle reports whether a name cue is a title (Mr, Mrs, Ms, Mme, M.,
// Herr, Frau, Sr., Sra.), which one capitalized word after it makes a name.
func isTitle(cue string) bool {
	switch cue {
	case "mr", "mrs", "ms", "miss", "mx", "mme", "mlle", "m.", "herr", "frau", "sr", "sra", "srta", "sig", "dhr", "mevr":
		return true
	}
	return false
}

// isNameField reports whether a name cue is a record's name field, after
// which one capitalized word is a name: "given":["Chinwe"], last_name=Nwosu.
func isNameField(cue string) bool {
	switch cue {
	case "given", "family", "first_name", "last_name", "firstname", "lastname", "surname", "forename", "given_name", "family_name":
		return true
	}
	return false
}

// capsWord returns the end of a word of capitals (two letters or more,
// letters of other scripts allowed) at t[p], or p.
func capsWord(t []byte, p int) int {
	e := p
	for e < len(t) && e-p <= maxNameWord && (isUpperASCII(t[e]) || t[e] >= 0x80 && t[e] != 0xE2 && t[e] != 0xC2) {
		e++
	}
	if e-p < 2 || !isUpperASCII(t[p]) || (e < len(t) && isWordByte(t[e])) {
		return p
	}
	return e
}

func kinship(cue string) bool { return len(cue) > 3 && cue[:3] == "my " }

// lowerName reads a name written in lowercase after a kinship word: a
// given name of the gazetteer (capitalized for the lookup) and one more
// word. It returns the end of the name and whether there is one.
func lowerName(t []byte, p int) (int, bool) {
	e, ok := lowerWord(t, p)
	if !ok {
		return p, false
	}
	if capitalized(t[p:e], givenName) {
		return e, true
	}
	// A given name the gazetteer lacks, before a surname it has: przemek kucharski.
	if e+2 >= len(t) || t[e] != ' ' {
		return p, false
	}
	f, ok := lowerWord(t, e+1)
	return f, ok && capitalized(t[e+1:f], surname)
}

// lowerWord returns the end of a lowercase word at t[p] (letters of other
// scripts allowed) and whether there is one of two letters or more.
func lowerWord(t []byte, p int) (int, bool) {
	e := p
	for e < len(t) && e-p < maxNameWord && (t[e] >= 'a' && t[e] <= 'z' || t[e] >= 0x80 && t[e] != 0xE2 && t[e] != 0xC2) {
		e++
	}
	return e, e-p >= 2 && t[p] >= 'a' && t[p] <= 'z' && (e == len(t) || !isWordByte(t[e]))
}

// capitalized looks the lowercase word w up, its first letter made a
// capital, with a name lookup.
func capitalized(w []byte, lookup func([]byte) bool) bool {
	var buf [maxNameWord]byte
	c := append(buf[:0], w...)
	c[0] -= 'a' - 'A'
	return lookup(c)
}

// notNames follow "patient" without naming one.
var notNames = map[string]bool{"Care": true, "Portal": true, "Safety": true, "Services": true, "Service": true, "Experience": true,
	"Education": true, "Information": true, "Access": true, "Support": true, "Records": true, "Record": true, "Engagement": true,
	"Advocate": true, "Advocacy": true, "Rights": true, "Satisfaction": true, "Outcomes": true, "Data": true, "Privacy": true,
	"Name": true, "The": true, "This": true, "A": true, "An": true, "ID": true, "Id": true, "Number": true, "No": true}

// birthCue reports whether the word at t[i] introduces a date of birth
// that follows within a few bytes: DOB 03/14/1962, born on 3 March 1962,
// Date of birth: 7 September 1967, b. 02/26/1996, D.O.B. 12/24/38.
func birthCue(t []byte, i int) bool {
	w := t[i:]
	var p int
	switch {
	case hasPrefixFold(w, "dob") || hasPrefixFold(w, "d.o.b"):
		p = i + 3
	case hasPrefixFold(w, "birth") || hasPrefixFold(w, "born"):
		p = i + 4
	case hasPrefixFold(w, "b. ") && i+3 < len(t) && isDigit(t[i+3]):
		return true
	default:
		return false
	}
	for end := min(p+24, len(t)); p < end; p++ {
		if isDigit(t[p]) {
			return dateAt(t, p)
		}
	}
	return false
}

// dateAt reports whether a date starts at the digit t[p]: digits joined
// by '/', '.' or '-' (03/14/1962, 1948-08-11, 21.08.1974), a day before a
// month's name (7 September 1967), a day and a year after one (April 23,
// 1988: the cue reads past the month to the day), or a year alone (born
// 1962); not a decade (1940s) or a count.
func dateAt(t []byte, p int) bool {
	q := p
	for q < len(t) && q-p < 4 && isDigit(t[q]) {
		q++
	}
	n := q - p
	switch {
	case q < len(t) && isDigit(t[q]):
		return false
	case q+1 < len(t) && (t[q] == '/' || t[q] == '.' || t[q] == '-') && isDigit(t[q+1]):
		return true
	case n <= 2:
		return dayAt(t, q)
	case n == 4 && (t[p] == '1' || t[p] == '2') && (q == len(t) || !isWordByte(t[q])):
		return true
	}
	return false
}

// dayAt reports whether a day's one or two digits, ending at t[q], start a
// date: before a month's abbreviation (19-MAR-1970), a month's name (7
// September 1967) or, after a comma, a year (April 23, 1988).
func dayAt(t []byte, q int) bool {
	switch {
	case q+3 < len(t) && (t[q] == '-' || t[q] == '/') && isLetter(t[q+1]) && isLetter(t[q+2]) && isLetter(t[q+3]):
		return true
	case q+1 < len(t) && (t[q] == ' ' || t[q] == ',') && (isLetter(t[q+1]) || (t[q] == ',' && q+2 < len(t) && isDigit(t[q+2]))):
		return true
	}
	return q+2 < len(t) && t[q] == ',' && t[q+1] == ' ' && isDigit(t[q+2])
}

// clinicalAbbrevs are the shorthand of hospital notes that no packaged
// vocabulary this project may embed lists (WordNet holds CVA, TIA, HIV,
// ARDS, CABG; the lexicon has those): a documented handful of the most
// frequent diagnoses and procedures, not a grown list. Read in capitals
// only, as a whole word (not CHA2DS2, not "af" or "Cap").
var clinicalAbbrevs = map[string]bool{
	"NSTEMI": true, "STEMI": true, "AF": true, "RVR": true, "CHF": true, "COPD": true, "DVT": true, "UTI": true,
	"DKA": true, "CKD": true, "AKI": true, "HTN": true, "TKR": true, "THR": true, "SOB": true, "DNR": true,
	"GORD": true, "GERD": true, "MRSA": true, "IDDM": true, "NIDDM": true, "T2DM": true, "T1DM": true, "LRTI": true,
	"NOF": true,
}

// clinicalAbbrev reports whether t[i:j] (letters), with the digits glued
// after it (T2DM), is one of clinicalAbbrevs written in capitals.
func clinicalAbbrev(t []byte, i, j int) bool {
	if !isUpperASCII(t[i]) {
		return false
	}
	for j < len(t) && j-i < 7 && (isUpperASCII(t[j]) || isDigit(t[j])) {
		j++ // T2DM
	}
	if j-i < 2 || j-i > 6 || !isUpperASCII(t[j-1]) || (j < len(t) && isWordByte(t[j])) {
		return false
	}
	return clinicalAbbrevs[string(t[i:j])]
}

// injuryVerbs and bodyParts: an injury told as a verb of the person
// (broke her ankle, fractured his wrist, sprained my knee) is a health
// matter though no word of it is a condition.
var (
	injuryVerbs = map[string]bool{"broke": true, "broken": true, "fractured": true, "sprained": true, "dislocated": true,
		"injured": true, "twisted": true, "tore": true, "torn": true, "hurt": true, "burned": true, "burnt": true, "cut": true}
	bodyParts = map[string]bool{"ankle": true, "wrist": true, "arm": true, "leg": true, "hip": true, "knee": true, "shoulder": true,
		"elbow": true, "foot": true, "hand": true, "finger": true, "toe": true, "rib": true, "ribs": true, "neck": true, "back": true,
		"nose": true, "collarbone": true, "jaw": true, "pelvis": true, "femur": true, "skull": true, "spine": true, "thumb": true,
		"heel": true, "shin": true, "head": true, "face": true, "eye": true}
	injuryObjects = map[string]bool{"her": true, "his": true, "my": true, "their": true, "your": true, "a": true, "the": true,
		"both": true, "left": true, "right": true}
	sides = map[string]bool{"left": true, "right": true}
)

// injuryAt reports whether the word t[i:j] is an injury verb followed by
// a possessive (her, his, my, their, a) and a body part.
func injuryAt(t []byte, i, j int) bool {
	if j-i < 3 || j-i > 10 || !inLower(injuryVerbs, t[i:j]) || j+2 >= len(t) || t[j] != ' ' {
		return false
	}
	p := j + 1
	q := p
	for q < len(t) && q-p < 6 && isLetter(t[q]) {
		q++
	}
	if !inLower(injuryObjects, t[p:q]) {
		return false
	}
	if q >= len(t) || t[q] != ' ' {
		return false
	}
	p = q + 1
	for k := 0; k < 2; k++ { // "her left ankle"
		q = p
		for q < len(t) && q-p < 11 && isLetter(t[q]) {
			q++
		}
		if inLower(bodyParts, t[p:q]) {
			return q == len(t) || !isLetter(t[q]) && t[q] != '-' // not ankle-deep
		}
		if !inLower(sides, t[p:q]) || q >= len(t) || t[q] != ' ' {
			return false
		}
		p = q + 1
	}
	return false
}

// inLower reports whether w, lowercased, is a key of m (m[string(b)]
// on a stack array allocates nothing).
func inLower(m map[string]bool, w []byte) bool {
	var buf [12]byte
	if len(w) > len(buf) {
		return false
	}
	for k, c := range w {
		buf[k] = lower(c)
	}
	return m[string(buf[:len(w)])]
}

// cognateAt reports whether the word at t[i:] (read to its end, letters
// of other scripts included) is a health word of the lexicon in another
// language's spelling the Latin roots share with English: accents folded
// (cáncer, diabète), a French final e dropped (amoxicilline, insuline),
// a Romance -ia or French -ie for English -ia or -y (neumonía, pneumopathie,
// quimioterapia is not one). j is the end of its ASCII letters.
func cognateAt(t []byte, i, j int) bool {
	e := j
	for e < len(t) && e-i < 32 && (isLetter(t[e]) || t[e] >= 0x80 && t[e] != 0xE2 && t[e] != 0xC2) {
		e++
	}
	if e-i < 5 || e-i >= 32 {
		return false
	}
	var buf [32]byte
	w, ok := foldName(buf[:0], t[i:e])
	if !ok || (e == j && w[len(w)-1] != 'e') {
		return false // plain ASCII not ending in e: HealthWord has judged it
	}
	if e > j && lexicon.HealthWord(w) {
		return true
	}
	n := len(w)
	if n < len(buf) && (w[0]|0x20) == 'n' && hasPrefixFold(w, "neum") {
		// Spanish and Portuguese drop the p of pneu-: neumonía, neumotórax.
		w = append(w, 0)
		copy(w[1:], w[:n])
		w[0] = 'p'
		if lexicon.HealthWord(w) {
			return true
		}
		w = w[1:]
	}
	switch {
	case w[n-1] == 'e' && n >= 7 && lexicon.HealthWord(w[:n-1]):
		return true // amoxicilline
	case n >= 7 && w[n-2] == 'i' && w[n-1] == 'e':
		w[n-1] = 'a' // pneumopathie: pneumopathia
		if lexicon.HealthWord(w) {
			return true
		}
		w[n-2], w = 'y', w[:n-1] // pneumopathy
		return lexicon.HealthWord(w)
	}
	return false
}

// healthField reports whether a record's health field name starts at
// t[i] and ends before a separator, a quote or a space: diagnosis, dx,
// condition (not problem: a bug tracker's column).
func healthField(t []byte, i int) bool {
	if i+2 > len(t) {
		return false
	}
	switch c, d := t[i]|0x20, t[i+1]|0x20; {
	case c == 'd' && (d == 'i' || d == 'x'), c == 'c' && d == 'o':
	default:
		return false // most words: one comparison
	}
	for _, f := range [...]string{"diagnosis", "diagnoses", "dx", "condition", "conditions"} {
		if hasPrefixFold(t[i:], f) {
			e := i + len(f)
			return e == len(t) || !isWordByte(t[e])
		}
	}
	return false
}

// kinLowerPatient judges two lowercase words after "my <kin>" at t[p]
// that the gazetteer does not know, followed by "has" or "is" and a
// health term right after: "my father harri jäntti has hypertension". It
// records the name and returns the index of its last byte, or i.
func (sc *scanner) kinLowerPatient(t []byte, i, p int) int {
	if p >= len(t) || t[p] != ' ' {
		return i
	}
	e, ok := twoLowerWords(t, p)
	if !ok || inLower(notKinNames, t[p+1:min(p+1+wordLen(t, p+1), len(t))]) {
		return i // my father and mother has, my father also is
	}
	q := e
	switch {
	case hasPrefixFold(t[q:], " has "):
		q += 5
	case hasPrefixFold(t[q:], " is "):
		q += 4
	default:
		return i
	}
	if q >= len(t) || !sc.healthIn(t, q, q+1) {
		return i
	}
	sc.identifier(i, idName)
	sc.cuedName[sc.nids-1] = true
	return e - 1
}

// notKinNames are the words that follow "my father" without naming him.
var notKinNames = map[string]bool{"and": true, "or": true, "also": true, "who": true, "has": true, "is": true, "was": true,
	"had": true, "with": true, "just": true, "still": true, "recently": true, "now": true, "then": true, "the": true, "a": true,
	"in": true, "law": true, "here": true, "never": true, "always": true, "finally": true, "apparently": true}

// wordLen returns the length of the ASCII letters at t[p].
func wordLen(t []byte, p int) int {
	q := p
	for q < len(t) && isLetter(t[q]) {
		q++
	}
	return q - p
}
