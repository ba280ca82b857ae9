package main

import (
	"slices"
	"testing"
)

func TestICD10Categories(t *testing.T) {
	got := icd10Categories()
	for _, c := range []string{"A00", "B99", "C50", "D49", "E11", "E90", "F00", "I10", "J45", "K95", "O99", "S72", "T98", "U07", "V01", "Y99", "Z00"} {
		if !slices.Contains(got, c) {
			t.Errorf("icd10Categories lacks %s", c)
		}
	}
	for _, c := range []string{"D90", "E91", "H96", "K96", "P97", "T99", "U86"} {
		if slices.Contains(got, c) {
			t.Errorf("icd10Categories has %s, outside every chapter", c)
		}
	}
	if !slices.IsSorted(got) || len(got) != 2555 {
		t.Errorf("icd10Categories: %d categories (sorted %v), want 2555 sorted", len(got), slices.IsSorted(got))
	}
}

func TestClinicalForm(t *testing.T) {
	for w, want := range map[string]bool{
		"cholecystectomy": true, "lisinopril": true, "osteomyelitis": true, "atorvastatin": true, "apixaban": true,
		"laparotomy": true, "spasm": false, "cele": false, "schema": false, "latency": false, "april": false,
	} {
		if got := clinicalForm(w); got != want {
			t.Errorf("clinicalForm(%q) = %v, want %v", w, got, want)
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

func TestDrugGloss(t *testing.T) {
	for gloss, want := range map[string]bool{
		"a digitalis glycoside (trade name Lanoxin) used in treating congestive heart failure":       true,
		"an anticoagulant (trade names Coumadin and Panwarfin) used to prevent and treat a thrombus": true,
		"an antiarrhythmic drug (trade name Cordarone) used to treat life-threatening arrhythmias":   true,
		"a colorless flammable liquid used as a solvent":                                             false,
		"a game played on a board": false,
	} {
		if got := drugGloss.MatchString(gloss); got != want {
			t.Errorf("drugGloss(%q) = %v, want %v", gloss, got, want)
		}
	}
}

func TestFirstMedicalCapitals(t *testing.T) {
	wn := fixtureWordNet()
	wn.synsets["n"]["00000020"] = &synset{lexFile: "26", hypernyms: []string{"00000001"}, words: []string{"AIDS"}} // the disease
	wn.synsets["n"]["00000021"] = &synset{lexFile: "06", words: []string{"aid"}}                                   // a help
	wn.synsets["n"]["00000022"] = &synset{lexFile: "27", words: []string{"DNA"}}                                   // an acid
	wn.index["n"]["aids"] = []string{"00000020", "00000021"}
	wn.index["n"]["dna"] = []string{"00000022"}
	if !wn.firstMedical("AIDS") || wn.firstMedical("DNA") || wn.firstMedical("Aids") {
		t.Errorf("firstMedical: AIDS %v (want true), DNA %v, Aids %v (want false)", wn.firstMedical("AIDS"), wn.firstMedical("DNA"), wn.firstMedical("Aids"))
	}
}
