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
	ls, ok := localPart(t, i)
	if !ok {
		return i
	}
	p, ok := domain(t, i)
	sc.steps += p - ls
	if !ok || (p < len(t) && (isWordByte(t[p]) || t[p] == '@')) {
		return i
	}
	if p+1 < len(t) && t[p] == ':' && t[p+1] != ' ' && t[p+1] != '\n' {
		return p // git@github.com:org/repo
	}
	if unitSuffix(t[i+1:p]) || placeholderAddress(t[ls:i], t[i+1:p]) {
		return p - 1 // postgresql@16-main.service, test.user@example.com
	}
	sc.fire(Email, ls)
	return p - 1
}

// localPart returns the start of the local part before the '@' at t[at],
// and whether it is one: not empty, no '.' at either end, and not cut
// short by the length bound.
func localPart(t []byte, at int) (int, bool) {
	ls := at
	for ls > 0 && at-ls < maxLocalPart && isLocalByte(t[ls-1]) {
		ls--
	}
	if ls == at || t[ls] == '.' || t[at-1] == '.' || (ls > 0 && isLocalByte(t[ls-1])) {
		return ls, false
	}
	return ls, true
}

// domain reads the domain after the '@' at t[at]: labels of
// [A-Za-z0-9-]+ joined by '.'. It returns the index after it, and whether
// it is an address's: two labels or more, the last of two letters or
// more (a TLD, not pkg@1.2.3).
func domain(t []byte, at int) (int, bool) {
	p, labels, tldLetters := at+1, 0, false
	for p < len(t) && p-at <= maxDomain {
		q, letters := domainLabel(t, p)
		if q == p || t[p] == '-' || t[q-1] == '-' {
			break
		}
		labels++
		// A top-level domain is letters, or an internationalized one in
		// punycode: xn--p1ai.
		tldLetters = (letters && q-p >= 2) || (q-p > 4 && hasPrefixFold(t[p:q], "xn--"))
		p = q
		if p+1 < len(t) && t[p] == '.' && isAlnum(t[p+1]) {
			p++
			continue
		}
		break
	}
	return p, labels >= 2 && tldLetters
}

// domainLabel returns the index after the label at t[p] and whether it is
// all letters.
func domainLabel(t []byte, p int) (int, bool) {
	letters := true
	for ; p < len(t) && (isAlnum(t[p]) || t[p] == '-'); p++ {
		if !isLetter(t[p]) {
			letters = false
		}
	}
	return p, letters
}

// unitSuffix reports whether a domain ends as a systemd unit's name does
// (postgresql@16-main.service): no top-level domain has these names.
func unitSuffix(domain []byte) bool {
	for _, suffix := range [...]string{".service", ".socket", ".timer", ".target", ".mount", ".slice", ".scope", ".automount", ".swap", ".device"} {
		if len(domain) > len(suffix) && hasPrefixFold(domain[len(domain)-len(suffix):], suffix) {
			return true
		}
	}
	return false
}

// placeholderAddress reports whether an address is a placeholder: a
// local part that names no one (test, user, test.user, foo, someone) on a
// domain reserved for examples (RFC 2606: example.com, .org, .net, .test,
// .example, .invalid). jane.doe@example.com still names someone.
func placeholderAddress(local, domain []byte) bool {
	var buf [32]byte
	if len(local) > len(buf) {
		return false
	}
	l := buf[:len(local)]
	for k := range local {
		l[k] = lower(local[k])
	}
	switch string(l) {
	case "test", "user", "test.user", "testuser", "username", "user.name", "someone", "somebody", "foo", "bar", "foo.bar", "foobar",
		"you", "your.name", "yourname", "name", "email", "firstname.lastname", "first.last", "example", "noreply", "no-reply":
	default:
		return false
	}
	for _, d := range [...]string{"example.com", "example.org", "example.net"} {
		if len(domain) == len(d) && hasPrefixFold(domain, d) {
			return true
		}
	}
	for _, tld := range [...]string{".test", ".example", ".invalid", ".localhost"} {
		if len(domain) > len(tld) && hasPrefixFold(domain[len(domain)-len(tld):], tld) {
			return true
		}
	}
	return false
}
