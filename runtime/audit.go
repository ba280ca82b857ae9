package runtime

import (
	"encoding/json"
	"net/netip"
	"strings"
	"time"
)

// Audit outcomes.
const (
	OutcomeOK               = "ok"
	OutcomeOKStream         = "ok_stream"
	OutcomeNoRoute          = "no_route"
	OutcomeFailClosed       = "fail_closed"
	OutcomeAllFailed        = "all_backends_failed"
	OutcomeBudgetExceeded   = "budget_exceeded"
	OutcomeBadRequest       = "bad_request"
	OutcomeTooLarge         = "too_large"
	OutcomeClientCancelled  = "client_cancelled"
	OutcomeStreamIdle       = "stream_idle_timeout"
	OutcomeUpstreamAborted  = "upstream_aborted"
	OutcomeShutdownDeadline = "shutdown_deadline"
	// OutcomeBodyBusy: the request-body memory budget stayed full for the body read timeout.
	OutcomeBodyBusy = "body_memory_busy"
)

// AuditEntry is one audit record: one per request, written as one JSON object.
type AuditEntry struct {
	Time           time.Time `json:"time"`
	Router         string    `json:"router"`
	Namespace      string    `json:"namespace"`
	Path           string    `json:"path"`
	Rule           string    `json:"rule,omitempty"`
	Backend        string    `json:"backend,omitempty"`
	Tier           string    `json:"tier,omitempty"`
	Model          string    `json:"model,omitempty"`
	Classification string    `json:"classification,omitempty"`
	TaskComplexity string    `json:"taskComplexity,omitempty"`
	Stream         bool      `json:"stream"`
	Status         int       `json:"status"`
	Outcome        string    `json:"outcome"`
	// LatencyMs is the whole request, including a streamed body.
	LatencyMs float64 `json:"latencyMs"`
	// FirstTokenMs is the time to the first response body byte.
	FirstTokenMs     float64 `json:"firstTokenMs,omitempty"`
	Attempts         int     `json:"attempts"`
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	TotalTokens      int64   `json:"totalTokens"`
	TokensEstimated  bool    `json:"tokensEstimated,omitempty"`
	CostUSD          string  `json:"costUSD"`
	Budget           string  `json:"budget,omitempty"`
	Promoted         bool    `json:"sloPromoted,omitempty"`
	Caller           string  `json:"caller,omitempty"`
	Client           string  `json:"client,omitempty"`
	Error            string  `json:"error,omitempty"`
	// RequestBody is the client's request body, only with includeRequestBody.
	RequestBody json.RawMessage `json:"requestBody,omitempty"`
}

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
