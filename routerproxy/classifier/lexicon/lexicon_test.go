package lexicon

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func check(t *testing.T, what string, fn func([]byte) bool, in, out []string) {
	t.Helper()
	for _, w := range in {
		if !fn([]byte(w)) {
			t.Errorf("%s(%q) = false, want true", what, w)
		}
	}
	for _, w := range out {
		if fn([]byte(w)) {
			t.Errorf("%s(%q) = true, want false", what, w)
		}
	}
}

func TestHealthWord(t *testing.T) {
	check(t, "HealthWord", HealthWord,
		[]string{
			// the misses
			"pneumonia", "sepsis", "prenatal", "warfarin", "fibrillation", "metformin", "HIV",
			// conditions, symptoms, procedures, medications, any case
			"Pneumonia", "WARFARIN", "atrial", "diabetes", "diabetic", "asthma", "insulin",
			"chemotherapy", "hypertension", "dementia", "dialysis", "biopsy", "lymphoma", "melanoma",
			"schizophrenia", "epilepsy", "migraine", "arthritis", "hepatitis", "tuberculosis",
			"seizure", "antibiotics", "lisinopril", "atorvastatin", "amoxicillin",
			// each path of the filter (SOURCES.md): mostly medical in WordNet,
			// a medical root by hand, a medical topic domain (syncope), a drug
			// gloss (digoxin), a clinical prefix, a clinical form
			"cancer", "pregnancy", "surgery", "allergic", "incontinence", "laparotomy", "hypoxia",
			"dialysis", "postoperative", "antenatal", "syncope", "digoxin", "cholecystectomy", "osteomyelitis",
			// of a clinical form no list has (a drug stem, a clinical ending)
			"oxycodone", "Quetiapine", "ENOXAPARIN", "levothyroxine", "apixaban", "dabigatran",
			// plurals and British spellings the sources lack
			"lacerations", "haemodialysis", "anaemia", "tumours",
			// acronyms, in capitals: WordNet's medical synsets'
			"AIDS", "TIA", "ADHD", "PTSD", "NSAID", "CABG",
		},
		[]string{
			// common English, whatever the medical sources say
			"left", "other", "type", "acute", "cold", "unspecified", "with", "site", "bank",
			"cell", "plant", "mass", "the", "data", "server", "invoice", "total", "value", "order",
			"process", "memory", "thread", "response", "table", "string", "exposure", "force",
			"member", "traffic", "loss", "joint", "error", "request", "function", "lower",
			// the filter's decisions: another sense dominates (WordNet), rare
			// words of another field, the dictionary's abbreviations, the stoplist
			"stroke", "depression", "pain", "heart", "blood", "constrict", "meson", "avahi",
			"schema", "latency", "cohort", "telemetry", "diag", "eval", "hyper", "diagnostic",
			"inject", "injected", "embedded", "bloody", "quantile", "celsius", "URI",
			// English words and names of a clinical form (not_clinical_forms.txt)
			"academic", "systemic", "Systemic", "sympathy", "telepathy", "microscopy", "osmosis", "patriotic",
			// acronyms of other fields, and acronyms in lower case
			"PID", "DNA", "FDA", "tia", "Tia",
			// acronyms only in capitals; not words of other letters
			"aids", "hiv2", "pneumonia's", "", "ab",
			strings.Repeat("a", 200),
		})
}

func TestHealthPhrase(t *testing.T) {
	for _, c := range []struct {
		text string
		at   int
		want string
	}{
		{"pt with heart failure today", 8, "heart failure"},
		{"Heart  Failure.", 0, "Heart  Failure"},
		{"heart\nfailure", 0, "heart\nfailure"},
		{"Admitted with chest pain", 0, "Admitted with"},
		{"admitted with", 0, "admitted with"},
		{"chest pain", 0, "chest pain"},
		{"heart attack", 0, "heart attack"},
		{"Mr Osei has Alzheimer's.", 12, "Alzheimer's"},
		{"Crohn’s disease", 0, "Crohn’s"},
		{"Alzheimers", 0, ""},
		{"Wilson's", 0, ""},       // a frequent surname's possessive
		{"heart failures", 0, ""}, // followed by a letter
		{"heart rate", 0, ""},
		{"heartfailure", 0, ""},
		{"xheart failure", 1, ""}, // not a word start
		{"heart", 0, ""},
		{"", 0, ""},
	} {
		got := HealthPhrase([]byte(c.text), c.at)
		if want := len(c.want); got != want {
			t.Errorf("HealthPhrase(%q, %d) = %d, want %d (%q)", c.text, c.at, got, want, c.want)
		}
	}
	if HealthPhrase([]byte("heart failure"), 20) != 0 || HealthPhrase([]byte("heart failure"), -1) != 0 {
		t.Error("HealthPhrase out of range: want 0")
	}
}

