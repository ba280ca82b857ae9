package classifier

import (
	"bytes"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier/lexicon"
)

// Person names without a cue word. A name is two capitalized words the
// gazetteer (routerproxy/classifier/lexicon: census and locale name tables) reads as a
// given name then a surname, "John Smith", "Jonáš Zadina" (accents folded
// for the lookup), or the surname first, "Pisano, Fortunato" and
// "Pap/Viktor". The surname may be any capitalized word that is not a
// word of a place, an organization or a calendar (the gazetteer cannot
// hold every surname); the given name must be the gazetteer's, which
// holds no name that is mostly an English word ("Will", "Hope" are not
// in it). Not a name: a word in capitals only (headings, acronyms), an
// eponym ("Hodgkin lymphoma", "Parkinson's disease", "Crohn disease"), a
// clinician ("Dr. Maria Lopez"). It misses a given name the gazetteer
// lacks, a name written in lowercase, and a single word ("Smith has HIV")
// unless a title or a cue word introduces it ("Mr Takeda").

// maxNameWord bounds a name word, in bytes.
const maxNameWord = 24

// nameWord returns the end of the capitalized word at t[i] (an ASCII
// capital, then lowercase letters, letters of other scripts, an
// apostrophe or a capital after Mc/O'), and whether it is one: at least
// two letters, a lowercase one among them, not glued to digits or '_'.
func nameWord(t []byte, i int) (int, bool) {
	n := capitalAt(t, i)
	if n == 0 {
		return i, false
	}
	j, lowerSeen := i+n, false
	for j < len(t) && j-i <= maxNameWord {
		c := t[j]
		switch {
		case c >= 'a' && c <= 'z', c >= 0x80 && c != 0xE2 && c != 0xC2:
			lowerSeen = true
		case c >= 'A' && c <= 'Z' && lowerSeen && !innerCapital(t[i:j]):
			return j, false // CamelCase is a product's name (AnyConnect), not McDonald
		case c >= 'A' && c <= 'Z', c == '\'' && j+1 < len(t) && isLetter(t[j+1]) && j == i+1:
		default:
			return j, lowerSeen && j-i >= 2 && !isWordByte(c) && j-i <= maxNameWord
		}
		j++
	}
	return j, lowerSeen && j-i >= 2 && j-i <= maxNameWord && (j == len(t) || !isWordByte(t[j]))
}

// innerCapital reports whether a name may have a capital after prefix:
// McDonald, MacArthur, DeAngelo, DiMaggio, LaToya, VanDyke.
func innerCapital(prefix []byte) bool {
	switch string(prefix) {
	case "Mc", "Mac", "De", "Di", "Da", "Du", "La", "Le", "Van", "Von":
		return true
	}
	return false
}

// capitalAt returns the length of the capital letter at t[i]: an ASCII
// capital, or one of Latin-1 or Latin Extended-A (Á, Þ, Č, Ł); 0 for
// anything else.
func capitalAt(t []byte, i int) int {
	if i >= len(t) {
		return 0
	}
	c := t[i]
	switch {
	case c >= 'A' && c <= 'Z':
		return 1
	case i+1 >= len(t):
		return 0
	case c == 0xC3:
		if d := t[i+1]; d >= 0x80 && d <= 0x9E && d != 0x97 {
			return 2
		}
	case c == 0xC4 || c == 0xC5:
		if cp := int(c&0x1F)<<6 | int(t[i+1]&0x3F); latinExtAUpper(cp) {
			return 2
		}
	}
	return 0
}

// headerLine is the line around t[i], as t[ls:le] without its newline,
// at most 256 bytes of it: a table's header line is short.
func headerLine(t []byte, i int) (ls, le int) {
	ls = i
	for ls > 0 && i-ls < 256 && t[ls-1] != '\n' {
		ls--
	}
	le = i
	for le < len(t) && le-ls < 256 && t[le] != '\n' {
		le++
	}
	return ls, le
}

// hasFieldSep reports whether line separates fields as a table does
// (CSV, TSV, semicolons, Markdown pipes).
func hasFieldSep(line []byte) bool {
	return bytes.ContainsAny(line, ",\t;|")
}

// csvHeaderAt reports whether t[i] is in a table's header line that
// names a name field and a birth field (first_name,last_name,date_of_birth)
// and a row after it holds a date: the rows are people and their dates of
// birth.
func (sc *scanner) csvHeaderAt(t []byte, i int) bool {
	ls, le := headerLine(t, i)
	if le >= len(t) || !containsFold(t[ls:le], "name") || !(containsFold(t[ls:le], "birth") || containsFold(t[ls:le], "dob")) {
		return false
	}
	if !hasFieldSep(t[ls:le]) {
		return false
	}
	row := t[le+1 : min(le+1+256, len(t))]
	sc.steps += (le - ls) + len(row)
	for p := 0; p < len(row) && row[p] != '\n'; p++ {
		if isDigit(row[p]) && (p == 0 || !isDigit(row[p-1])) && dateAt(row, p) && !yearOnlyAfter(row, p) {
			return true
		}
	}
	return false
}

