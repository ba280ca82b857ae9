package routerproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/llmkube/llmkube-compile/routerproxy/internal/jsonscan"
)

// The request body is never decoded whole and re-encoded. A full decode
// costs several times the body in memory, and re-encoding with
// encoding/json HTML-escapes '<', '>' and '&' (6 bytes each), so a 32 MiB
// body of '<' reached the upstream as 192 MiB. Instead bodyFields scans the
// top-level members once (after json.Valid) and the rewrites splice bytes:
// the upstream receives the client's bytes except the spliced value.

// span is a value's byte range in the body.
type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// bodyFields are the top-level members the proxy reads, by exact key, as
// the upstream's JSON decoder reads them: "MODEL" is not "model", and an
// escaped key ("mod\u0065l") is the key it decodes to.
type bodyFields struct {
	model, stream, streamOptions span
}

// scanBody finds the proxy's fields in a valid JSON document. A key given
// twice is refused: decoders disagree on which one wins, so routing and the
// upstream could read different models.
func scanBody(body []byte) (bodyFields, error) {
	var f bodyFields
	if string(bytes.TrimSpace(body)) == "null" {
		return f, nil // decodes as an empty request: "no model"
	}
	err := members(body, func(key string, v span) error {
		var dst *span
		switch key {
		case "model":
			dst = &f.model
		case "stream":
			dst = &f.stream
		case "stream_options":
			dst = &f.streamOptions
		default:
			return nil
		}
		if dst.ok() {
			return fmt.Errorf("the body sets %q twice", key)
		}
		*dst = v
		return nil
	})
	return f, err
}

// members calls f for every top-level member of the object in data, which
// must be valid JSON (json.Valid), with each key as a decoder sees it.
func members(data []byte, f func(key string, value span) error) error {
	return jsonscan.Members(data, func(rawKey []byte, start, end int) error {
		key, err := decodeKey(rawKey)
		if err != nil {
			return err
		}
		return f(key, span{start, end})
	})
}

// commonKeys are the usual top-level keys of a request, by their quoted
// form.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"model", "messages", "stream", "stream_options", "include_usage", "input", "prompt",
		"temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "user", "tools", "tool_choice",
		"response_format", "seed", "presence_penalty", "frequency_penalty", "logprobs", "encoding_format", "dimensions"} {
		m[`"`+k+`"`] = k
	}
	return m
}()

// decodeKey is the key a decoder sees: the quoted bytes, unescaped only
// when they hold an escape.
func decodeKey(q []byte) (string, error) {
	if bytes.IndexByte(q, '\\') < 0 {
		if k, ok := commonKeys[string(q)]; ok {
			return k, nil // no allocation for the keys every request has
		}
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// stringValue decodes the JSON string at s; ok is false for another type.
func stringValue(body []byte, s span) (string, bool) {
	if !s.ok() || body[s.start] != '"' {
		return "", false
	}
	raw := body[s.start:s.end]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// boolValue reads a JSON boolean or null at s (absent and null are false);
// ok is false for another type.
func boolValue(body []byte, s span) (v, ok bool) {
	if !s.ok() {
		return false, true
	}
	switch string(body[s.start:s.end]) {
	case "true":
		return true, true
	case "false", "null":
		return false, true
	}
	return false, false
}

// splice replaces s in body with value, in a new slice (body is shared with
// other attempts and the audit entry).
func splice(body []byte, s span, value []byte) []byte {
	out := make([]byte, 0, len(body)-(s.end-s.start)+len(value))
	out = append(out, body[:s.start]...)
	out = append(out, value...)
	return append(out, body[s.end:]...)
}

// quote encodes s as a JSON string without HTML escaping.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// reqBody is the request body as sent upstream, with its model's place,
// found once per request rather than once per attempt.
type reqBody struct {
	raw   []byte
	model span
}

// withModel replaces the body's model with the one the backend serves,
// splicing the value.
func (b reqBody) withModel(model string) []byte {
	if !b.model.ok() {
		return b.raw
	}
	q := quote(model)
	if bytes.Equal(b.raw[b.model.start:b.model.end], q) {
		return b.raw // the client asked for that name: no copy of the body
	}
	return splice(b.raw, b.model, q)
}

// insertMember adds "key":value as the first member of the object at s.
func insertMember(body []byte, s span, member string) []byte {
	open := s.start // '{'
	rest := jsonscan.SkipSpace(body, open+1)
	sep := ","
	if rest < len(body) && body[rest] == '}' {
		sep = ""
	}
	return splice(body, span{open + 1, open + 1}, []byte(member+sep))
}

// withIncludeUsage sets stream_options.include_usage=true, splicing: the
// member is inserted, or its value replaced, and nothing else changes.
func withIncludeUsage(body []byte, f bodyFields) []byte {
	const member = `"include_usage":true`
	so := f.streamOptions
	open := jsonscan.SkipSpace(body, 0)
	if open >= len(body) || body[open] != '{' {
		return body // not an object: nothing to set (refused before this)
	}
	switch {
	case !so.ok():
		return insertMember(body, span{open, len(body)}, `"stream_options":{`+member+`}`)
	case body[so.start] != '{':
		// null (or another type the upstream would refuse anyway)
		return splice(body, so, []byte(`{`+member+`}`))
	}
	var usage span
	sub := body[so.start:so.end]
	_ = members(sub, func(key string, v span) error {
		if key == "include_usage" {
			usage = span{so.start + v.start, so.start + v.end}
		}
		return nil
	})
	if usage.ok() {
		return splice(body, usage, []byte("true"))
	}
	return insertMember(body, so, member)
}

// includeUsage reports whether stream_options.include_usage is true.
func includeUsage(body []byte, f bodyFields) bool {
	so := f.streamOptions
	if !so.ok() || body[so.start] != '{' {
		return false
	}
	on := false
	_ = members(body[so.start:so.end], func(key string, v span) error {
		if key == "include_usage" {
			b, _ := boolValue(body[so.start:so.end], v)
			on = b
		}
		return nil
	})
	return on
}

// clip cuts s to at most n bytes for the audit log, on a rune boundary,
// marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// maxAuditField bounds client-chosen strings (the model) in an audit line,
// as engine.SanitizeCaller bounds the caller.
const maxAuditField = 256
