package classifier

// Numbers: payment cards, SSNs, phone numbers, record and plan numbers and
// the national numbers all start as a run of digit groups, read once: the
// identifier an id word before it names is judged first (ids.go), then the
// detectors that need no word.

const (
	maxGroups    = 12
	maxRunDigits = 24
)

// group is one group of digits in a run.
type group struct {
	at    int  // the group's first digit in run.digits
	n     int  // its digit count
	sep   byte // the separator before it: 0 (none, first group), ' ', '-', '.', or ')' after a parenthesized group
	paren bool // written in parentheses: (555)
}

// run is a number as written: an optional '+', then digit groups joined by
// one separator each.
type run struct {
	start, end int // in the text; end is exclusive
	plus       bool
	groups     [maxGroups]group
	n          int
	digits     [maxRunDigits]byte
	nd         int
	overflow   bool // too many groups or digits for any detector
	notPhone   bool // another id word labels it (Serial number, Order, Room): not a phone, nor a spaced SSN
}

// parseRun reads the run that starts at t[i] (a digit, '+' or '(').
func parseRun(t []byte, i int) (r run) {
	r.start = i
	p := i
	switch {
	case t[p] == '+':
		r.plus = true
		p++
	case t[p] == '%' && p+3 < len(t) && t[p+1] == '2' && (t[p+2]|0x20) == 'b':
		r.plus = true // URL-encoded: From=%2B447700900155
		p += 3
	}
	var sep byte
	for p < len(t) {
		q, d, paren := groupAt(t, p)
		if d == q {
			break // not a group: the run ended before it
		}
		r.add(t[q:d], sep, paren)
		p = d
		if paren {
			p++ // ')'
		}
		r.end = p
		var more bool
		if sep, p, more = separatorAt(t, p, paren); !more {
			break
		}
	}
	return r
}

// groupAt reads the group of digits at t[p], in parentheses or not: its
// digits are t[q:d], none (d == q) when there is no group there. A
// parenthesized group has at most four digits and its ')'.
func groupAt(t []byte, p int) (q, d int, paren bool) {
	q = p
	if t[q] == '(' {
		paren = true
		q++
	}
	d = q
	for d < len(t) && isDigit(t[d]) {
		d++
	}
	if paren && (d-q > 4 || d >= len(t) || t[d] != ')') {
		return q, q, paren
	}
	return q, d, paren
}

// add appends a group of digits, or marks the run overflowed when it is
// past the bounds of any detector.
func (r *run) add(digits []byte, sep byte, paren bool) {
	if r.n >= maxGroups || r.nd+len(digits) > maxRunDigits {
		r.overflow = true
		return
	}
	r.groups[r.n] = group{at: r.nd, n: len(digits), sep: sep, paren: paren}
	r.n++
	r.nd += copy(r.digits[r.nd:], digits)
}

// separatorAt reads the separator after a group ending before t[p], taken
// only when a group follows it: ' ', '-' or '.', or ')' for digits right
// after a parenthesized group. It returns the separator, where the next
// group starts, and whether there is one.
func separatorAt(t []byte, p int, paren bool) (byte, int, bool) {
	if p < len(t) && (t[p] == ' ' || t[p] == '-' || t[p] == '.') && p+1 < len(t) && (isDigit(t[p+1]) || t[p+1] == '(') {
		return t[p], p + 1, true
	}
	if p+1 < len(t) && t[p] == '+' && isDigit(t[p+1]) {
		return ' ', p + 1, true // a URL-encoded space: 07700+900155
	}
	if paren && p < len(t) && isDigit(t[p]) {
		return ')', p, true
	}
	return 0, p, false
}

