package classifier

// National, health-plan and bank identifiers. Those with a strong format
// (a check letter or character over many positions, a fixed mix of letters
// and digits) stand alone: a Medicare MBI, an Italian codice fiscale, a
// Spanish DNI/NIE, a UK National Insurance number, a French NIR printed in
// its groups, a Brazilian CPF printed 123.456.789-09. Those whose check
// passes about one number in ten or a hundred are that identifier only
// after their id word (cueBefore): "NHS number 943 476 5919", "BSN
// 111222333", "routing 011000015 ... account".

import "math/bits"

// cuedOrder is the order the identifiers an id word names are judged in:
// where two lists share an id word ("medicare": an Australian card number
// or a US plan's), the stronger check comes first.
var cuedOrder = [...]cueKind{cueNHS, cueAUMedicare, cueNIR, cueDETax, cueBSN, cueAadhaar, cueCPF, cueSIN, cueTFN, cuePESEL,
	cuePNR, cueRouting, cueSSN, cueHealthPlan, cueMRN, cuePhone}

// cuedID judges the run's digits d as the identifier of the list k names
// and returns its detector, or 0: most are one of the groupings they are
// printed in (cuedPrints) with valid check digits (checkDigits); the rest
// are judged by rules of their own. (Switches, not a table of funcs: the
// run and the digits stay on the stack.)
func (sc *scanner) cuedID(k cueKind, t []byte, r *run, d []byte) Detector {
	switch k {
	case cueCPF:
		if (r.n == 1 || cpfShape(r)) && cpfValid(d) {
			return BRCPF
		}
		return 0
	case cueRouting:
		// A routing number names a bank; beside an account number it
		// names a person's account.
		if r.n == 1 && abaValid(d) && sc.cuesIn(t, r.start-2*cueWindow, r.end+2*cueWindow, cueAccount) != 0 {
			return USBankRouting
		}
		return 0
	case cueHealthPlan:
		if r.n <= 3 && len(d) >= 5 && len(d) <= 20 {
			return HealthPlanID
		}
		return 0
	case cueMRN:
		if r.n <= 4 && len(d) >= 5 && len(d) <= 12 {
			return MedicalRecordNumber
		}
		return 0
	case cuePhone:
		if phoneLike(r) {
			return Phone
		}
		return 0
	}
	p := &cuedPrints[bits.TrailingZeros32(uint32(k))]
	if p.detector != 0 && printedAs(r, p.shapes) && checkDigits(k, d) {
		return p.detector
	}
	return 0
}

// cuedPrint is how the identifier of an id word's list is printed: its
// detector, and the groupings it is printed in besides one run of digits.
type cuedPrint struct {
	detector Detector
	shapes   [][]int
}

// cuedPrints are the identifiers of cuedID's lists with a check of their
// own, by the list's bit.
var cuedPrints = func() (p [numCueKinds]cuedPrint) {
	set := func(k cueKind, d Detector, shapes ...[]int) {
		p[bits.TrailingZeros32(uint32(k))] = cuedPrint{detector: d, shapes: shapes}
	}
	set(cueNHS, NHSNumber, []int{3, 3, 4})
	set(cueAUMedicare, AUMedicare, []int{4, 5, 1}, []int{4, 5, 1, 1}, []int{4, 5, 2})
	set(cueNIR, FRNIR, []int{1, 2, 2, 2, 3, 3, 2}, []int{13, 2})
	set(cueDETax, DETaxID, []int{2, 3, 3, 3}, []int{3, 4, 4}, []int{10, 1})
	set(cueBSN, NLBSN, []int{4, 2, 3}, []int{3, 3, 3})
	set(cueAadhaar, INAadhaar, []int{4, 4, 4})
	set(cueSIN, CASIN, []int{3, 3, 3})
	set(cueTFN, AUTFN, []int{3, 3, 3}, []int{3, 3, 2})
	set(cuePESEL, PLPESEL)
	set(cuePNR, SEPersonnummer, []int{6, 4}, []int{8, 4})
	set(cueSSN, USSSN)
	return p
}()

