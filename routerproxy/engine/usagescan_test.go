package engine

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

var usageDocs = []string{
	`{"id":"c","choices":[{"message":{"content":"a \"usage\": {} } ]"}}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`,
	`{"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":1}}}`,
	`{"usage":null}`,
	`{"usage":{"prompt_tokens":null,"total_tokens":4}}`,
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"usage":{"prompt_tokens":1},"Usage":{"completion_tokens":2}}`,
	`{"USAGE":{"total_tokens":5}}`,
	`{"u\u0073age":{"total_tokens":5},"usage":{}}`,
	`{"uſage":{"total_tokens":5},"usage":{"total_tokens":1}}`,
	`{"usage":{"Prompt_Tokens":3,"prompt_tokens":4}}`,
	`{"usage":{"prompt_tokens":1.0}}`,
	`{"usage":{"prompt_tokens":1e3}}`,
	`{"usage":{"prompt_tokens":-5,"total_tokens":7}}`,
	`{"usage":{"prompt_tokens":99999999999999999999}}`,
	`{"usage":{"prompt_tokens":"5"}}`,
	`{"usage":[1,2]}`,
	`{"usage":"none"}`,
	`{"usage":5}`,
	`["usage",{"usage":{"total_tokens":1}}]`,
	`"usage"`,
	`{"usage":{"total_tokens":2}}trailing`,
	`{"usage":{"total_tokens":2}`,
	` { "a" : [ { } , [ ] , "x\\" ] , "usage" : { "total_tokens" : 3 , "prompt_tokens" : -0 } } `,
	`{"a\"usage":1,"usage":{"completion_tokens":8}}`,
	`{}`,
	`{"usage":{}}`,
	`{"usage":{"prompt_tokens":1,"prompt_tokens":2,"total_tokens":true}}`,
}

func referenceUsage(b []byte) (Usage, bool) {
	if !json.Valid(b) {
		return Usage{}, false
	}
	return decodeUsage(b)
}

// parseUsage answers what encoding/json answers, for the documents above
// and for random mutations of them.
func TestUsageScanMatchesEncodingJSON(t *testing.T) {
	check := func(doc []byte) {
		gu, gok := parseUsage(doc)
		wu, wok := referenceUsage(doc)
		if gu != wu || gok != wok {
			t.Fatalf("%q: scan %+v %v, encoding/json %+v %v", doc, gu, gok, wu, wok)
		}
	}
	decided := 0
	for _, d := range usageDocs {
		check([]byte(d))
		if json.Valid([]byte(d)) {
			if _, _, ok := scanUsage([]byte(d)); ok {
				decided++
			}
		}
	}
	if decided < 8 {
		t.Errorf("the fast path decided only %d documents", decided)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,\ 0123456789-.eEusagepromt_klnU` + "\u017f")
	for range 200000 {
		doc := []byte(usageDocs[r.IntN(len(usageDocs))])
		for range 1 + r.IntN(3) {
			i := r.IntN(len(doc))
			switch r.IntN(3) {
			case 0:
				doc[i] = alphabet[r.IntN(len(alphabet))]
			case 1:
				doc = append(doc[:i], doc[i+1:]...)
			default:
				doc = append(doc[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, doc[i:]...)...)
			}
			if len(doc) == 0 {
				break
			}
		}
		check(doc)
	}
}

func FuzzUsageScan(f *testing.F) {
	for _, d := range usageDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		gu, gok := parseUsage(doc)
		wu, wok := referenceUsage(doc)
		if gu != wu || gok != wok {
			t.Fatalf("%q: scan %+v %v, encoding/json %+v %v", doc, gu, gok, wu, wok)
		}
	})
}

func BenchmarkParseUsage(b *testing.B) {
	doc := []byte(usageDocs[0])
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parseUsage(doc)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			referenceUsage(doc)
		}
	})
}
