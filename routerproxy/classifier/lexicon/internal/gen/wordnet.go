package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// WordNet 3.0 (Debian's wordnet-base): which of a word's senses are
// medical, and how often each sense is used (SemCor tag counts in
// cntlist.rev). It tells "cold" the adjective (48 tagged uses) from the
// common cold (5), and "cancer" the disease (15) from the constellation (0).
const wordnetDir = "root/usr/share/wordnet"

// medicalRoots: noun synsets whose hyponyms (by @ and @i pointers) are
// medical senses. Offsets are WordNet 3.0's; gen checks each names the
// lemma given, so another WordNet version fails loudly.
var medicalRoots = map[string]string{
	"14051917": "pathological_state", // ill health, disease, disorder, injury, infection, tumour
	"14299637": "symptom",
	"01024392": "medical_procedure", // surgery, biopsy, dialysis, transfusion
	"00657604": "medical_care",      // therapy, treatment, chemotherapy
	"03247620": "drug",              // medicine, anticoagulant, antibiotic; drugs of abuse
	"14046202": "pregnancy",
	"06045562": "medical_science", // surgery, medicine, obstetrics
	"00152727": "diagnosis",
	"03225238": "dose", // overdose
	"05407119": "hormone",
	"04517535": "vaccine",
	"00230324": "abortion",
	"13532886": "parturition",   // childbirth, labor
	"00851994": "birth_control", // contraception
	"14023491": "anesthesia",
	"14052403": "disorder",              // physical disorders: cardiovascular disease, epilepsy, dementia
	"14081375": "attack",                // a sudden occurrence of an uncontrollable condition: seizure
	"05739043": "diagnostic_test",       // biopsy, mammogram
	"14083790": "mental_disorder",       // neurosis, anxiety disorder
	"14380140": "mental_illness",        // schizophrenia, dementia, psychosis
	"10595647": "sick_person",           // a diabetic, an epileptic, a patient's condition as a noun
	"14533796": "hypersensitivity",      // allergy, allergic
	"13473097": "elimination",           // incontinence, urination, defecation
	"14853947": "body_waste",            // urine, stool
	"00649760": "dialysis",              // WordNet files it as a chemical process only; "on dialysis" is a patient's
	"07478169": "loss_of_consciousness", // faint, syncope: WordNet files them as events
}

// clinicalPrefixes: a rare word made of one of these and a word with a
// medical sense is medical: prenatal (natal), postoperative (operative).
var clinicalPrefixes = []string{"pre", "post", "peri", "ante", "intra", "neo", "hyper", "hypo"}

// generalPrefixes: a word WordNet lacks is judged by what follows one of
// these when WordNet knows that (untranslated, prefilled, multimodal).
var generalPrefixes = []string{"un", "non", "pre", "re", "multi", "over", "under", "sub", "super", "inter", "co", "de", "dis", "mis", "auto", "micro", "macro", "meta"}

// clinicalLexFiles: the lexicographer files of WordNet the senses of rare
// medical words fall in when they are not below a medical root
// (laparotomy, fluoroscopy: noun.act; anoxia, hypercapnia: noun.state;
// canaliculi: noun.body; perfuse: verb.body), as opposed to the physics,
// animals and quantities of the dictionary's other rare words (meson,
// avahi, radix, decrement).
var clinicalLexFiles = map[string]map[string]bool{
	"n": {"04": true, "08": true, "22": true, "26": true}, // noun.act, noun.body, noun.process, noun.state
	"v": {"29": true},                                     // verb.body
}

// notMedical: subtrees of the medical roots that are not a person's
// health: drinks (below drug, as drugs of abuse) and plant diseases (below
// pathological state).
var notMedical = map[string]string{
	"07884567": "alcohol",       // alcoholic drinks: wine, beer, cocktails
	"14276936": "plant_disease", // blight, rot, rust
}

// bodyLexFile: noun.body. An adjective pertaining to a body part
// (cardiac, renal, atrial) is clinical register; the nouns themselves
// (heart, kidney) are not health terms alone.
const bodyLexFile = "08"

type synset struct {
	words     []string // as written: "TIA", "transient_ischemic_attack"
	lexFile   string
	hypernyms []string // noun offsets
	related   []string // "pos:offset" of pertainym (\), derivation (+), attribute (=) pointers
	drugGloss bool     // its gloss says it treats or is sold as a drug: see drugGloss
}

// drugGloss: what WordNet's glosses say of a medicine WordNet files as a
// chemical only (digoxin: "a digitalis glycoside (trade name Lanoxin) used
// in treating congestive heart failure"; amiodarone, warfarin).
var drugGloss = regexp.MustCompile(`\(trade names? |used (?:to treat|in (?:the )?treat(?:ing|ment)|as an? (?:antibiotic|analgesic|sedative|anticoagulant|antidepressant|antihypertensive|diuretic|anticonvulsant|antiemetic|antipsychotic|tranquilizer|vasodilator|bronchodilator|hypnotic))|prescribed (?:for|to)`)