// printedAs reports whether the run is one run of digits or grouped as
// one of shapes.
func printedAs(r *run, shapes [][]int) bool {
	if r.n == 1 {
		return true
	}
	for _, s := range shapes {
		if r.shape(0, r.n, s...) {
			return true
		}
	}
	return false
}

// checkDigits reports whether d passes the check of the identifier of the
// list k names.
func checkDigits(k cueKind, d []byte) bool {
	switch k {
	case cueNHS:
		return nhsValid(d)
	case cueAUMedicare:
		return auMedicareValid(d)
	case cueNIR:
		return nirValid(d)
	case cueDETax:
		return deTaxIDValid(d)
	case cueBSN:
		return bsnValid(d)
	case cueAadhaar:
		return aadhaarValid(d)
	case cueSIN:
		return sinValid(d)
	case cueTFN:
		return tfnValid(d)
	case cuePESEL:
		return peselValid(d)
	case cuePNR:
		return personnummerValid(d)
	case cueSSN:
		return ssnValid(d)
	}
	return false
}

// cueKinds are the lists of id words that could name a run of this size:
// the id words looked for before it.
func (r *run) cueKinds() cueKind {
	if r.plus {
		return 0
	}
	var k cueKind
	switch r.nd {
	case 8:
		k |= cueTFN
	case 9:
		k |= cueBSN | cueSIN | cueTFN | cueRouting | cueSSN
	case 10:
		k |= cueNHS | cueAUMedicare | cuePNR
	case 11:
		k |= cueDETax | cueCPF | cuePESEL | cueAUMedicare
	case 12:
		k |= cueAadhaar | cuePNR
	case 15:
		k |= cueNIR
	}
	if r.n <= 3 && r.nd >= 5 && r.nd <= 20 {
		k |= cueHealthPlan
	}
	if r.n <= 4 && r.nd >= 5 && r.nd <= 12 {
		k |= cueMRN // 5512093, 717-774-088
	}
	if phoneLike(r) {
		k |= cuePhone
	}
	return k
}

// cued judges a run an id word leads to, as the identifier it names, and
// reports whether one fired.
func (sc *scanner) cued(t []byte, r *run) bool {
	want := r.cueKinds()
	if r.standalonePhone() || ssnShape(r, 0, r.n) || (r.n == 1 && r.nd >= 13) {
		want |= cueOtherID // Serial number 335-569-9492, trace_id=4157327747296871334
	}
	if want == 0 {
		return false
	}
	k := sc.cueBefore(t, r.start, want)
	if k == 0 && want&(cueMRN|cueHealthPlan) != 0 {
		// A record or member number's own letter prefix, apart: SUC 233889992.
		if p := capsPrefix(t, r.start); p >= 0 {
			k = sc.cueBefore(t, p, want&(cueMRN|cueHealthPlan))
		}
	}
	if k&cueOtherID != 0 {
		r.notPhone = true // Serial number 335-569-9492
	}
	if k&^cueOtherID == 0 {
		return false
	}
	d := r.span(0, r.n)
	for _, c := range cuedOrder {
		if k&c == 0 {
			continue
		}
		if det := sc.cuedID(c, t, r, d); det != 0 {
			sc.fire(det, r.start)
			return true
		}
	}
	return false
}

// phoneLike: a run a phone word may lead to, in any country's printing
// (555-123-4567, 1-555-123-1234, 020 7946 0958, 06 12 34 56 78, 030
// 90182012, 912 345 678, (11) 98765-4321, 98765 43210, 0412 345 678): 7
// to 15 digits in at most six groups, at most one of one digit, the last
// of two or more; not a date (2026-12-05, 05.12.2026).
func phoneLike(r *run) bool {
	if r.nd < 7 || r.nd > 15 || r.n > 6 || dateLike(r) {
		return false
	}
	ones := 0
	for k := range r.n {
		if r.groups[k].n == 1 {
			ones++
		}
	}
	return ones <= 1 && r.groups[r.n-1].n >= 2
}

// dateLike: three groups of a day, a month and a four-digit year.
func dateLike(r *run) bool {
	if r.n != 3 || r.nd > 8 {
		return false
	}
	g := r.groups
	return (g[0].n == 4 && g[1].n <= 2 && g[2].n <= 2) || (g[2].n == 4 && g[0].n <= 2 && g[1].n <= 2)
}

