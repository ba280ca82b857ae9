// Package lexicon holds the classifier's compiled-in vocabularies: health
// words and phrases, a given-name and surname gazetteer, and the ICD-10
// categories. None is a list grown by hand: internal/gen builds them from
// registry packages whose licenses allow embedding in this Apache-2.0
// binary (WordNet, SCOWL's word lists, SUBTLEX frequencies, census, SSA and
// faker's name tables) and from ICD-10-CM's public-domain chapter ranges;
// no GPL-licensed data. SOURCES.md names each source, its version, its
// license and why it may be embedded, and the filters; data/counts.tsv the
// counts. The generated files in data/ are committed and embedded; `make
// lexicon` regenerates them.
//
// # For the scanner
//
// Every lookup reads its argument once, allocates nothing and answers in
// constant time (a fold into a stack buffer, a Bloom filter that answers
// most absent words, then one open-addressing probe sequence; a word longer
// than the longest entry returns false at once). The tables are built on
// the first lookup, not at program start (the compiler links this package
// and never looks anything up): about 6 ms and 1.6 MiB of heap for all of
// them.
//
// Measured (go test -bench . -cpu 1 on the shared 2-core machine, load
// average 7): a word of ordinary prose looked up as a health word, a given
// name and a surname, 10-13 ns a lookup (BenchmarkProse); HealthWord on a
// mix with 40% hits 17 ns; GivenName or Surname 10 ns; ICD10 5-8 ns;
// HealthPhrase 15-35 ns at each word of prose (BenchmarkHealthPhraseProse),
// 30 ns in a clinical sentence. Under a load average of 16 the same runs
// took about twice as long.
//
//   - HealthWord(w): one word, ASCII letters, any case ("Pneumonia",
//     "WARFARIN"); an acronym entry (HIV, COPD) only in capitals as written,
//     so "aids" the verb is not AIDS.
//   - HealthPhrase(t, i): a multi-word term starting at t[i] ("heart
//     failure", "heart attack", "admitted with") or an eponym
//     ("Alzheimer's", "Crohn’s disease"), words separated by any run of
//     spaces, tabs or newlines, an apostrophe straight or typographic,
//     case-insensitive, not followed by a letter; the length in bytes, or 0.
//     Single words cover most terms; phrases are the terms whose words are
//     not health words alone.
//   - GivenName(w), Surname(w): a capitalized word as written: "Maria",
//     "MARIA" (all capitals from 3 letters, and not an abbreviation of the
//     word lists: "AI", "OK", "SHA", "NAS" are not names),
//     "McDonald", "O'Brien", "O’Brien", "DeAngelo" (an apostrophe or one
//     inner capital after Mc, Mac, O', D', L', De, Di, Da, Du, La, Le, Van,
//     Von); "maria" and "mARIA" are not names. Accents must be folded by the caller (the
//     gazetteer holds José as Jose). Names that are mostly English words are
//     not in it (Will, May, Hope; SOURCES.md), so a sentence's first word
//     rarely passes; common-word surnames are (Brown, Long, Park).
//   - ICD10(code): a code of the ICD-10 code set as written, upper case,
//     with or without the dot, with at least one character after the
//     category ("E11.9", "E119", "C50.911", "S72.001A"); a bare category
//     ("E11") is ICD10Category's, since version strings look the same. A
//     category is one of the chapter ranges of ICD-10-CM and ICD-10 (2,555
//     categories, A00-Z99 less the gaps between chapters: D90, E91, K96,
//     T99, U86; no code-title set is packaged under a license this binary
//     can embed), and the characters after the category are checked for
//     shape only.
package lexicon

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

//go:generate go run ./internal/gen -out data

var (
	//go:embed data/health_words.txt
	healthWordsData string
	//go:embed data/health_acronyms.txt
	healthAcronymsData string
	//go:embed data/health_phrases.txt
	healthPhrasesData string
	//go:embed data/given_names.txt
	givenNamesData string
	//go:embed data/surnames.txt
	surnamesData string
	//go:embed data/caps_not_names.txt
	capsNotNamesData string
	//go:embed data/icd10_categories.txt
	icd10Data string
	//go:embed data/clinical_suffixes.txt
	clinicalSuffixesData string
	//go:embed data/not_clinical_forms.txt
	notClinicalFormsData string
)

// maxWord bounds the stack buffer a word is folded into; entries longer
// than this are not loaded (no health word or name is).
const maxWord = 64

