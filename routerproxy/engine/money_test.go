package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Money.String writes what the fmt-based formatting it replaced wrote.
func TestMoneyStringFormatting(t *testing.T) {
	ref := func(m Money) string {
		neg := m < 0
		if neg {
			m = -m
		}
		s := strconv.FormatInt(int64(m/1e12), 10)
		if frac := int64(m % 1e12); frac != 0 {
			s += "." + strings.TrimRight(fmt.Sprintf("%012d", frac), "0")
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	r := rand.New(rand.NewPCG(3, 4))
	values := []Money{0, 1, -1, 1e12, -1e12, 1e12 + 1, 999999999999, 3e10, 123456789012345, math.MaxInt64, -math.MaxInt64}
	for range 10000 {
		values = append(values, Money(r.Int64N(1e18)-5e17), Money(r.Int64N(1e13)))
	}
	for _, m := range values {
		if got, want := m.String(), ref(m); got != want {
			t.Fatalf("%d: %q, want %q", int64(m), got, want)
		}
	}
}
