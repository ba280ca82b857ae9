package main

import (
	"fmt"
	"strings"
)

// The health vocabulary's sources are WordNet (its medical synsets, see
// medicalRoots) and SCOWL's word lists judged by WordNet and by the forms
// below; the ICD-10 categories are the classification's chapter ranges.
// All three may be embedded in an Apache-2.0 binary: SOURCES.md says why.

// medicalLemmaWords: the words of the lemmas of WordNet's medical synsets
// (nouns below medicalRoots, adjectives and verbs related to one),
// lowercase letters only: "lipitor" and "atorvastatin" of
// atorvastatin/Lipitor, "ischemic" and "attack" of
// transient_ischemic_attack. The health filter judges each.
func (wn *wordnet) medicalLemmaWords() map[string]bool {
	out := map[string]bool{}
	for _, pos := range []string{"n", "a", "v"} {
		for off, s := range wn.synsets[pos] {
			if !wn.medicalSense(pos, off) {
				continue
			}
			for _, lemma := range s.words {
				lemma, _, _ = strings.Cut(lemma, "(") // adjective markers: "(a)", "(p)"
				for _, w := range strings.FieldsFunc(strings.ToLower(lemma), func(r rune) bool { return r == '_' || r == '-' }) {
					if isLowerAlpha(w) {
						out[w] = true
					}
				}
			}
		}
	}
	return out
}

// clinicalSuffixes: word endings that make a rare word a clinical one when
// WordNet cannot say (it does not know the word, or knows it in a
// non-medical kind only): the Greek and Latin endings of diseases,
// symptoms and procedures, and the stems the USAN and INN naming schemes
// give drug classes (-pril, -sartan, -statin: facts of nomenclature).
// Checked against SCOWL's rare words only (size above 35, at most 100
// SUBTLEX occurrences), at 6 letters or more.
var clinicalSuffixes = []string{
	// conditions and symptoms
	"itis", "osis", "iasis", "emia", "aemia", "algia", "pathy", "uria", "plegia", "paresis",
	"rrhea", "rrhoea", "rrhage", "rrhagia", "megaly", "penia", "trophy", "cardia", "pnea", "pnoea",
	"oxia", "emesis", "ptosis", "sthesia", "kinesia", "phagia", "phasia", "trophic", "noma", "sarcoma",
	"lymphoma", "myeloma", "glioma", "blastoma", "thelioma", "adenoma", "fibroma", "lipoma", "ectasis", "ectasia",
	"cele", "spasm", "stenosis", "sclerosis", "itic", "otic", "emic", "aemic", "pathic", "plegic",
	// procedures
	"ectomy", "otomy", "ostomy", "plasty", "scopy", "pexy", "rrhaphy", "centesis", "desis", "tripsy",
	// drug stems (USAN / INN)
	"cillin", "mycin", "micin", "cycline", "floxacin", "oxacin", "conazole", "nidazole", "prazole", "statin",
	"pril", "sartan", "olol", "alol", "dipine", "tidine", "navir", "previr", "asvir", "buvir", "vudine",
	"ciclovir", "clovir", "citabine", "platin", "rubicin", "taxel", "tinib", "zumab", "ximab", "umab", "mumab",
	"gliptin", "gliflozin", "glitazone", "glinide", "parin", "xaban", "gatran", "triptan", "setron",
	"azepam", "azolam", "oxetine", "pramine", "triptyline", "peridol", "apine", "profen", "caine",
	"dronate", "formin", "terol", "tropium", "lukast", "semide", "thiazide", "zosin", "afil", "barbital",
	"olone", "isone", "asone", "sonide", "tretin", "vastatin", "lutamide", "relin", "tocin", "pressin",
	"opioid", "steroid", "codone", "morphone", "thyroxine",
}

