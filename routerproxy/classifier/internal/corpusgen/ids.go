package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Synthetic identifiers: each generator draws a value that passes the
// identifier's own check (checksum, check letter, format rules), and each
// validator says whether a found value does (the fetched test vectors are
// kept only when they pass it, so a label never rests on a source's looser
// rule).

func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

func onlyDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func luhnOK(s string) bool {
	sum, alt := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if alt {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		alt = !alt
	}
	return sum%10 == 0
}

// luhnComplete appends the Luhn check digit to s.
func luhnComplete(s string) string {
	for c := byte('0'); c <= '9'; c++ {
		if luhnOK(s + string(c)) {
			return s + string(c)
		}
	}
	panic("unreachable")
}

// testPANs are the card numbers payment processors publish for tests
// (Stripe, Braintree, Adyen docs): Luhn-valid, never a person's card, and
// the benign code set's hazard. No positive uses one.
var testPANs = map[string]bool{
	"4242424242424242": true, "4000056655665556": true, "5555555555554444": true,
	"2223003122003222": true, "5200828282828210": true, "5105105105105100": true,
	"378282246310005": true, "371449635398431": true, "6011111111111117": true,
	"6011000990139424": true, "3056930009020004": true, "36227206271667": true,
	"3566002020360505": true, "6200000000000005": true, "4111111111111111": true,
	"4012888888881881": true, "4000002500003155": true, "4000000000009995": true,
	"4000000000000002": true, "378734493671000": true, "30569309025904": true,
	"38520000023237": true, "4222222222222": true, "5431111111111111": true,
	"6011601160116611": true, "4000000000003220": true, "4000000000000341": true,
}

type cardIssuer struct {
	prefixes []string
	length   int
	groups   []int
}

var cardIssuers = []cardIssuer{
	{[]string{"4"}, 16, []int{4, 4, 4, 4}},                                    // Visa
	{[]string{"4"}, 13, []int{4, 3, 3, 3}},                                    // Visa 13, printed 4-3-3-3
	{[]string{"51", "52", "53", "54", "55"}, 16, []int{4, 4, 4, 4}},           // Mastercard
	{[]string{"2221", "2300", "2511", "2699", "2720"}, 16, []int{4, 4, 4, 4}}, // Mastercard 2-series
	{[]string{"34", "37"}, 15, []int{4, 6, 5}},                                // Amex
	{[]string{"6011", "644", "649", "65"}, 16, []int{4, 4, 4, 4}},             // Discover
	{[]string{"3528", "3540", "3589"}, 16, []int{4, 4, 4, 4}},                 // JCB
	{[]string{"36", "300", "305"}, 14, []int{4, 6, 4}},                        // Diners
	{[]string{"62"}, 16, []int{4, 4, 4, 4}},                                   // UnionPay
	{[]string{"2200", "2204"}, 16, []int{4, 4, 4, 4}},                         // Mir
}

// card draws a card number and prints it bare, in its issuer's groups
// joined by spaces or dashes, or (4-4-4-4 only) dots.
func card(r *rand.Rand) string {
	for {
		is := cardIssuers[r.IntN(len(cardIssuers))]
		p := is.prefixes[r.IntN(len(is.prefixes))]
		n := luhnComplete(p + digits(r, is.length-len(p)-1))
		if testPANs[n] {
			continue
		}
		seps := []string{"", " ", "-", " ", "-"}
		if len(is.groups) == 4 && is.length == 16 {
			seps = append(seps, ".")
		}
		return group(n, is.groups, seps[r.IntN(len(seps))])
	}
}

