package engine

import (
	"net/netip"
	"strings"
)

// MaxCallerBytes is the length an audit caller is cut to.
const MaxCallerBytes = 128

// SanitizeCaller cuts a caller label to 128 bytes and replaces every byte
// outside printable ASCII with '?'.
func SanitizeCaller(s string) string {
	if len(s) > MaxCallerBytes {
		s = s[:MaxCallerBytes]
	}
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// ParseTrusted parses trustedProxyCIDRs (CIDRs or single addresses).
func ParseTrusted(cidrs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, c := range cidrs {
		if !strings.Contains(c, "/") {
			a, err := netip.ParseAddr(c)
			if err != nil {
				return nil, err
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, err
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func trusted(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddress resolves the audit client: the TCP peer, unless the peer is
// a trusted proxy; then X-Forwarded-For is read from the right and the first
// address that is not a trusted proxy is the client. An unparsable entry
// stops the walk at the last trusted hop.
func ClientAddress(peer netip.Addr, xff []string, trustedProxies []netip.Prefix) string {
	peer = peer.Unmap()
	if !peer.IsValid() {
		return ""
	}
	if len(trustedProxies) == 0 || !trusted(peer, trustedProxies) {
		return peer.String()
	}
	client := peer
	for i := len(xff) - 1; i >= 0; i-- {
		parts := strings.Split(xff[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client.String()
			}
			a = a.Unmap()
			client = a
			if !trusted(a, trustedProxies) {
				return a.String()
			}
		}
	}
	return client.String()
}