// healthHeaderAt reports whether t[i], a word of a health field
// (diagnosis, condition, dx), is in a table's header or an SQL
// column list that also names a name field, and the rows after it (the
// next line, or what follows VALUES) hold a capitalized word and a health
// term: "name,diagnosis\nToyokazu Koike,sepsis", "INSERT INTO patients
// (name, diagnosis) VALUES ('Toyokazu Koike', 'acute pancreatitis')",
// "| Name | Age | Diagnosis |". It returns where the rows start, or 0.
func (sc *scanner) healthHeaderAt(t []byte, i int) int {
	ls, le := headerLine(t, i)
	sc.steps += le - ls
	line := t[ls:le]
	if !containsFold(line[:i-ls], "name") && !containsFold(t[i:le], "name") {
		return 0
	}
	if !hasFieldSep(line) {
		return 0
	}
	rows := le + 1
	for p := i; p+6 <= le; p++ {
		if (t[p]|0x20) == 'v' && hasPrefixFold(t[p:], "values") && (p == 0 || !isWordByte(t[p-1])) {
			rows = p + 6 // INSERT ... VALUES (...)
			break
		}
	}
	if rows >= len(t) {
		return 0
	}
	end := min(rows+256, len(t))
	sc.steps += end - rows
	pair := false // a person's name: two capitalized words (Toyokazu Koike), not a drug's (Aspirin)
	for p := rows; p < end && !pair; p++ {
		if e1, ok := nameWord(t, p); ok && (p == 0 || !isWordByte(t[p-1])) {
			if e1+1 < end && t[e1] == ' ' {
				_, pair = nameWord(t, e1+1)
			}
			p = e1
		}
	}
	if !pair || !sc.healthIn(t, rows, end) {
		return 0
	}
	return rows
}

func containsFold(t []byte, w string) bool {
	for i := 0; i+len(w) <= len(t); i++ {
		if hasPrefixFold(t[i:], w) {
			return true
		}
	}
	return false
}

// birthAfter returns where a date of birth starts right after the name
// ending at t[e], or 0: " (born 13 October 1995)", ", b. 11/16/67", ",
// date of birth 1961-12-17", " (DOB 1/4/68)", or a date of a birth year
// in parentheses, " (11/05/1950)", " (9 Feb 1947)" (not a year from 2020
// on: that is an appointment's).
func birthAfter(t []byte, e int) int {
	p := e
	if p < len(t) && t[p] == ',' {
		p++
	}
	if p >= len(t) || t[p] != ' ' {
		return 0
	}
	p++
	paren := p < len(t) && t[p] == '('
	if paren {
		p++
	}
	switch {
	case p >= len(t):
		return 0
	case isLetter(t[p]):
		if (hasPrefixFold(t[p:], "date of birth") || birthCue(t, p) || birthWordAt(t, p)) && !yearOnlyAfter(t, p) {
			return p
		}
	case paren && isDigit(t[p]) && dateAt(t, p) && birthYear(t, p):
		return p
	}
	return 0
}

// yearOnlyAfter reports whether the first number within 40 bytes after
// t[p] is a year alone (geb. 2019): a founding year as well as a birth
// year, not enough to make a pair of words a name.
func yearOnlyAfter(t []byte, p int) bool {
	for end := min(p+40, len(t)); p < end; p++ {
		if isDigit(t[p]) {
			q := p
			for q < len(t) && isDigit(t[q]) {
				q++
			}
			return q-p == 4 && (q == len(t) || (t[q] != '/' && t[q] != '.' && t[q] != '-') || q+1 >= len(t) || !isDigit(t[q+1]))
		}
	}
	return false
}

// birthYear reports whether the date at t[p] (in parentheses) has a year
// before 2020.
func birthYear(t []byte, p int) bool {
	for q := p; q < len(t) && q-p < 20 && t[q] != ')'; q++ {
		if q+4 <= len(t) && (t[q] == '1' && t[q+1] == '9' || t[q] == '2' && t[q+1] == '0' && t[q+2] < '2') &&
			isDigit(t[q+2]) && isDigit(t[q+3]) && (q == p || !isDigit(t[q-1])) && (q+4 == len(t) || !isDigit(t[q+4])) {
			return true
		}
	}
	// A two-digit year (7/9/79): read as a birth year unless 20-29.
	q := p
	for q < len(t) && q-p < 12 && t[q] != ')' {
		q++
	}
	return q < len(t) && t[q] == ')' && q-p >= 5 && isDigit(t[q-1]) && isDigit(t[q-2]) && !isDigit(t[q-3]) && t[q-2] != '2'
}