// number judges the run at t[i] and returns the index of its last byte.
// A run an id word leads to is judged as that identifier first (an NHS
// number printed 3-3-4 is nhs-number, not a phone number); then the
// detectors that need no id word judge it.
func (sc *scanner) number(t []byte, i int) int {
	r := parseRun(t, i)
	if r.n == 0 {
		return i
	}
	last, ok := r.endToken(t)
	if !ok {
		sc.token(t, i, last+1) // 12345678Z, 1EG4-TE5-MK73
		return last
	}
	if r.overflow || (dateLike(&r) && r.groups[1].sep != ' ') || placeholderDigits(r.span(0, r.n)) {
		return last // 2026-12-05, 05.12.2026, 000-000-0000, 123-456-7890: no identifier's digits
	}
	if exampleAfter(t, r.end) {
		r.notPhone = true // +15551234567 style
	}
	if sc.spacedNINO(t, &r) || sc.hl7Typed(t, &r) || sc.micrRouting(t, &r) {
		return last
	}
	if e := sc.spacedNIR(t, i); e > 0 {
		return e - 1
	}
	if afterAlnumGroup(t, i) {
		r.notPhone = true // the rest of an IBAN-like string: SI56 A633 0001 2039 086
	}
	if sc.cued(t, &r) {
		return last
	}
	if !r.notPhone && phoneLike(&r) && r.end < len(t) && phoneLabel(t, skipSpaces(t, r.end+boolInt(t[r.end] == '-'))) {
		sc.fire(Phone, r.start) // 089 72 63 41 office
		return last
	}
	sc.judgeCuts(t, &r)
	return last
}

// hl7Typed judges a number in an HL7 v2 identifier field (CX: the id,
// then ^^^ and the assigning authority, ^ and the identifier type code:
// 9508751991^^^NHS^NH, 4411^^^HOSP^MR): the type code names it.
func (sc *scanner) hl7Typed(t []byte, r *run) bool {
	p := r.end
	if p+4 >= len(t) || t[p] != '^' || t[p+1] != '^' || t[p+2] != '^' {
		return false
	}
	p += 3
	for q := p; q < len(t) && q-p <= 16; q++ {
		if t[q] != '^' {
			continue
		}
		if q+2 >= len(t) || (q+3 < len(t) && isAlnum(t[q+3])) {
			return false
		}
		d := r.span(0, r.n)
		switch string(t[q+1 : q+3]) {
		case "NH":
			if nhsValid(d) {
				sc.fire(NHSNumber, r.start)
				return true
			}
		case "MR", "PI", "PN", "PT":
			sc.fire(MedicalRecordNumber, r.start)
			return true
		case "SS":
			if ssnValid(d) {
				sc.fire(USSSN, r.start)
				return true
			}
		case "MB", "MC", "MA":
			sc.fire(HealthPlanID, r.start)
			return true
		}
		return false
	}
	return false
}

// micrRouting judges a number between the transit symbols of a cheque's
// MICR line (⑆084250850⑆): a routing number when its check passes.
func (sc *scanner) micrRouting(t []byte, r *run) bool {
	const transit = "\u2446"
	s, e := r.start, r.end
	if r.nd != 9 || s < 3 || e+3 > len(t) || string(t[s-3:s]) != transit || string(t[e:e+3]) != transit || !abaValid(r.span(0, r.n)) {
		return false
	}
	sc.fire(USBankRouting, s)
	return true
}

// placeholderDigits reports whether a number of seven digits or more is a
// placeholder: one digit repeated (000-000-0000) or counting up
// (123-456-7890).
func placeholderDigits(d []byte) bool {
	if len(d) < 7 {
		return false
	}
	same, up := true, true
	for k := 1; k < len(d); k++ {
		same = same && d[k] == d[0]
		up = up && (d[k] == d[k-1]+1 || (d[k-1] == '9' && d[k] == '0'))
	}
	return same || up
}

// exampleAfter reports whether the word after a number says it shows a
// format: "(+15551234567 style)", "555-0100 format".
func exampleAfter(t []byte, p int) bool {
	p = skipSpaces(t, p)
	for _, w := range [...]string{"style", "format", "pattern", "placeholder", "example"} {
		if hasPrefixFold(t[p:], w) {
			return true
		}
	}
	return false
}

