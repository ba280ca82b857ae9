package proxyapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Strings that exercise every escape encoding/json makes.
var auditStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnewline\nreturn\rback\bfeed\f",
	"ctrl \x00\x01\x1f\x7f", "utf8 é ✓ 日本 🚀", "bad utf8 \xff\xfe \xc3", "line sep \u2028 para sep \u2029",
	"gpt-4o-mini", "10.0.0.1:5555",
}

var auditFloats = []float64{0, 1, -1, 0.5, 12.345, 1e-7, 1.5e-9, 123456789.125, 1e21, 3e22, 1e20, 0.000001, 999999.999}

var auditBodies = []json.RawMessage{nil, {}, json.RawMessage(`{"model":"m", "messages":[{"role":"user","content":"<b>&</b>"}]}`), json.RawMessage(" [1, 2,\n 3] ")}

// fill sets every field of v (a struct) from the pools above, so a field
// added to AuditEntry without AppendJSON support makes the outputs differ.
func fill(r *rand.Rand, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case time.Time:
			zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600)}
			f.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(zones[r.IntN(len(zones))])))
		case []string:
			if n := r.IntN(3); n > 0 {
				f.Set(reflect.ValueOf(auditStrings[:n]))
			}
		case json.RawMessage:
			f.Set(reflect.ValueOf(auditBodies[r.IntN(len(auditBodies))]))
		case string:
			f.SetString(auditStrings[r.IntN(len(auditStrings))])
		case bool:
			f.SetBool(r.IntN(2) == 1)
		case int, int64:
			f.SetInt([]int64{0, 1, -1, 200, 1 << 40, -1 << 62}[r.IntN(6)])
		case float64:
			x := auditFloats[r.IntN(len(auditFloats))]
			if r.IntN(2) == 1 {
				x = -x
			}
			f.SetFloat(x)
		default:
			panic("AuditEntry field " + v.Type().Field(i).Name + " has a type fill does not know: teach fill and AppendJSON")
		}
	}
}

func TestAuditEntryAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var e AuditEntry
		fill(r, reflect.ValueOf(&e).Elem())
		want, werr := json.Marshal(&e)
		got, gerr := e.AppendJSON(nil)
		if werr != nil {
			require.Error(t, gerr, "entry %d: Marshal failed (%v), AppendJSON did not", i, werr)
			continue
		}
		require.NoError(t, gerr, "entry %d", i)
		require.Equal(t, string(want)+"\n", string(got), "entry %d", i)
	}
	var zero AuditEntry
	want, _ := json.Marshal(&zero)
	got, err := zero.AppendJSON([]byte("prefix:"))
	require.NoError(t, err)
	require.Equal(t, "prefix:"+string(want)+"\n", string(got), "appends, and omits what Marshal omits")
}

// appendJSONString quotes as encoding/json does, with and without HTML
// escaping (audit entries use Marshal's default, error bodies do not).
func TestAppendJSONStringMatchesEncoder(t *testing.T) {
	for _, html := range []bool{true, false} {
		for _, s := range append(auditStrings, "a&b<c>d", "\u003c") {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			require.NoError(t, enc.Encode(s))
			require.Equal(t, strings.TrimSuffix(buf.String(), "\n"), string(appendJSONString(nil, html, s)), "html=%v %q", html, s)
		}
	}
}

func TestAuditEntryAppendJSONRefusesWhatMarshalRefuses(t *testing.T) {
	for _, e := range []AuditEntry{
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{RequestBody: json.RawMessage(`{"unterminated"`)},
	} {
		_, werr := json.Marshal(&e)
		require.Error(t, werr)
		_, gerr := e.AppendJSON(nil)
		require.Error(t, gerr)
	}
}

func BenchmarkAuditEntryEncode(b *testing.B) {
	e := AuditEntry{Time: time.Now(), Router: "r", Namespace: "ns", Path: "/v1/chat/completions", Rule: "r19", Backend: "b0", Tier: "local",
		Model: "bench-8b", Stream: false, Status: 200, Outcome: OutcomeOK, LatencyMs: 0.412, FirstTokenMs: 0.301, Attempts: 1,
		PromptTokens: 12, CompletionTokens: 9, TotalTokens: 21, CostUSD: "0.0000039", Budget: "all", Caller: "bench", Client: "127.0.0.1:5555"}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(&e)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf, _ = e.AppendJSON(buf[:0])
		}
	})
}
