package classifier

// The scan of one text: one pass over its bytes, stopping only at the
// bytes stopByte marks (a digit, a '+', '(' or "%2B" before one, an '@', a
// capital, ':' and '=', the first letter of a word that introduces a name
// or a date of birth). Each stop hands a bounded piece of the text to the
// detectors that start there; the pass resumes after it. At the text's end
// the identifiers it recorded (numbers, names, dates of birth) are read
// with the health terms and birth words around them.

// scanner accumulates what fired over the texts of one body.
type scanner struct {
	found Set
	// ids are where personal identifiers start in the current text, for
	// the health-term detector (a health term next to an identifier).
	ids      [16]int
	idKind   [16]uint8
	cuedName [16]bool // a name a cue word introduced (Patient, Mr.)
	nids     int
	// icdCodes and icdRef count the ICD-10 codes with a diagnosis
	// context in the current text, outside and inside a reference text;
	// icdAt is the first (-1: none).
	icdCodes, icdRef, icdAt int
	// refEnd is where the scan for reference words stopped in the current
	// text, refAt the last one it found (-1: none).
	refEnd, refAt int
	// headerEnd is where the last line judged as a record's header with
	// a health field ends: each line is judged once.
	headerEnd int
	// steps counts the bytes the look-arounds read, so a test can hold
	// the scan to linear time without a clock.
	steps int
}

// stopByte marks the bytes the pass stops at: a number's or an address's
// start, a capital (a name's start), and the first letter of the words
// that introduce a name or a date of birth in lowercase (identifierCue).
var stopByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for _, c := range "+(@:=%pdbm" {
		t[c] = true
	}
	t[0xC3], t[0xC4], t[0xC5] = true, true, true // a capital with a diacritic: Ágnes, Čechová
	return t
}()

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }

// isWordByte is a byte that continues a word or an identifier: letters,
// digits, '_' and any byte of a multibyte UTF-8 character.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' || c >= 0x80 }

// text scans one text: at each byte that may start something a detector
// reads (stopByte), the reading that starts there, which returns the
// index of the last byte it read; then what the whole text decides.
func (sc *scanner) text(t []byte) {
	sc.nids = 0
	sc.icdCodes, sc.icdRef, sc.icdAt = 0, 0, -1
	sc.refEnd, sc.refAt = 0, -1
	sc.headerEnd = 0
	for i := 0; i < len(t); i++ {
		if !stopByte[t[i]] {
			continue
		}
		switch c := t[i]; {
		case c == '@':
			i = sc.email(t, i)
		case c == '+' || c == '(' || c == '%':
			if numberLeadAt(t, i) {
				i = sc.number(t, i)
			}
		case c == ':' || c == '=':
			i = sc.nameField(t, i)
		case !isDigit(c):
			if i > 0 && isWordByte(t[i-1]) && t[i-1] != '_' {
				continue // inside a word
			}
			if j := sc.identifierCue(t, i); j > i {
				i = j
			} else if capitalAt(t, i) > 0 {
				i = sc.personName(t, i)
			}
		case i > 0 && isLetter(t[i-1]):
			// A digit after a letter: an IBAN's or an ICD-10 code's start,
			// or the inside of a word (skipped whole).
			i = sc.lettered(t, i)
		case boundaryBefore(t, i):
			i = sc.digitsAt(t, i)
		default:
			i = sc.compound(t, i) // ORD-4111..., MRN-12345, PT-884213
		}
	}
	if sc.icdDiagnosis() {
		sc.fire(ICD10, sc.icdAt)
	}
	if sc.nids > 0 {
		sc.healthTerms(t)
	}
}

// numberLeadAt reports whether the '+', '(' or '%' at t[i] leads a
// number: a '+' or '(' before a digit or '(' where a number may start,
// or %2B, a URL-encoded '+', before a digit.
func numberLeadAt(t []byte, i int) bool {
	if t[i] == '%' {
		return i+3 < len(t) && t[i+1] == '2' && (t[i+2]|0x20) == 'b' && isDigit(t[i+3])
	}
	return i+1 < len(t) && (isDigit(t[i+1]) || t[i+1] == '(') && boundaryBefore(t, i)
}

// icdDiagnosis reports whether the text's ICD-10 codes are a diagnosis:
// one or two codes not written as a reference, or any beside a personal
// identifier.
func (sc *scanner) icdDiagnosis() bool {
	return (sc.icdCodes > 0 && sc.icdCodes < 3 && sc.icdRef == 0) || (sc.icdCodes+sc.icdRef > 0 && sc.nids > 0)
}

// nameField reads the name after a form's or a record's name field
// ending at t[i] (':' or '='): Name: John Smith, guest_name=Arna,
// "given":["Chinwe"], last_name='Nwosu'.
func (sc *scanner) nameField(t []byte, i int) int {
	field := nameFieldBefore(t, i)
	if field == "" {
		return i
	}
	e, ok := namesAfter(t, i+1, field)
	if !ok && field == "name" {
		// Two lowercase words beside a date of birth: dob: 09/07/1955 /
		// name: otohiko sanya.
		e, ok = twoLowerWords(t, i+1)
		ok = ok && sc.birthNear(t, max(i-64, 0), min(i+64, len(t)))
	}
	if !ok {
		return i
	}
	sc.identifier(i, idName)
	sc.cuedName[sc.nids-1] = true
	return e - 1
}