func skipSpaces(t []byte, p int) int {
	for s := p; p < len(t) && p-s < 4 && (t[p] == ' ' || t[p] == '\t'); p++ {
	}
	return p
}

// afterAlnumGroup reports whether the run at t[i] follows a group of four
// letters and digits and a space: the groups of one alphanumeric string.
func afterAlnumGroup(t []byte, i int) bool {
	if i < 5 || t[i-1] != ' ' || (i > 5 && isWordByte(t[i-6])) {
		return false
	}
	letters, digits := 0, 0
	for _, c := range t[i-5 : i-1] {
		switch {
		case isDigit(c):
			digits++
		case isLetter(c):
			letters++
		}
	}
	return letters > 0 && digits > 0 && letters+digits == 4
}

// endToken checks that the run ends its token: "4111...abc",
// "123-45-6789-x" and "1.2.3-beta" are not numbers. When only its last
// group is glued to what follows (a card's expiry: "4111 1111 1111 1111
// 12/25"), the groups before it still are: the run drops that group. It
// returns the index of the token's last byte and whether the run is still
// a number.
func (r *run) endToken(t []byte) (int, bool) {
	last := r.end - 1
	if r.end >= len(t) || tokenEndsAt(t, r.end) {
		return last, true // a space, punctuation, or a symbol of U+0080-U+00BF or U+2000-U+2FFF (⑆, —, °)
	}
	c := t[r.end]
	if c == '-' && phoneLabel(t, r.end+1) {
		return last, true // 07700 900806-Office
	}
	if c == 'x' && (r.n >= 2 || r.nd >= 7) {
		if e, ok := extensionEnd(t, r.end); ok {
			return e - 1, true
		}
	}
	if r.overflow || r.n < 2 || r.groups[r.n-1].sep != ' ' {
		return skipCompound(t, last), false
	}
	r.n--
	return skipCompound(t, last), true
}

// tokenEndsAt reports whether the byte at t[e] ends a token: a space,
// punctuation or a symbol, not a separator that joins a word after it.
func tokenEndsAt(t []byte, e int) bool {
	c := t[e]
	return (!isWordByte(c) || c == 0xE2 || c == 0xC2) && !((c == '-' || c == '.' || c == '/' || c == '_') && e+1 < len(t) && isWordByte(t[e+1]))
}

// extensionEnd returns the end of a phone extension ('x' and up to six
// digits, at t[x]) that ends its token: (978)645-9740x11144.
func extensionEnd(t []byte, x int) (int, bool) {
	if x+1 >= len(t) || !isDigit(t[x+1]) {
		return 0, false
	}
	e := x + 1
	for e < len(t) && e-x <= 6 && isDigit(t[e]) {
		e++
	}
	return e, e == len(t) || !isWordByte(t[e])
}

// phoneLabel reports whether the word at t[p] labels a phone line
// (Office, Fax, Mobile...), as in "07700 900806-Office".
func phoneLabel(t []byte, p int) bool {
	e := p
	for e < len(t) && e-p < 8 && isLetter(t[e]) {
		e++
	}
	if e < len(t) && isWordByte(t[e]) {
		return false
	}
	var w [8]byte
	for k := p; k < e; k++ {
		w[k-p] = lower(t[k])
	}
	switch string(w[:e-p]) {
	case "office", "fax", "mobile", "cell", "home", "work", "phone", "tel", "direct", "main":
		return true
	}
	return false
}

// judgeCuts judges the whole run, then the runs inside it cut at a space
// ("ref 12 4111 1111 1111 1111", "4111 1111 1111 1111 123"), and reports
// whether a detector fired on any.
func (sc *scanner) judgeCuts(t []byte, r *run) bool {
	hit := false
	for a := 0; a < r.n; a++ {
		if a > 0 && r.groups[a].sep != ' ' {
			continue
		}
		for b := r.n; b > a; b-- {
			if b < r.n && r.groups[b].sep != ' ' {
				continue
			}
			if r.continues(a, b) || !r.cutAllowed(a, b) {
				continue
			}
			if sc.judge(t, r, a, b) {
				hit = true
			}
		}
	}
	return hit
}