// set is a word list: an open-addressing hash table of the embedded
// file's lines (each slot the line's offset and length in the file, no
// copies), behind a Bloom filter of two probes in 128 KiB that stays in the
// CPU's cache: most words of a text are in no list, and the filter answers
// them without touching the table (about 2% of absent words reach it).
type set struct {
	data   string
	slots  []uint32 // offset<<7 | length; 0 is empty (no line is empty)
	shift  uint     // 64 - log2(len(slots))
	filter *[filterWords]uint64
	maxLen int
}

const (
	filterBits  = 1 << 20
	filterWords = filterBits / 64
)

func newSet(data string) *set {
	n := strings.Count(data, "\n")
	bits := uint(1)
	for 1<<bits < 2*n {
		bits++
	}
	s := &set{data: data, slots: make([]uint32, 1<<bits), shift: 64 - bits, filter: new([filterWords]uint64)}
	off := 0
	for line := range strings.Lines(data) {
		start := off
		off += len(line)
		line = strings.TrimSuffix(line, "\n")
		if line == "" || len(line) > maxWord {
			continue
		}
		s.maxLen = max(s.maxLen, len(line))
		h := hashString(line)
		for _, b := range [2]uint32{uint32(h), uint32(h >> 32)} {
			b %= filterBits
			s.filter[b/64] |= 1 << (b % 64)
		}
		for i := s.slot(h); ; i = (i + 1) & uint64(len(s.slots)-1) {
			if s.slots[i] == 0 {
				s.slots[i] = uint32(start)<<7 | uint32(len(line))
				break
			}
		}
	}
	return s
}

func (s *set) slot(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> s.shift }

func (s *set) has(k []byte) bool {
	h := hashBytes(k)
	b1, b2 := uint32(h)%filterBits, uint32(h>>32)%filterBits
	if s.filter[b1/64]&(1<<(b1%64)) == 0 || s.filter[b2/64]&(1<<(b2%64)) == 0 {
		return false
	}
	for i := s.slot(h); ; i = (i + 1) & uint64(len(s.slots)-1) {
		e := s.slots[i]
		if e == 0 {
			return false
		}
		if off, n := int(e>>7), int(e&127); n == len(k) && s.data[off:off+n] == string(k) {
			return true
		}
	}
}

