package classifier

import (
	"math/bits"
	"strings"
)

// Context words. Two kinds, read two ways:
//
//   - id words (MRN, NHS number, phone, BSN, ...) name the number right
//     after them: a number that a pattern or a weak checksum alone would
//     make noisy (a bare nine-digit number passes one check in ten) is that
//     identifier only when its id word leads to it, with nothing between
//     but punctuation and filler words ("is", "no.", "number", "#", "my").
//     The reach is the clause, a few words: "phone IMEI 490154203237518"
//     and a phone word three sentences before a number do not reach it.
//     Id words match whole words, case-insensitively, with punctuation and
//     abbreviation dots normalised: the id word "med rec" matches "Med rec",
//     "Med. Rec." and "MED-REC"; "mrn" matches "MRN:", "MRN#" and "MRN-".
//   - stems (diagnos, insulin, card, account) say what a window of text is
//     about: an ICD-10 code's diagnosis word, a health term near an
//     identifier. They match at a word's start anywhere in the window.

// cueWindow is how far before (and, for ICD-10 codes, after) a candidate
// its stems are looked for.
const cueWindow = 48

// cueGap is how far before a number its id word may end, and
// maxGapWords how many filler words may stand between them.
const (
	cueGap      = 40
	maxGapWords = 7
)

// cueKind is a list of context words, as a bit: one pass finds the words
// of several lists.
type cueKind uint32

const (
	cueSSN cueKind = 1 << iota
	cuePhone
	cueMRN
	cueICD
	cueHealth
	cueNHS
	cueHealthPlan
	cueAUMedicare
	cueNIR
	cueDETax
	cueBSN
	cueAadhaar
	cueCPF
	cueSIN
	cueTFN
	cuePESEL
	cuePNR
	cueRouting
	cueAccount
	cueCard
	cueOtherID
	cueTestContext
	cueReference
	numCueKinds = iota
)

// idCue is an id word (one or more words, lowercase, joined by single
// spaces) and the lists it belongs to.
type idCue struct {
	words  string
	kinds  cueKind
	marker bool // a number marker must follow ("Patient #", "patient no.", "policy number")
}

// idCues holds the id words by their last word, the one right before the
// gap to the number.
var idCues = map[string][]idCue{}

// addIDCues adds id words to a list; a '#' at the end of one means a
// number marker ('#', "no", "number", "id") must follow it: "Patient #",
// "policy number", not "patient 12345".
func addIDCues(k cueKind, phrases ...string) {
	for _, p := range phrases {
		marker := strings.HasSuffix(p, "#")
		p = strings.TrimSuffix(p, "#")
		last := p[strings.LastIndexByte(p, ' ')+1:]
		list := idCues[last]
		merged := false
		for i := range list {
			if list[i].words == p && list[i].marker == marker {
				list[i].kinds |= k
				merged = true
			}
		}
		if !merged {
			list = append(list, idCue{p, k, marker})
		}
		idCues[last] = list
	}
}

// stemIndex holds each list's stems by their first letter.
var stemIndex [numCueKinds][26][]string

func addStems(k cueKind, words ...string) {
	list := &stemIndex[bits.TrailingZeros32(uint32(k))]
	for _, w := range words {
		list[w[0]-'a'] = append(list[w[0]-'a'], w)
	}
}

