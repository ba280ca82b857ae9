package classifier

// Bounds of an address's parts (RFC 5321): they also bound the look-around
// at each '@', so a text of many '@' stays linear.
const (
	maxLocalPart = 64
	maxDomain    = 253
)

func isLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c == '\''
}

// email judges the '@' at t[i]: a local part before it and a domain of two
// labels or more after it, whose last label is letters (a TLD, not
// pkg@1.2.3). An scp-style location (git@github.com:org/repo) is not an
// address. It returns the index of the address's last byte, or i.
func (sc *scanner) email(t []byte, i int) int {
	ls := i
	for ls > 0 && i-ls < maxLocalPart && isLocalByte(t[ls-1]) {
		ls--
	}
	if ls == i || t[ls] == '.' || t[i-1] == '.' || (ls > 0 && isLocalByte(t[ls-1])) {
		return i
	}
	// Domain labels: [A-Za-z0-9-]+ joined by '.'.
	p, labels, tldLetters := i+1, 0, false
	for p < len(t) && p-i <= maxDomain {
		q := p
		letters := true
		for q < len(t) && (isAlnum(t[q]) || t[q] == '-') {
			if !isLetter(t[q]) {
				letters = false
			}
			q++
		}
		if q == p || t[p] == '-' || t[q-1] == '-' {
			break
		}
		labels++
		tldLetters = letters && q-p >= 2
		p = q
		if p+1 < len(t) && t[p] == '.' && isAlnum(t[p+1]) {
			p++
			continue
		}
		break
	}
	sc.steps += p - ls
	if labels < 2 || !tldLetters || (p < len(t) && (isWordByte(t[p]) || t[p] == '@')) {
		return i
	}
	if p+1 < len(t) && t[p] == ':' && t[p+1] != ' ' && t[p+1] != '\n' {
		return p // git@github.com:org/repo
	}
	sc.fire(Email, ls)
	return p - 1
}