// continues reports whether the run goes on past groups [a, b) in their
// own grouping: a group of four beside a cut made of fours is the same
// longer number ("4111 1111 1111 1111 1111" is a serial, not a card with
// a group after it), and so is a last group of one or two digits, while a
// group of three is something else (a CVV) and so is a short group before
// (a reference number).
func (r *run) continues(a, b int) bool {
	if a == 0 && b == r.n {
		return false
	}
	fours := true
	for k := a; k < b-1; k++ {
		fours = fours && r.groups[k].n == 4
	}
	if fours && ((b < r.n && r.groups[b].n == 4 && r.groups[b-1].n == 4) || (a > 0 && r.groups[a-1].n == 4)) {
		return true
	}
	// A last group of one or two digits is the longer number's own short
	// last group, as printed in fours: "4074 1852 9630 7418 59".
	return b == r.n-1 && r.groups[b].n <= 2
}

// cutAllowed reports whether groups [a, b) may be judged apart from the
// rest of the run: what is cut off is one short group before (a reference:
// "ref 12 4111 …") and a CVV's three or four digits after, not the head of
// a longer number ("MPAN 00 801 980 4954375571118").
func (r *run) cutAllowed(a, b int) bool {
	if a == 0 && b == r.n {
		return true
	}
	return (a == 0 || (a == 1 && r.groups[0].n <= 3)) && (b == r.n || (b == r.n-1 && r.groups[b].n >= 3 && r.groups[b].n <= 4))
}

// span is the digits of groups [a, b) of a run.
func (r *run) span(a, b int) []byte {
	return r.digits[r.groups[a].at : r.groups[b-1].at+r.groups[b-1].n]
}

// shape reports whether groups [a, b) have exactly the given lengths.
func (r *run) shape(a, b int, lens ...int) bool {
	if b-a != len(lens) {
		return false
	}
	for k, n := range lens {
		if r.groups[a+k].n != n {
			return false
		}
	}
	return true
}

// oneSeparator returns the separator joining groups [a, b) when they all
// use the same one of seps (0 for a single group), and whether they do. A
// parenthesized group is never allowed here.
func (r *run) oneSeparator(a, b int, seps string) (byte, bool) {
	var sep byte
	for k := a; k < b; k++ {
		g := r.groups[k]
		if g.paren {
			return 0, false
		}
		if k == a {
			continue
		}
		if sep == 0 {
			sep = g.sep
		}
		if g.sep != sep || !contains(seps, sep) {
			return 0, false
		}
	}
	return sep, true
}

func contains(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}

// judge runs the detectors that need no context on groups [a, b), in
// this order: an SSN, a payment card, the identifiers the whole run is
// (CPF, NIR, routing number), and a phone when nothing else fired.
func (sc *scanner) judge(t []byte, r *run, a, b int) bool {
	at := r.start
	hit := false
	sc.steps += r.nd
	if ssnShape(r, a, b) && ssnValid(r.span(a, b)) && !(r.notPhone && r.groups[a+1].sep != '-') {
		sc.fire(USSSN, at)
		hit = true
	}
	if cardShape(r, a, b) && !(r.notPhone && r.n == 1) && sc.judgeCard(t, r, a, b) {
		hit = true
	}
	if a == 0 && b == r.n && sc.judgeWhole(t, r) {
		hit = true
	}
	if !hit && !r.notPhone && a == 0 && b == r.n && phoneShape(r, a, b) {
		sc.fire(Phone, at)
		hit = true
	}
	return hit
}