// skipParticles returns where the surname starts after the lowercase
// particles at t[p] that begin one (van, von, de, der, da, di, del, du,
// le, la, ter, dos, bin, al): at most two.
func skipParticles(t []byte, p int) int {
	for range 2 {
		e := p
		for e < len(t) && e-p < 5 && t[e] >= 'a' && t[e] <= 'z' {
			e++
		}
		if e >= len(t) || t[e] != ' ' {
			return p
		}
		switch string(t[p:e]) {
		case "van", "von", "de", "der", "den", "da", "di", "del", "della", "du", "le", "la", "ter", "ten", "dos", "das", "bin", "al", "el", "y":
			p = e + 1
		default:
			return p
		}
	}
	return p
}

// nameListed reports whether the name at t[i] starts a line, a field or
// a quoted value, or follows a form's punctuation (":", "—", "-"), as
// names are listed in notes, rosters and records.
func nameListed(t []byte, i int) bool {
	p := i
	for p > 0 && t[p-1] == ' ' {
		p--
	}
	if p == 0 {
		return true
	}
	switch t[p-1] {
	case '\n', ':', '-', '(', '|', '\t', '"', '\'', '=', '>', '[':
		return true // a line's, a field's or a value's start
	}
	if p >= 5 && p < i && isDigit(t[p-1]) && isDigit(t[p-2]) && t[p-3] == ':' && isDigit(t[p-4]) {
		return true // a list's time: 09:00 Alina Abakumova
	}
	return p >= 3 && string(t[p-3:p]) == "—"
}

// possessesHealth reports whether the name ending at t[e] is followed by
// "'s" and, within its next three words, a health word of the lexicon:
// a person's condition.
func possessesHealth(t []byte, e int) bool {
	if e+3 >= len(t) || t[e] != '\'' || t[e+1] != 's' || t[e+2] != ' ' {
		return false
	}
	p := e + 3
	for range 3 {
		q := p
		for q < len(t) && q-p < 24 && isLetter(t[q]) {
			q++
		}
		if q > p && (lexicon.HealthWord(t[p:q]) || lexicon.HealthPhrase(t, p) > 0) {
			return true
		}
		for q < len(t) && (t[q] == ' ' || t[q] == '-') {
			q++
		}
		if q == p || q >= len(t) || !isLetter(t[q]) {
			return false
		}
		p = q
	}
	return false
}

// personContext reports whether the words around the name at t[i:e]
// speak of a person: a patient's verb after it (has, is being treated,
// tested positive, from bed, reports, c/o), a possessive, ", who", or a
// word before it that introduces one (see, FYI, Handoff:, Re:, Dear).
func personContext(t []byte, i, e int) bool {
	after := t[e:min(e+24, len(t))]
	for _, w := range personAfter {
		if hasPrefixFold(after, w) {
			return true
		}
	}
	before := t[max(i-12, 0):i]
	for _, w := range personBefore {
		if len(before) >= len(w) && string(before[len(before)-len(w):]) == w {
			return true
		}
	}
	return false
}

// patientAfter reports whether the words after the name ending at t[e]
// are only said of a patient (from bed, tested positive, is being
// treated, restless, c/o): any capitalized pair before them is a name.
func patientAfter(t []byte, e int) bool {
	if possessesHealth(t, e) {
		return true // Topi Sainio's community-acquired pneumonia
	}
	after := t[e:min(e+24, len(t))]
	for _, w := range [...]string{" from bed", " in bed", " tested positive", " is being treated",
		" restless", " c/o ", " presenting with", " presented with", " came in with", " is asking about his", " is asking about her",
		"'s record", "'s chart", "'s notes", "'s date of birth", "'s dob", "'s medical", "'s discharge", "'s referral"} {
		if hasPrefixFold(after, w) {
			return true
		}
	}
	return false
}

var (
	personAfter = []string{" has ", " had ", " is being ", " was admitted", " was diagnosed", " was started", " is on ", " tested positive",
		" from bed", " in bed", " reports ", " presents", " presented", " restless", " c/o ", " is asking", " came in", "'s ", ", who ",
		" was seen", " is scheduled", " needs ", " takes ", " died", " passed away"}
	personBefore = []string{"see ", "seen ", "saw ", "review ", "reviewed ", "admit ", "admitted ", "discharge ", "discharged ",
		"FYI ", "Handoff: ", "Handover: ", "Re: ", "Dear ", "about ", "visit ", "treat ", "for patient "}
)

// ageAfter reports whether the name ending at t[e] is followed by an age
// or sex as clinical notes write them: " (50M)", ", 29,", " (91)", ", 42
// y/o", " — 47 y/o".
func ageAfter(t []byte, e int) bool {
	p := skipAgeLead(t, e)
	if p >= len(t) || t[p] != ' ' {
		return false
	}
	p++
	paren := p < len(t) && t[p] == '('
	if paren {
		p++
	}
	d := p
	for p < len(t) && p-d < 3 && isDigit(t[p]) {
		p++
	}
	if p == d || (p < len(t) && isDigit(t[p])) {
		return false
	}
	if p < len(t) && (t[p] == 'M' || t[p] == 'F') {
		p++
	}
	switch {
	case p >= len(t):
		return false
	case paren:
		return t[p] == ')'
	case t[p] == ',':
		return true
	}
	return hasPrefixFold(t[p:], " y") || hasPrefixFold(t[p:], "y/o") || hasPrefixFold(t[p:], " year")
}

