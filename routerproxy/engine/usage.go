package engine

import (
	"bytes"
	"encoding/json"
)

// Usage is a response's token usage.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// Estimated is true when the upstream reported no usage and the numbers
	// come from EstimateUsage.
	Estimated bool `json:"-"`
}

// Tokens is the total charged: total_tokens, else prompt + completion.
func (u Usage) Tokens() int64 {
	if s := u.PromptTokens + u.CompletionTokens; s > u.TotalTokens {
		return s
	}
	return u.TotalTokens
}

// BytesPerToken is the estimation ratio used when the upstream reports no usage.
const BytesPerToken = 4

// EstimateUsage estimates usage from the request and response body sizes:
// one token per 4 bytes, rounded up, at least one token in total. Counting
// JSON framing over-estimates, the safe direction for a budget.
func EstimateUsage(requestBytes, responseBytes int64) Usage {
	p := (requestBytes + BytesPerToken - 1) / BytesPerToken
	c := (responseBytes + BytesPerToken - 1) / BytesPerToken
	if p+c == 0 {
		p = 1
	}
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c, Estimated: true}
}

type usageEnvelope struct {
	Usage *Usage `json:"usage"`
}

// ParseUsage reads the top-level "usage" object of a JSON response (or of
// one SSE data payload). ok is false when there is none.
func ParseUsage(b []byte) (Usage, bool) {
	if !bytes.Contains(b, []byte(`"usage"`)) {
		return Usage{}, false
	}
	u, ok := parseUsage(b)
	if !ok {
		return Usage{}, false
	}
	if !u.plausible() || u.Tokens() <= 0 {
		// Negative or absurd counts (an upstream bug or a hostile upstream)
		// are treated as missing: the caller estimates from bytes. Counts that
		// overflow int64 already failed to decode.
		return Usage{}, false
	}
	return u, true
}

// parseUsage decodes the top-level "usage" as encoding/json does, through
// scanUsage when it can decide.
func parseUsage(b []byte) (Usage, bool) {
	if !json.Valid(b) {
		return Usage{}, false
	}
	if u, present, decided := scanUsage(b); decided {
		return u, present
	}
	return decodeUsage(b)
}

// decodeUsage is encoding/json's answer, the reference scanUsage follows.
func decodeUsage(b []byte) (Usage, bool) {
	var env usageEnvelope
	if json.Unmarshal(b, &env) != nil || env.Usage == nil {
		return Usage{}, false
	}
	return *env.Usage, true
}

// MaxUsageTokens bounds a plausible count of one response (about 10^12).
const MaxUsageTokens = 1 << 40

func (u Usage) plausible() bool {
	for _, n := range []int64{u.PromptTokens, u.CompletionTokens, u.TotalTokens} {
		if n < 0 || n > MaxUsageTokens {
			return false
		}
	}
	return true
}

// MaxSSELine bounds the bytes kept of one SSE line while looking for usage.
const MaxSSELine = 1 << 20

// SSEData cuts an SSE body, fed in pieces of any size, into lines and hands
// the payload of each data line ("data:" and surrounding space stripped) to
// a callback. A line longer than Max bytes, or one that is not a data line,
// is dropped as soon as that is known, so memory stays bounded by Max.
type SSEData struct {
	Max  int // 0: MaxSSELine
	line []byte
	skip bool // the current line is too long or not a data line
}

// Write feeds body bytes; data is called once per complete data line.
func (d *SSEData) Write(p []byte, data func(payload []byte)) {
	limit := d.Max
	if limit <= 0 {
		limit = MaxSSELine
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !d.skip {
			if len(d.line)+len(chunk) > limit {
				d.skip, d.line = true, d.line[:0]
			} else {
				d.line = append(d.line, chunk...)
				// Decide early whether this line can matter.
				if len(d.line) >= 5 && !bytes.HasPrefix(d.line, []byte("data:")) {
					d.skip, d.line = true, d.line[:0]
				}
			}
		}
		if i < 0 {
			return
		}
		if !d.skip {
			d.emit(data)
		}
		d.skip, d.line = false, d.line[:0]
		p = p[i+1:]
	}
}

// Flush hands over a final unterminated data line, if any.
func (d *SSEData) Flush(data func(payload []byte)) {
	if !d.skip && len(d.line) > 0 {
		d.emit(data)
		d.line = d.line[:0]
	}
}

func (d *SSEData) emit(data func(payload []byte)) {
	l := bytes.TrimRight(d.line, "\r")
	if bytes.HasPrefix(l, []byte("data:")) {
		data(bytes.TrimSpace(l[5:]))
	}
}

// StreamScanner watches an SSE body for the last chunk that carries usage
// (the final chunk when stream_options.include_usage is set). Write never
// fails and never modifies the stream.
type StreamScanner struct {
	sse   SSEData
	usage Usage
	found bool
	Bytes int64
}

// Write feeds body bytes to the scanner.
func (s *StreamScanner) Write(p []byte) (int, error) {
	s.Bytes += int64(len(p))
	s.sse.Write(p, s.data)
	return len(p), nil
}

func (s *StreamScanner) data(payload []byte) {
	if u, ok := ParseUsage(payload); ok {
		s.usage, s.found = u, true
	}
}

// Usage returns the last usage seen, flushing a final unterminated line.
func (s *StreamScanner) Usage() (Usage, bool) {
	s.sse.Flush(s.data)
	return s.usage, s.found
}

// UsageTail is how much of a response's end ParseUsageTail reads.
const UsageTail = 64 << 10

// ParseUsageTail reads usage from the end of a non-stream response too large
// to keep whole (an embeddings batch): OpenAI-compatible servers write the
// top-level "usage" object last, so the last `"usage":` key of the tail is
// decoded. A `"usage"` inside a string is escaped (\"usage\") and never
// matches. ok is false when the tail holds none.
func ParseUsageTail(tail []byte) (Usage, bool) {
	i := bytes.LastIndex(tail, []byte(`"usage"`))
	if i < 0 {
		return Usage{}, false
	}
	rest := bytes.TrimLeft(tail[i+len(`"usage"`):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return Usage{}, false
	}
	var u Usage
	if json.NewDecoder(bytes.NewReader(rest[1:])).Decode(&u) != nil || !u.plausible() || u.Tokens() <= 0 {
		return Usage{}, false
	}
	return u, true
}