// clinicalForm: w, of 6 letters or more, ends in one of clinicalSuffixes
// with at least three letters before it (not "spasm", "cele" alone).
func clinicalForm(w string) bool {
	for _, s := range clinicalSuffixes {
		if len(w) >= len(s)+3 && len(w) >= 6 && strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// icd10Chapters: the three-character category ranges of the chapters of
// ICD-10-CM (as published by CDC's National Center for Health Statistics,
// a US government work in the public domain) joined with those of WHO's
// ICD-10 where they are wider (C00-D48 in ICD-10 is C00-D49 in ICD-10-CM;
// E90, F00, K00-K93, S00-T98, V01-Y98): code ranges only, no title.
// Categories inside a chapter that neither uses (A10, E17) pass too: the
// scanner checks a code's shape and its context, and a code that does not
// exist is rare in text that is not clinical.
var icd10Chapters = [][2]string{
	{"A00", "B99"}, // infectious and parasitic
	{"C00", "D49"}, // neoplasms
	{"D50", "D89"}, // blood and immune
	{"E00", "E90"}, // endocrine, nutritional, metabolic (E89 in ICD-10-CM, E90 in ICD-10)
	{"F00", "F99"}, // mental (F01 in ICD-10-CM, F00 in ICD-10)
	{"G00", "G99"}, // nervous system
	{"H00", "H59"}, // eye
	{"H60", "H95"}, // ear
	{"I00", "I99"}, // circulatory
	{"J00", "J99"}, // respiratory
	{"K00", "K95"}, // digestive (K93 in ICD-10)
	{"L00", "L99"}, // skin
	{"M00", "M99"}, // musculoskeletal
	{"N00", "N99"}, // genitourinary
	{"O00", "O99"}, // pregnancy (O9A in ICD-10-CM: a letter, which the lookup does not take)
	{"P00", "P96"}, // perinatal
	{"Q00", "Q99"}, // congenital
	{"R00", "R99"}, // symptoms and signs
	{"S00", "T98"}, // injury and poisoning (T88 in ICD-10-CM)
	{"U00", "U85"}, // special purposes (U07.1 COVID-19)
	{"V00", "Y99"}, // external causes (V01-Y98 in ICD-10)
	{"Z00", "Z99"}, // factors influencing health status
}

// icd10Categories expands icd10Chapters ("S00"-"T98" runs S00..S99, T00..T98).
func icd10Categories() []string {
	var out []string
	for _, r := range icd10Chapters {
		from, to := icdIndex(r[0]), icdIndex(r[1])
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("%c%02d", 'A'+i/100, i%100))
		}
	}
	return out
}

func icdIndex(c string) int { return int(c[0]-'A')*100 + int(c[1]-'0')*10 + int(c[2]-'0') }

// notClinicalForms: the words of a clinical form that are not health
// words: every word of SCOWL, SUBTLEX, WordNet and the gazetteer that ends
// in a clinical suffix and that the filters did not keep (academic,
// systemic, exotic, politic, Marcaine the surname). HealthWord takes a word
// it does not hold for a health word when it has a clinical form and is
// not one of these: a drug or condition no word list has (oxycodone,
// quetiapine, enoxaparin) is one, an English word or a name is not.
func notClinicalForms(health []string, medLemmas map[string]bool, wn *wordnet, tiers map[string]int, freq map[string]subtlexWord, names nameLists, l *lists) []string {
	kept := setOf(health)
	out := map[string]bool{}
	add := func(w string) {
		if isLowerAlpha(w) && clinicalForm(w) && !kept[w] {
			out[w] = true
		}
	}
	for w := range tiers {
		add(w)
	}
	for w := range freq {
		add(w)
	}
	for w := range medLemmas {
		add(w)
	}
	for w := range names.isName {
		add(w)
	}
	for _, byLemma := range wn.index {
		for lemma := range byLemma {
			add(lemma)
		}
	}
	l.count("out: words of a clinical form that are not health words", len(out), "SCOWL, SUBTLEX, WordNet and gazetteer words ending in a clinical suffix that the filters did not keep")
	return sortedKeys(out)
}

func setOf(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