// skipAgeLead skips what may come between a name ending at t[e] and the
// space before its age: a comma, a space and a dash (" — 47 y/o", " -
// 47").
func skipAgeLead(t []byte, e int) int {
	p := e
	if p < len(t) && t[p] == ',' {
		p++
	}
	if p+4 < len(t) && t[p] == ' ' && (t[p+1] == '-' || string(t[p+1:p+4]) == "—" || string(t[p+1:p+4]) == "–") {
		p += 2
		if t[p-1] != '-' {
			p += 2
		}
	}
	return p
}

// foldName writes the name word w in ASCII into buf, keeping its case:
// the Latin letters with diacritics of Latin-1 and Latin Extended-A to
// their base letter (Jonáš to Jonas, Łukasz to Lukasz). It reports false
// for a character it cannot fold.
func foldName(buf []byte, w []byte) ([]byte, bool) {
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c < 0x80 {
			buf = append(buf, c)
			continue
		}
		if k+1 >= len(w) {
			return buf, false
		}
		cp := int(c&0x1F)<<6 | int(w[k+1]&0x3F)
		k++
		var base byte
		switch {
		case c == 0xC3 && cp >= 0xC0:
			base = latin1Fold[cp-0xC0]
		case (c == 0xC4 || c == 0xC5) && cp >= 0x100 && cp < 0x180:
			base = latinExtAFold[cp-0x100]
			if latinExtAUpper(cp) {
				base -= 'a' - 'A'
			}
		}
		if base == 0 || base == '?' {
			return buf, false
		}
		buf = append(buf, base)
	}
	return buf, true
}

// latin1Fold folds U+00C0-U+00FF ('?' for × and ÷); the case is kept.
const latin1Fold = "AAAAAAACEEEEIIIIDNOOOOO?OUUUUYTsaaaaaaaceeeeiiiidnooooo?ouuuuyty"

// latinExtAFold folds U+0100-U+017F to lowercase base letters.
const latinExtAFold = "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkkllllllllllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs"

func latinExtAUpper(cp int) bool {
	switch {
	case cp < 0x138, cp >= 0x14A && cp < 0x178:
		return cp%2 == 0
	case cp >= 0x139 && cp < 0x149, cp >= 0x179 && cp < 0x17F:
		return cp%2 == 1
	}
	return cp == 0x178
}

func givenName(w []byte) bool {
	var buf [maxNameWord]byte
	f, ok := foldName(buf[:0], w)
	return ok && lexicon.GivenName(f)
}

func surname(w []byte) bool {
	var buf [maxNameWord]byte
	f, ok := foldName(buf[:0], w)
	return ok && lexicon.Surname(f)
}

// notSurnames are capitalized words that follow a given name without
// being a surname: places, organizations, the calendar, greetings.
var notSurnames = map[string]bool{
	"Street": true, "Road": true, "Avenue": true, "Lane": true, "Drive": true, "Hospital": true, "Clinic": true, "University": true,
	"College": true, "School": true, "Center": true, "Centre": true, "Health": true, "Medical": true, "Care": true, "Group": true,
	"Team": true, "Inc": true, "Ltd": true, "Company": true, "Bank": true, "City": true, "County": true, "State": true, "River": true,
	"Park": true, "Lake": true, "Island": true, "Station": true, "Airport": true, "Hotel": true, "Foundation": true, "Institute": true,
	"Monday": true, "Tuesday": true, "Wednesday": true, "Thursday": true, "Friday": true, "Saturday": true, "Sunday": true,
	"January": true, "February": true, "March": true, "April": true, "June": true, "July": true, "August": true, "September": true,
	"October": true, "November": true, "December": true, "The": true, "And": true, "Of": true, "For": true, "In": true, "On": true,
	"At": true, "To": true, "Is": true, "Was": true, "Has": true, "With": true, "Without": true, "From": true, "By": true,
	"Among": true, "After": true, "Before": true, "During": true, "Versus": true, "Vs": true, "Between": true, "Into": true, "Hi": true, "Hello": true, "Dear": true, "Thanks": true, "Thank": true,
	"Regards": true, "Best": true, "Award": true, "Prize": true, "Lecture": true, "Memorial": true, "Trust": true, "Fund": true,
	"Award's": true, "Syndrome": true, "Disease": true, "Project": true, "Program": true, "Programme": true, "Service": true,
	"Services": true, "Department": true, "Ward": true, "Unit": true, "Building": true, "Hall": true, "House": true, "Court": true,
	"St": true, "Saint": true, "Mount": true, "Fort": true, "Port": true, "Pharmacy": true, "Surgery": true, "Practice": true,
	// verbs that start a request: "Read Grey's Anatomy", "Ask Claude"
	"Read": true, "Ask": true, "Call": true, "Send": true, "Check": true, "Use": true, "See": true, "Tell": true, "Email": true,
	"Contact": true, "Write": true, "Meet": true, "Please": true, "Review": true, "Update": true, "Let": true, "Get": true,
	"Give": true, "Take": true, "Find": true, "Open": true, "Show": true, "Add": true, "Make": true, "Help": true, "Explain": true,
}