// group prints s in groups of the given sizes joined by sep ("" joins them
// bare).
func group(s string, sizes []int, sep string) string {
	if sep == "" {
		return s
	}
	var parts []string
	for _, n := range sizes {
		parts = append(parts, s[:n])
		s = s[n:]
	}
	if s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

// weightedSum is the sum of s's first len(w) digits, each times its weight
// in w: the checksum of most national identifiers.
func weightedSum(s string, w []int) int {
	sum := 0
	for i, x := range w {
		sum += int(s[i]-'0') * x
	}
	return sum
}

// printGrouped prints n as people write it, on one draw of r.IntN(of): bare
// one time in of, grouped by sizes with dashes one in of, with spaces
// otherwise.
func printGrouped(r *rand.Rand, n string, sizes []int, of int) string {
	switch r.IntN(of) {
	case 0:
		return n
	case 1:
		return group(n, sizes, "-")
	default:
		return group(n, sizes, " ")
	}
}

func cardOK(s string) bool {
	return len(s) >= 13 && len(s) <= 19 && onlyDigits(s) && luhnOK(s) && !testPANs[s]
}

// US SSN: area 001-665, 667-899; group 01-99; serial 0001-9999; not the
// advertised 078-05-1120 nor 987-65-432x.
func ssnDigits(r *rand.Rand) string {
	for {
		a := 1 + r.IntN(899)
		if a == 666 {
			continue
		}
		s := fmt.Sprintf("%03d%02d%04d", a, 1+r.IntN(99), 1+r.IntN(9999))
		if ssnOK(s) {
			return s
		}
	}
}

func ssnOK(s string) bool {
	if len(s) != 9 || !onlyDigits(s) {
		return false
	}
	a, g, n := s[:3], s[3:5], s[5:]
	return a != "000" && a != "666" && a[0] != '9' && g != "00" && n != "0000" && s != "078051120" && s != "123456789"
}

func ssn(r *rand.Rand) string {
	s := ssnDigits(r)
	switch r.IntN(4) {
	case 0, 1:
		return s[:3] + "-" + s[3:5] + "-" + s[5:]
	case 2:
		return s[:3] + " " + s[3:5] + " " + s[5:]
	default:
		return s // printed bare: only after a cue
	}
}

// IBAN: a country's BBAN shape (ISO 13616 registry), the mod-97 check.
var ibanShapes = map[string]string{ // n digit, a upper letter, c either
	"DE": "nnnnnnnnnnnnnnnnnn", "GB": "aaaannnnnnnnnnnnnn", "FR": "nnnnnnnnnnnnnnnnnnnnnnn",
	"ES": "nnnnnnnnnnnnnnnnnnnn", "IT": "annnnnnnnnnnnnnnnnnnnnn", "NL": "aaaannnnnnnnnn",
	"BE": "nnnnnnnnnnnn", "CH": "nnnnnnnnnnnnnnnnn", "PL": "nnnnnnnnnnnnnnnnnnnnnnnn",
	"SE": "nnnnnnnnnnnnnnnnnnnn", "AT": "nnnnnnnnnnnnnnnn", "IE": "aaaannnnnnnnnnnnnn",
	"PT": "nnnnnnnnnnnnnnnnnnnnn", "DK": "nnnnnnnnnnnnnn", "NO": "nnnnnnnnnnn",
}

var ibanCountries = []string{"DE", "GB", "FR", "ES", "IT", "NL", "BE", "CH", "PL", "SE", "AT", "IE", "PT", "DK", "NO"}

func mod97(s string) int {
	m := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			m = (m*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			m = (m*100 + int(c-'A'+10)) % 97
		}
	}
	return m
}