func init() {
	addIDCues(cueSSN, "ssn", "ss", "social security", "soc sec", "social sec", "taxpayer id", "taxpayer identification", "itin", "irs", "tin")
	addIDCues(cuePhone, "phone", "ph", "tel", "telephone", "call", "mobile", "mob", "cell", "cellphone", "fax", "whatsapp", "sms", "text",
		"text me", "reach me", "contact", "landline", "dial", "ring", "telefon", "telefono", "telephono", "tlf", "handy", "portable", "movil", "cellulare",
		"numero", "hotline", "helpline", "phone number", "contact number", "celular", "telefone", "telemovel", "telefoon", "mobiel",
		"mobil", "cel", "tlf", "tfno", "telf", "teléfono", "telefonu", "telefonnummer", "mobilnummer", "handynummer", "téléphone",
		"tél", "telemóvel", "puhelin", "telefonszám", "telefonní", "telefonbroj", "tel no", "tel nr")
	addIDCues(cueMRN, "mrn", "mr", "mr#", "unit#", "ur#", "unit record#", "mrn#", "mr pt", "mrn pt", "medical record#", "medical records#", "medical rec", "med rec", "med record", "chart#", "chart id",
		"patient#", "patient identifier", "pt#", "record#", "hospital#", "hosp#", "health record#", "emr#", "ehr#", "encounter#",
		"visit#", "admission#", "urn", "mrn#")
	addIDCues(cueNHS, "nhs", "nhs#", "chi#")
	addIDCues(cueHealthPlan, "member#", "membership#", "subscriber#", "policy#", "group#", "insurance#", "insured#", "plan#",
		"health plan", "health plan#", "plan member", "insurance member", "beneficiary#", "medicaid", "medicaid#", "medicare#", "hicn",
		"health insurance#", "member identification", "certificate#", "humana id", "aetna id", "cigna id", "anthem id", "bcbs id",
		"kaiser id", "unitedhealthcare id", "uhc id", "blue cross id", "tricare id")
	addIDCues(cueAUMedicare, "medicare", "medicare card")
	addIDCues(cueNIR, "nir", "insee", "securite sociale", "sécurité sociale", "secu", "sécu", "ss", "carte vitale", "nss")
	addIDCues(cueDETax, "steuer id", "steuer idnr", "tax", "steuernummer", "steuerid", "steuer", "idnr", "steueridentifikationsnummer", "identifikationsnummer",
		"steuer identifikationsnummer", "tax id", "tin", "tax identification", "steuerliche identifikationsnummer")
	addIDCues(cueBSN, "bsn", "burgerservicenummer", "sofinummer", "sofi", "citizen service")
	addIDCues(cueAadhaar, "aadhaar", "aadhar", "uidai", "uid", "aadhaar card", "आधार")
	addIDCues(cueCPF, "cpf", "cadastro de pessoas físicas", "cadastro de pessoas fisicas", "cadastro de pessoa física")
	addIDCues(cueSIN, "sin", "social insurance", "nas", "assurance sociale", "numéro d assurance sociale")
	addIDCues(cueTFN, "tfn", "tax file")
	addIDCues(cuePESEL, "pesel", "numer pesel")
	addIDCues(cuePNR, "personnummer", "personnr", "person nr", "pnr", "samordningsnummer", "personal identity", "personal id")
	// Words that label a number as something else than a person's: the
	// phone shape alone does not make it a phone number (Serial number
	// 335-569-9492).
	addIDCues(cueOtherID, "serial", "sn", "s n", "order", "invoice", "tracking", "ticket", "ref", "reference", "sku", "part",
		"model", "imei", "meid", "iccid", "imsi", "isbn", "issn", "confirmation", "booking", "transaction", "txn", "batch", "lot", "build",
		"version", "pin", "room", "code", "conference", "meeting", "passcode", "zip", "postal", "po", "case", "job", "asset", "license",
		"licence", "item", "product", "barcode", "upc", "ean", "receipt", "voucher", "coupon", "container", "shipment", "parcel", "awb",
		"trace", "span", "request", "correlation", "session", "event", "message", "snowflake", "tweet", "commit", "run", "task",
		"thread", "offset", "seq", "sequence", "nonce", "timestamp", "ts", "epoch", "hash", "checksum", "uuid", "guid",
		"mpan", "mprn", "meter", "supply point", "account reference")
	addIDCues(cueRouting, "routing", "aba", "rtn", "routing transit", "transit", "aba routing", "bank routing")

	for last := range idCues {
		idWordShapes.add(last)
	}
	for _, w := range fillerWords {
		if !fillerWord([]byte(w)) {
			panic("classifier: fillerWords and fillerWord disagree on " + w)
		}
		fillerShapes.add(w)
	}

	addStems(cueICD, "icd", "diagnos", "dx", "ddx", "condition", "disease", "disorder", "patient", "clinical", "medical", "comorbid",
		"admitted with", "presenting with", "presented with", "history of", "hx", "pmh", "assessment", "impression", "problem list", "claim")
	addStems(cueHealth, healthTerms...)
	addStems(cueAccount, "account", "acct", "acc no", "a/c", "checking", "savings", "iban", "deposit")
	// Words around a processor's published test card number in code and
	// docs: the number is an example there, not a card.
	addStems(cueTestContext, "test", "stripe", "sandbox", "mock", "fake", "dummy", "example", "fixture", "assert", "expect", "luhn",
		"braintree", "adyen", "checkout.com", "paypal", "sample", "placeholder", "demo", "spec", "qa")
	// Words of a reference text about codes (a coding guideline, a code
	// list), where an ICD-10 code names a diagnosis, not a person's.
	addStems(cueReference, "guideline", "coding", "coder", "excludes", "code first", "code also", "use additional", "do not combine",
		"do not code", "codebook", "code set", "tabular", "sequenc",
		// a population's statistics: admissions coded F32.1, a cohort's prevalence
		"coded", "admissions", "cohort", "prevalence", "incidence", "population", "proportion", "readmission", "readmitted",
		"epidemiolog", "mortality rate", "registry", "biobank",
		// the code system itself: chapters, blocks, categories, lookups
		"chapter", "block", "category", "categories", "excerpt", "lookup", "codes for", "code for", "parent code")
	addStems(cueCard, "card", "credit", "debit", "visa", "mastercard", "amex", "rupay", "maestro", "cc", "pan", "payment", "pay", "charge", "billing", "cvv", "exp")
}