// eponymWords follow a name that names a condition, not a person:
// Hodgkin lymphoma, Parkinson's disease, Bell's palsy.
var eponymWords = map[string]bool{
	"disease": true, "syndrome": true, "lymphoma": true, "palsy": true, "sarcoma": true, "disorder": true, "sign": true,
	"test": true, "score": true, "scale": true, "criteria": true, "classification": true, "procedure": true, "operation": true,
	"maneuver": true, "manoeuvre": true, "phenomenon": true, "law": true, "ulcer": true, "anomaly": true, "tumor": true,
	"tumour": true, "fracture": true, "reflex": true, "method": true, "protocol": true, "equation": true, "formula": true,
	"index": true, "rule": true, "triad": true, "cyst": true, "dementia": true, "chorea": true, "encephalopathy": true,
}

// eponymAfter reports whether the name ending at t[e] is followed by
// "'s" and an eponym's word or the word alone: "Parkinson's disease".
func eponymAfter(t []byte, e int) bool {
	p := e
	if p+1 < len(t) && t[p] == '\'' && t[p+1]|0x20 == 's' {
		p += 2 // Crohn's disease, Crohn'S Disease in a title's case
	}
	if p >= len(t) || t[p] != ' ' {
		return false
	}
	p++
	q := p
	for q < len(t) && q-p < 16 && isLetter(t[q]) {
		q++
	}
	var w [16]byte
	for k := p; k < q; k++ {
		w[k-p] = lower(t[k])
	}
	return eponymWords[string(w[:q-p])]
}

// organizationAfter reports whether a third capitalized word follows the
// two at t[..e] and is no surname: a title or an organization, "Emerson
// Electric Co", "Ivy Focused Growth", not "John Fitzgerald Kennedy".
func organizationAfter(t []byte, e int) bool {
	if e+1 >= len(t) || t[e] != ' ' {
		return false
	}
	e3, ok := nameWord(t, e+1)
	if !ok {
		return capitalAt(t, e+1) > 0 // LLC, PLC: capitals only
	}
	w3 := t[e+1 : e3]
	return companyWords[string(w3)] || !surname(w3)
}

// companyWords end an organization's name.
var companyWords = map[string]bool{"Co": true, "Inc": true, "Ltd": true, "Corp": true, "Limited": true, "Group": true, "Holdings": true,
	"Company": true, "Partners": true, "Associates": true, "Gmbh": true, "GmbH": true, "Bank": true, "Trust": true, "Foundation": true}

// clinicianBefore reports whether a title of a clinician (or of the
// clergy who staff wards) precedes t[i]: "Dr. ", "Doctor ", "Prof. ",
// "Nurse ", "Sister ", "Matron ".
func clinicianBefore(t []byte, i int) bool {
	for _, title := range [...]string{"Dr. ", "Dr ", "Doctor ", "Prof. ", "Professor ", "Nurse ", "DR. ", "Sister ", "Matron ", "Rev. ", "Reverend "} {
		if i >= len(title) && string(t[i-len(title):i]) == title {
			return true
		}
	}
	return false
}

// personName judges a bare name at t[i], a capital at a word's start: a
// given name and a surname, or a surname, a comma or slash and a given
// name. It records the name as an identifier and returns the index of its
// last byte, or returns i.
func (sc *scanner) personName(t []byte, i int) int {
	if i+3 < len(t) && t[i+1] == '.' && t[i+2] == ' ' && isUpperASCII(t[i]) && (i == 0 || !isWordByte(t[i-1])) {
		return sc.initialAndSurname(t, i)
	}
	if e := sc.capsSurnameFirst(t, i); e > i {
		return e
	}
	e1, ok := nameWord(t, i)
	if !ok || e1+2 >= len(t) {
		return i
	}
	sc.steps += e1 - i
	switch t[e1] {
	case ' ':
		return sc.givenAndSurname(t, i, e1)
	case ',', '/':
		return sc.surnameAndGiven(t, i, e1)
	}
	return e1 - 1
}

// initialAndSurname judges an initial and a surname with an age or birth
// date after them: B. Migchels (67M), S. Kadyrov (67M).
func (sc *scanner) initialAndSurname(t []byte, i int) int {
	if e2, ok := nameWord(t, i+3); ok && (ageAfter(t, e2) || birthAfter(t, e2) > 0) && !notSurnames[string(t[i+3:e2])] {
		sc.nameAt(i)
		return e2 - 1
	}
	return i
}

