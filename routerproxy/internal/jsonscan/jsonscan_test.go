package jsonscan

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMembers(t *testing.T) {
	doc := []byte(` { "a" : [1, {"b": "}\"]"}], "c\u0064":"x\\\"y" ,"e":-1.5e3,"f":{},"g":null} `)
	var got [][2]string
	err := Members(doc, func(rawKey []byte, start, end int) error {
		got = append(got, [2]string{string(rawKey), string(doc[start:end])})
		return nil
	})
	assert.NoError(t, err)
	assert.Equal(t, [][2]string{{`"a"`, `[1, {"b": "}\"]"}]`}, {`"c\u0064"`, `"x\\\"y"`}, {`"e"`, `-1.5e3`}, {`"f"`, `{}`}, {`"g"`, `null`}}, got)

	for _, d := range []string{`[]`, `"s"`, ``, `1`} {
		assert.ErrorIs(t, Members([]byte(d), func([]byte, int, int) error { return nil }), ErrNotObject, d)
	}
	stop := errors.New("stop")
	n := 0
	assert.ErrorIs(t, Members([]byte(`{"a":1,"b":2}`), func([]byte, int, int) error { n++; return stop }), stop)
	assert.Equal(t, 1, n, "an error from f stops the walk")
}

// TestStringEnd: the string ends at the first quote that is not escaped,
// however many backslashes come before it.
func TestStringEnd(t *testing.T) {
	for _, c := range []struct{ doc, str string }{
		{`"" ,`, `""`},
		{`"model":1`, `"model"`},
		{`"a\"b" x`, `"a\"b"`},
		{`"a\\" x"`, `"a\\"`},
		{`"a\\\"b" x`, `"a\\\"b"`},
		{`"\\\\" x"`, `"\\\\"`},
		{`"x\u0022y" z`, `"x\u0022y"`},
		{`"unterminated \"`, `"unterminated \"`},
	} {
		assert.Equal(t, c.str, c.doc[:StringEnd([]byte(c.doc), 0)], c.doc)
	}
	doc := []byte(`{"k":"v\\"}`)
	assert.Equal(t, len(`{"k":"v\\"`), StringEnd(doc, 5), "a string not at the document's start")
}

// BenchmarkStringEnd: a key and a long text, the two strings a request
// body is made of.
func BenchmarkStringEnd(b *testing.B) {
	for _, c := range []struct{ name, doc string }{
		{"key", `"model":"gpt-4.1"`},
		{"text-4KiB", `"` + strings.Repeat("The patient reported mild pain. ", 128) + `"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := []byte(c.doc)
			b.SetBytes(int64(len(d)))
			for b.Loop() {
				if StringEnd(d, 0) == 0 {
					b.Fatal("no end")
				}
			}
		})
	}
}
