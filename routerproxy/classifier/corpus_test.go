package classifier_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

// sample is one labelled text of testdata/corpus.tsv.
type sample struct {
	kind, text string
}

func loadCorpus(t testing.TB) []sample { return loadSamples(t, "testdata/corpus.tsv") }

func loadSamples(t testing.TB, path string) []sample {
	f, err := os.Open(path)
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
		require.True(t, ok, "%s: corpus line without a tab: %q", path, line)
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
	"middle of a conversation": conversation,
	"anthropic tool result": func(s string) string {
		return `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":` + js(s) + `}]}]}]}`
	},
	"anthropic tool use input": func(s string) string {
		return `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"save","input":{"note":` + js(s) + `}}]}]}`
	},
	"responses function output": func(s string) string {
		return `{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":` + js(s) + `}]}`
	},
}

// conversation puts the text in the middle message of a long chat, between
// ordinary turns that carry nothing sensitive, as an agent's history does.
func conversation(s string) string {
	turns := []string{
		"system", "You are a helpful assistant for the operations team. Answer concisely and keep a friendly tone.",
		"user", "Can you help me draft a few messages today? I have a busy afternoon.",
		"assistant", "Of course. What would you like to start with?",
		"user", "First, a reminder about Thursday's planning meeting at 10:30 in room 4B, with the agenda attached.",
		"assistant", "Here is a draft: \"Reminder: planning meeting on Thursday at 10:30 in room 4B. The agenda is attached.\"",
		"user", s,
		"assistant", "Done. Is there anything else you would like me to change?",
		"user", "Make the tone a bit friendlier and keep it under 80 words.",
		"assistant", "Sure, here is a friendlier version of the same message.",
		"user", "Thanks, that's all for now.",
	}
	var b strings.Builder
	b.WriteString(`{"model":"m","stream":true,"messages":[`)
	for i := 0; i < len(turns); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":` + js(turns[i]) + `,"content":` + js(turns[i+1]) + `}`)
	}
	b.WriteString(`]}`)
	return b.String()
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
	assert.GreaterOrEqual(t, len(kinds), 8, "the eight original detectors have positives in the corpus (the held-out corpus has every other)")
}

// TestHeldOutCorpus classifies every text of the held-out corpus
// (testdata/heldout*.tsv, written by routerproxy/classifier/internal/corpusgen from
// Presidio's tests and templates, python-stdnum's test vectors and clinical
// notes in the i2b2 layout; never tuned against) in every place of a body.
// Each positive must fire the detector it is labelled with; a benign-<kind>
// text nothing. It logs recall per kind, false positives per benign kind,
// and every miss and false positive, and holds recall >= 0.99 per kind and
// false positives <= 1% per benign kind. A kind no detector of
// classifier.All() bears yet is reported, not held.
func TestHeldOutCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/heldout*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	byName := map[string]classifier.Detector{}
	for _, d := range classifier.All() {
		byName[d.Name()] = d
	}
	tallies := map[string]*heldOutTally{}
	placeNames := make([]string, 0, len(places))
	for p := range places {
		placeNames = append(placeNames, p)
	}
	sort.Strings(placeNames)
	for _, file := range files {
		ft := &heldOutFileTally{}
		for _, s := range loadSamples(t, file) {
			tl := tallies[s.kind]
			if tl == nil {
				tl = &heldOutTally{}
				tallies[s.kind] = tl
			}
			d, known := byName[s.kind]
			tl.classify(t, s, d, known, placeNames, ft)
		}
		t.Logf("file %-32s positives found %d/%d = %.3f, benign classified %d/%d = %.4f", filepath.Base(file),
			ft.hit, ft.pos, float64(ft.hit)/float64(max(ft.pos, 1)), ft.fp, ft.ben, float64(ft.fp)/float64(max(ft.ben, 1)))
	}
	kinds := make([]string, 0, len(tallies))
	for k := range tallies {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		_, known := byName[k]
		tallies[k].hold(t, k, known)
	}
	for _, k := range kinds {
		for _, w := range tallies[k].wrong {
			if strings.HasPrefix(k, "benign-") {
				t.Logf("false positive %s %s", k, w)
			} else {
				t.Logf("missed %s %s", k, w)
			}
		}
	}
}

// heldOutTally counts one kind of the held-out corpus: the texts, the
// bodies classified, those that fired the kind's detector (hit) and any
// (sensitive), and every miss or false positive: the detectors that
// fired, the places, the text.
type heldOutTally struct {
	hit, sensitive, n, texts int
	wrong                    []string
}

// heldOutFileTally counts one file: positives found, benign texts
// classified sensitive.
type heldOutFileTally struct{ hit, pos, fp, ben int }

// classify classifies the sample in every place of a body and counts it.
func (tl *heldOutTally) classify(t *testing.T, s sample, d classifier.Detector, known bool, placeNames []string, ft *heldOutFileTally) {
	tl.texts++
	benign := strings.HasPrefix(s.kind, "benign-")
	var wrongAt []string
	var fired classifier.Set
	for _, place := range placeNames {
		body := []byte(places[place](s.text))
		require.True(t, json.Valid(body), "%s: %s", place, body)
		got := classifier.Body(body)
		tl.n++
		if !got.Empty() {
			tl.sensitive++
		}
		switch {
		case benign:
			ft.ben++
		case known:
			ft.pos++
		}
		switch {
		case benign && !got.Empty(), !benign && known && !got.Has(d):
			wrongAt = append(wrongAt, place)
			fired |= got
			if benign {
				ft.fp++
			}
		case !benign && known:
			tl.hit++
			ft.hit++
			assert.Contains(t, got.Classes(), d.Class(), "%s in %s", s.kind, place)
		}
	}
	if len(wrongAt) > 0 {
		where := fmt.Sprintf("%d/%d places", len(wrongAt), len(placeNames))
		if len(wrongAt) < 4 {
			where = strings.Join(wrongAt, ", ")
		}
		tl.wrong = append(tl.wrong, fmt.Sprintf("%v in %s: %q", fired.Names(), where, s.text))
	}
}

// hold logs the kind's rate and holds it: false positives <= 1% for a
// benign kind, recall >= 0.99 for a detector's; a kind no detector bears
// yet is reported, not held.
func (tl *heldOutTally) hold(t *testing.T, k string, known bool) {
	switch {
	case strings.HasPrefix(k, "benign-"):
		rate := float64(tl.sensitive) / float64(tl.n)
		t.Logf("false positives %-28s %5d/%-5d = %.4f (%d texts)", k, tl.sensitive, tl.n, rate, tl.texts)
		assert.LessOrEqual(t, rate, 0.01, "false positives of %s", k)
	case known:
		rate := float64(tl.hit) / float64(tl.n)
		t.Logf("recall          %-28s %5d/%-5d = %.3f (%d texts; routed sensitive by any detector %.3f)", k, tl.hit, tl.n, rate, tl.texts, float64(tl.sensitive)/float64(tl.n))
		assert.GreaterOrEqual(t, rate, 0.99, "recall of %s", k)
	default:
		t.Logf("not measurable  %-28s no detector of this name yet; routed sensitive by others %d/%d (%d texts)", k, tl.sensitive, tl.n, tl.texts)
	}
}