// givenAndSurname judges the name word t[i:e1] and the word after its
// space (past a middle initial and particles) as a given name and a
// surname.
func (sc *scanner) givenAndSurname(t []byte, i, e1 int) int {
	w1 := t[i:e1]
	p := e1 + 1
	if p+2 < len(t) && t[p] >= 'A' && t[p] <= 'Z' && t[p+1] == '.' && t[p+2] == ' ' {
		p += 3 // a middle initial: John F. Smith
	}
	p = skipParticles(t, p) // Beatrix van Dijk, Luca de la Cruz
	e2, ok := nameWord(t, p)
	if !ok {
		return e1 - 1
	}
	w2 := t[p:e2]
	if notSurnames[string(w1)] {
		return e1 - 1
	}
	birth := birthAfter(t, e2)
	if !givenName(w1) && !sc.unlistedGivenCounts(t, i, e2, w1, w2, birth) {
		return e1 - 1
	}
	if !surname(w2) && !sc.unlistedSurnameCounts(t, i, p, e2, w2, birth) {
		return e2 - 1
	}
	if eponymAfter(t, e2) || clinicianBefore(t, i) || organizationAfter(t, e2) {
		return e2 - 1
	}
	sc.nameAt(i)
	if birth > 0 {
		sc.identifier(birth, idBirth) // Felix Sørensen (11/05/1950)
	}
	return e2 - 1
}

// unlistedGivenCounts: a given name the gazetteer lacks counts with an age
// or a birth date after it (Maha Cazares, 29), or beside a surname it has
// where a sentence speaks of a person (Maciej Borkowski in 25 is being
// treated, Towa Nyberg from bed 36A).
func (sc *scanner) unlistedGivenCounts(t []byte, i, e2 int, w1, w2 []byte, birth int) bool {
	return ageAfter(t, e2) || birth != 0 || (surname(w2) || surname(w1)) && personContext(t, i, e2) || patientAfter(t, e2) ||
		sc.patientWithHealth(t, i, e2)
}

// unlistedSurnameCounts: a surname the gazetteer lacks, t[p:e2], counts
// where the text speaks of a person (Kaiser Permanente, Claude Code are
// not).
func (sc *scanner) unlistedSurnameCounts(t []byte, i, p, e2 int, w2 []byte, birth int) bool {
	if notSurnames[string(w2)] || e2-p < 3 || lexicon.HealthWord(w2) {
		return false
	}
	return personContext(t, i, e2) || ageAfter(t, e2) || birth > 0 || nameListed(t, i) || patientAfter(t, e2) || sc.patientWithHealth(t, i, e2)
}

// surnameAndGiven judges the name word t[i:e1], a comma or slash and the
// word after as a surname and a given name.
func (sc *scanner) surnameAndGiven(t []byte, i, e1 int) int {
	w1 := t[i:e1]
	p := e1 + 1
	if t[e1] == ',' && p < len(t) && t[p] == ' ' {
		p++
	}
	e2, ok := nameWord(t, p)
	if !ok || notSurnames[string(w1)] || clinicianBefore(t, i) || (t[e1] == '/' && !surname(w1)) {
		return e1 - 1
	}
	if !givenName(t[p:e2]) {
		// A given name the gazetteer lacks: a name beside an age or a
		// date of birth (DOB: 22/01/1960 — Salgado, Nehemias;
		// Miyanohara, Mayuhiko — 47 y/o male).
		if t[e1] != ',' || !(ageAfter(t, e2) || birthAfter(t, e2) > 0 || sc.birthNear(t, max(i-40, 0), i)) {
			return e1 - 1
		}
	}
	sc.nameAt(i)
	if b := birthAfter(t, e2); b > 0 {
		sc.identifier(b, idBirth) // Miller, Rachael (02/04/1955)
	}
	return e2 - 1
}

// patientWithHealth reports whether the capitalized pair at t[i:e], in
// words the gazetteer may lack (Toyokazu Koike, Esjar Sturluson), is
// told of as a patient with a health term: a frame only patients stand in
// with a health term in its clause ("a sick note for Ciset Negrete? off
// work 2 weeks with sepsis", "Toyokazu Koike attended with worsening
// sepsis", "Roelien Vuik, seen in ED for HIV", "Yoshifumi Miyanohara's son
// re: chlamydia"), or a health term right after a verb or a list's dash
// ("Esjar Sturluson has tuberculosis", "Cirilka Košutnik is HIV
// positive", "Markha Aslakhanov - appendicitis - on insulin"). A pair of
// ordinary words in such a frame is read as a name too ("Sales Report -
// diabetes products"); "Claude Code is great for cancer research" is not.
func (sc *scanner) patientWithHealth(t []byte, i, e int) bool {
	after := t[e:min(e+24, len(t))]
	if len(after) < 3 || headingPair(t, i, e) {
		return false
	}
	if patientFrame(t, i, after) {
		return sc.healthIn(t, e, clauseEnd(t, e))
	}
	p := e
	switch {
	case hasPrefixFold(after, " has "), hasPrefixFold(after, " hat "), hasPrefixFold(after, " har "):
		p += 5
	case hasPrefixFold(after, " tiene "), hasPrefixFold(after, " heeft "):
		p += 7
	case hasPrefixFold(after, " is "):
		p += 4
		if !positiveOrNegative(t, p) {
			return false // is HIV positive
		}
	case hasPrefixFold(after, " (?"):
		p += 3 // a query in parentheses: (?LRTI)
	case after[0] == ' ' && injuryAt(t, p+1, p+1+wordLen(t, p+1)):
		return true // an injury told right after the name: fractured her wrist
	default:
		return sc.listLineWithHealth(t, i, e, after)
	}
	return p < len(t) && sc.healthIn(t, p, p+1)
}