func iban(r *rand.Rand) string {
	cc := ibanCountries[r.IntN(len(ibanCountries))]
	var b strings.Builder
	for _, k := range ibanShapes[cc] {
		if k == 'a' {
			b.WriteByte(byte('A' + r.IntN(26)))
		} else {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	bban := b.String()
	check := 98 - mod97(bban+cc+"00")
	n := fmt.Sprintf("%s%02d%s", cc, check, bban)
	if r.IntN(2) == 0 {
		return n
	}
	var g []int
	for i := 0; i < len(n); i += 4 {
		g = append(g, min(4, len(n)-i))
	}
	return group(n, g[:len(g)-1], " ")
}

func ibanOK(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	cc := s[:2]
	shape, ok := ibanShapes[cc]
	if ok && len(s) != len(shape)+4 {
		return false
	}
	return mod97(s[4:]+s[:4]) == 1
}

// NHS number: 10 digits, mod 11 check digit (a check of 10 is never
// issued).
func nhs(r *rand.Rand) string {
	for {
		s := digits(r, 9)
		if s[0] == '0' {
			continue
		}
		c := nhsCheck(s)
		if c == 10 {
			continue
		}
		return printGrouped(r, s+strconv.Itoa(c), []int{3, 3, 4}, 4)
	}
}

// nhsCheck is the mod 11 check digit of an NHS number's first nine digits
// (10: the number is never issued).
func nhsCheck(s string) int {
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(s[i]-'0') * (10 - i)
	}
	c := 11 - sum%11
	if c == 11 {
		c = 0
	}
	return c
}

func nhsOK(s string) bool {
	if len(s) != 10 || !onlyDigits(s) {
		return false
	}
	c := nhsCheck(s)
	return c != 10 && c == int(s[9]-'0')
}

// Medicare Beneficiary Identifier (CMS): C A AN N A AN N A A N N, letters
// without S L O I B Z.
const mbiLetters = "ACDEFGHJKMNPQRTUVWXY"

func mbi(r *rand.Rand) string {
	letter := func() byte { return mbiLetters[r.IntN(len(mbiLetters))] }
	num := func() byte { return byte('0' + r.IntN(10)) }
	an := func() byte {
		if r.IntN(2) == 0 {
			return letter()
		}
		return num()
	}
	b := []byte{byte('1' + r.IntN(9)), letter(), an(), num(), letter(), an(), num(), letter(), letter(), num(), num()}
	s := string(b)
	if r.IntN(2) == 0 {
		return s
	}
	return s[:4] + "-" + s[4:7] + "-" + s[7:]
}

func mbiOK(s string) bool {
	if len(s) != 11 {
		return false
	}
	isL := func(c byte) bool { return strings.IndexByte(mbiLetters, c) >= 0 }
	isN := func(c byte) bool { return c >= '0' && c <= '9' }
	shape := "CAXNAXNAANN"
	for i := 0; i < 11; i++ {
		c := s[i]
		switch shape[i] {
		case 'C':
			if c < '1' || c > '9' {
				return false
			}
		case 'A':
			if !isL(c) {
				return false
			}
		case 'N':
			if !isN(c) {
				return false
			}
		case 'X':
			if !isL(c) && !isN(c) {
				return false
			}
		}
	}
	return true
}

// Australian Medicare card: 8 digits (the first 2-6), a weighted check
// digit, the issue number; printed 4-5-1.
var auMedicareW = []int{1, 3, 7, 9, 1, 3, 7, 9}

func auMedicareDigits(r *rand.Rand) string {
	s := string(byte('2'+r.IntN(5))) + digits(r, 7)
	sum := weightedSum(s, auMedicareW)
	return s + strconv.Itoa(sum%10) + string(byte('1'+r.IntN(9)))
}

func auMedicare(r *rand.Rand) string {
	n := auMedicareDigits(r)
	switch r.IntN(3) {
	case 0:
		return n
	default:
		return group(n, []int{4, 5, 1}, " ")
	}
}

func auMedicareOK(s string) bool {
	if (len(s) != 10 && len(s) != 11) || !onlyDigits(s) || s[0] < '2' || s[0] > '6' {
		return false
	}
	sum := weightedSum(s, auMedicareW)
	return sum%10 == int(s[8]-'0')
}

// Spanish DNI and NIE: 8 digits (NIE: X, Y or Z and 7) and the check
// letter.
const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

func dni(r *rand.Rand) string {
	var s, show string
	if r.IntN(3) == 0 { // NIE
		p := r.IntN(3)
		body := digits(r, 7)
		s = strconv.Itoa(p) + body
		show = string("XYZ"[p]) + body
	} else {
		s = digits(r, 8)
		show = s
	}
	n, _ := strconv.Atoi(s)
	l := string(dniLetters[n%23])
	switch r.IntN(5) {
	case 0:
		return show + "-" + l
	case 1:
		if show[0] >= '0' && show[0] <= '9' {
			return show[:2] + "." + show[2:5] + "." + show[5:] + "-" + l
		}
		return show + l
	case 2:
		return strings.ToLower(show + l)
	default:
		return show + l
	}
}

func dniOK(s string) bool {
	s = strings.ToUpper(s)
	if len(s) != 9 {
		return false
	}
	body := s[:8]
	switch body[0] {
	case 'X':
		body = "0" + body[1:]
	case 'Y':
		body = "1" + body[1:]
	case 'Z':
		body = "2" + body[1:]
	}
	if !onlyDigits(body) {
		return false
	}
	n, _ := strconv.Atoi(body)
	return dniLetters[n%23] == s[8]
}

// French NIR: sex, year, month, department, commune, order (13 digits) and
// the key 97 - n mod 97; Corsica's 2A and 2B count as 19 and 18.
func nir(r *rand.Rand) string {
	dept := fmt.Sprintf("%02d", 1+r.IntN(95))
	if r.IntN(15) == 0 {
		dept = []string{"2A", "2B"}[r.IntN(2)]
	}
	body := fmt.Sprintf("%d%02d%02d%s%03d%03d", 1+r.IntN(2), r.IntN(100), 1+r.IntN(12), dept, 1+r.IntN(990), 1+r.IntN(999))
	key := 97 - nirMod(body)
	if r.IntN(2) == 0 {
		return fmt.Sprintf("%s%02d", body, key)
	}
	return fmt.Sprintf("%s %s %s %s %s %s %02d", body[:1], body[1:3], body[3:5], body[5:7], body[7:10], body[10:13], key)
}

func nirMod(body string) int {
	b := strings.Replace(strings.Replace(body, "2A", "19", 1), "2B", "18", 1)
	n, _ := strconv.ParseInt(b, 10, 64)
	return int(n % 97)
}

func nirOK(s string) bool {
	if len(s) != 15 || (s[0] != '1' && s[0] != '2') {
		return false
	}
	if !onlyDigits(strings.Replace(strings.Replace(s, "2A", "19", 1), "2B", "18", 1)) {
		return false
	}
	k, _ := strconv.Atoi(s[13:])
	return 97-nirMod(s[:13]) == k
}

// Italian codice fiscale: surname and name consonants, year, month letter,
// day (+40 for women), a municipality's Belfiore code, the check letter.
var cfOdd = []int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}

