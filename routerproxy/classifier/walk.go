package classifier

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmkube/llmkube-compile/routerproxy/internal/jsonscan"
)

// binaryKeys are the members whose values are binary payloads, never text
// the classifier reads: OpenAI's image_url, input_audio and file content
// parts and an image response's b64_json.
var binaryKeys = map[string]bool{"image_url": true, "input_audio": true, "file": true, "b64_json": true}

// scratchPool holds the buffers strings are unescaped into, so that a
// body with escapes allocates nothing once the pool is warm; a buffer
// grown past maxPooledScratch (a huge string) is left to the collector.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledScratch = 1 << 20

// maxNestedDepth bounds how deep a string holding JSON (a tool call's
// arguments) is walked again after its escapes are decoded.
const maxNestedDepth = 2

// walkStrings calls text for every string value in data (valid JSON), its
// escapes decoded, and for every number of 9 digits or more, skipping the
// members in binaryKeys, data: URLs and base64 blobs. Keys are not texts. A
// string that holds JSON with escapes of its own (a tool call's arguments
// written with \u escapes) is walked again, decoded once more, up to
// maxNestedDepth.
func walkStrings(data []byte, text func([]byte), depth int) {
	var stackBuf [32]walkFrame
	stack := stackBuf[:0]
	expectKey := false // the next string in an object is a key
	skipNext := false  // the member just keyed is binary
	bp := scratchPool.Get().(*[]byte)
	scratch := (*bp)[:0]
	defer func() {
		if cap(scratch) <= maxPooledScratch {
			*bp = scratch[:0]
			scratchPool.Put(bp)
		}
	}()
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			stack = append(stack, walkFrame{object: c == '{', skip: skipping(stack) || skipNext})
			skipNext = false
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].object
		case ':':
			expectKey = false
		case '"':
			end := jsonscan.StringEnd(data, i)
			raw := data[i+1 : end-1]
			i = end - 1
			if expectKey {
				skipNext = binaryKeys[string(raw)]
				expectKey = false
				continue
			}
			if !skipping(stack) && !skipNext {
				scratch = walkString(raw, scratch, text, depth)
			}
			skipNext = false
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j := numberEnd(data, i)
			if !skipping(stack) && !skipNext && j-i >= 9 {
				text(data[i:j])
			}
			skipNext = false
			i = j - 1
		case 't', 'f', 'n': // true, false, null
			skipNext = false
		}
	}
}

// walkFrame is a container on walkStrings' path: an object or an array,
// and whether its values are skipped (a binary member's).
type walkFrame struct{ object, skip bool }

// skipping reports whether the innermost container's values are skipped.
func skipping(stack []walkFrame) bool { return len(stack) > 0 && stack[len(stack)-1].skip }

// walkString calls text for a string value's raw bytes, its escapes
// decoded into scratch (returned for the next string), unless it is
// binary, and walks it again when it holds escaped JSON of its own.
func walkString(raw, scratch []byte, text func([]byte), depth int) []byte {
	s := raw
	escaped := bytes.IndexByte(raw, '\\') >= 0
	if escaped {
		scratch = unescape(scratch[:0], raw)
		s = scratch
	}
	if isBinary(s) {
		return scratch
	}
	text(s)
	if escaped && depth < maxNestedDepth && bytes.IndexByte(s, '\\') >= 0 && looksLikeJSON(s) && json.Valid(s) {
		// s is this walk's scratch, which the nested walk (with a
		// scratch of its own) only reads.
		walkStrings(s, text, depth+1)
	}
	return scratch
}

// numberEnd returns the index after the number starting at d[i].
func numberEnd(d []byte, i int) int {
	for i < len(d) && (isDigit(d[i]) || d[i] == '-' || d[i] == '.' || d[i] == 'e' || d[i] == 'E' || d[i] == '+') {
		i++
	}
	return i
}

func looksLikeJSON(s []byte) bool {
	s = bytes.TrimLeft(s, " \t\r\n")
	return len(s) > 0 && (s[0] == '{' || s[0] == '[')
}

// isBinary reports whether a string is a payload rather than text: a data:
// URL, or 64 bytes or more of the base64 alphabet without a space.
func isBinary(s []byte) bool {
	return isDataURL(s) || isBase64Blob(s)
}

// isDataURL reports whether s is data:[<media type>][;base64],<data>.
func isDataURL(s []byte) bool {
	if len(s) <= 5 || !bytes.HasPrefix(s, []byte("data:")) && !bytes.HasPrefix(s, []byte("DATA:")) || s[5] == ' ' {
		return false
	}
	comma := bytes.IndexByte(s[:min(len(s), 256)], ',')
	return comma > 0 && bytes.IndexByte(s[:comma], ' ') < 0
}

// isBase64Blob reports whether s starts with 64 bytes of the base64
// alphabets (standard or URL) without a space.
func isBase64Blob(s []byte) bool {
	if len(s) < 64 {
		return false
	}
	for _, c := range s[:64] {
		if !(isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	// Text of 64 word characters in a row is rare; a blob has digits and
	// letters of both cases mixed through it.
	var lower, upper, digit bool
	for _, c := range s[:64] {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case isDigit(c):
			digit = true
		}
	}
	return lower && upper && digit
}

// unescape decodes the JSON escapes of a string's raw bytes (between the
// quotes, valid JSON) into dst, as a decoder would, lone surrogates as
// U+FFFD.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		// Copy the bytes up to the next escape at once.
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+k]...)
		i += k
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, i+3); ok && i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case isDigit(c):
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