// patientFrame reports whether the name at t[i] (after follows it) stands
// in a frame only patients stand in: a sick note for it, attended with,
// seen in, its kin, admitted.
func patientFrame(t []byte, i int, after []byte) bool {
	return noteFor(t, i) || hasPrefixFold(after, " attended with") || hasPrefixFold(after, ", seen in") || hasPrefixFold(after, " seen in") ||
		kinPossessive(after) || admittedAfter(after) || hasPrefixFold(after, " admitted ")
}

// clauseEnd is where the clause from t[e] ends: a line's end, an
// exclamation, a full stop, or 64 bytes on.
func clauseEnd(t []byte, e int) int {
	end := e
	for end < len(t) && end-e < 64 && t[end] != '\n' && t[end] != '!' && !(t[end] == '.' && (end+1 == len(t) || t[end+1] == ' ')) {
		end++
	}
	return end
}

// positiveOrNegative reports whether the word at t[p] (of at most 16
// bytes) is followed by "positive" or "negative": is HIV positive.
func positiveOrNegative(t []byte, p int) bool {
	q := p
	for q < len(t) && q-p < 16 && t[q] != ' ' {
		q++
	}
	return hasPrefixFold(t[min(q, len(t)):], " positive") || hasPrefixFold(t[min(q, len(t)):], " negative")
}

// listLineWithHealth reports whether the name t[i:e] heads a list's line:
// the name, a dash, a colon, a comma or a space, and a health term
// (Markha Aslakhanov - appendicitis - on insulin, Tariku Bekele: UTI, on
// trimethoprim, Handover: Tariku Bekele post-op day 2). Where a word
// before it speaks of a person (Re:, review, Handover:), one term does; a
// line alone needs a second health term on it, the problem and its
// treatment (not "New York: asthma rates rise").
func (sc *scanner) listLineWithHealth(t []byte, i, e int, after []byte) bool {
	p := e
	switch {
	case hasPrefixFold(after, " - "):
		p += 3
	case hasPrefixFold(after, ": "), hasPrefixFold(after, ", "):
		p += 2
	case hasPrefixFold(after, " – "), hasPrefixFold(after, " — "):
		p += 5
	case after[0] == ' ':
		p++
	default:
		return false
	}
	person := personContext(t, i, e)
	if !person && !nameListed(t, i) {
		return false
	}
	if p+1 < len(t) && t[p] == '?' {
		p++ // a query: "- ? cellulitis"
		if t[p] == ' ' {
			p++
		}
	}
	if p >= len(t) || !sc.healthIn(t, p, p+1) {
		return false
	}
	if person {
		return true
	}
	q := p
	for q < len(t) && isLetter(t[q]) {
		q++
	}
	end := q
	for end < len(t) && end-q < 96 && t[end] != '\n' {
		end++
	}
	return sc.healthIn(t, q, end)
}

// admittedAfter reports whether after starts with a verb of admission to
// a hospital in the Romance languages the detectors read: " ha sido
// ingresado", " è stato ricoverato", " a été hospitalisée", " foi
// internado". Not English's "was admitted" nor German's "wurde
// aufgenommen", Dutch's "opgenomen": organizations are admitted too
// (Google Cloud was admitted to the HIPAA program).
func admittedAfter(after []byte) bool {
	for _, w := range [...]string{" ha sido ingresad", " fue ingresad", " è stato ricoverat", " è stata ricoverat",
		" a été hospitalis", " foi internad", " foi hospitaliz"} {
		if hasPrefixFold(after, w) {
			return true
		}
	}
	return false
}

// headingWords are words of documents' headings and teams, not of
// names: "Board Meeting - cancer strategy", "Release Notes – dialysis".
var headingWords = map[string]bool{"Review": true, "Update": true, "Updates": true, "Notes": true, "Note": true, "Meeting": true,
	"Report": true, "Summary": true, "Plan": true, "Roadmap": true, "Sprint": true, "Release": true, "Budget": true, "Project": true,
	"Weekly": true, "Monthly": true, "Daily": true, "Quarterly": true, "Annual": true, "Board": true, "Product": true, "Feature": true,
	"Design": true, "Research": true, "Study": true, "Trial": true, "Workshop": true, "Webinar": true, "Agenda": true, "Minutes": true,
	"Draft": true, "Proposal": true, "Status": true, "Launch": true, "Overview": true, "Guide": true, "Policy": true, "Ops": true,
	"Billing": true, "Claims": true, "Analytics": true, "Dashboard": true, "Campaign": true, "Newsletter": true, "Sales": true,
	"Marketing": true, "Engineering": true, "Support": true, "Quality": true, "Audit": true, "Training": true, "Module": true}

