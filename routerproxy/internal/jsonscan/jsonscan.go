// Package jsonscan walks JSON documents that json.Valid accepted, without
// decoding them: the top-level members of an object and the byte range of
// each value. The router-proxy reads a request's model and stream and a
// response's usage this way (decoding whole documents with encoding/json
// cost several µs per request in make bench-proxy).
package jsonscan

import (
	"bytes"
	"errors"
)

// ErrNotObject is returned by Members for a document that is not an object.
var ErrNotObject = errors.New("the body is not a JSON object")

// Members calls f for every top-level member of the object in data, which
// must be valid JSON (json.Valid): the scan trusts the grammar and only
// tracks strings and nesting. rawKey is the key as written, quotes and
// escapes included; the value is data[start:end]. An error from f stops
// the walk and is returned.
func Members(data []byte, f func(rawKey []byte, start, end int) error) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ErrNotObject
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		if data[i] != '"' {
			return ErrNotObject
		}
		kEnd := StringEnd(data, i)
		rawKey := data[i:kEnd]
		i = SkipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return ErrNotObject
		}
		vStart := SkipSpace(data, i+1)
		vEnd := ValueEnd(data, vStart)
		if err := f(rawKey, vStart, vEnd); err != nil {
			return err
		}
		i = SkipSpace(data, vEnd)
		if i >= len(data) {
			return ErrNotObject
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return nil
		default:
			return ErrNotObject
		}
	}
	return ErrNotObject
}

// SkipSpace returns the index of the first non-space byte from i.
func SkipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index after the string starting at d[i] == '"':
// the first quote not escaped (preceded by an even run of backslashes),
// found with bytes.IndexByte. Request texts are long and their quotes few:
// on a 4 KiB text this is some 40 times faster than testing every byte,
// and a short key costs about a nanosecond more.
func StringEnd(d []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return len(d)
		}
		q := j + k
		slashes := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// ValueEnd returns the index after the value starting at d[i].
func ValueEnd(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return StringEnd(d, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				j = StringEnd(d, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(d)
	default: // number, true, false, null
		j := i
		for j < len(d) {
			switch d[j] {
			case ' ', '\t', '\r', '\n', ',', '}', ']':
				return j
			}
			j++
		}
		return j
	}
}