// cpfShape: a CPF as printed, 123.456.789-09.
func cpfShape(r *run) bool {
	return r.shape(0, r.n, 3, 3, 3, 2) && r.groups[1].sep == '.' && r.groups[2].sep == '.' && r.groups[3].sep == '-'
}

// capsPrefix returns where a word of two to four capitals and a space
// right before t[s] starts (the prefix of SUC 233889992), or -1.
func capsPrefix(t []byte, s int) int {
	if s < 3 || t[s-1] != ' ' {
		return -1
	}
	p := s - 1
	for p > 0 && s-1-p < 5 && isUpperASCII(t[p-1]) {
		p--
	}
	if n := s - 1 - p; n < 2 || n > 4 || (p > 0 && isWordByte(t[p-1])) {
		return -1
	}
	return p
}

// spacedNINO judges a run of three pairs of digits between a National
// Insurance number's prefix and suffix letters (AB 12 34 56 C) and
// reports whether it is one.
func (sc *scanner) spacedNINO(t []byte, r *run) bool {
	if !(r.shape(0, r.n, 2, 2, 2) || r.shape(0, r.n, 6)) || r.start < 3 || r.end+2 > len(t) {
		return false
	}
	s, e := r.start-3, r.end+2
	if t[s+2] != ' ' || t[r.end] != ' ' || (s > 0 && isWordByte(t[s-1])) || (e < len(t) && isWordByte(t[e])) {
		return false
	}
	var id [9]byte
	id[0], id[1], id[8] = upper(t[s]), upper(t[s+1]), upper(t[r.end+1])
	copy(id[2:8], r.span(0, r.n))
	if ninoValid(id[:]) {
		sc.fire(UKNINO, s)
		return true
	}
	return false
}

// spacedNIR judges a French NIR printed in its groups with a Corsican
// department (1 21 10 2B 152 412 25), which the digit runs break at the
// letter, and returns the index after it, or 0.
func (sc *scanner) spacedNIR(t []byte, i int) int {
	if i+21 > len(t) || t[i+1] != ' ' || t[i+8] != '2' || (t[i+9] != 'A' && t[i+9] != 'B') {
		return 0
	}
	var id [15]byte
	n, p := 0, i
	for _, size := range [...]int{1, 2, 2, 2, 3, 3, 2} {
		if n > 0 {
			if t[p] != ' ' {
				return 0
			}
			p++
		}
		for range size {
			if p >= len(t) || !isAlnum(t[p]) {
				return 0
			}
			id[n] = t[p]
			n++
			p++
		}
	}
	if (p < len(t) && isWordByte(t[p])) || !nirValid(id[:]) {
		return 0
	}
	sc.fire(FRNIR, i)
	return p
}

// token judges a compound token t[s:e] that mixes letters and digits or
// joins digits with letters: the identifiers with a strong format stand
// alone; a record or member number with letters (PT-884213,
// BCX884512907) needs its id word before it, or as its own prefix
// (MRN-12345, MR-00012345).
func (sc *scanner) token(t []byte, s, e int) {
	// Read here, not in a function of its own: a text's every compound
	// token comes this way.
	var buf [20]byte
	n, digits, letters, seps, firstDigit := 0, 0, 0, 0, -1
	for p := s; p < e; p++ {
		c := t[p]
		switch {
		case isDigit(c):
			if firstDigit < 0 {
				firstDigit = p
			}
			digits++
		case isLetter(c):
			letters++
		case c == '-' || c == '.' || c == '/' || c == '_':
			seps++
			continue
		default:
			return // a multibyte character: a word, not an id
		}
		if n == len(buf) {
			return
		}
		buf[n] = upper(c)
		n++
	}
	sc.steps += e - s
	id := buf[:n]
	if n == 7 || n == 9 || n == 11 || n == 15 || n == 16 {
		sc.strongToken(t, s, e, tokenShape{n: n, digits: digits, letters: letters, seps: seps}, id)
	}
	if digits < 5 || letters == 0 {
		return
	}
	switch k := sc.tokenCue(t, s, firstDigit); {
	case k&cueHealthPlan != 0:
		sc.fire(HealthPlanID, s)
	case k&cueMRN != 0 && n <= 14:
		sc.fire(MedicalRecordNumber, s)
	}
}