// headingPair reports whether either word of the pair at t[i:e] is a
// heading's word.
func headingPair(t []byte, i, e int) bool {
	s := i
	for s < e && t[s] != ' ' {
		s++
	}
	return headingWords[string(t[i:s])] || s+1 < e && (headingWords[string(t[s+1:e])] || companyWords[string(t[s+1:e])])
}

// kinPossessive reports whether after starts with "'s" and a kin word:
// "'s son re: chlamydia", "'s wife called about".
func kinPossessive(after []byte) bool {
	if len(after) < 4 || after[0] != '\'' || after[1] != 's' || after[2] != ' ' {
		return false
	}
	for _, kin := range kinCues {
		if hasPrefixFold(after[3:], kin) {
			return true
		}
	}
	return false
}

// noteFor reports whether "note for ", "letter for ", "referral for ",
// "query for ", "plan for ", "summary for ", "bloods for ", "follow-up
// for "... precedes t[i]: a sick note, a referral letter, a coding query,
// an assessment and plan, a discharge summary, a ward's jobs are for a
// patient.
func noteFor(t []byte, i int) bool {
	for _, w := range [...]string{"note for ", "letter for ", "referral for ", "certificate for ", "query for ", "plan for ", "summary for ",
		"bloods for ", "follow-up for ", "appointment for ", "prescription for "} {
		if i >= len(w) && hasPrefixFold(t[i-len(w):], w) {
			return true
		}
	}
	return false
}

// capsSurnameFirst judges a surname in capitals, a comma and a given
// name at a line's or a field's start, as wristbands, lab reports and
// lists print them: "KOWALSKI, ANNA", "KOIKE, Toyokazu". It is a name
// when the gazetteer knows one of the two words, or a health term or a
// date of birth follows on its line. It records the name and returns the
// index of its last byte, or returns i.
func (sc *scanner) capsSurnameFirst(t []byte, i int) int {
	e1 := capsWord(t, i)
	if e1 == i || e1+3 >= len(t) || !nameListed(t, i) {
		return i
	}
	comma := t[e1] == ',' && t[e1+1] == ' '
	if !comma && t[e1] != ' ' {
		return i
	}
	p := e1 + 1
	if comma {
		p++
	}
	e2 := capsWord(t, p)
	if e2 > p && !comma {
		return i // JOHN SMITH DIABETES PROGRAM: capitals only, a heading
	}
	if e2 == p {
		var ok bool
		if e2, ok = nameWord(t, p); !ok {
			return i
		}
	}
	if sentenceGoesOn(t, e2) {
		return i // NOTE, PLEASE read: a sentence goes on
	}
	le := e2
	for le < len(t) && le-e2 < 96 && t[le] != '\n' {
		le++
	}
	sc.steps += le - i
	gazetteer := surname(t[i:e1]) || givenName(t[p:e2]) || givenName(t[i:e1]) && surname(t[p:e2])
	if comma && !(gazetteer || sc.healthOrBirthIn(t, e2, le)) {
		return i
	}
	if !comma && !(gazetteer && sc.healthOrBirthIn(t, e2, le)) {
		// Without a comma (KADYROV Ruslan 67M sepsis) a heading's words
		// look the same: a gazetteer word and a health term or a birth
		// date on the line.
		return i
	}
	sc.nameAt(i)
	return e2 - 1
}

// sentenceGoesOn reports whether the word ending at t[e] runs on, or a
// lowercase word follows it: NOTE, PLEASE read.
func sentenceGoesOn(t []byte, e int) bool {
	return e < len(t) && isWordByte(t[e]) || e+1 < len(t) && t[e] == ' ' && t[e+1] >= 'a' && t[e+1] <= 'z'
}

// healthOrBirthIn reports whether t[from:to] holds a health term, a date
// of birth, or a date of birth's cue with its date.
func (sc *scanner) healthOrBirthIn(t []byte, from, to int) bool {
	return sc.healthIn(t, from, to) || sc.birthNear(t, from, to) || birthCueIn(t, from, to)
}

// birthCueIn reports whether a date of birth's cue with its date starts
// at a word of t[from:to] (DOB: 19-MAR-1970).
func birthCueIn(t []byte, from, to int) bool {
	for p := from; p < to; p++ {
		if isLetter(t[p]) && (p == 0 || !isWordByte(t[p-1])) && birthCue(t, p) {
			return true
		}
	}
	return false
}

// nameAt records a person's name at t[i].
func (sc *scanner) nameAt(i int) { sc.identifier(i, idName) }
