package classifier

// Numbers: payment cards, US social security numbers, phone numbers and
// medical record numbers all start as a run of digit groups, read once and
// then judged by each detector.

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
}

// parseRun reads the run that starts at t[i] (a digit, '+' or '(').
func parseRun(t []byte, i int) (r run) {
	r.start = i
	p := i
	if t[p] == '+' {
		r.plus = true
		p++
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
	if paren && p < len(t) && isDigit(t[p]) {
		return ')', p, true
	}
	return 0, p, false
}

// number judges the run at t[i] and returns the index of its last byte.
func (sc *scanner) number(t []byte, i int) int {
	r := parseRun(t, i)
	if r.n == 0 {
		return i
	}
	last, ok := r.endToken(t)
	if !ok || r.overflow {
		return last
	}
	if !sc.judgeCuts(t, &r) {
		sc.contextual(t, &r)
	}
	return last
}

// endToken checks that the run ends its token: "4111...abc",
// "123-45-6789-x" and "1.2.3-beta" are not numbers. When only its last
// group is glued to what follows (a card's expiry: "4111 1111 1111 1111
// 12/25"), the groups before it still are: the run drops that group. It
// returns the index of the token's last byte and whether the run is still
// a number.
func (r *run) endToken(t []byte) (int, bool) {
	last := r.end - 1
	if r.end >= len(t) {
		return last, true
	}
	c := t[r.end]
	if !isWordByte(c) && !((c == '-' || c == '.' || c == '/' || c == '_') && r.end+1 < len(t) && isWordByte(t[r.end+1])) {
		return last, true
	}
	if r.overflow || r.n < 2 || r.groups[r.n-1].sep != ' ' {
		return skipCompound(t, last), false
	}
	r.n--
	return skipCompound(t, last), true
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
			if sc.judge(t, r, a, b) {
				hit = true
			}
		}
	}
	return hit
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

// judge runs the detectors that need no context on groups [a, b).
func (sc *scanner) judge(t []byte, r *run, a, b int) bool {
	at := r.start
	hit := false
	sc.steps += r.nd
	if ssnShape(r, a, b) && ssnValid(r.span(a, b)) {
		sc.fire(USSSN, at)
		hit = true
	}
	if cardShape(r, a, b) && cardValid(r.span(a, b)) {
		sc.fire(PaymentCard, at)
		hit = true
	}
	if a == 0 && b == r.n && phoneShape(r, a, b) {
		sc.fire(Phone, at)
		hit = true
	}
	return hit
}

// contextual runs the detectors that need a word before the number: a bare
// social security or phone number, a medical record number. It runs on the
// runs no other detector took whose shape one of them could have, and
// reads the words before each once.
func (sc *scanner) contextual(t []byte, r *run) {
	if r.plus {
		return
	}
	var want cueKind
	if r.n == 1 && r.nd == 9 && ssnValid(r.span(0, 1)) {
		want |= cueSSN
	}
	if _, plain := r.oneSeparator(0, r.n, " -."); plain && r.n <= 2 && r.nd >= 7 && r.nd <= 15 {
		want |= cuePhone
	}
	if r.n <= 2 && r.nd >= 5 && r.nd <= 12 {
		want |= cueMRN
	}
	if want == 0 {
		return
	}
	window := cueWindow
	if want == cueMRN {
		window = mrnCueWindow // the record word is right before its number
	}
	switch k := sc.cuesIn(t, r.start-window, r.start, want); {
	case k&cueSSN != 0:
		sc.fire(USSSN, r.start)
	case k&cuePhone != 0:
		sc.fire(Phone, r.start)
	case k&cueMRN != 0:
		sc.fire(MedicalRecordNumber, r.start)
	}
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

// cardShape: 13 to 19 digits, no '+', as one group or in the groupings
// cards are printed in (fours, Amex 4-6-5, Diners 4-6-4), joined by spaces
// or dashes.
func cardShape(r *run, a, b int) bool {
	if r.plus || (a == 0 && r.plus) {
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
		return r.shape(a, b, 4, 4, 4, 4) // 4111.1111.1111.1111, never a version
	}
	if b-a == 1 || r.shape(a, b, 4, 6, 5) || r.shape(a, b, 4, 6, 4) {
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

// cardValid: a known issuer's prefix and length, and the Luhn checksum.
func cardValid(d []byte) bool {
	return issuerKnown(d) && luhn(d)
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

// issuers are the card networks' IIN ranges (inclusive, compared on the
// first len(lo) digits) with the lengths they issue.
var issuers = []struct {
	lo, hi     string
	minN, maxN int
}{
	{"4", "4", 13, 19},           // Visa (13, 16, 19)
	{"51", "55", 16, 16},         // Mastercard
	{"2221", "2720", 16, 16},     // Mastercard 2-series
	{"34", "34", 15, 15},         // American Express
	{"37", "37", 15, 15},         // American Express
	{"6011", "6011", 16, 19},     // Discover
	{"644", "649", 16, 19},       // Discover
	{"65", "65", 16, 19},         // Discover, RuPay
	{"622126", "622925", 16, 19}, // Discover co-branded UnionPay
	{"62", "62", 16, 19},         // UnionPay
	{"300", "305", 14, 19},       // Diners Club International
	{"3095", "3095", 14, 19},     // Diners Club
	{"36", "36", 14, 19},         // Diners Club
	{"38", "39", 16, 19},         // Diners Club
	{"3528", "3589", 16, 19},     // JCB
	{"2200", "2204", 16, 19},     // Mir
	{"5018", "5018", 13, 19},     // Maestro
	{"5020", "5020", 13, 19},     // Maestro
	{"5038", "5038", 13, 19},     // Maestro
	{"5893", "5893", 13, 19},     // Maestro
	{"6304", "6304", 13, 19},     // Maestro
	{"6759", "6759", 13, 19},     // Maestro UK
	{"6761", "6763", 13, 19},     // Maestro
	{"60", "60", 16, 16},         // RuPay
	{"81", "82", 16, 16},         // RuPay
	{"508", "508", 16, 16},       // RuPay
}

func issuerKnown(d []byte) bool {
	for _, is := range issuers {
		k := len(is.lo)
		if len(d) < k || len(d) < is.minN || len(d) > is.maxN {
			continue
		}
		p := string(d[:k])
		if p >= is.lo && p <= is.hi {
			return true
		}
	}
	return false
}