// judgeCard judges a run shaped as a card by its issuer: a card, unless a
// processor's test number in code or docs; a number only some issuers'
// cards share with other numbers, after a card's word.
func (sc *scanner) judgeCard(t []byte, r *run, a, b int) bool {
	switch cardIssuer(r.span(a, b)) {
	case issuerCard:
		if testPANs[string(r.span(a, b))] && sc.cuesIn(t, r.start-testWindow, r.end+testWindow, cueTestContext) != 0 {
			return false // a processor's test number in code or docs
		}
		sc.fire(PaymentCard, r.start)
		return true
	case issuerCardIfCued:
		if sc.cuesIn(t, clauseStart(t, r.start, cueWindow), r.start, cueCard) != 0 {
			sc.fire(PaymentCard, r.start)
			return true
		}
	}
	return false
}

// judgeWhole judges the whole run as the identifiers with a format of
// their own: a CPF, a NIR in its groups, a routing number beside an
// account number (121000358, account 4941151225).
func (sc *scanner) judgeWhole(t []byte, r *run) bool {
	hit := false
	if cpfShape(r) && cpfValid(r.span(0, r.n)) {
		sc.fire(BRCPF, r.start)
		hit = true
	}
	if r.shape(0, r.n, 1, 2, 2, 2, 3, 3, 2) && r.joined(0, r.n) && nirValid(r.span(0, r.n)) {
		sc.fire(FRNIR, r.start)
		hit = true
	}
	if (r.n == 1 || r.shape(0, r.n, 4, 4, 1)) && abaValid(r.span(0, r.n)) && sc.cuesIn(t, r.end, r.end+16, cueAccount) != 0 {
		sc.fire(USBankRouting, r.start)
		hit = true
	}
	return hit
}

// ssnShape: 123-45-6789, 123 45 6789 or 123.45.6789. The spaced form needs no context
// word: recall first (docs/classifier.md counts the cost, a spaced 3-2-4
// number in a benign text).
func ssnShape(r *run, a, b int) bool {
	_, ok := r.oneSeparator(a, b, " -.")
	return ok && !r.plus && r.shape(a, b, 3, 2, 4)
}

// ssnValid refuses the numbers the SSA never issues: area 000, 666 and
// 900-999, group 00, serial 0000.
func ssnValid(d []byte) bool {
	if len(d) != 9 {
		return false
	}
	area, grp, serial := string(d[:3]), string(d[3:5]), string(d[5:])
	return area != "000" && area != "666" && d[0] != '9' && grp != "00" && serial != "0000"
}

// cardShape: 13 to 19 digits, no '+', as one group or in a grouping
// cards are printed in, joined by spaces or dashes: fours with a shorter
// last group (the way any length is printed), Visa's 13 as 4-3-3-3, Amex's
// 15 as 4-6-5, Diners' 14 as 4-6-4; dots only as 4-4-4-4 (never a
// version). The issuer's lengths are checked by cardIssuer.
func cardShape(r *run, a, b int) bool {
	if r.plus {
		return false
	}
	n := len(r.span(a, b))
	if n < 13 || n > 19 {
		return false
	}
	sep, ok := r.oneSeparator(a, b, " -.")
	if !ok {
		return false
	}
	if sep == '.' {
		return r.shape(a, b, 4, 4, 4, 4)
	}
	switch {
	case b-a == 1:
		return true
	case n == 13 && r.shape(a, b, 4, 3, 3, 3), n == 15 && r.shape(a, b, 4, 6, 5), n == 14 && r.shape(a, b, 4, 6, 4):
		return true
	}
	for k := a; k < b-1; k++ {
		if r.groups[k].n != 4 {
			return false
		}
	}
	return true
}

