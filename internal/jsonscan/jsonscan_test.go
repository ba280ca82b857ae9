package jsonscan

import (
	"errors"
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