func TestNames(t *testing.T) {
	check(t, "GivenName", GivenName,
		[]string{"Maria", "John", "David", "Mark", "Bill", "Grace", "Josh", "Ed", "Al", "MARIA", "JOHN", "Sha", "Nas", "Aisha", "Priya", "Oluwaseun",
			"Chinedu", "Kwame", "Jose", "Francois", "Giuseppe", "Bjorn", "Xiuying", "Minseo", "Chidi", "Jurgen", "Ngozi", "Siddharth", "April", "Mei", "Wei", "Siobhan", "DeAndre"},
		[]string{"maria", "mARIA", "MaRia", "Will", "May", "Hope", "The", "Data", "Server",
			"Invoice", "Total", "Patient", "M", "", "Maria1", "Ma-ria", "José",
			// words that are names in some table but mostly words
			"Come", "Miss", "General", "China", "Echo", "Delta", "Major",
			// first a place, a nationality or a time
			"India", "Africa", "English", "German", "September", "Tuesday",
			// two capitals, or capitals that are an abbreviation too
			"AI", "OK", "CA", "ED", "SHA", "ABA", "NAS"})
	check(t, "Surname", Surname,
		[]string{"Smith", "Osei", "Garcia", "Nguyen", "Patel", "Chen", "Wang", "Okafor", "Mensah",
			"Rossi", "Muller", "Dubois", "Zhang", "Ouyang", "Volkov", "Avramidis", "SMITH", "McDonald", "O'Brien", "O’Brien", "Brown", "Park"},
		[]string{"smith", "Mcdonald'", "O'", "'Brien", "O’", "O’brien", "O\xe2\x80Brien", "McDoNald", "Xqzvw", "The", "Server", "Invoice",
			"Cluster", "Filter", "Agent", "Console"})
}

func TestICD10(t *testing.T) {
	check(t, "ICD10", ICD10,
		[]string{"E11.9", "E119", "C50.911", "C50911", "J18.9", "I48.91", "F32.9", "S72.001A", "A41.9", "O24.410", "J45.909", "U07.1"},
		[]string{
			"E11", "J18", // a bare category: ICD10Category's
			"R2D2", "E1.9", "E11.", "E11.12345", "e11.9", "E11-9", "E11.9.1", "U99.1", "D95.1", "", "E11.9x",
			"V1.2", "A1B2",
		})
	check(t, "ICD10Category", ICD10Category, []string{"E11", "J18", "I48", "U07"}, []string{"E1", "E11.9", "e11", "U99", "D95", "R2D"})
}

func TestLookupsDoNotAllocate(t *testing.T) {
	text := []byte("Mr. David O'Brien, admitted with Pneumonia, HIV, on warfarin; E11.9")
	words := [][]byte{[]byte("Pneumonia"), []byte("HIV"), []byte("warfarin"), []byte("server"),
		[]byte("David"), []byte("O'Brien"), []byte("McDonald"), []byte("MARIA"), []byte("E11.9"),
		[]byte("oxycodone"), []byte("academic")}
	allocs := testing.AllocsPerRun(200, func() {
		for _, w := range words {
			HealthWord(w)
			GivenName(w)
			Surname(w)
			ICD10(w)
		}
		HealthPhrase(text, 19)
	})
	if allocs != 0 {
		t.Fatalf("lookups allocate %v times a run, want 0", allocs)
	}
}

// TestDataFilesAreSmall: every data file stays under the repository's
// 1 MiB limit for a tracked file, sorted and without duplicates.
func TestDataFilesAreSmall(t *testing.T) {
	files, _ := filepath.Glob("data/*.txt")
	if len(files) < 6 {
		t.Fatalf("data files: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= 1<<20 {
			t.Errorf("%s: %d bytes, want under 1 MiB (split it)", f, len(b))
		}
		lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		for i := 1; i < len(lines); i++ {
			if bytes.Compare(lines[i-1], lines[i]) >= 0 {
				t.Errorf("%s: line %d %q not after %q", f, i+1, lines[i], lines[i-1])
				break
			}
		}
	}
}

var sink bool

func BenchmarkHealthWord(b *testing.B) {
	words := [][]byte{[]byte("pneumonia"), []byte("Warfarin"), []byte("server"), []byte("the"), []byte("configuration")}
	HealthWord(words[0])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = HealthWord(words[i%len(words)])
	}
}

func BenchmarkNames(b *testing.B) {
	words := [][]byte{[]byte("Maria"), []byte("Osei"), []byte("Server"), []byte("The"), []byte("O'Brien")}
	GivenName(words[0])
	Surname(words[0])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := words[i%len(words)]
		sink = GivenName(w) || Surname(w)
	}
}

func BenchmarkHealthPhrase(b *testing.B) {
	text := []byte("The patient was admitted with chest pain and heart failure")
	starts := []int{0, 4, 16, 25, 30, 36, 45}
	HealthPhrase(text, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = HealthPhrase(text, starts[i%len(starts)]) > 0
	}
}

func BenchmarkICD10(b *testing.B) {
	codes := [][]byte{[]byte("E11.9"), []byte("C50911"), []byte("R2D2"), []byte("V1.2")}
	ICD10(codes[0])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = ICD10(codes[i%len(codes)])
	}
}

// prose is what the scanner mostly looks up: words of ordinary text, few
// of them in any list.
var prose = bytes.Fields([]byte(`The deployment failed because the server returned an error when the
request reached the gateway; retry the job after checking the configuration and the logs. Please
send the invoice total to accounts before Friday, and note that the population study compares
outcomes across regions. Patient Maria Osei was admitted with pneumonia and started on warfarin.`))

func BenchmarkProse(b *testing.B) {
	var words [][]byte
	for _, w := range prose {
		words = append(words, bytes.Trim(w, ".,;:"))
	}
	HealthWord(words[0])
	GivenName(words[0])
	Surname(words[0])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := words[i%len(words)]
		sink = HealthWord(w) || GivenName(w) || Surname(w)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(3*b.N), "ns/lookup")
}

// BenchmarkHealthPhraseProse: HealthPhrase at every word start of
// ordinary prose, where almost no phrase starts.
func BenchmarkHealthPhraseProse(b *testing.B) {
	text := bytes.Join(prose, []byte(" "))
	var starts []int
	for i := range text {
		if isLetter(text[i]) && (i == 0 || !isLetter(text[i-1])) {
			starts = append(starts, i)
		}
	}
	HealthPhrase(text, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = HealthPhrase(text, starts[i%len(starts)]) > 0
	}
}