// tokenShape is what a compound token is made of: its letters and digits
// (n), and the separators between them.
type tokenShape struct {
	n, digits, letters, seps int
}

// strongToken fires the identifiers with a strong format the token t[s:e]
// (id, its letters and digits: 7, 9, 11, 15 or 16 of them) is: an MBI, a
// codice fiscale, a DNI/NIE, a National Insurance number, a Corsican NIR.
func (sc *scanner) strongToken(t []byte, s, e int, tk tokenShape, id []byte) {
	n, seps := tk.n, tk.seps
	switch {
	case n == 11 && (seps == 0 || (seps == 2 && e-s == 13 && t[s+4] == '-' && t[s+8] == '-')) && mbiValid(id):
		sc.fire(USMedicareMBI, s)
	case n == 16 && seps == 0 && fiscalCodeValid(id):
		sc.fire(ITFiscalCode, s)
	case n == 9 && seps <= 3 && dniValid(id): // 12345678Z, 12345678-Z, 32.359.462-A, X-2482300-W
		sc.fire(ESDNI, s)
	case n == 9 && seps == 0 && ninoValid(id):
		sc.fire(UKNINO, s)
	case n == 7 && tk.digits == 6 && isLetter(id[6]) && ninoPrefixed(t, s, id):
		sc.fire(UKNINO, s-3) // PR 123612C
	case n == 15 && tk.letters == 1 && nirValid(id): // a Corsican NIR: 2A, 2B
		sc.fire(FRNIR, s)
	}
}

// tokenCue is the record or member number's id word of the token at t[s]:
// before it, or one of its own leading segments (MRN-12345, MR-PT-280582,
// Patient ID5512093).
func (sc *scanner) tokenCue(t []byte, s, firstDigit int) cueKind {
	k := sc.cueBefore(t, s, cueMRN|cueHealthPlan)
	// An id word as the token's own prefix is written in capitals or
	// before a dash (MRN-12345, MR12345, mrn-12345), not as a hash's
	// letters (ba7816bf8f01).
	ownPrefix := firstDigit > s && (isUpperASCII(t[s]) || !isAlnum(t[firstDigit-1]) || segmentMaybeCue(t, s, firstDigit))
	if k != 0 || !ownPrefix {
		return k
	}
	k = sc.cueBefore(t, firstDigit, cueMRN|cueHealthPlan)
	for p, ws := s, s; k == 0 && p < firstDigit && p-s <= 12; p++ {
		if isLetter(t[p]) {
			continue
		}
		if p > ws {
			k = segmentCue(t[ws:p], cueMRN|cueHealthPlan) // MR-PT-280582
		}
		ws = p + 1
	}
	return k
}

// segmentMaybeCue reports whether the letters right before t[d] (a
// token's first digit) may be an id word or a filler glued to the number
// (no5512093), by their shape alone.
func segmentMaybeCue(t []byte, s, d int) bool {
	w := d
	for w > s && isLetter(t[w-1]) {
		w--
	}
	var buf [maxCueWordLen]byte
	if d-w > len(buf) {
		return false
	}
	lw := buf[:d-w]
	for k := range lw {
		lw[k] = lower(t[w+k])
	}
	return maybeWord(lw, &idWordShapes) || maybeWord(lw, &fillerShapes)
}

// segmentCue returns which of the want lists a token's own letter segment
// w names as a one-word id word (MRN, MR, URN).
func segmentCue(w []byte, want cueKind) cueKind {
	var buf [8]byte
	if len(w) > len(buf) {
		return 0
	}
	for k := range w {
		buf[k] = lower(w[k])
	}
	lw := buf[:len(w)]
	var found cueKind
	for _, c := range idCues[string(lw)] {
		if c.words == string(lw) && !c.marker {
			found |= c.kinds & want
		}
	}
	return found
}