// phoneShape: E.164 (+ and 8 to 15 digits), a NANP number (555-123-4567,
// (555) 123-4567, 1 555 123 4567, area and exchange codes from 2) or a
// national number with a trunk 0 in groups (020 7946 0958, 06 12 34 56 78).
func phoneShape(r *run, a, b int) bool {
	d := r.span(a, b)
	switch {
	case r.plus:
		return a == 0 && len(d) >= 8 && len(d) <= 15 && d[0] != '0'
	case r.shape(a, b, 3, 3, 4):
		return nanpPhone(r, a, b)
	case r.shape(a, b, 1, 3, 3, 4) && d[0] == '1':
		if r.groups[a+1].paren {
			return r.parenOnly(a, b, a+1) && r.nanp(a+1)
		}
		return r.joined(a, b) && r.nanp(a+1)
	case d[0] == '0' && len(d) >= 10 && len(d) <= 11 && b-a >= 2:
		return trunkPhone(r, a, b)
	}
	return false
}

// standalonePhone reports whether the whole run has a phone number's
// shape, which needs no phone word.
func (r *run) standalonePhone() bool { return phoneShape(r, 0, r.n) }

// nanpPhone judges groups [a, b) of 3-3-4 digits: (555) 123-4567 or
// 555-123-4567.
func nanpPhone(r *run, a, b int) bool {
	if r.groups[a].paren {
		sep := r.groups[a+2].sep
		return r.parenOnly(a, b, a) && r.nanp(a) && (sep == '-' || sep == ' ' || sep == '.')
	}
	return b-a == 3 && r.joined(a, b) && r.nanp(a)
}

// trunkPhone judges groups [a, b) of a number with a trunk 0: groups of
// two digits or more, the first perhaps in parentheses, not an SSN's
// 3-2-4.
func trunkPhone(r *run, a, b int) bool {
	for k := a; k < b; k++ {
		if r.groups[k].n < 2 {
			return false
		}
	}
	if r.groups[a].paren {
		return r.parenOnly(a, b, a) && r.joined(a+1, b)
	}
	return r.joined(a, b) && !r.shape(a, b, 3, 2, 4)
}

// parenOnly reports whether, of groups [a, b), group k alone is in
// parentheses (a phone number's area code).
func (r *run) parenOnly(a, b, k int) bool {
	for j := a; j < b; j++ {
		if r.groups[j].paren != (j == k) {
			return false
		}
	}
	return true
}

// joined reports whether groups [from, b) are joined by one kind of
// separator, none in parentheses.
func (r *run) joined(from, b int) bool {
	_, ok := r.oneSeparator(from, b, " -.")
	return ok
}

// nanp reports whether the area code (group area) and the exchange code
// after it start from 2, as NANP numbers do.
func (r *run) nanp(area int) bool {
	ac, ex := r.groups[area], r.groups[area+1]
	return r.digits[ac.at] >= '2' && r.digits[ex.at] >= '2'
}

// The verdicts of cardIssuer.
const (
	issuerNone       = iota
	issuerCard       // a known issuer's range and length, Luhn-valid
	issuerCardIfCued // the same, in a range that serial numbers collide with
)

// cardIssuer judges a card number's digits: a known issuer's prefix at
// one of its lengths, and the Luhn checksum.
func cardIssuer(d []byte) int {
	if !luhn(d) {
		return issuerNone
	}
	for _, is := range issuers {
		k := len(is.lo)
		if len(d) < k || is.lengths&(1<<len(d)) == 0 {
			continue
		}
		p := string(d[:k])
		if p >= is.lo && p <= is.hi {
			if is.cue {
				return issuerCardIfCued
			}
			return issuerCard
		}
	}
	return issuerNone
}

func luhn(d []byte) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// testWindow is how far around a published test card number the words of
// code and docs (test, stripe, sandbox, assert...) are looked for.
const testWindow = 256