type wordnet struct {
	synsets map[string]map[string]*synset  // pos (n, v, a, r) -> offset -> synset
	index   map[string]map[string][]string // pos -> lemma -> offsets, most used first
	counts  map[string]int                 // "lemma pos senseNumber" -> tag count
	exc     map[string]map[string][]string // pos -> inflected form -> lemmas
	medMemo map[string]bool
	heads   map[string]bool // last words of medical compounds: dialysis (peritoneal_dialysis)
}

// loadWordNet reads WordNet 3.0's database files in dir: each part of
// speech's synsets, index and exceptions, the sense counts, then checks it
// is the version whose offsets the tables above name.
func loadWordNet(dir string) (*wordnet, error) {
	wn := &wordnet{synsets: map[string]map[string]*synset{}, index: map[string]map[string][]string{},
		counts: map[string]int{}, exc: map[string]map[string][]string{}, medMemo: map[string]bool{}}
	files := map[string]string{"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
	for pos, name := range files {
		if err := wn.readPOS(dir, pos, name); err != nil {
			return nil, err
		}
	}
	if err := wn.readCounts(dir); err != nil {
		return nil, err
	}
	if err := wn.checkVersion(dir); err != nil {
		return nil, err
	}
	wn.findHeads()
	if len(wn.counts) < 10000 {
		return nil, fmt.Errorf("%s: %d sense counts, want over 10000", dir, len(wn.counts))
	}
	return wn, nil
}

// readPOS reads one part of speech's data (synsets), index (a lemma's
// synsets, most used first) and exception (irregular inflections) files.
func (wn *wordnet) readPOS(dir, pos, name string) error {
	wn.synsets[pos] = map[string]*synset{}
	wn.index[pos] = map[string][]string{}
	wn.exc[pos] = map[string][]string{}
	err := eachLine(filepath.Join(dir, "data."+name), func(line string) {
		if off, s := parseSynset(pos, line); s != nil {
			wn.synsets[pos][off] = s
		}
	})
	if err != nil {
		return err
	}
	err = eachLine(filepath.Join(dir, "index."+name), func(line string) {
		if line == "" || line[0] == ' ' {
			return
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			return
		}
		nsyn, _ := strconv.Atoi(f[2])
		if nsyn > len(f)-4 {
			return
		}
		wn.index[pos][f[0]] = f[len(f)-nsyn:]
	})
	if err != nil {
		return err
	}
	return eachLine(filepath.Join(dir, name+".exc"), func(line string) {
		f := strings.Fields(line)
		if len(f) >= 2 {
			wn.exc[pos][f[0]] = append(wn.exc[pos][f[0]], f[1:]...)
		}
	})
}

// parseSynset reads one line of a data file: the synset's offset, words,
// lexicographer file and the pointers the judge follows; nil for a
// comment or a line too short.
func parseSynset(pos, line string) (offset string, s *synset) {
	if line == "" || line[0] == ' ' {
		return "", nil
	}
	head, gloss, _ := strings.Cut(line, " | ")
	f := strings.Fields(head)
	if len(f) < 4 {
		return "", nil
	}
	nw, _ := strconv.ParseInt(f[3], 16, 32)
	i := 4 + 2*int(nw)
	if i >= len(f) {
		return "", nil
	}
	np, _ := strconv.Atoi(f[i])
	s = &synset{lexFile: f[1], drugGloss: pos == "n" && drugGloss.MatchString(gloss)}
	for k := 0; k < int(nw); k++ {
		s.words = append(s.words, f[4+2*k])
	}
	for p, j := 0, i+1; p < np && j+3 < len(f); p, j = p+1, j+4 {
		sym, off, tpos := f[j], f[j+1], f[j+2]
		if tpos == "s" {
			tpos = "a"
		}
		switch sym {
		case "@", "@i":
			if tpos == "n" {
				s.hypernyms = append(s.hypernyms, off)
			}
		case "\\", "+", "=":
			s.related = append(s.related, tpos+":"+off)
		}
	}
	return f[0], s
}

// readCounts reads cntlist.rev: how often each sense of a lemma was tagged.
func (wn *wordnet) readCounts(dir string) error {
	ssPos := map[string]string{"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
	return eachLine(filepath.Join(dir, "cntlist.rev"), func(line string) {
		f := strings.Fields(line)
		if len(f) != 3 {
			return
		}
		lemma, key, ok := strings.Cut(f[0], "%")
		if !ok || key == "" {
			return
		}
		n, _ := strconv.Atoi(f[2])
		wn.counts[lemma+" "+ssPos[key[:1]]+" "+f[1]] += n
	})
}

// checkVersion: the synsets notMedical and medicalRoots name by offset are
// the lemmas they say, as in WordNet 3.0.
func (wn *wordnet) checkVersion(dir string) error {
	for off, lemma := range notMedical {
		if !slices.Contains(wn.index["n"][lemma], off) {
			return fmt.Errorf("%s: synset %s is not %q: not WordNet 3.0", dir, off, lemma)
		}
	}
	for off, lemma := range medicalRoots {
		if !slices.Contains(wn.index["n"][lemma], off) {
			return fmt.Errorf("%s: synset %s is not %q: not WordNet 3.0", dir, off, lemma)
		}
	}
	return nil
}

// findHeads records the last words of medical compounds (dialysis, of
// peritoneal_dialysis).
func (wn *wordnet) findHeads() {
	wn.heads = map[string]bool{}
	for lemma, offs := range wn.index["n"] {
		i := strings.LastIndexByte(lemma, '_')
		if i < 0 {
			continue
		}
		if slices.ContainsFunc(offs, wn.medicalNoun) {
			wn.heads[lemma[i+1:]] = true
		}
	}
}

// medicalNoun: the noun synset is a root or below one.
func (wn *wordnet) medicalNoun(off string) bool {
	if v, ok := wn.medMemo[off]; ok {
		return v
	}
	wn.medMemo[off] = false // cycles: none in WordNet, but stay finite
	if notMedical[off] != "" {
		return false
	}
	v := medicalRoots[off] != ""
	if s := wn.synsets["n"][off]; s != nil && !v {
		v = s.drugGloss
		for _, h := range s.hypernyms {
			if v || wn.medicalNoun(h) {
				v = true
				break
			}
		}
	}
	wn.medMemo[off] = v
	return v
}

// medicalSense: a noun sense below a root; an adjective or verb sense
// related (pertainym, derivation, attribute) to one, or an adjective
// pertaining to a body part.
func (wn *wordnet) medicalSense(pos, off string) bool {
	if pos == "n" {
		return wn.medicalNoun(off)
	}
	s := wn.synsets[pos][off]
	if s == nil {
		return false
	}
	for _, r := range s.related {
		tpos, toff, _ := strings.Cut(r, ":")
		if tpos != "n" {
			continue
		}
		if wn.medicalNoun(toff) {
			return true
		}
		if pos == "a" && wn.synsets["n"][toff] != nil && wn.synsets["n"][toff].lexFile == bodyLexFile {
			return true
		}
	}
	return false
}

// lemmas: WordNet's morphology (morphy) for one part of speech: the
// exception list, then the detachment rules.
func (wn *wordnet) lemmas(w, pos string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(l string) {
		if _, ok := wn.index[pos][l]; ok && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	add(w)
	for _, l := range wn.exc[pos][w] {
		add(l)
	}
	if pos == "a" {
		// an adverb WordNet lacks, by its adjective: deterministically
		for _, r := range [][2]string{{"ally", ""}, {"ally", "al"}, {"ily", "y"}, {"ly", ""}} {
			if strings.HasSuffix(w, r[0]) {
				add(strings.TrimSuffix(w, r[0]) + r[1])
			}
		}
	}
	rules := map[string][][2]string{
		"n": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
		"v": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
		"a": {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	}
	for _, r := range rules[pos] {
		if strings.HasSuffix(w, r[0]) {
			add(strings.TrimSuffix(w, r[0]) + r[1])
		}
	}
	return out
}

// verdict is what WordNet says of a word.
type verdict struct {
	known          bool
	medical, total int  // tagged uses of its medical senses, of all senses
	firstMedical   bool // the first sense of its first part of speech (noun, adjective, verb) is medical
	anyMedical     bool
	adjMedical     bool     // an adjective sense is medical (natal: of birth)
	clinicalKind   bool     // a sense of a kind medical terms are: see clinicalLexFiles
	lemmas         []string // the forms WordNet knows it by (latency for latencies, filled for prefilled)
}

// derivations: a word WordNet lacks is judged by the word it derives from
// when WordNet knows that (atomicity: atomic; transactional: transaction).
var derivations = [][2]string{
	{"ibility", "ible"}, {"ability", "able"}, {"icity", "ic"}, {"ity", ""}, {"ization", "ize"},
	{"isation", "ise"}, {"ational", "ation"}, {"ional", "ion"}, {"al", ""}, {"ness", ""}, {"ment", ""},
}

func (wn *wordnet) judge(w string) verdict {
	v := wn.judgeWord(w)
	if !v.known {
		for _, d := range derivations {
			if base, ok := strings.CutSuffix(w, d[0]); ok && len(base)+len(d[1]) >= 4 {
				if r := wn.judgeWord(base + d[1]); r.known {
					return r
				}
			}
		}
	}
	if !v.known {
		for _, p := range generalPrefixes {
			if rest, ok := strings.CutPrefix(w, p); ok && len(rest) >= 4 {
				if r := wn.judgeWord(rest); r.known {
					return verdict{known: true, firstMedical: r.firstMedical, anyMedical: r.anyMedical, clinicalKind: r.clinicalKind, lemmas: r.lemmas}
				}
			}
		}
	}
	return v
}

func (wn *wordnet) judgeWord(w string) verdict {
	var v verdict
	for _, pos := range []string{"n", "a", "v", "r"} {
		for _, l := range wn.lemmas(w, pos) {
			v.lemmas = append(v.lemmas, l)
			for i, off := range wn.index[pos][l] {
				c := wn.counts[l+" "+pos+" "+strconv.Itoa(i+1)]
				med := wn.medicalSense(pos, off)
				if ss := wn.synsets[pos][off]; ss != nil && clinicalLexFiles[pos][ss.lexFile] {
					v.clinicalKind = true
				}
				v.total += c
				if med {
					v.medical += c
					v.anyMedical = true
					v.adjMedical = v.adjMedical || pos == "a"
				}
				if i == 0 && !v.known {
					v.firstMedical = med
				}
			}
			v.known = true
		}
	}
	return v
}

// medicalWord: most of the word's tagged uses are medical senses, or, with
// fewer than 3 tagged uses, its first sense (as a noun if it is one) is.
func (v verdict) medicalWord() bool {
	if !v.known {
		return false
	}
	if v.total >= 3 {
		return 2*v.medical >= v.total
	}
	return v.firstMedical
}

var _ = os.Stderr

// clinicalWord: some sense of w is medical, or w names a body part.
func (wn *wordnet) clinicalWord(w string) bool {
	if wn.judge(w).anyMedical {
		return true
	}
	for _, l := range wn.lemmas(w, "n") {
		for _, off := range wn.index["n"][l] {
			if s := wn.synsets["n"][off]; s != nil && s.lexFile == bodyLexFile {
				return true
			}
		}
	}
	return false
}

// compounds: WordNet's multiword nouns whose first sense is medical, of 2
// or 3 words ("heart attack", "athlete's foot", "alzheimer's disease"),
// lowercase letters with an apostrophe-s allowed.
func (wn *wordnet) compounds() []string {
	var out []string
	for lemma, offs := range wn.index["n"] {
		parts := strings.Split(lemma, "_")
		if len(parts) < 2 || len(parts) > 3 || len(offs) == 0 || !wn.medicalNoun(offs[0]) {
			continue
		}
		ok := true
		for _, p := range parts {
			if !isLowerAlpha(strings.TrimSuffix(p, "'s")) {
				ok = false
			}
		}
		if ok {
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

// notPersonLexFiles: what a capitalized word is first when it is not a
// person: a place (India, Paris: noun.location; Africa: noun.object), a
// language (English: noun.communication), a time (September, Tuesday).
var notPersonLexFiles = map[string]bool{"15": true, "17": true, "10": true, "28": true}

// placeOrTime: WordNet's first noun sense of w is a place, a language or a
// time, or its first adjective sense pertains to one (German: Germany).
func (wn *wordnet) placeOrTime(w string) bool {
	if offs := wn.index["n"][w]; len(offs) > 0 {
		if s := wn.synsets["n"][offs[0]]; s != nil && notPersonLexFiles[s.lexFile] {
			return true
		}
	}
	if offs := wn.index["a"][w]; len(offs) > 0 {
		if s := wn.synsets["a"][offs[0]]; s != nil {
			for _, r := range s.related {
				if tpos, toff, _ := strings.Cut(r, ":"); tpos == "n" && wn.synsets["n"][toff] != nil && notPersonLexFiles[wn.synsets["n"][toff].lexFile] {
					return true
				}
			}
		}
	}
	return false
}

// firstMedical: WordNet's first noun sense of w is medical and written w
// (as given, in capitals): AIDS, HIV (the infection before the virus); not
// ACE, DNA.
func (wn *wordnet) firstMedical(w string) bool {
	offs := wn.index["n"][strings.ToLower(w)]
	if len(offs) == 0 || !wn.medicalNoun(offs[0]) {
		return false
	}
	s := wn.synsets["n"][offs[0]]
	return s != nil && slices.Contains(s.words, w)
}

// capitals: the all-capital words (3 to 6 letters) of medical noun synsets:
// TIA, CVA, ADHD, PTSD, NSAID, SSRI, CABG.
func (wn *wordnet) capitals() []string {
	var out []string
	for off, s := range wn.synsets["n"] {
		if !wn.medicalNoun(off) {
			continue
		}
		for _, w := range s.words {
			if len(w) >= 3 && len(w) <= 6 && isUpper(w) && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}