// ninoPrefixed reports whether the six digits and a letter at t[s] (id)
// follow a National Insurance number's two prefix letters and a space: PR
// 123612C.
func ninoPrefixed(t []byte, s int, id []byte) bool {
	if s < 3 || t[s-1] != ' ' || !isLetter(t[s-3]) || !isLetter(t[s-2]) || (s > 3 && isWordByte(t[s-4])) {
		return false
	}
	var v [9]byte
	v[0], v[1] = upper(t[s-3]), upper(t[s-2])
	copy(v[2:], id)
	return ninoValid(v[:])
}

// compoundStart returns where the compound token holding t[i] starts
// (word bytes joined by '-', '.', '/', '_'), or -1 when it starts more
// than 24 bytes before i: too long for an identifier.
func compoundStart(t []byte, i int) int {
	s := i
	for s > 0 && i-s <= 24 {
		c := t[s-1]
		if isWordByte(c) || ((c == '-' || c == '.' || c == '/' || c == '_') && s >= 2 && isWordByte(t[s-2])) {
			s--
			continue
		}
		return s
	}
	if s == 0 {
		return 0
	}
	return -1
}

// nhsValid: ten digits, weights 10 to 2, 11 - sum mod 11 is the tenth (11
// is 0, 10 is never issued).
func nhsValid(d []byte) bool {
	if len(d) != 10 {
		return false
	}
	sum := 0
	for k := range 9 {
		sum += int(d[k]-'0') * (10 - k)
	}
	c := 11 - sum%11
	if c == 11 {
		c = 0
	}
	return c != 10 && c == int(d[9]-'0')
}

// auMedicareValid: ten digits (an eleventh, the card's issue number, may
// follow), the first 2 to 6, the ninth the weighted sum (1 3 7 9) mod 10 of
// the first eight.
func auMedicareValid(d []byte) bool {
	if (len(d) != 10 && len(d) != 11) || d[0] < '2' || d[0] > '6' || d[9] == '0' {
		return false
	}
	w := [8]int{1, 3, 7, 9, 1, 3, 7, 9}
	sum := 0
	for k := range 8 {
		sum += int(d[k]-'0') * w[k]
	}
	return sum%10 == int(d[8]-'0')
}

// nirValid: a French NIR, 13 digits (sex 1 or 2, or 3, 4, 7, 8 for a
// provisional number; a month 01-12 or 20-99; Corsica's departments 2A
// and 2B counted as 19 and 18) and a key of 97 - n mod 97.
func nirValid(d []byte) bool {
	if len(d) != 15 {
		return false
	}
	switch d[0] {
	case '1', '2', '3', '4', '7', '8':
	default:
		return false
	}
	if !isDigit(d[3]) || !isDigit(d[4]) {
		return false
	}
	if m := int(d[3]-'0')*10 + int(d[4]-'0'); m == 0 || (m > 12 && m < 20) {
		return false
	}
	var v [13]byte
	copy(v[:], d[:13])
	if d[5] == '2' && (d[6] == 'A' || d[6] == 'B') {
		v[5], v[6] = '1', '9'-(d[6]-'A') // Corsica: 2A counts as 19, 2B as 18
	}
	mod := 0
	for _, c := range v {
		if !isDigit(c) {
			return false
		}
		mod = (mod*10 + int(c-'0')) % 97
	}
	if !isDigit(d[13]) || !isDigit(d[14]) {
		return false
	}
	key := int(d[13]-'0')*10 + int(d[14]-'0')
	return key == 97-mod
}

