package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// presidio-research's generated evaluation set and Presidio's context
// sentences: texts written by another generator (Faker values in
// presidio-research's templates) and by Presidio's authors, taken as they
// are, labelled by their annotated spans, and kept only when the span's
// value passes the identifier's own check (a phone number only with a word
// that says it is one: a bare national number is reported, not required).
const (
	generatedFile = "tests/data/generated_large.json"
	contextFile   = "presidio-analyzer/tests/data/context_sentences_tests.txt"
)

var phoneWord = regexp.MustCompile(`(?i)\b(phone|call|tel|telephone|mobile|cell|fax|whatsapp|text me|reach me|contact|number)\b`)

// spanKind maps an annotated entity to the detector it labels, and checks
// the value (and its text) as the corpus's label requires.
func spanKind(entity, value, text string) (string, bool) {
	c := compact(value)
	switch entity {
	case "CREDIT_CARD":
		return "payment-card", cardOK(c)
	case "US_SSN":
		return "us-ssn", ssnOK(c) && !oddSSN.MatchString(value) && (c != value || regexp.MustCompile(`(?i)\b(ssn|social security)`).MatchString(text))
	case "IBAN_CODE":
		return "iban", ibanOK(strings.ToUpper(c))
	case "EMAIL_ADDRESS":
		return "email", strings.Contains(value, "@") && strings.Contains(value[strings.Index(value, "@"):], ".")
	case "PHONE_NUMBER":
		return "phone", phoneWord.MatchString(text) && len(onlyDigitsOf(value)) >= 7
	case "ABA_ROUTING_NUMBER":
		return "us-bank-routing", routingOK(c) && strings.Contains(strings.ToLower(text), "account")
	}
	return "", false
}

func onlyDigitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// generatedItems labels each text by its first span of a kind the corpus
// measures (cards before SSNs, IBANs, emails and phones).
func generatedItems(src string) ([]item, string, error) {
	b, err := os.ReadFile(filepath.Join(src, presidioResearch, generatedFile))
	if err != nil {
		return nil, "", err
	}
	var samples []struct {
		FullText string `json:"full_text"`
		Spans    []struct {
			Type  string `json:"entity_type"`
			Value string `json:"entity_value"`
		} `json:"spans"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, "", fmt.Errorf("%s: %w", generatedFile, err)
	}
	var out []item
	seen := map[string]bool{}
	dropped := 0
	for _, s := range samples {
		kind := ""
		for _, want := range []string{"CREDIT_CARD", "US_SSN", "IBAN_CODE", "EMAIL_ADDRESS", "PHONE_NUMBER"} {
			for _, sp := range s.Spans {
				if sp.Type != want || kind != "" {
					continue
				}
				if k, ok := spanKind(sp.Type, sp.Value, s.FullText); ok {
					kind = k
				} else {
					dropped++
				}
			}
		}
		t := strings.TrimSpace(s.FullText)
		if kind != "" && !seen[t] {
			seen[t] = true
			out = append(out, item{kind, t})
		}
	}
	// Presidio's context sentences: an entity line, then its sentence.
	cb, err := os.ReadFile(filepath.Join(src, presidio, contextFile))
	if err != nil {
		return nil, "", err
	}
	lines := strings.Split(string(cb), "\n")
	fromContext := 0
	for i := 0; i+1 < len(lines); i++ {
		entity, text := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
		if entity == "" || strings.HasPrefix(entity, "#") || strings.ToUpper(entity) != entity || text == "" {
			continue
		}
		i++
		for _, v := range candidates(text) {
			if k, ok := spanKind(entity, v, text); ok && !seen[text] {
				seen[text] = true
				out = append(out, item{k, text})
				fromContext++
				break
			}
		}
	}
	return out, fmt.Sprintf("heldout-presidio: %d texts (%d of presidio-research's generated set, %d of Presidio's context sentences; %d spans dropped by the check)", len(out), len(out)-fromContext, fromContext, dropped), nil
}

// candidates are the number-like runs of a sentence (digits with the
// separators people print), its values to check.
func candidates(text string) []string {
	return regexp.MustCompile(`[0-9(][0-9 ().-]{5,}[0-9]`).FindAllString(text, -1)
}