// idWordShapes and fillerShapes hold, by a word's length and first
// letter, the last letters of the id words' last words and of the filler
// words: a word whose shape is in neither is neither (a table lookup
// instead of a hash).
type wordShapes [maxCueWordLen + 1][27]uint32

var idWordShapes, fillerShapes wordShapes

const maxCueWordLen = 32

func shapeIndex(c byte) int {
	if c >= 'a' && c <= 'z' {
		return int(c - 'a')
	}
	return 26 // anything else: a digit, a letter of another script
}

func (ws *wordShapes) add(w string) {
	if len(w) > 0 && len(w) <= maxCueWordLen {
		ws[len(w)][shapeIndex(w[0])] |= 1 << shapeIndex(w[len(w)-1])
	}
}

// maybeWord reports whether the lowercase word w may be one of the words
// whose shapes ws holds.
func maybeWord(w []byte, ws *wordShapes) bool {
	return len(w) > 0 && len(w) <= maxCueWordLen && ws[len(w)][shapeIndex(w[0])]&(1<<shapeIndex(w[len(w)-1])) != 0
}

// fillerWords are the words fillerWord knows, for cueWordShapes.
var fillerWords = []string{"no", "nr", "nbr", "num", "number", "numbers", "is", "was", "are", "be", "me", "us", "at", "on", "my", "our", "his", "her",
	"their", "your", "the", "a", "an", "of", "to", "for", "id", "here", "please", "it", "its", "s", "de", "n",
	"home", "work", "office", "direct", "main", "personal", "private", "new", "old", "primary", "listed", "reads", "read",
	"card", "as", "follows", "ending", "in", "and", "or", "ref", "value", "v", "via", "with", "du", "da", "der", "des",
	"yes", "sure", "ok", "okay", "that", "this", "below", "following", "caller", "customer", "client", "user", "member",
	"est", "lautet", "ist", "är", "es", "son", "é", "è", "e", "le", "la", "el", "mon", "ma", "mes", "mein", "meine",
	"mi", "mio", "mia", "mijn", "min", "mitt", "nummer", "numer", "numero", "número", "numéro", "nro", "nº"}

// fillerWord reports whether the lowercase word w may stand between an id
// word and its number: "MRN is 12345", "phone no. 555", "call me at".
func fillerWord(w []byte) bool {
	switch string(w) {
	case "no", "nr", "nbr", "num", "number", "numbers", "is", "was", "are", "be", "me", "us", "at", "on", "my", "our", "his", "her",
		"their", "your", "the", "a", "an", "of", "to", "for", "id", "here", "please", "it", "its", "s", "de", "n",
		"home", "work", "office", "direct", "main", "personal", "private", "new", "old", "primary", "listed", "reads", "read",
		"card", "as", "follows", "ending", "in", "and", "or", "ref", "value", "v", "via", "with", "du", "da", "der", "des",
		"yes", "sure", "ok", "okay", "that", "this", "below", "following", "caller", "customer", "client", "user", "member",
		// other languages: "mon NIR est le", "meine Steuer-ID lautet", "mitt pnr är", "mi DNI es"
		"est", "lautet", "ist", "är", "es", "son", "é", "è", "e", "le", "la", "el", "mon", "ma", "mes", "mein", "meine",
		"mi", "mio", "mia", "mijn", "min", "mitt", "nummer", "numer", "numero", "número", "numéro", "nro", "nº":
		return true
	}
	return false
}

