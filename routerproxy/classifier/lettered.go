package classifier

import (
	"math/bits"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier/lexicon"
)

// Identifiers that start with letters: IBANs (two letters, two check
// digits), ICD-10 codes (a letter, two characters), and medical record
// numbers with a letter prefix.

// lettered judges the word around t[i], a digit right after a letter, and
// returns the index of the compound token's last byte.
func (sc *scanner) lettered(t []byte, i int) int {
	switch {
	case i >= 2 && isLetter(t[i-2]) && boundaryBefore(t, i-2) && i+1 < len(t) && isDigit(t[i+1]):
		if end := sc.iban(t, i-2); end > 0 {
			return end - 1
		}
	case boundaryBefore(t, i-1):
		sc.icd10(t, i-1)
	}
	return sc.compound(t, i)
}

// compound judges the compound token holding t[i], a digit inside it, as
// an identifier with letters (token), and returns the index of its last
// byte.
func (sc *scanner) compound(t []byte, i int) int {
	e := skipCompound(t, i)
	if s := compoundStart(t, i); s >= 0 {
		sc.token(t, s, e+1)
	}
	return e
}

// ibanLengths is each country's IBAN length (ISO 13616, the SWIFT IBAN
// registry).
var ibanLengths = map[[2]byte]int{
	{'A', 'D'}: 24, {'A', 'E'}: 23, {'A', 'L'}: 28, {'A', 'T'}: 20, {'A', 'Z'}: 28, {'B', 'A'}: 20, {'B', 'E'}: 16,
	{'B', 'G'}: 22, {'B', 'H'}: 22, {'B', 'I'}: 27, {'B', 'R'}: 29, {'B', 'Y'}: 28, {'C', 'H'}: 21, {'C', 'R'}: 22,
	{'C', 'Y'}: 28, {'C', 'Z'}: 24, {'D', 'E'}: 22, {'D', 'J'}: 27, {'D', 'K'}: 18, {'D', 'O'}: 28, {'E', 'E'}: 20,
	{'E', 'G'}: 29, {'E', 'S'}: 24, {'F', 'I'}: 18, {'F', 'K'}: 18, {'F', 'O'}: 18, {'F', 'R'}: 27, {'G', 'B'}: 22,
	{'G', 'E'}: 22, {'G', 'I'}: 23, {'G', 'L'}: 18, {'G', 'R'}: 27, {'G', 'T'}: 28, {'H', 'N'}: 28, {'H', 'R'}: 21,
	{'H', 'U'}: 28, {'I', 'E'}: 22, {'I', 'L'}: 23, {'I', 'Q'}: 23, {'I', 'S'}: 26, {'I', 'T'}: 27, {'J', 'O'}: 30,
	{'K', 'W'}: 30, {'K', 'Z'}: 20, {'L', 'B'}: 28, {'L', 'C'}: 32, {'L', 'I'}: 21, {'L', 'T'}: 20, {'L', 'U'}: 20,
	{'L', 'V'}: 21, {'L', 'Y'}: 25, {'M', 'C'}: 27, {'M', 'D'}: 24, {'M', 'E'}: 22, {'M', 'K'}: 19, {'M', 'N'}: 20,
	{'M', 'R'}: 27, {'M', 'T'}: 31, {'M', 'U'}: 30, {'N', 'I'}: 28, {'N', 'L'}: 18, {'N', 'O'}: 15, {'O', 'M'}: 23,
	{'P', 'K'}: 24, {'P', 'L'}: 28, {'P', 'S'}: 29, {'P', 'T'}: 25, {'Q', 'A'}: 29, {'R', 'O'}: 24, {'R', 'S'}: 22,
	{'R', 'U'}: 33, {'S', 'A'}: 24, {'S', 'C'}: 31, {'S', 'D'}: 18, {'S', 'E'}: 24, {'S', 'I'}: 19, {'S', 'K'}: 24,
	{'S', 'M'}: 27, {'S', 'O'}: 23, {'S', 'T'}: 25, {'S', 'V'}: 28, {'T', 'L'}: 23, {'T', 'N'}: 24, {'T', 'R'}: 26,
	{'U', 'A'}: 29, {'V', 'A'}: 22, {'V', 'G'}: 24, {'X', 'K'}: 20, {'Y', 'E'}: 30,
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// iban reads an IBAN at t[s] (its country code), written whole or in
// groups joined by single spaces, dots or dashes (fours, or the country's
// own printing), each group starting with a digit or a capital, and fires on a known country's
// exact length and a valid ISO 7064 mod-97 check. It returns the index
// after the IBAN, or 0.
func (sc *scanner) iban(t []byte, s int) int {
	want := ibanLengths[[2]byte{upper(t[s]), upper(t[s+1])}]
	if want == 0 {
		return 0
	}
	var buf [34]byte
	n, p := 0, s
	for p < len(t) && n < want {
		c := t[p]
		switch {
		case isAlnum(c):
			buf[n] = upper(c)
			n++
			p++
		case (c == ' ' || c == '.' || c == '-') && n >= 2 && p+1 < len(t) && (isDigit(t[p+1]) || isUpperASCII(t[p+1])):
			p++ // groups of four, or a country's own (NO 39 4750 07 95936, ME 25 5400...)
		default:
			p = len(t) + 1 // stop
		}
	}
	if n != want || p > len(t) || (p < len(t) && isWordByte(t[p])) || !isDigit(buf[2]) || !isDigit(buf[3]) {
		return 0
	}
	// Move the first four characters to the end; letters count 10-35.
	mod := 0
	for k := range n {
		c := buf[(k+4)%n]
		if isDigit(c) {
			mod = (mod*10 + int(c-'0')) % 97
		} else {
			mod = (mod*100 + int(c-'A'+10)) % 97
		}
	}
	if mod != 1 {
		return 0
	}
	sc.fire(IBAN, s)
	return p
}

// icd10 reads an ICD-10 code at t[s] (A00-Z99, U excluded, a third
// character, an optional '.' and up to four more: E11.9, C50.911, F32A)
// and fires when a diagnosis or health word is near it (E11.9, type 2
// diabetes).
func (sc *scanner) icd10(t []byte, s int) {
	p, ok := icd10End(t, s)
	if !ok {
		return
	}
	if sc.cuesIn(t, s-cueWindow, p+cueWindow, cueICD|cueHealth) == 0 {
		// A code of the code set, written with its dot, needs only a
		// health word of the lexicon in its clause: "cerebral infarction
		// (I63.9)". A version (v2.1, E10.4 firmware) is no code of it, or
		// has no health word beside it.
		if !(p-s >= 5 && t[s+3] == '.' && lexicon.ICD10(t[s:p]) && sc.healthIn(t, clauseStart(t, s, cueWindow), min(p+cueWindow, len(t)))) {
			return
		}
	}
	// Judged at the text's end (scanner.text): a code in a reference text
	// (a coding guideline, a population's statistics), or three codes or
	// more (a code list: A40, A41.9, R65.20), is a person's diagnosis only
	// when the text also holds an identifier.
	if sc.referenceNear(t, s, p) {
		sc.icdRef++
	} else {
		sc.icdCodes++
	}
	if sc.icdAt < 0 {
		sc.icdAt = s
	}
}

// refWindow is how far around an ICD-10 code the words of a reference
// text about codes (guideline, coding, excludes) are looked for.
const refWindow = 256

// referenceNear reports whether a reference text's word starts within
// refWindow of the code at t[s:p]. The codes of a text come in order, so
// each byte is read once: the scan resumes where the last one ended and
// remembers the last word it found.
func (sc *scanner) referenceNear(t []byte, s, p int) bool {
	from, to := max(s-refWindow, sc.refEnd, 0), min(p+refWindow, len(t))
	sc.steps += max(to-from, 0)
	for i := from; i < to; i++ {
		c := t[i] | 0x20
		if c < 'a' || c > 'z' || (i > 0 && isLetter(t[i-1])) {
			continue
		}
		for _, w := range stemIndex[bits.TrailingZeros32(uint32(cueReference))][c-'a'] {
			if hasPrefixFold(t[i:], w) {
				sc.refAt = i
				break
			}
		}
	}
	sc.refEnd = max(sc.refEnd, to)
	return sc.refAt >= 0 && sc.refAt >= s-refWindow && sc.refAt < p+refWindow
}

// icd10End returns the index after the ICD-10 code at t[s], and whether
// there is one that ends its word.
func icd10End(t []byte, s int) (int, bool) {
	c := t[s]
	if c < 'A' || c > 'Z' || c == 'U' || s+2 >= len(t) || !isDigit(t[s+1]) || !isCodeByte(t[s+2]) {
		return 0, false
	}
	p := s + 3
	if p+1 < len(t) && t[p] == '.' && isCodeByte(t[p+1]) {
		p++
		for k := 0; k < 4 && p < len(t) && isCodeByte(t[p]); k++ {
			p++
		}
	}
	return p, p >= len(t) || !isWordByte(t[p])
}

// isCodeByte is a byte of a code after its first two: a digit or an
// upper-case letter.
func isCodeByte(c byte) bool { return isDigit(c) || c >= 'A' && c <= 'Z' }