func cfCheck(s string) byte {
	sum := 0
	for i := 0; i < 15; i++ {
		c := s[i]
		v := 0
		if c >= '0' && c <= '9' {
			v = int(c - '0')
		} else {
			v = int(c - 'A')
		}
		if i%2 == 0 {
			sum += cfOdd[v]
		} else {
			sum += v
		}
	}
	return byte('A' + sum%26)
}

func cfPart(name string, isName bool) string {
	name = strings.ToUpper(asciiFold(name))
	var cons, vow []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 'A' || c > 'Z' {
			continue
		}
		if strings.IndexByte("AEIOU", c) >= 0 {
			vow = append(vow, c)
		} else {
			cons = append(cons, c)
		}
	}
	if isName && len(cons) >= 4 {
		return string([]byte{cons[0], cons[2], cons[3]})
	}
	out := append(append(cons, vow...), 'X', 'X', 'X')
	return string(out[:3])
}

func codiceFiscale(r *rand.Rand, first, last string, female bool) string {
	day := 1 + r.IntN(28)
	if female {
		day += 40
	}
	belfiore := []string{"H501", "F205", "L219", "G273", "A662", "D612", "F839", "C351", "L736", "A944"}
	s := cfPart(last, false) + cfPart(first, true) + fmt.Sprintf("%02d", 40+r.IntN(60)) +
		string("ABCDEHLMPRST"[r.IntN(12)]) + fmt.Sprintf("%02d", day) + belfiore[r.IntN(len(belfiore))]
	s += string(cfCheck(s))
	if r.IntN(6) == 0 {
		return strings.ToLower(s)
	}
	return s
}