// numberMarker reports whether the lowercase word w says a number
// follows: "no", "number", "id".
func numberMarker(w []byte) bool {
	switch string(w) {
	case "no", "nr", "nbr", "num", "number", "id", "n", "nummer", "numer", "numero", "número", "numéro", "nro":
		return true
	}
	return false
}

// cueBefore returns which of the want lists have an id word leading to
// the number at t[at]: walking back over punctuation and filler words (at
// most maxGapWords, within cueGap bytes, not past a ';', '!', '?' or a
// blank line), the nearest word, or a filler, ends an id word of the list.
func (sc *scanner) cueBefore(t []byte, at int, want cueKind) cueKind {
	limit := max(at-cueGap, 0)
	p := at
	var buf [32]byte
	marker := false
	for range maxGapWords {
		q, hash, ok := gapBefore(t, p, limit)
		if !ok {
			return 0
		}
		marker = marker || hash
		ws, ok := wordBefore(t, q, len(buf))
		sc.steps += p - ws
		if !ok {
			return 0 // a word too long to be an id word
		}
		w := buf[:q-ws]
		for k := range w {
			w[k] = lower(t[ws+k])
		}
		if len(w) == 1 {
			w, ws = dottedWord(t, ws, buf[:0])
		}
		found, filler := cueOfWord(t, q, ws, w, want, marker)
		if !filler {
			return found
		}
		marker = marker || numberMarker(w)
		p = ws
	}
	return 0
}

// gapBefore walks back from t[p] over punctuation and spaces to the end q
// of the word before, not past limit; hash: a '#' was in the gap. ok is
// false when no word is within reach, or a ';', '!' or blank line ends
// the clause first.
func gapBefore(t []byte, p, limit int) (q int, hash, ok bool) {
	q = p
	for q > limit {
		c := t[q-1]
		start, word := q-1, isAlnum(c)
		if c >= 0x80 {
			start, word = charBefore(t, q)
		}
		if word {
			break
		}
		if c == ';' || c == '!' || (c == '\n' && q >= 2 && t[q-2] == '\n') {
			return q, hash, false
		}
		hash = hash || c == '#'
		q = start
	}
	return q, hash, q > limit
}

// wordBefore returns where the word ending at t[q] starts, read back at
// most n bytes; false when the word goes on past them (too long to be an
// id word).
func wordBefore(t []byte, q, n int) (int, bool) {
	ws := q
	for ws > 0 && q-ws < n {
		if c := t[ws-1]; c < 0x80 {
			if !isAlnum(c) {
				break
			}
			ws--
			continue
		}
		start, word := charBefore(t, ws)
		if !word || q-start > n {
			break // a character that would overflow the buffer: the word is too long (below)
		}
		ws = start
	}
	if ws > 0 {
		if _, word := charBefore(t, ws); word {
			return ws, false
		}
	}
	return ws, true
}

// cueOfWord judges the word w (lowercase) at t[ws:q] on the walk back to
// a number: which of the want lists an id word ending with it names, or,
// after "my" and a country (my UK number: ...), a phone's. filler: it is
// a filler word the walk goes on past.
func cueOfWord(t []byte, q, ws int, w []byte, want cueKind, marker bool) (found cueKind, filler bool) {
	idWord, filler := maybeWord(w, &idWordShapes), maybeWord(w, &fillerShapes)
	if !idWord && !filler {
		if want&cuePhone != 0 && marker && countryNumber(t, ws) {
			return cuePhone, false // My Israeli number is 09-7625400, my UK number: 07700 900123
		}
		return 0, false // neither an id word's last word nor a filler: most words, told without a hash
	}
	if idWord {
		for _, c := range idCues[string(w)] {
			if c.kinds&want != 0 && (marker || !c.marker) && matchBack(t, q, c.words) {
				found |= c.kinds & want
			}
		}
	}
	if found != 0 {
		return found, false
	}
	if !filler || !fillerWord(w) {
		if want&cuePhone != 0 && marker && countryNumber(t, ws) && len(idCues[string(w)]) == 0 {
			return cuePhone, false
		}
		return 0, false
	}
	return 0, true
}

