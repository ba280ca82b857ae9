package main

import (
	"slices"
	"testing"
)

func TestSQLValues(t *testing.T) {
	got, err := sqlValues(`1,'PAIN ''GENERAL''/MULTIPLE',NULL,'R52, R68.8', 0`)
	want := []string{"1", "PAIN 'GENERAL'/MULTIPLE", "", "R52, R68.8", "0"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("sqlValues = %q, %v; want %q", got, err, want)
	}
	if _, err := sqlValues(`1,'unterminated`); err == nil {
		t.Fatal("sqlValues of an unterminated string: want an error")
	}
}

func TestICDCategories(t *testing.T) {
	for in, want := range map[string][]string{
		"R07.3, R07.4":            {"R07"},
		"B20-B24":                 {"B20", "B21", "B22", "B23", "B24"},
		"E11, E12.9":              {"E11", "E12"},
		"A00-B99":                 {"A00"}, // across letters: only the first
		"see text":                nil,
		"G93.3, R53, Z71.1-Z71.3": {"G93", "R53", "Z71"},
	} {
		if got := icdCategories(in); !slices.Equal(got, want) {
			t.Errorf("icdCategories(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPluralAndNameKey(t *testing.T) {
	for in, want := range map[string]string{"pneumonia": "pneumonias", "artery": "arteries", "abscess": "abscesses", "day": "days", "rash": "rashes"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"José": "jose", "O'Brien": "obrien", "Jürgen": "jurgen", "Çelik": "celik", "李": "", "Jean-Luc": "", "": ""} {
		if got := nameKey(in); got != want {
			t.Errorf("nameKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// fixtureWordNet: a few synsets shaped like WordNet 3.0's, below the real
// root pathological_state (14051917).
func fixtureWordNet() *wordnet {
	wn := &wordnet{
		synsets: map[string]map[string]*synset{"n": {}, "v": {}, "a": {}, "r": {}},
		index:   map[string]map[string][]string{"n": {}, "v": {}, "a": {}, "r": {}},
		counts:  map[string]int{},
		exc:     map[string]map[string][]string{"n": {}, "v": {}, "a": {}, "r": {}},
		medMemo: map[string]bool{},
	}
	noun := func(off, lex string, hyper ...string) { wn.synsets["n"][off] = &synset{lexFile: lex, hypernyms: hyper} }
	noun("14051917", "26")                                                                // pathological_state
	noun("00000001", "26", "14051917")                                                    // disease
	noun("00000002", "26", "00000001")                                                    // common cold
	noun("00000003", "07")                                                                // coldness, a temperature
	noun("00000004", "26", "00000001")                                                    // cancer
	noun("00000005", "09")                                                                // Cancer, a constellation
	noun("00000006", "08")                                                                // heart, a body part
	noun("00000007", "04")                                                                // laparotomy: an act, not below a root
	wn.synsets["a"]["00000010"] = &synset{lexFile: "00"}                                  // cold: of low temperature
	wn.synsets["a"]["00000011"] = &synset{lexFile: "01", related: []string{"n:00000006"}} // cardiac: of the heart
	wn.index["n"]["cold"] = []string{"00000002", "00000003"}
	wn.index["a"]["cold"] = []string{"00000010"}
	wn.index["n"]["cancer"] = []string{"00000004", "00000005"}
	wn.index["n"]["infection"] = []string{"00000001"}
	wn.index["a"]["cardiac"] = []string{"00000011"}
	wn.index["n"]["laparotomy"] = []string{"00000007"}
	wn.counts["cold n 1"] = 5
	wn.counts["cold n 2"] = 11
	wn.counts["cold a 1"] = 43
	wn.counts["cancer n 1"] = 15
	return wn
}

func TestWordNetJudge(t *testing.T) {
	wn := fixtureWordNet()
	for w, want := range map[string]bool{
		"cold":       false, // 5 medical uses of 59
		"cancer":     true,  // 15 of 15
		"infection":  true,  // no tagged use: its first sense is medical
		"infections": true,  // by its lemma
		"cardiac":    true,  // an adjective of a body part
		"laparotomy": false, // known, not below a root
		"thrust":     false, // unknown
	} {
		if got := wn.judge(w).medicalWord(); got != want {
			t.Errorf("judge(%q).medicalWord() = %v, want %v (%+v)", w, got, want, wn.judge(w))
		}
	}
	if v := wn.judge("laparotomy"); !v.known || v.anyMedical || !v.clinicalKind {
		t.Errorf("judge(laparotomy) = %+v, want known, no medical sense, of a clinical kind (noun.act)", v)
	}
	if v := wn.judge("untranslated"); v.known {
		t.Errorf("judge(untranslated) = %+v: the fixture does not know translated", v)
	}
}
