package promtext

import "testing"

func TestSampleValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{` 3`, 3, true},
		{`{model_name="a",le="0.5"} 0.25`, 0.25, true},
		{`{a="}"} 7 1700000000000`, 7, true},
		{`{a="b"} NaN`, 0, true},
		{`{a="b"}`, 0, false},
		{` x`, 0, false},
		{``, 0, false},
	} {
		v, ok := SampleValue(c.in)
		if ok != c.ok || (ok && c.in != `{a="b"} NaN` && v != c.want) {
			t.Errorf("SampleValue(%q) = %v, %v; want %v, %v", c.in, v, ok, c.want, c.ok)
		}
	}
}