// charBefore returns where the character before t[q] starts and whether
// it is a word's: an ASCII letter or digit, or a letter of another script
// (a multibyte character whose lead byte is not that of Latin-1's symbols,
// general punctuation, CJK punctuation or the specials: ° º « » — ・).
func charBefore(t []byte, q int) (int, bool) {
	c := t[q-1]
	if c < 0x80 {
		return q - 1, isAlnum(c)
	}
	s := q - 1
	for s > 0 && q-s < 4 && t[s]&0xC0 == 0x80 {
		s--
	}
	switch l := t[s]; {
	case l == 0xC2, l == 0xE2, l == 0xE3, l >= 0xEF, l&0xC0 == 0x80:
		return s, false
	}
	return s, true
}

// countryNumber reports whether the word at t[ws] is capitalized and
// "my" is before it: a country's name or adjective in "my Israeli number",
// which is a phone number's.
func countryNumber(t []byte, ws int) bool {
	return isUpperASCII(t[ws]) && ws >= 3 && t[ws-1] == ' ' && (t[ws-3]|0x20) == 'm' && (t[ws-2]|0x20) == 'y' && (ws == 3 || !isWordByte(t[ws-4]))
}

// dottedWord reads back from the one-letter word at t[ws] over an
// abbreviation written with dots (S.S.N, D.O.B), returning its letters in
// order, lowercase, and where it starts.
func dottedWord(t []byte, ws int, buf []byte) ([]byte, int) {
	s := ws
	for s >= 2 && t[s-1] == '.' && isLetter(t[s-2]) && (s == 2 || !isAlnum(t[s-3])) && ws-s < 16 {
		s -= 2
	}
	for p := s; p <= ws; p += 2 {
		buf = append(buf, lower(t[p]))
	}
	return buf, s
}

// matchBack reports whether the id word ends at t[end]: its letters
// matched case-insensitively from the end, each space of it matching one
// to three bytes of punctuation or space (". ", "-", " #"), a dot between
// two letters skipped (D.O.B), and a word's start before it.
func matchBack(t []byte, end int, words string) bool {
	p := end
	for k := len(words) - 1; k >= 0; k-- {
		c := words[k]
		if c == ' ' {
			n := 0
			for p > 0 && n < 3 && !isAlnum(t[p-1]) && t[p-1] < 0x80 {
				p--
				n++
			}
			if n == 0 {
				return false
			}
			continue
		}
		if p >= 2 && t[p-1] == '.' && isLetter(t[p-2]) && k+1 < len(words) && words[k+1] != ' ' {
			p-- // an abbreviation's dot inside the word
		}
		if p == 0 || lower(t[p-1]) != c {
			return false
		}
		p--
	}
	return p == 0 || !isAlnum(t[p-1])
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// cuesIn returns which of the want lists have a stem starting in
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
		for left := want &^ found; left != 0; left &= left - 1 {
			k := bits.TrailingZeros32(uint32(left))
			for _, w := range stemIndex[k][c-'a'] {
				if hasPrefixFold(t[i:], w) {
					found |= 1 << k
					if found == want {
						return found
					}
					break
				}
			}
		}
	}
	return found
}

// clauseStart returns where the clause holding t[at] starts, at most
// window bytes before it: after the last '.', '!', '?' or ';' followed by
// a space, or a newline.
func clauseStart(t []byte, at, window int) int {
	from := max(at-window, 0)
	for p := at - 1; p > from; p-- {
		c := t[p]
		if c == '\n' || ((c == '.' || c == '!' || c == '?' || c == ';') && p+1 < len(t) && (t[p+1] == ' ' || t[p+1] == '\n')) {
			return p + 1
		}
	}
	return from
}

// hasPrefixFold reports whether t starts with the lowercase word, ASCII
// case-insensitively.
func hasPrefixFold(t []byte, word string) bool {
	if len(t) < len(word) {
		return false
	}
	for k := range len(word) {
		if lower(t[k]) != word[k] {
			return false
		}
	}
	return true
}