// deTaxIDValid: a German Steuer-ID, 11 digits, the first not 0; in the
// first ten one digit appears twice or three times and every other at
// most once (python-stdnum's rule); the last is the
// ISO 7064 MOD 11,10 check.
func deTaxIDValid(d []byte) bool {
	if len(d) != 11 || d[0] == '0' {
		return false
	}
	var count [10]int
	for _, c := range d[:10] {
		count[c-'0']++
	}
	multi := 0
	for _, n := range count {
		switch {
		case n > 3:
			return false
		case n >= 2:
			multi++
		}
	}
	if multi != 1 {
		return false
	}
	product := 10
	for _, c := range d[:10] {
		sum := (int(c-'0') + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return check == int(d[10]-'0')
}

// bsnValid: the Dutch 11-proof, weights 9 to 2 and -1, not all zero.
func bsnValid(d []byte) bool {
	if len(d) != 9 {
		return false
	}
	sum := 0
	for k := range 8 {
		sum += int(d[k]-'0') * (9 - k)
	}
	sum -= int(d[8] - '0')
	return sum > 0 && sum%11 == 0
}

var verhoeffD = [10][10]int{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
	{3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
	{6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
	{9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
}

var verhoeffP = [8][10]int{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
	{8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
	{2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8},
}

// aadhaarValid: twelve digits, the first 2 to 9, Verhoeff's check.
func aadhaarValid(d []byte) bool {
	if len(d) != 12 || d[0] < '2' {
		return false
	}
	c := 0
	for k := range d {
		c = verhoeffD[c][verhoeffP[k%8][int(d[len(d)-1-k]-'0')]]
	}
	return c == 0
}

// cpfValid: eleven digits, not all the same, two mod-11 check digits.
func cpfValid(d []byte) bool {
	if len(d) != 11 {
		return false
	}
	same := true
	for _, c := range d {
		same = same && c == d[0]
	}
	if same {
		return false
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for k := range n {
			sum += int(d[k]-'0') * (n + 1 - k)
		}
		if sum*10%11%10 != int(d[n]-'0') {
			return false
		}
	}
	return true
}

// sinValid: a Canadian SIN, nine digits, not starting 8 (business
// numbers), Luhn.
func sinValid(d []byte) bool {
	return len(d) == 9 && d[0] != '8' && luhn(d)
}

// tfnValid: an Australian TFN, nine (or eight, the old form) digits with
// the ATO's weights, the sum divisible by 11.
func tfnValid(d []byte) bool {
	var w []int
	switch len(d) {
	case 9:
		w = []int{1, 4, 3, 7, 5, 8, 6, 9, 10}
	case 8:
		w = []int{10, 7, 8, 4, 6, 3, 5, 1}
	default:
		return false
	}
	sum := 0
	for k, c := range d {
		sum += int(c-'0') * w[k]
	}
	return sum > 0 && sum%11 == 0
}

// peselValid: a Polish PESEL, eleven digits, a birth date (the month
// offset by the century) and the weighted check (1 3 7 9).
func peselValid(d []byte) bool {
	if len(d) != 11 {
		return false
	}
	m := int(d[2]-'0')*10 + int(d[3]-'0')
	day := int(d[4]-'0')*10 + int(d[5]-'0')
	if m%20 < 1 || m%20 > 12 || day < 1 || day > 31 {
		return false
	}
	w := [10]int{1, 3, 7, 9, 1, 3, 7, 9, 1, 3}
	sum := 0
	for k := range 10 {
		sum += int(d[k]-'0') * w[k]
	}
	return (10-sum%10)%10 == int(d[10]-'0')
}

// personnummerValid: a Swedish personnummer, YYMMDDNNNC or YYYYMMDDNNNC,
// a date (the day plus 60 for a samordningsnummer) and Luhn on the ten
// digits from YY.
func personnummerValid(d []byte) bool {
	switch len(d) {
	case 12:
		if d[0] != '1' && d[0] != '2' {
			return false
		}
		d = d[2:]
	case 10:
	default:
		return false
	}
	m := int(d[2]-'0')*10 + int(d[3]-'0')
	day := int(d[4]-'0')*10 + int(d[5]-'0')
	if day > 60 {
		day -= 60
	}
	return m >= 1 && m <= 12 && day >= 1 && day <= 31 && luhn(d)
}

// abaValid: a US ABA routing number, nine digits, a Federal Reserve
// prefix (00-12, 21-32, 61-72, 80) and the 3-7-1 weighted sum mod 10.
func abaValid(d []byte) bool {
	if len(d) != 9 {
		return false
	}
	p := int(d[0]-'0')*10 + int(d[1]-'0')
	if !(p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p == 80) {
		return false
	}
	sum := 0
	w := [3]int{3, 7, 1}
	for k, c := range d {
		sum += int(c-'0') * w[k%3]
	}
	return sum%10 == 0
}

// mbiLetter is a letter a Medicare Beneficiary Identifier uses: not S, L,
// O, I, B or Z.
func mbiLetter(c byte) bool {
	return c >= 'A' && c <= 'Z' && c != 'S' && c != 'L' && c != 'O' && c != 'I' && c != 'B' && c != 'Z'
}

// mbiValid: the CMS format, C A AN N A AN N A A N N (C a digit 1-9, N a
// digit, A an MBI letter, AN either), upper case.
func mbiValid(id []byte) bool {
	if len(id) != 11 {
		return false
	}
	const format = "CAXNAXNAANN"
	for k := range id {
		c := id[k]
		switch format[k] {
		case 'C':
			if c < '1' || c > '9' {
				return false
			}
		case 'N':
			if !isDigit(c) {
				return false
			}
		case 'A':
			if !mbiLetter(c) {
				return false
			}
		case 'X':
			if !isDigit(c) && !mbiLetter(c) {
				return false
			}
		}
	}
	return true
}

var (
	cfOdd       = [26]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}
	cfOmocodia  = "LMNPQRSTUV" // the letters that stand for 0-9 in a codice fiscale's digit positions
	cfMonths    = "ABCDEHLMPRST"
	cfDigitsPos = [...]int{6, 7, 9, 10, 12, 13, 14}
)

// fiscalCodeValid: an Italian codice fiscale, six letters (surname and
// name), two digits (year), a month letter, two digits (day, +40 for a
// woman), a letter and three digits (place), a check letter; the digits
// may be written with the omocodia letters.
func fiscalCodeValid(id []byte) bool {
	if len(id) != 16 {
		return false
	}
	var v [16]byte
	copy(v[:], id)
	for k := range 6 {
		if !isLetter(v[k]) {
			return false
		}
	}
	for _, k := range cfDigitsPos {
		if i := indexByte(cfOmocodia, v[k]); i >= 0 {
			v[k] = byte('0' + i)
		}
		if !isDigit(v[k]) {
			return false
		}
	}
	if indexByte(cfMonths, v[8]) < 0 || !isLetter(v[11]) || !isLetter(v[15]) {
		return false
	}
	if day := int(v[9]-'0')*10 + int(v[10]-'0'); day%40 < 1 || day%40 > 31 || day > 71 {
		return false
	}
	sum := 0
	for k := range 15 {
		c := id[k] // the check reads the characters as written
		var val int
		if isDigit(c) {
			val = int(c - '0')
		} else {
			val = int(c - 'A')
		}
		if k%2 == 0 {
			sum += cfOdd[val]
		} else {
			sum += val
		}
	}
	return id[15] == byte('A'+sum%26)
}

func indexByte(s string, c byte) int {
	for k := range len(s) {
		if s[k] == c {
			return k
		}
	}
	return -1
}

// dniValid: a Spanish DNI (eight digits and a check letter) or NIE (X, Y
// or Z for 0, 1 or 2, seven digits and the check letter): the letter is
// the number mod 23 in TRWAGMYFPDXBNJZSQVHLCKE.
func dniValid(id []byte) bool {
	if len(id) != 9 {
		return false
	}
	n := 0
	switch id[0] {
	case 'X':
	case 'Y':
		n = 1
	case 'Z':
		n = 2
	default:
		if !isDigit(id[0]) {
			return false
		}
		n = int(id[0] - '0')
	}
	for _, c := range id[1:8] {
		if !isDigit(c) {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return id[8] == "TRWAGMYFPDXBNJZSQVHLCKE"[n%23]
}

// ninoValid: a UK National Insurance number, two prefix letters (the
// first not D, F, I, Q, U or V, the second not those or O; not BG, GB,
// KN, NK, NT, TN or ZZ), six digits and a suffix A to D.
func ninoValid(id []byte) bool {
	if len(id) != 9 {
		return false
	}
	a, b := id[0], id[1]
	if !isLetter(a) || !isLetter(b) || indexByte("DFIQUV", a) >= 0 || indexByte("DFIQUVO", b) >= 0 {
		return false
	}
	switch string(id[:2]) {
	case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
		return false
	}
	for _, c := range id[2:8] {
		if !isDigit(c) {
			return false
		}
	}
	return id[8] >= 'A' && id[8] <= 'D'
}
