package classifier_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

func TestDetectorsNameAndClass(t *testing.T) {
	want := map[string]string{
		"payment-card": "pii", "us-ssn": "pii", "iban": "pii", "email": "pii", "phone": "pii",
		"medical-record-number": "phi", "icd10-diagnosis": "phi", "health-term-with-identifier": "phi", "body-over-limit": "",
		"person-name-with-birth-date": "pii", "nhs-number": "phi", "us-medicare-mbi": "phi", "health-plan-id": "phi",
		"au-medicare": "phi", "es-dni": "pii", "fr-nir": "pii", "it-fiscal-code": "pii", "de-tax-id": "pii", "nl-bsn": "pii",
		"in-aadhaar": "pii", "br-cpf": "pii", "ca-sin": "pii", "au-tfn": "pii", "uk-nino": "pii", "pl-pesel": "pii",
		"se-personnummer": "pii", "us-bank-routing": "pii",
	}
	got := map[string]string{}
	for _, d := range classifier.All() {
		got[d.Name()] = d.Class()
	}
	assert.Equal(t, want, got)
}

func TestBodySkipsBinaryPayloads(t *testing.T) {
	for name, body := range map[string]string{
		"image_url part":   `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.example/4111111111111111.png","detail":"jane@example.com"}}]}]}`,
		"input_audio part": `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"536-22-8410","format":"wav"}}]}]}`,
		"file part":        `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"call 415-555-2671","filename":"a.pdf"}}]}]}`,
		"data URL":         `{"model":"m","messages":[{"role":"user","content":"data:text/plain,4111 1111 1111 1111"}]}`,
		"base64 blob":      `{"model":"m","input":"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk0MTExMTExMTExMTExMTEx"}`,
		"keys":             `{"model":"m","metadata":{"4111111111111111":"x","jane@example.com":"y"}}`,
	} {
		assert.True(t, classifier.Body([]byte(body)).Empty(), name)
	}
}

func TestBodyReadsEveryText(t *testing.T) {
	for name, body := range map[string]string{
		"json number":             `{"model":"m","metadata":{"card":4111111111111111}}`,
		"escaped digits":          `{"model":"m","messages":[{"role":"user","content":"ssn \u0035\u0033\u0036-22-8410"}]}`,
		"arguments escaped twice": `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"card\":\"\\u0034111 1111 1111 1111\"}"}}]}]}`,
		"surrogate pair nearby":   `{"model":"m","input":"\ud83d\ude00 jane@example.com"}`,
		"openai user field":       `{"model":"m","user":"jane@example.com","messages":[]}`,
	} {
		assert.False(t, classifier.Body([]byte(body)).Empty(), name)
	}
}

func TestValidationCutsFalsePositives(t *testing.T) {
	for _, s := range []string{
		"4111 1111 1111 1112",                                                     // Luhn
		"1234 5678 9012 3452",                                                     // no issuer (Luhn-valid)
		"000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000", // SSA rules
		"DE89 3704 0044 0532 0130 01", // mod-97
		"DE89 3704 0044 0532 0130",    // Germany's length
		"XX89 3704 0044 0532 0130 00", // no such country
		"pkg@1.2.3", "git@github.com:org/repo.git", "@scope/pkg",
		"123-456-7890", // NANP area codes start at 2
		"E11.9",        // an ICD-10 shape without a diagnosis word
		"order 123456789", "MRN", "call 12",
		"550e8400-e29b-41d4-a716-446655440000", "v1.2.3", "10.0.19041.1234",
	} {
		assert.True(t, classifier.Text([]byte(s)).Empty(), "%q: %v", s, classifier.Text([]byte(s)).Names())
	}
}
