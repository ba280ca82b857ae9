package classifier_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/classifier"
)

// sample is one labelled text of testdata/corpus.tsv.
type sample struct {
	kind, text string
}

func loadCorpus(t testing.TB) []sample {
	f, err := os.Open("testdata/corpus.tsv")
	require.NoError(t, err)
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, text, ok := strings.Cut(line, "\t")
		require.True(t, ok, "corpus line without a tab: %q", line)
		out = append(out, sample{kind, strings.ReplaceAll(text, `\n`, "\n")})
	}
	require.NoError(t, sc.Err())
	return out
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// asciiEscaped writes every non-letter of s as a \u escape, as a client
// that escapes aggressively would.
func asciiEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// places put a text everywhere a model reads one: a request body for each.
var places = map[string]func(text string) string{
	"user message": func(s string) string {
		return `{"model":"m","messages":[{"role":"user","content":` + js(s) + `}]}`
	},
	"text part": func(s string) string {
		return `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"text","text":` + js(s) + `}]}]}`
	},
	"system prompt": func(s string) string {
		return `{"model":"m","messages":[{"role":"system","content":` + js(s) + `},{"role":"user","content":"hi"}]}`
	},
	"tool call arguments": func(s string) string {
		args, _ := json.Marshal(map[string]string{"note": s})
		return `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"save","arguments":` + js(string(args)) + `}}]}]}`
	},
	"tool result": func(s string) string {
		return `{"model":"m","messages":[{"role":"tool","tool_call_id":"c1","content":` + js(s) + `}]}`
	},
	"completions prompt": func(s string) string {
		return `{"model":"m","prompt":[` + js("Summarize:") + `,` + js(s) + `]}`
	},
	"embeddings input": func(s string) string {
		return `{"model":"m","input":` + js(s) + `}`
	},
	"escaped content": func(s string) string {
		return `{"model":"m","messages":[{"role":"user","content":` + asciiEscaped(s) + `}]}`
	},
	"anthropic system": func(s string) string {
		return `{"model":"m","system":[{"type":"text","text":` + js(s) + `}],"messages":[{"role":"user","content":"go"}]}`
	},
}

// TestCorpus classifies every labelled text in every place: each positive
// must fire its detector (and yield its class), each near-miss nothing.
// It reports recall per kind and the false-positive rate, and holds them to
// the classifier's goals: recall at least 0.99 per kind, at most 1% of the
// near-misses routed as sensitive.
func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	byName := map[string]classifier.Detector{}
	for _, d := range classifier.All() {
		byName[d.Name()] = d
	}
	type tally struct{ hit, n int }
	recall := map[string]*tally{}
	var fp, benign int
	var misses, falsePositives []string
	for _, s := range corpus {
		for place, wrap := range places {
			body := []byte(wrap(s.text))
			require.True(t, json.Valid(body), "%s: %s", place, body)
			got := classifier.Body(body)
			if s.kind == "benign" {
				benign++
				if !got.Empty() {
					fp++
					falsePositives = append(falsePositives, fmt.Sprintf("%s %v: %q", place, got.Names(), s.text))
				}
				continue
			}
			d, ok := byName[s.kind]
			require.True(t, ok, "unknown kind %q", s.kind)
			tl := recall[s.kind]
			if tl == nil {
				tl = &tally{}
				recall[s.kind] = tl
			}
			tl.n++
			if got.Has(d) {
				tl.hit++
				assert.Contains(t, got.Classes(), d.Class())
			} else {
				misses = append(misses, fmt.Sprintf("%s %s %v: %q", s.kind, place, got.Names(), s.text))
			}
		}
	}
	kinds := make([]string, 0, len(recall))
	for k := range recall {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		r := recall[k]
		t.Logf("recall %-28s %d/%d = %.3f", k, r.hit, r.n, float64(r.hit)/float64(r.n))
		assert.GreaterOrEqual(t, float64(r.hit)/float64(r.n), 0.99, "recall of %s", k)
	}
	t.Logf("false positives: %d/%d = %.4f", fp, benign, float64(fp)/float64(benign))
	assert.LessOrEqual(t, float64(fp)/float64(benign), 0.01)
	for _, m := range misses {
		t.Log("missed: " + m)
	}
	for _, m := range falsePositives {
		t.Log("false positive: " + m)
	}
	assert.Len(t, kinds, 8, "every detector but body-over-limit has positives in the corpus")
}
