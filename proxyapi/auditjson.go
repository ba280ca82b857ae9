package proxyapi

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends e exactly as json.Marshal encodes it, then a newline.
// The router-proxy writes one entry per request: encoding/json's reflection
// cost more than the rest of the entry's bookkeeping (make bench-proxy), so
// the audit sink uses this. TestAuditEntryAppendJSONMatchesMarshal keeps it
// byte-for-byte equal to json.Marshal over every field of AuditEntry.
func (e *AuditEntry) AppendJSON(b []byte) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return b, errors.New("audit entry: time year outside [0,9999]")
	}
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","router":`...)
	b = appendJSONString(b, true, e.Router)
	b = append(b, `,"namespace":`...)
	b = appendJSONString(b, true, e.Namespace)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, true, e.Path)
	b = appendOmitString(b, `,"rule":`, e.Rule)
	b = appendOmitString(b, `,"backend":`, e.Backend)
	b = appendOmitString(b, `,"tier":`, e.Tier)
	b = appendOmitString(b, `,"model":`, e.Model)
	b = appendOmitString(b, `,"upstreamModel":`, e.UpstreamModel)
	b = appendOmitString(b, `,"classification":`, e.Classification)
	b = appendOmitString(b, `,"classificationSource":`, e.ClassificationSource)
	b = appendOmitStrings(b, `,"detectors":`, e.Detectors)
	b = appendOmitString(b, `,"taskComplexity":`, e.TaskComplexity)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, e.Stream)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, true, e.Outcome)
	var err error
	b = append(b, `,"latencyMs":`...)
	if b, err = appendJSONFloat(b, e.LatencyMs); err != nil {
		return b, err
	}
	if e.FirstTokenMs != 0 {
		b = append(b, `,"firstTokenMs":`...)
		if b, err = appendJSONFloat(b, e.FirstTokenMs); err != nil {
			return b, err
		}
	}
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(e.Attempts), 10)
	b = append(b, `,"promptTokens":`...)
	b = strconv.AppendInt(b, e.PromptTokens, 10)
	b = append(b, `,"completionTokens":`...)
	b = strconv.AppendInt(b, e.CompletionTokens, 10)
	b = append(b, `,"totalTokens":`...)
	b = strconv.AppendInt(b, e.TotalTokens, 10)
	if e.TokensEstimated {
		b = append(b, `,"tokensEstimated":true`...)
	}
	b = append(b, `,"costUSD":`...)
	b = appendJSONString(b, true, e.CostUSD)
	b = appendOmitString(b, `,"budget":`, e.Budget)
	b = appendOmitString(b, `,"rateLimit":`, e.RateLimit)
	if e.Promoted {
		b = append(b, `,"sloPromoted":true`...)
	}
	b = appendOmitString(b, `,"caller":`, e.Caller)
	b = appendOmitString(b, `,"team":`, e.Team)
	b = appendOmitString(b, `,"key":`, e.Key)
	b = appendOmitString(b, `,"client":`, e.Client)
	b = appendOmitString(b, `,"error":`, e.Error)
	b = appendOmitStrings(b, `,"held":`, e.Held)
	b = appendOmitString(b, `,"via":`, e.Via)
	b = appendOmitString(b, `,"tool":`, e.Tool)
	if len(e.RequestBody) > 0 {
		// Rare (includeRequestBody) and large: encoding/json compacts and
		// escapes it as Marshal would.
		raw, err := json.Marshal(e.RequestBody)
		if err != nil {
			return b, err
		}
		b = append(b, `,"requestBody":`...)
		b = append(b, raw...)
	}
	return append(b, "}\n"...), nil
}

func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), true, s)
}

// appendJSONFloat formats f as encoding/json does.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, errors.New("audit entry: unsupported float value")
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendEscapedASCII appends the JSON escape of the ASCII byte c: the short
// form where JSON has one, \u00XX otherwise.
func appendEscapedASCII(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendJSONString quotes s as encoding/json does: control bytes, quote and
// backslash escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029
// escaped, and with escapeHTML (Marshal's default) <, > and & too.
func appendJSONString(b []byte, escapeHTML bool, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = appendEscapedASCII(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendOmitStrings appends key and a list of strings, nothing when empty
// (omitempty).
func appendOmitStrings(b []byte, key string, v []string) []byte {
	if len(v) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, d := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, true, d)
	}
	return append(b, ']')
}