func cfOK(s string) bool {
	s = strings.ToUpper(s)
	if len(s) != 16 {
		return false
	}
	for i := 0; i < 16; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	if !onlyDigits(s[6:8]) {
		return false
	}
	return cfCheck(s) == s[15]
}

// German Steuer-ID: 11 digits, no leading 0; in the first ten exactly one
// digit twice or three times (never three in a row), the others once;
// ISO 7064 mod 11,10 check digit.
func mod1110(s string) int {
	p := 10
	for i := 0; i < len(s); i++ {
		sum := (int(s[i]-'0') + p) % 10
		if sum == 0 {
			sum = 10
		}
		p = (2 * sum) % 11
	}
	return (11 - p) % 10
}

func deTaxID(r *rand.Rand) string {
	for {
		perm := r.Perm(10)
		ten := make([]byte, 10)
		for i := range 10 {
			ten[i] = byte('0' + perm[i])
		}
		// one digit twice: overwrite a position with another position's
		// digit.
		a, b := r.IntN(10), r.IntN(10)
		if a == b {
			continue
		}
		ten[b] = ten[a]
		if ten[0] == '0' {
			continue
		}
		s := string(ten)
		n := s + strconv.Itoa(mod1110(s))
		if !deTaxIDOK(n) {
			continue
		}
		switch r.IntN(3) {
		case 0:
			return group(n, []int{2, 3, 3, 3}, " ")
		default:
			return n
		}
	}
}

func deTaxIDOK(s string) bool {
	if len(s) != 11 || !onlyDigits(s) || s[0] == '0' {
		return false
	}
	count := map[byte]int{}
	for i := 0; i < 10; i++ {
		count[s[i]]++
	}
	rep := 0
	for _, c := range count {
		if c > 1 {
			if c > 3 {
				return false
			}
			rep++
		}
	}
	return rep == 1 && mod1110(s[:10]) == int(s[10]-'0')
}

// Dutch BSN: 9 digits, the 11-proof (weights 9..2, and -1 for the last).
func bsnOK(s string) bool {
	if len(s) != 9 || !onlyDigits(s) {
		return false
	}
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(s[i]-'0') * (9 - i)
	}
	sum -= int(s[8] - '0')
	return sum%11 == 0 && s != "000000000"
}

func bsn(r *rand.Rand) string {
	for {
		s := digits(r, 8)
		sum := 0
		for i := 0; i < 8; i++ {
			sum += int(s[i]-'0') * (9 - i)
		}
		c := sum % 11
		if c == 10 || s[0] == '0' {
			continue
		}
		n := s + strconv.Itoa(c)
		if r.IntN(4) == 0 {
			return n[:4] + "." + n[4:6] + "." + n[6:]
		}
		return n
	}
}

