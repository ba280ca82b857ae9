// Command corpusgen writes the content classifier's held-out corpus,
// routerproxy/classifier/testdata/heldout.tsv (kind<TAB>text; kind is a detector's name
// or benign-<kind>), from sources it reads and does not ship: Microsoft
// Presidio's recognizer tests (their positive and negative cases, and the
// context words of its recognizers), presidio-research's data-generator
// templates and made-up people, and python-stdnum's test vectors. It fills
// templates and frames (chats, emails, tickets, forms, clinical notes in the
// i2b2 challenge's layout) with synthetic identifiers that pass their
// checksums, printed as people print them. Every source, with its commit
// and license, is in routerproxy/classifier/testdata/heldout.SOURCES.md, which also says
// how to fetch them:
//
//	go run ./routerproxy/classifier/internal/corpusgen -src /tmp/corpus-src -out routerproxy/classifier/testdata
//
// The output is deterministic for a given set of sources (a fixed seed).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// oddSSN is a social security number in a grouping other than 3-2-4.
var oddSSN = regexp.MustCompile(`\b(\d{3}-\d{6}|\d{5}-\d{4})\b`)

type item struct{ kind, text string }

func main() {
	src := flag.String("src", "", "directory holding the checkouts presidio, presidio-research and python-stdnum")
	out := flag.String("out", "routerproxy/classifier/testdata", "the directory to write heldout.tsv and heldout-presidio.tsv to")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "corpusgen: -src is required (see routerproxy/classifier/testdata/heldout.SOURCES.md)")
		os.Exit(2)
	}
	items, fresh, stats, err := generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpusgen:", err)
		os.Exit(1)
	}
	generated, stat, err := generatedItems(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpusgen:", err)
		os.Exit(1)
	}
	stats = append(stats, stat)
	for _, f := range []struct {
		name, about string
		items       []item
	}{
		{"heldout.tsv", "every value is synthetic or a published test vector", items},
		{"heldout-presidio.tsv", "presidio-research's generated evaluation texts and Presidio's context sentences, as they are", generated},
		{"heldout-fresh.tsv", "a fresh draw with another seed and frames written after the detectors were tuned against heldout.tsv", fresh},
	} {
		if err := writeCorpus(filepath.Join(*out, f.name), f.about, f.items); err != nil {
			fmt.Fprintln(os.Stderr, "corpusgen:", err)
			os.Exit(1)
		}
	}
	for _, s := range stats {
		fmt.Fprintln(os.Stderr, s)
	}
}

