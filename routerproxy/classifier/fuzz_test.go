package classifier

import (
	"encoding/json"
	"testing"
)

// FuzzBody: any valid JSON body classifies without a panic, the same way
// twice, with linear work (make fuzz runs it; go test runs the seeds).
func FuzzBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"card 4111 1111 1111 1111"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"SSN 536-22-8410"}]}]}`,
		`{"model":"m","input":["jane@example.com","+44 20 7946 0958"]}`,
		`{"model":"m","prompt":"IBAN DE89 3704 0044 0532 0130 00, MRN: 00482913, E11.9 diagnosis"}`,
		`{"a":{"image_url":{"url":"data:x"}},"b":"\ud800\u0041","c":[1,-2.5e9,"(555) 234-5678"]}`,
		`"Patient Jane Roe, diabetes"`, `[]`, `null`, `12345678901234`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		a, b := Body(body), Body(body)
		if a != b {
			t.Fatalf("not deterministic: %v then %v", a.Names(), b.Names())
		}
		var sc scanner
		sc.text(body)
		if sc.steps > 3000*(len(body)+64) {
			t.Fatalf("%d steps for %d bytes", sc.steps, len(body))
		}
	})
}