// Aadhaar: 12 digits, the first 2-9, the Verhoeff check, not a
// palindrome.
var (
	verD = [10][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6}, {3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1}, {6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	verP = [8][10]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2}, {8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1}, {2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
	verI = [10]int{0, 4, 3, 2, 1, 5, 6, 7, 8, 9}
)

func verhoeffOK(s string) bool {
	c := 0
	for i := 0; i < len(s); i++ {
		c = verD[c][verP[i%8][int(s[len(s)-1-i]-'0')]]
	}
	return c == 0
}

func verhoeffComplete(s string) string {
	c := 0
	for i := 0; i < len(s); i++ {
		c = verD[c][verP[(i+1)%8][int(s[len(s)-1-i]-'0')]]
	}
	return s + strconv.Itoa(verI[c])
}

func aadhaar(r *rand.Rand) string {
	n := verhoeffComplete(string(byte('2'+r.IntN(8))) + digits(r, 10))
	return printGrouped(r, n, []int{4, 4, 4}, 4)
}

func aadhaarOK(s string) bool {
	if len(s) != 12 || !onlyDigits(s) || s[0] < '2' {
		return false
	}
	pal := true
	for i := 0; i < 6; i++ {
		if s[i] != s[11-i] {
			pal = false
		}
	}
	return !pal && verhoeffOK(s)
}

// Brazilian CPF: 9 digits and two mod-11 check digits; printed
// 123.456.789-09.
func cpfDigit(s string) int {
	sum := 0
	for i := 0; i < len(s); i++ {
		sum += int(s[i]-'0') * (len(s) + 1 - i)
	}
	d := 11 - sum%11
	if d >= 10 {
		return 0
	}
	return d
}

func cpf(r *rand.Rand) string {
	s := digits(r, 9)
	s += strconv.Itoa(cpfDigit(s))
	s += strconv.Itoa(cpfDigit(s))
	if r.IntN(3) == 0 {
		return s
	}
	return s[:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:]
}

func cpfOK(s string) bool {
	if len(s) != 11 || !onlyDigits(s) || strings.Count(s, s[:1]) == 11 {
		return false
	}
	return cpfDigit(s[:9]) == int(s[9]-'0') && cpfDigit(s[:10]) == int(s[10]-'0')
}

// Canadian SIN: 9 digits, Luhn, the first not 0 or 8.
func sin(r *rand.Rand) string {
	first := []byte("1234567")[r.IntN(7)]
	return printGrouped(r, luhnComplete(string(first)+digits(r, 7)), []int{3, 3, 3}, 3)
}

func sinOK(s string) bool {
	return len(s) == 9 && onlyDigits(s) && s[0] != '0' && s[0] != '8' && luhnOK(s)
}

// Australian TFN: 9 digits, weights 1 4 3 7 5 8 6 9 10, sum mod 11 = 0.
var tfnW = []int{1, 4, 3, 7, 5, 8, 6, 9, 10}

func tfnOK(s string) bool {
	if len(s) != 9 || !onlyDigits(s) {
		return false
	}
	sum := weightedSum(s, tfnW)
	return sum%11 == 0
}

func tfn(r *rand.Rand) string {
	for {
		s := digits(r, 8)
		sum := weightedSum(s, tfnW[:8])
		// 10*c ≡ -sum (mod 11): c = sum mod 11 (10 ≡ -1).
		c := sum % 11
		if c == 10 {
			continue
		}
		n := s + strconv.Itoa(c)
		if !tfnOK(n) {
			panic("tfn")
		}
		if r.IntN(2) == 0 {
			return n
		}
		return group(n, []int{3, 3, 3}, " ")
	}
}

// UK National Insurance number: two prefix letters (neither D F I Q U V,
// the second not O; not BG GB KN NK NT TN ZZ), six digits, A-D.
func ninoPrefixOK(p string) bool {
	if strings.ContainsRune("DFIQUV", rune(p[0])) || strings.ContainsRune("DFIQUVO", rune(p[1])) {
		return false
	}
	switch p {
	case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
		return false
	}
	return true
}

func nino(r *rand.Rand) string {
	for {
		p := string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))})
		if !ninoPrefixOK(p) {
			continue
		}
		d := digits(r, 6)
		s := string("ABCD"[r.IntN(4)])
		switch r.IntN(3) {
		case 0:
			return p + d + s
		case 1:
			return p + " " + d[:2] + " " + d[2:4] + " " + d[4:] + " " + s
		default:
			return p + " " + d + " " + s
		}
	}
}

func ninoOK(s string) bool {
	s = strings.ToUpper(s)
	return len(s) == 9 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z' &&
		ninoPrefixOK(s[:2]) && onlyDigits(s[2:8]) && s[8] >= 'A' && s[8] <= 'D'
}

// Polish PESEL: yymmdd with the century in the month (+20 for 2000s),
// four serial digits, the weighted check.
var peselW = []int{1, 3, 7, 9, 1, 3, 7, 9, 1, 3}

