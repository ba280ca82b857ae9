package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Money is an amount in picodollars (1e-12 USD). Prices and caps are exact
// decimal strings; prices with more than 6 decimals per million tokens are
// rounded up, so a budget never undercounts.
type Money int64

// ParseUSD converts a decimal USD string to Money, rounding up.
func ParseUSD(s string) (Money, error) { return parseScaled(s, 1e12) }

// parseScaled reads a non-negative decimal and returns it times scale,
// rounded up.
func parseScaled(s string, scale int64) (Money, error) {
	if s == "" {
		return 0, nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("invalid USD amount %q", s)
	}
	r.Mul(r, big.NewRat(scale, 1))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return Money(math.MaxInt64), nil
	}
	return Money(q.Int64()), nil
}

// String formats the amount as a decimal USD string without trailing zeros.
func (m Money) String() string {
	neg := m < 0
	if neg {
		m = -m
	}
	var buf [48]byte
	b := buf[:0]
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, int64(m/1e12), 10)
	if frac := int64(m % 1e12); frac != 0 {
		// 1e12+frac has the twelve digits, zero-padded, after its "1".
		b = append(b, '.')
		b = strconv.AppendInt(b, 1e12+frac, 10)
		b = append(b[:len(b)-13], b[len(b)-12:]...)
		b = bytes.TrimRight(b, "0")
	}
	return string(b)
}

// Price is a backend's cost per token.
type Price struct {
	// Prompt and Completion are picodollars per token (USD per million
	// tokens times 1e6).
	Prompt, Completion Money
}

// ParsePrice reads a backend's costPerMillionTokens; nil means free.
func ParsePrice(c *proxyapi.Cost) (Price, error) {
	if c == nil {
		return Price{}, nil
	}
	// USD per million tokens -> picodollars per token: x * 1e12 / 1e6.
	p, err := parseScaled(c.PromptUSD, 1e6)
	if err != nil {
		return Price{}, err
	}
	q, err := parseScaled(c.CompletionUSD, 1e6)
	if err != nil {
		return Price{}, err
	}
	return Price{Prompt: p, Completion: q}, nil
}

// Cost of a usage at this price.
func (p Price) Cost(u Usage) Money {
	return Money(u.PromptTokens)*p.Prompt + Money(u.CompletionTokens)*p.Completion
}