func writeCorpus(path, about string, items []item) error {
	var b strings.Builder
	b.WriteString("# The content classifier's held-out corpus: kind<TAB>text, kind a detector that must\n" +
		"# fire or benign-<kind> (nothing may fire). Written by routerproxy/classifier/internal/corpusgen from\n" +
		"# the sources in heldout.SOURCES.md: " + about + ".\n" +
		"# \\n in a text is a newline. Do not edit: regenerate.\n")
	for _, it := range items {
		t := strings.ReplaceAll(strings.ReplaceAll(it.text, "\t", " "), "\n", `\n`)
		fmt.Fprintf(&b, "%s\t%s\n", it.kind, t)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

type gen struct {
	r         *rand.Rand
	people    []person
	companies []string
	templates []string
	items     []item
	seen      map[string]bool
}

func (g *gen) add(kind, text string) bool {
	text = strings.TrimSpace(text)
	if g.seen[text] {
		return false
	}
	g.seen[text] = true
	g.items = append(g.items, item{kind, text})
	return true
}

func (g *gen) person() person { return g.people[g.r.IntN(len(g.people))] }

// vars are the values of one text's placeholders.
func (g *gen) vars(p person) map[string]string {
	r := g.r
	d := g.person()
	sexword := map[string]string{"F": "female", "M": "male"}[p.female]
	title := map[string]string{"F": pick(r, []string{"Mrs.", "Ms.", "Ms", "Mrs"}), "M": pick(r, []string{"Mr.", "Mr"})}[p.female]
	ic := pick(r, icdCodes)
	age := 18 + r.IntN(78)
	month, day := 1+r.IntN(12), 1+r.IntN(20)
	f := p.female == "F"
	he := func(female, male string) string {
		if f {
			return female
		}
		return male
	}
	mc := pick(r, mrnCues)
	if !strings.HasSuffix(mc, "-") {
		mc += " "
	}
	return map[string]string{
		"first": p.first, "last": p.last, "name": p.first + " " + p.last, "title": title,
		"city": p.city, "street": p.street, "country": p.country, "company": pick(r, g.companies),
		"date": fmt.Sprintf("%d/%d/2026", month, day), "dob": dobIn(r, 2025-age),
		"dobde": fmt.Sprintf("%02d.%02d.%d", 1+r.IntN(28), 1+r.IntN(12), 2025-age), "dobfr": fmt.Sprintf("%02d/%02d/%d", 1+r.IntN(28), 1+r.IntN(12), 2025-age),
		"dobiso": fmt.Sprintf("%d-%02d-%02d", 2025-age, 1+r.IntN(12), 1+r.IntN(28)), "age": fmt.Sprint(age),
		"parent": he(pick(r, []string{"mum", "mother", "mom"}), pick(r, []string{"dad", "father"})), "spouse": he("wife", "husband"),
		"child": he("daughter", "son"), "pos": he("her", "his"), "Pos": he("Her", "His"), "subj": he("she", "he"), "Subj": he("She", "He"),
		"sex": p.female, "sexword": sexword, "cond": condFor(r, f), "cond2": condFor(r, d.female == "F"), "med": pick(r, meds), "sx": pick(r, symptoms),
		"bed": fmt.Sprintf("%d%s", 1+r.IntN(40), pick(r, []string{"A", "B", ""})), "doctor": d.last, "hospital": pick(r, hospitals),
		"spec": pick(r, specialties), "code": ic.code, "desc": ic.desc, "mrncue": mc, "mrn": mrn(r), "mrn2": mrn(r),
		"date2": fmt.Sprintf("%d/%d/2026", month, day+1+r.IntN(8)), "med2": pick(r, meds),
		"bed2": fmt.Sprintf("%d%s", 1+r.IntN(40), pick(r, []string{"A", "B"})), "first2": d.first, "last2": d.last, "dob2": dob(r),
		"initial": string([]rune(p.first)[:1]), "lfirst": strings.ToLower(p.first), "llast": strings.ToLower(p.last), "obj": he("her", "him"),
		"frtitle": he("Mme", "M."), "ulast": strings.ToUpper(p.last), "ne": he("née", "né"), "nacido": he("nacida", "nacido"), "nato": he("nata", "nato"), "job": d.job,
		"weakphone": fmt.Sprintf("%d%02d-1%02d-%04d", 2+r.IntN(8), r.IntN(100), r.IntN(100), r.IntN(10000)),
		"ticket":    fmt.Sprintf("#%d", 10000+r.IntN(90000)), "order": fmt.Sprint(1000000 + r.IntN(9000000)),
		"exp": fmt.Sprintf("%02d/%d", 1+r.IntN(12), 27+r.IntN(5)), "cvv": fmt.Sprintf("%03d", r.IntN(1000)),
	}
}

func fill(s string, v map[string]string) string {
	var pairs []string
	for k, x := range v {
		pairs = append(pairs, "{"+k+"}", x)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// fillTemplate fills a presidio-research template ({{placeholder}}); the
// placeholder named by slot gets value.
func (g *gen) fillTemplate(t, slot, value string, p person) string {
	r := g.r
	o := g.person()
	vals := map[string]string{
		"person": p.first + " " + p.last, "name": p.first + " " + p.last, "first_name": p.first, "last_name": p.last,
		"first_name_male": p.first, "first_name_female": p.first, "first_name_nonbinary": p.first, "name_male": p.first + " " + p.last,
		"name_female": p.first + " " + p.last, "last_name_male": p.last, "last_name_female": p.last,
		"prefix": "Dr.", "prefix_male": "Mr.", "prefix_female": "Ms.", "organization": pick(r, g.companies),
		"city": p.city, "country": p.country, "address": p.street + ", " + p.city + " " + p.zip, "street_name": strings.TrimLeft(p.street, "0123456789 "),
		"building_number": fmt.Sprint(1 + r.IntN(300)), "secondary_address": fmt.Sprintf("Apt. %d", 1+r.IntN(90)), "postcode": p.zip, "zipcode": p.zip,
		"nationality": pick(r, []string{"Canadian", "Irish", "Kenyan", "Peruvian"}), "nation_woman": "Canadian", "nation_plural": "Canadians",
		"job": o.job, "age": fmt.Sprint(18 + r.IntN(70)), "year": fmt.Sprint(1990 + r.IntN(35)), "date_time": isoTime(r)[:10],
		"day_of_week": pick(r, []string{"Monday", "Tuesday", "Friday"}), "state_abbr": pick(r, []string{"CA", "NY", "TX", "WA"}),
		"url": "https://www.example.com/" + strings.ToLower(asciiFold(p.last)), "ip_address": ip(r),
		"email": emailOf(r, p), "phone_number": phoneNumber(r), "credit_card_number": card(r), "iban": iban(r), "ssn": ssn(r),
		"date_of_birth": dob(r), "us_driver_license": "D" + digits(r, 7),
	}
	vals[slot] = value
	var pairs []string
	for k, x := range vals {
		pairs = append(pairs, "{{"+k+"}}", x)
	}
	return strings.NewReplacer(pairs...).Replace(t)
}

// snake writes a cue word as a field name (Group # is group_number).
func snake(s string) string {
	s = strings.ToLower(strings.Trim(s, ".: "))
	if strings.HasSuffix(s, "#") {
		s = strings.TrimSpace(strings.TrimSuffix(s, "#")) + " number"
	}
	return strings.NewReplacer(" ", "_", ".", "", "-", "_", "/", "_").Replace(s)
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == '\'' {
			return false
		}
	}
	return true
}

func (g *gen) cue(k *idKind) (cue, word, key string) {
	r := g.r
	word = pick(r, k.cues)
	switch r.IntN(6) {
	case 0:
		word = strings.ToLower(word)
	case 1:
		if len(word) <= 12 {
			word = strings.ToUpper(word)
		}
	}
	sep := pick(r, []string{": ", " ", ": ", " - ", " #", ":", " no. ", "= "})
	if strings.HasSuffix(word, ":") || strings.HasSuffix(word, "#") || strings.HasSuffix(word, ".") {
		sep = " "
	}
	key = snake(word)
	if !ascii(word) || strings.Count(word, " ") > 2 {
		key = snake(k.cues[0]) // no one names a field numéro_d'assurance_sociale
	}
	return word + sep, strings.TrimRight(word, ":"), key
}

func hasCue(text string, k *idKind) bool {
	low := strings.ToLower(text)
	for _, c := range k.cues {
		if strings.Contains(low, strings.ToLower(strings.Trim(c, ".:# "))) {
			return true
		}
	}
	return false
}

// findValid reports whether text holds a value k.ok accepts: any run of
// letter-digit groups joined by one separator, compacted.
func findValid(text string, ok func(string) bool) bool {
	var groups []string
	var seps []bool
	cur := strings.Builder{}
	flush := func(joined bool) {
		if cur.Len() > 0 {
			groups = append(groups, cur.String())
			seps = append(seps, joined)
			cur.Reset()
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			cur.WriteByte(c)
		case strings.IndexByte(" -./", c) >= 0 && cur.Len() > 0 && i+1 < len(text) && strings.IndexByte(" -./", text[i+1]) < 0:
			flush(true)
		default:
			flush(false)
			groups = append(groups, "")
			seps = append(seps, false)
		}
	}
	flush(false)
	for i := range groups {
		s := ""
		for j := i; j < len(groups) && j < i+8; j++ {
			if groups[j] == "" {
				break
			}
			s += groups[j]
			if ok(s) || ok(strings.ToUpper(s)) {
				return true
			}
			if !seps[j] {
				break
			}
		}
	}
	return false
}

func compact(s string) string {
	return strings.NewReplacer(" ", "", "-", "", ".", "", "/", "").Replace(s)
}

// slotOf is the presidio-research template slot each identifier kind
// fills.
var slotOf = map[string]string{"payment-card": "credit_card_number", "phone": "phone_number", "email": "email", "iban": "iban", "us-ssn": "ssn"}

// generate draws the corpus: the identifiers, the clinical and personal
// texts, the benign work, then the fresh draw on a seed of its own. The
// steps run in this order on one random source: reordering them changes
// every item after.
func generate(src string) (items, fresh []item, stats []string, err error) {
	g := &gen{r: rand.New(rand.NewPCG(60, 2026)), seen: map[string]bool{}}
	if g.people, err = readNames(src); err != nil {
		return nil, nil, nil, err
	}
	if g.companies, err = readCompanies(src); err != nil {
		return nil, nil, nil, err
	}
	if g.templates, err = readTemplates(src); err != nil {
		return nil, nil, nil, err
	}
	var invalid []string // the sources' negative examples, for benign code
	for i := range idKinds {
		inv, stat, err := g.identifiers(src, &idKinds[i])
		if err != nil {
			return nil, nil, nil, err
		}
		invalid = append(invalid, inv...)
		stats = append(stats, stat)
	}
	stats = append(stats, g.clinical()...)
	stats = append(stats, g.benign(invalid)...)
	items = g.items
	// The fresh draw: another seed, the frames of fresh.go.
	g.r = rand.New(rand.NewPCG(60, 1207))
	fresh = g.freshItems()
	for _, it := range fresh {
		for i := range idKinds {
			if k := &idKinds[i]; k.name == it.kind && k.ok != nil && !findValid(it.text, k.ok) {
				return nil, nil, nil, fmt.Errorf("fresh %s: no valid value in %q", k.name, it.text)
			}
		}
	}
	stats = append(stats, fmt.Sprintf("heldout-fresh: %d texts", len(fresh)))
	return items, fresh, stats, nil
}

// identifiers adds k's items: Presidio's test cases, then values (python-
// stdnum's vectors or drawn ones) in frames. It returns the sources'
// negative examples and the kind's line of statistics.
func (g *gen) identifiers(src string, k *idKind) (invalid []string, stat string, err error) {
	start := len(g.items)
	fromPresidio, dropped, invalid, err := g.presidioCases(src, k)
	if err != nil {
		return nil, "", err
	}
	vectors, inv, droppedVectors, err := stdnumVectors(src, k)
	if err != nil {
		return nil, "", err
	}
	invalid = append(invalid, inv...)
	dropped += droppedVectors
	g.r.Shuffle(len(vectors), func(i, j int) { vectors[i], vectors[j] = vectors[j], vectors[i] })
	nVectors := len(vectors)
	if err := g.framedValues(k, start, vectors); err != nil {
		return nil, "", err
	}
	// Every label rests on a value that passes its check.
	for _, it := range g.items[start:] {
		if k.ok != nil && !findValid(it.text, k.ok) {
			return nil, "", fmt.Errorf("%s: no valid value in %q", k.name, it.text)
		}
	}
	stat = fmt.Sprintf("%-28s %4d items (%d Presidio test cases, %d stdnum vectors, %d source values dropped by the check)", k.name, len(g.items)-start, fromPresidio, nVectors, dropped)
	return invalid, stat, nil
}

// presidioCases adds Presidio's own test cases of k: the positives (when
// their value passes the identifier's check; a weak checksum gets a cue
// word), up to half of k's items; the negatives are returned, as code a
// validator's author writes.
func (g *gen) presidioCases(src string, k *idKind) (added, dropped int, invalid []string, err error) {
	for _, f := range k.presidio {
		cases, err := readPresidioCases(src, f)
		if err != nil {
			return 0, 0, nil, err
		}
		for _, c := range cases {
			if c.n == 0 {
				invalid = append(invalid, c.text)
				continue
			}
			if k.ok != nil && !findValid(c.text, k.ok) {
				dropped++
				continue
			}
			text := c.text
			if k.name == "us-ssn" && oddSSN.MatchString(text) {
				dropped++ // 078-051121: no one prints an SSN so
				continue
			}
			if (k.needCue || k.name == "us-ssn" && onlyDigits(text)) && !hasCue(text, k) {
				cue, _, _ := g.cue(k)
				text = cue + text
			}
			if k.name == "us-bank-routing" && !strings.Contains(strings.ToLower(text), "acc") {
				text += ", account " + digits(g.r, 10) // a routing number is a detection beside an account
			}
			if added >= k.n/2 {
				continue
			}
			if g.add(k.name, text) {
				added++
			}
		}
	}
	return added, dropped, invalid, nil
}

// stdnumVectors are python-stdnum's vectors of k that pass k's check, its
// invalid ones, and how many valid ones the check dropped.
func stdnumVectors(src string, k *idKind) (vectors, invalid []string, dropped int, err error) {
	for _, f := range k.stdnum {
		valid, inv, err := readStdnum(src, f)
		if err != nil {
			return nil, nil, 0, err
		}
		invalid = append(invalid, inv...)
		for _, v := range valid {
			if k.ok == nil || k.ok(compact(v)) || k.ok(strings.ToUpper(compact(v))) {
				vectors = append(vectors, v)
			} else {
				dropped++
			}
		}
	}
	return vectors, invalid, dropped, nil
}

// framedValues adds k's items from start up to k.n: each a value (a
// published vector, each once, or one drawn) in a frame: a presidio-
// research template with k's slot, any template with the identifier said
// after it, one of k's own frames or a generic one; one in twelve buried
// in an email thread.
func (g *gen) framedValues(k *idKind, start int, vectors []string) error {
	var kindTemplates []string
	for _, t := range g.templates {
		if slot, ok := slotOf[k.name]; ok && strings.Contains(t, "{{"+slot+"}}") {
			kindTemplates = append(kindTemplates, t)
		}
	}
	for tries := 0; len(g.items)-start < k.n && tries < 20*k.n; tries++ {
		p := g.person()
		var v string
		if len(vectors) > 0 && g.r.IntN(3) == 0 {
			v, vectors = vectors[0], vectors[1:] // each published vector once
			if k.name == "us-bank-routing" {
				v = "ABA " + v + " / acct " + digits(g.r, 10)
			}
		} else {
			v = k.gen(g.r, p)
		}
		vars := g.vars(p)
		vars["cue"], vars["cueword"], vars["cuekey"] = g.cue(k)
		vars["v"] = v
		var text string
		switch x := g.r.IntN(20); {
		case len(kindTemplates) > 0 && x < 6:
			text = g.fillTemplate(pick(g.r, kindTemplates), slotOf[k.name], v, p)
		case k.name != "us-bank-routing" && x < 8:
			// a presidio-research template, the identifier said after it.
			text = g.fillTemplate(pick(g.r, g.templates), "", "", p) + " " + fill("{cue}{v}", vars)
		case k.name == "us-bank-routing" || x < 15:
			text = fill(pick(g.r, k.local), vars)
		default:
			text = fill(pick(g.r, genericFrames), vars)
		}
		if strings.Contains(text, "{{") {
			return fmt.Errorf("%s: unfilled placeholder in %q", k.name, text)
		}
		if vs := strings.Contains(text, "{v}"); vs {
			return fmt.Errorf("%s: unfilled frame %q", k.name, text)
		}
		if g.r.IntN(12) == 0 {
			text = g.thread(text, p)
		}
		g.add(k.name, text)
	}
	return nil
}

// clinical adds the clinical and personal texts: frames filled with a
// person and a presidio-research birth template; one in twelve buried in
// an email thread.
func (g *gen) clinical() (stats []string) {
	var birthTemplates []string
	for _, t := range g.templates {
		if strings.Contains(t, "{{date_of_birth}}") && (strings.Contains(t, "born") || strings.Contains(t, "date of birth")) {
			birthTemplates = append(birthTemplates, t)
		}
	}
	clinical := []struct {
		kind   string
		frames []string
		n      int
	}{
		{"health-term-with-identifier", healthFrames, 320},
		{"medical-record-number", mrnFrames, 170},
		{"icd10-diagnosis", icdFrames, 150},
		{"person-name-with-birth-date", birthFrames, 170},
	}
	for _, c := range clinical {
		start := len(g.items)
		for tries := 0; len(g.items)-start < c.n && tries < 50*c.n; tries++ {
			p := g.person()
			vars := g.vars(p)
			vars["tmpl"] = g.fillTemplate(pick(g.r, birthTemplates), "", "", p)
			text := fill(pick(g.r, c.frames), vars)
			if g.r.IntN(12) == 0 {
				text = g.thread(text, p)
			}
			g.add(c.kind, text)
		}
		stats = append(stats, fmt.Sprintf("%-28s %4d items", c.kind, len(g.items)-start))
	}
	return stats
}

// benign adds the benign work, 300 items of each kind; code quotes the
// sources' negative examples that are valid as no identifier.
func (g *gen) benign(invalid []string) (stats []string) {
	var vectors []string
	for _, v := range invalid {
		if !anyValid(v) && len(v) < 40 {
			vectors = append(vectors, v)
		}
	}
	sort.Strings(vectors)
	benign := []struct {
		kind string
		f    func() string
	}{
		{"benign-code", func() string { return benignCode(g.r, vectors) }},
		{"benign-invoice", func() string { return benignInvoice(g.r, g.companies) }},
		{"benign-log", func() string { return benignLog(g.r) }},
		{"benign-research", func() string { return benignResearch(g.r) }},
		{"benign-guideline", func() string { return benignGuideline(g.r) }},
		{"benign-chat", func() string {
			if g.r.IntN(5) == 0 {
				return benignLongEmail(g.r, g.companies)
			}
			return benignChat(g.r)
		}},
	}
	for _, b := range benign {
		start := len(g.items)
		for tries := 0; len(g.items)-start < 300 && tries < 10000; tries++ {
			g.add(b.kind, b.f())
		}
		stats = append(stats, fmt.Sprintf("%-28s %4d items", b.kind, len(g.items)-start))
	}
	return stats
}

// anyValid reports whether a source's negative example is valid as some
// identifier all the same (then it is no benign text).
func anyValid(s string) bool {
	for i := range idKinds {
		if idKinds[i].ok != nil && findValid(s, idKinds[i].ok) {
			return true
		}
	}
	return false
}

// condFor draws a condition a person of that sex can have.
func condFor(r *rand.Rand, female bool) string {
	for {
		c := pick(r, conditions)
		if female || !strings.Contains("preeclampsia gestational diabetes breast cancer endometriosis a miscarriage at 9 weeks", c) {
			return c
		}
	}
}

// thread buries a text in the middle of an email thread: a greeting, a
// quoted earlier message and a disclaimer around it.
func (g *gen) thread(text string, p person) string {
	r := g.r
	return fmt.Sprintf("Hi %s,\n\nThanks for getting back to me so quickly, and sorry for the delay on my side: the office was closed on Monday.\n\n%s\n\n"+
		"Let me know if you need anything else from me before %s.\n\nKind regards,\n%s\n\n-----Original Message-----\nSent: %s\nSubject: RE: your request %d\n\n"+
		"> Could you send us the details we need to complete the file? We aim to reply within %d working days.\n\n"+
		"This email and any attachments are confidential and intended solely for the addressee.",
		pick(r, []string{"team", "Sam", "there", "all"}), text, pick(r, []string{"Friday", "the end of the month", "next week"}), p.first, isoTime(r)[:10], 10000+r.IntN(90000), 2+r.IntN(9))
}