// testPANs are the card numbers processors publish for tests (Stripe,
// Braintree, Adyen, PayPal, Checkout.com docs): no account stands behind
// them. In code or docs about tests they are examples; in prose without
// such words they are still read as cards (a test fixture written as a
// customer would).
var testPANs = map[string]bool{
	"4242424242424242": true, "4000056655665556": true, "5555555555554444": true, "2223003122003222": true,
	"5200828282828210": true, "5105105105105100": true, "378282246310005": true, "371449635398431": true,
	"6011111111111117": true, "6011000990139424": true, "6011981111111113": true, "3056930009020004": true,
	"36227206271667": true, "3566002020360505": true, "6200000000000005": true, "4000000000000002": true,
	"4000000000009995": true, "4000002500003155": true, "4000000000000077": true, "4000000000000341": true,
	"4000000000003220": true, "4000000000000069": true, "4000000000000127": true, "4000000000000119": true,
	"4111111111111111": true, "4012888888881881": true, "4222222222222": true, "5431111111111111": true,
	"378734493671000": true, "30569309025904": true, "38520000023237": true, "6331101999990016": true,
	"4005519200000004": true, "4009348888881881": true, "4012000033330026": true, "4012000077777777": true,
	"4217651111111119": true, "4500600000000061": true, "5425233430109903": true, "2222420000001113": true,
	"4000000760000002": true, "4000001240000000": true, "4000004840008001": true, "4000000000000010": true,
	"4000000000000028": true, "4000000000000036": true, "4000000000000101": true, "4000000000000259": true,
	"4000000000001976": true, "4000000000005126": true, "4000000000000093": true, "4000000000000051": true,
	"4000000000003055": true, "4000000000003063": true, "4000002760003184": true, "4000008260003178": true,
	"4000000000000044": true, "5500000000000004": true, "5454545454545454": true, "4444333322221111": true,
	"4917610000000000": true, "4035501000000008": true, "3714496353984312": true,
}

// lengths is a set of card lengths, as bits.
func lengths(ns ...int) (m uint32) {
	for _, n := range ns {
		m |= 1 << n
	}
	return m
}

// issuers are the card networks' IIN ranges (inclusive, compared on the
// first len(lo) digits) with the lengths they issue. The ranges marked cue
// are RuPay's own (60, 81-82, 508) and UATP's (1, 15 digits): their
// Luhn-valid numbers are
// as common among voucher, container and device serials as among cards, so
// they are a card only after a card word in the clause (card, debit,
// RuPay, payment...).
var issuers = []struct {
	lo, hi  string
	lengths uint32
	cue     bool
}{
	{"4", "4", lengths(13, 16, 19), false},                       // Visa
	{"51", "55", lengths(16), false},                             // Mastercard
	{"2221", "2720", lengths(16), false},                         // Mastercard 2-series
	{"34", "34", lengths(15), false},                             // American Express
	{"37", "37", lengths(15), false},                             // American Express
	{"6011", "6011", lengths(16, 17, 18, 19), false},             // Discover
	{"644", "649", lengths(16, 17, 18, 19), false},               // Discover
	{"65", "65", lengths(16, 17, 18, 19), false},                 // Discover, RuPay co-branded
	{"62", "62", lengths(16, 17, 18, 19), false},                 // UnionPay (and Discover's co-branded 622126-622925)
	{"300", "305", lengths(14, 15, 16, 17, 18, 19), false},       // Diners Club International
	{"3095", "3095", lengths(14, 15, 16, 17, 18, 19), false},     // Diners Club
	{"36", "36", lengths(14, 15, 16, 17, 18, 19), false},         // Diners Club
	{"38", "39", lengths(16, 17, 18, 19), false},                 // Diners Club
	{"3528", "3589", lengths(16, 17, 18, 19), false},             // JCB
	{"2200", "2204", lengths(16, 17, 18, 19), false},             // Mir
	{"5018", "5018", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"5020", "5020", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"5038", "5038", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"5893", "5893", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"6304", "6304", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"6759", "6759", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro UK
	{"6761", "6763", lengths(13, 14, 15, 16, 17, 18, 19), false}, // Maestro
	{"5019", "5019", lengths(16), false},                         // Dankort
	{"1", "1", lengths(15), true},                                // UATP (15-digit serials start with 1 too)
	{"60", "60", lengths(16), true},                              // RuPay
	{"81", "82", lengths(16), true},                              // RuPay
	{"508", "508", lengths(16), true},                            // RuPay
}