func pesel(r *rand.Rand) string {
	y := 1940 + r.IntN(80)
	m := 1 + r.IntN(12)
	if y >= 2000 {
		m += 20
	}
	s := fmt.Sprintf("%02d%02d%02d%s", y%100, m, 1+r.IntN(28), digits(r, 4))
	sum := weightedSum(s, peselW)
	return s + strconv.Itoa((10-sum%10)%10)
}

func peselOK(s string) bool {
	if len(s) != 11 || !onlyDigits(s) {
		return false
	}
	sum := weightedSum(s, peselW)
	if (10-sum%10)%10 != int(s[10]-'0') {
		return false
	}
	m, _ := strconv.Atoi(s[2:4])
	d, _ := strconv.Atoi(s[4:6])
	return m%20 >= 1 && m%20 <= 12 && d >= 1 && d <= 31
}

// Swedish personnummer: yymmdd, a three-digit serial, a Luhn digit over
// the ten; printed YYMMDD-NNNC or YYYYMMDD-NNNC.
func personnummer(r *rand.Rand) string {
	y := 1935 + r.IntN(85)
	body := fmt.Sprintf("%02d%02d%02d%s", y%100, 1+r.IntN(12), 1+r.IntN(28), digits(r, 3))
	n := luhnComplete(body)
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("%d%s-%s", y/100, n[:6], n[6:])
	case 1:
		return fmt.Sprintf("%d%s", y/100, n)
	default:
		return n[:6] + "-" + n[6:]
	}
}

func personnummerOK(s string) bool {
	if len(s) == 12 {
		s = s[2:]
	}
	if len(s) != 10 || !onlyDigits(s) || !luhnOK(s) {
		return false
	}
	m, _ := strconv.Atoi(s[2:4])
	d, _ := strconv.Atoi(s[4:6])
	return m >= 1 && m <= 12 && ((d >= 1 && d <= 31) || (d >= 61 && d <= 91))
}

// ABA routing number: the first two digits a Federal Reserve district
// (01-12, 21-32, 61-72, 80), the 3-7-1 weighted checksum.
var routingW = []int{3, 7, 1, 3, 7, 1, 3, 7, 1}

func routing(r *rand.Rand) string {
	pre := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 21, 22, 26, 31, 32, 61, 63, 67, 71, 80}
	s := fmt.Sprintf("%02d", pre[r.IntN(len(pre))]) + digits(r, 6)
	sum := weightedSum(s, routingW[:8])
	return s + strconv.Itoa((10-sum%10)%10)
}

func routingOK(s string) bool {
	if len(s) != 9 || !onlyDigits(s) {
		return false
	}
	sum := weightedSum(s, routingW)
	p, _ := strconv.Atoi(s[:2])
	return sum%10 == 0 && (p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p == 80)
}

// asciiFold drops the diacritics of the Latin letters the name lists use.
func asciiFold(s string) string {
	r := strings.NewReplacer("á", "a", "à", "a", "â", "a", "ä", "a", "ã", "a", "å", "a", "č", "c", "ç", "c", "ć", "c",
		"ď", "d", "é", "e", "è", "e", "ê", "e", "ë", "e", "ě", "e", "í", "i", "ì", "i", "î", "i", "ï", "i",
		"ň", "n", "ñ", "n", "ń", "n", "ó", "o", "ò", "o", "ô", "o", "ö", "o", "õ", "o", "ø", "o", "ř", "r",
		"š", "s", "ś", "s", "ť", "t", "ú", "u", "ù", "u", "û", "u", "ü", "u", "ů", "u", "ý", "y", "ž", "z",
		"ź", "z", "ż", "z", "ł", "l", "ß", "ss", "Á", "A", "É", "E", "Í", "I", "Ó", "O", "Ú", "U", "Č", "C",
		"Š", "S", "Ž", "Z", "Ř", "R", "Ö", "O", "Ü", "U", "Ä", "A", "Å", "A", "Ø", "O", "Ł", "L", "Ś", "S")
	return r.Replace(s)
}