// digitsAt reads the number starting at the digit t[i]: an IBAN with a
// space after its country, a short number no detector takes, or a
// number.
func (sc *scanner) digitsAt(t []byte, i int) int {
	if i >= 3 && t[i-1] == ' ' && isUpperASCII(t[i-2]) && isUpperASCII(t[i-3]) && (i == 3 || !isWordByte(t[i-4])) {
		if end := sc.iban(t, i-3); end > 0 {
			return end - 1 // an IBAN with a space after its country: NO 39 4750 07 95936
		}
	}
	if end, short := shortNumber(t, i); short {
		return end // most numbers in a text: 3, 12%, 180 ms, 2026
	}
	return sc.number(t, i)
}

// identifier records where a personal identifier of a kind (idNumber,
// idName, idBirth) starts.
func (sc *scanner) identifier(at int, kind uint8) {
	if sc.nids < len(sc.ids) {
		sc.ids[sc.nids] = at
		sc.idKind[sc.nids] = kind
		sc.cuedName[sc.nids] = false
		sc.nids++
	}
}

// fire records a detection at offset at of the text.
func (sc *scanner) fire(d Detector, at int) {
	sc.found |= Set(d)
	if d != ICD10 && d != HealthTerm && d != BodyOverLimit {
		sc.identifier(at, idNumber)
	}
}

// shortNumber reports whether the digits at t[i] are a number of at most
// four digits that no separator continues, which no detector takes (the
// shortest, a bare medical record number, has five), and returns the index
// of its last digit.
func shortNumber(t []byte, i int) (int, bool) {
	j := i
	for j < len(t) && j-i < 5 && isDigit(t[j]) {
		j++
	}
	if j-i >= 5 {
		return 0, false
	}
	if j < len(t) {
		c := t[j]
		if isWordByte(c) || ((c == ' ' || c == '-' || c == '.' || c == '/' || c == '_' || c == ')') && j+1 < len(t) && (isDigit(t[j+1]) || t[j+1] == '(')) {
			return 0, false
		}
	}
	return j - 1, true
}

// boundaryBefore reports whether a number may start at t[i]: not inside a
// word, and not the continuation of a compound token such as a version
// (v1.2.3), a UUID or an id (ORD-4111...).
func boundaryBefore(t []byte, i int) bool {
	if i == 0 {
		return true
	}
	p := t[i-1]
	if p >= 0x80 {
		_, word := charBefore(t, i) // a symbol or punctuation (⑆, —, «) is a boundary
		return !word
	}
	if isWordByte(p) {
		return false
	}
	if (p == '-' || p == '.' || p == '/' || p == '_') && i >= 2 && isWordByte(t[i-2]) {
		return false
	}
	return true
}

// skipCompound returns the last index of the compound token (word bytes
// joined by '-', '.', '/', '_') that contains t[i].
func skipCompound(t []byte, i int) int {
	j := i
	for j+1 < len(t) {
		c := t[j+1]
		if isWordByte(c) || ((c == '-' || c == '.' || c == '/' || c == '_') && j+2 < len(t) && isWordByte(t[j+2])) {
			j++
			continue
		}
		break
	}
	return j
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nameFieldBefore returns the name field ("name", "given", "last_name"...)
// whose key ends before the ':' or '=' at t[i] (a closing quote
// allowed), or "".
func nameFieldBefore(t []byte, i int) string {
	e := i
	if e > 0 && (t[e-1] == '"' || t[e-1] == '\'') {
		e--
	}
	if e == 0 || (t[e-1]|0x20 != 'e' && t[e-1]|0x20 != 'n' && t[e-1]|0x20 != 'y') {
		return "" // every field's name ends so: name, given, family
	}
	w := e
	for w > 0 && e-w < 12 && (isLetter(t[w-1]) || t[w-1] == '_') {
		w--
	}
	if e-w < 4 {
		return ""
	}
	var buf [12]byte
	k := buf[:e-w]
	for j := range k {
		k[j] = lower(t[w+j])
	}
	if len(k) >= 4 && string(k[len(k)-4:]) == "name" && (len(k) == 4 || k[len(k)-5] == '_') {
		if isNameField(string(k)) {
			return string(k)
		}
		return "name" // guest_name, patient_name, full_name
	}
	if isNameField(string(k)) {
		return string(k)
	}
	return ""
}

// twoLowerWords returns the end of two lowercase words after t[p] (over
// spaces and a quote) and whether there are two.
func twoLowerWords(t []byte, p int) (int, bool) {
	for k := 0; p < len(t) && k < 3 && (t[p] == ' ' || t[p] == '"' || t[p] == '\''); k++ {
		p++
	}
	e1, ok := lowerWord(t, p)
	if !ok || e1+1 >= len(t) || t[e1] != ' ' {
		return p, false
	}
	return lowerWord(t, e1+1)
}