// hashBytes and hashString: FNV-1a, 64 bits, finished with a multiply so
// both halves mix every byte.
func hashBytes(k []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range k {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return (h ^ h>>29) * 0xbf58476d1ce4e5b9
}

func hashString(k string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(k); i++ {
		h = (h ^ uint64(k[i])) * 1099511628211
	}
	return (h ^ h>>29) * 0xbf58476d1ce4e5b9
}

var (
	healthWords    = sync.OnceValue(func() *set { return newSet(healthWordsData) })
	healthAcronyms = sync.OnceValue(func() *set { return newSet(healthAcronymsData) })
	givenNames     = sync.OnceValue(func() *set { return newSet(givenNamesData) })
	surnames       = sync.OnceValue(func() *set { return newSet(surnamesData) })
	capsNotNames   = sync.OnceValue(func() *set { return newSet(capsNotNamesData) })
	phrases        = sync.OnceValue(func() *phraseTable { return newPhraseTable(healthPhrasesData) })
	icd10          = sync.OnceValue(func() *[26 * 100]bool { return newICD10(icd10Data) })
	clinicalForms  = sync.OnceValue(func() *formTable { return newFormTable(clinicalSuffixesData, notClinicalFormsData) })
)

// HealthWord reports whether w (one word as written, ASCII letters, any
// case) is a health term: a condition, symptom, procedure, body-system
// disorder or medication (pneumonia, sepsis, prenatal, warfarin,
// fibrillation, metformin, HIV), held in the list or of a clinical form no
// list refuses (oxycodone, enoxaparin: see formTable). It never allocates.
func HealthWord(w []byte) bool {
	if len(w) < 3 || len(w) > maxWord {
		return false
	}
	if isUpperWord(w) {
		if a := healthAcronyms(); len(w) <= a.maxLen && a.has(w) {
			return true
		}
	}
	s := healthWords()
	if len(w) > s.maxLen {
		return false
	}
	var buf [maxWord]byte
	k, ok := foldLower(buf[:0], w)
	return ok && (s.has(k) || clinicalForms().has(k))
}

// formTable answers whether a lowercase word no list holds has a clinical
// form: 6 letters or more ending in a clinical suffix (-ectomy, -itis, the
// drug stems -pril, -parin, -apine; data/clinical_suffixes.txt) after at
// least three letters, and not one of the English words and names of such
// a form that are not health words (data/not_clinical_forms.txt: academic,
// systemic, sympathy). The generator applies the same rule to its word
// lists, so a drug or condition no list has (oxycodone, quetiapine,
// enoxaparin) is a health word and a listed word is what the filters made
// it. A table of the suffixes' last three letters answers most words with
// one load.
type formTable struct {
	last3    [26 * 26 * 26]bool // a suffix ends in these three letters
	lengths  []int              // the suffixes' lengths, shortest first
	suffixes *set
	not      *set
}

func newFormTable(suffixes, not string) *formTable {
	t := &formTable{suffixes: newSet(suffixes), not: newSet(not)}
	for line := range strings.Lines(suffixes) {
		sfx := strings.TrimSuffix(line, "\n")
		if len(sfx) < 3 {
			continue
		}
		t.last3[trigram(sfx[len(sfx)-3:])] = true
		if !slices.Contains(t.lengths, len(sfx)) {
			t.lengths = append(t.lengths, len(sfx))
		}
	}
	slices.Sort(t.lengths)
	return t
}

func trigram[S ~string | ~[]byte](s S) int {
	return int(s[0]-'a')*26*26 + int(s[1]-'a')*26 + int(s[2]-'a')
}

// has: k is lowercase ASCII letters (foldLower's output).
func (t *formTable) has(k []byte) bool {
	if len(k) < 6 || !t.last3[trigram(k[len(k)-3:])] {
		return false
	}
	for _, n := range t.lengths {
		if len(k) < n+3 {
			break
		}
		if t.suffixes.has(k[len(k)-n:]) {
			return len(k) > t.not.maxLen || !t.not.has(k)
		}
	}
	return false
}

// GivenName reports whether w, a capitalized word as written ("Maria",
// "MARIA", "O'Brien"), is a given name of the gazetteer.
func GivenName(w []byte) bool { return nameIn(givenNames(), w) }

// Surname reports whether w, a capitalized word as written ("Osei",
// "OSEI", "McDonald", "O'Brien"), is a surname of the gazetteer.
func Surname(w []byte) bool { return nameIn(surnames(), w) }

func nameIn(s *set, w []byte) bool {
	if len(w) < 2 || len(w) > s.maxLen+3 { // +3: an apostrophe (’ is 3 bytes) is not in the key
		return false
	}
	var buf [maxWord]byte
	k, ok := nameKey(buf[:0], w)
	if !ok || len(k) > s.maxLen || !s.has(k) {
		return false
	}
	// In capitals, a name that is also an abbreviation (SHA, ABA, NAS) is
	// taken for the abbreviation.
	return !(len(w) >= 3 && isUpperWord(w) && capsNotNames().has(w))
}

// nameKey folds a name written with a name's capitalization to its key
// (lowercase letters, the apostrophe dropped) in dst, or reports false.
func nameKey(dst, w []byte) ([]byte, bool) {
	if !isUpper(w[0]) {
		return nil, false
	}
	// All capitals (MARIA OSEI, a form's header) from three letters: two
	// capitals are far more often an abbreviation (AI, OK, CA) than Al or Ed.
	allUpper := len(w) >= 3
	for _, c := range w {
		if isLower(c) {
			allUpper = false
			break
		}
	}
	dst = append(dst, w[0]|0x20)
	inner := false
	for i := 1; i < len(w); i++ {
		switch c := w[i]; {
		case isLower(c):
			dst = append(dst, c)
		case isUpper(c):
			if !allUpper {
				if inner || !innerCapital(w[:i]) {
					return nil, false
				}
				inner = true
			}
			dst = append(dst, c|0x20)
		case c == '\'' && i == 1 && len(w) > 2 && isUpper(w[2]):
			// O'Brien, D'Angelo: the capital after the apostrophe is allowed.
		case c == 0xe2 && i == 1 && len(w) > 4 && w[2] == 0x80 && w[3] == 0x99 && isUpper(w[4]):
			i += 2 // O’Brien, with U+2019
		default:
			return nil, false
		}
	}
	return dst, true
}

// innerCapital reports whether a name may have a capital after prefix:
// McDonald, MacArthur, O'Brien, DeAngelo, DiMaggio, LaToya, VanDyke.
func innerCapital(prefix []byte) bool {
	switch string(prefix) {
	case "Mc", "Mac", "O'", "D'", "L'", "O’", "D’", "L’", "De", "Di", "Da", "Du", "La", "Le", "Van", "Von":
		return true
	}
	return false
}

// HealthPhrase returns the length in bytes of a multi-word health term
// that starts at t[i] (a word start): "heart failure", "chest pain",
// "admitted with"; or 0. The words may be separated by any run of spaces,
// tabs and newlines; the match is case-insensitive and must not be
// followed by a letter. The longest phrase wins.
func HealthPhrase(t []byte, i int) int {
	if i < 0 || i >= len(t) || !isLetter(t[i]) || i > 0 && isLetter(t[i-1]) {
		return 0
	}
	p := phrases()
	j := i
	for j < len(t) && isLetter(t[j]) {
		j++
	}
	if j-i > p.maxFirst {
		return 0
	}
	var buf [maxWord]byte
	k, _ := foldLower(buf[:0], t[i:j])
	if !p.first.has(k) {
		return 0
	}
	best := 0
	for _, ph := range p.byFirst[string(k)] {
		if n := matchPhrase(t, j, ph[len(k):]); n > 0 && n-i > best {
			best = n - i
		}
	}
	return best
}

// matchPhrase matches rest (" word word" or "'s word", lowercase) at t[j]
// and returns the offset after it, or 0.
func matchPhrase(t []byte, j int, rest string) int {
	for r := 0; r < len(rest); r++ {
		if rest[r] == ' ' {
			if j >= len(t) || !isSpace(t[j]) {
				return 0
			}
			for j < len(t) && isSpace(t[j]) {
				j++
			}
			continue
		}
		if rest[r] == '\'' {
			// Alzheimer's, written with a straight or a typographic apostrophe
			switch {
			case j < len(t) && t[j] == '\'':
				j++
			case j+2 < len(t) && t[j] == 0xe2 && t[j+1] == 0x80 && t[j+2] == 0x99: // U+2019
				j += 3
			default:
				return 0
			}
			continue
		}
		if j >= len(t) || t[j]|0x20 != rest[r] || !isLetter(t[j]) {
			return 0
		}
		j++
	}
	if j < len(t) && isLetter(t[j]) {
		return 0
	}
	return j
}

type phraseTable struct {
	byFirst  map[string][]string // first word: the phrases starting with it
	first    *set                // the first words, for the filter
	maxFirst int
}

func newPhraseTable(data string) *phraseTable {
	p := &phraseTable{byFirst: map[string][]string{}}
	for line := range strings.Lines(data) {
		line = strings.TrimSuffix(line, "\n")
		n := 0
		for n < len(line) && isLetter(line[n]) {
			n++
		}
		if n == 0 || n == len(line) {
			continue
		}
		first := line[:n]
		p.byFirst[first] = append(p.byFirst[first], line)
		p.maxFirst = max(p.maxFirst, len(first))
	}
	var firsts strings.Builder
	for f := range p.byFirst {
		firsts.WriteString(f + "\n")
	}
	p.first = newSet(firsts.String())
	return p
}

// ICD10 reports whether code (as written, upper case, with or without the
// dot: E11.9, E119, C50.911, S72.001A) is a code of the ICD-10 code set:
// its category (a letter, two digits) is one the terminology maps to, and
// one to four letters or digits follow it. A bare category ("E11") is not
// accepted here (version strings look the same); see ICD10Category.
func ICD10(code []byte) bool {
	if len(code) < 4 || len(code) > 8 || !ICD10Category(code[:3]) {
		return false
	}
	rest := code[3:]
	if rest[0] == '.' {
		rest = rest[1:]
	}
	if len(rest) < 1 || len(rest) > 4 {
		return false
	}
	for _, c := range rest {
		if !isDigit(c) && !isUpper(c) {
			return false
		}
	}
	return true
}

// ICD10Category reports whether code is exactly a three-character ICD-10
// category of the code set (E11, J18, I48).
func ICD10Category(code []byte) bool {
	if len(code) != 3 || !isUpper(code[0]) || !isDigit(code[1]) || !isDigit(code[2]) {
		return false
	}
	return icd10()[int(code[0]-'A')*100+int(code[1]-'0')*10+int(code[2]-'0')]
}

func newICD10(data string) *[26 * 100]bool {
	var t [26 * 100]bool
	for line := range strings.Lines(data) {
		c := []byte(strings.TrimSuffix(line, "\n"))
		if len(c) == 3 && isUpper(c[0]) && isDigit(c[1]) && isDigit(c[2]) {
			t[int(c[0]-'A')*100+int(c[1]-'0')*10+int(c[2]-'0')] = true
		}
	}
	return &t
}

// foldLower appends w in lowercase to dst, or reports false when w has a
// byte other than an ASCII letter.
func foldLower(dst, w []byte) ([]byte, bool) {
	for _, c := range w {
		if !isLetter(c) {
			return nil, false
		}
		dst = append(dst, c|0x20)
	}
	return dst, true
}

func isUpperWord(w []byte) bool {
	for _, c := range w {
		if !isUpper(c) {
			return false
		}
	}
	return len(w) > 0
}

func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isUpper(c) || isLower(c) }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
