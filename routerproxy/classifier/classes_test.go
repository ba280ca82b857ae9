package classifier_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

// The tests of this file each hold a class of texts (every spelling of a
// cue, every grouping of every issuer's lengths, every country's phone
// printing), not one string: a defect fixed for one spelling and not its
// siblings fails here.

func detectorNamed(t *testing.T, name string) classifier.Detector {
	t.Helper()
	for _, d := range classifier.All() {
		if d.Name() == name {
			return d
		}
	}
	t.Fatalf("no detector %q", name)
	return 0
}

// assertFires holds that text fires the detector, and only the detectors
// in also besides it.
func assertFires(t *testing.T, name, text string, also ...string) {
	t.Helper()
	got := classifier.Text([]byte(text))
	assert.True(t, got.Has(detectorNamed(t, name)), "%q: want %s, got %v", text, name, got.Names())
	for _, n := range got.Names() {
		if n != name && !slices.Contains(also, n) {
			assert.Fail(t, "unexpected detector", "%q: %s fired besides %s", text, n, name)
		}
	}
}

func assertNone(t *testing.T, text string) {
	t.Helper()
	got := classifier.Text([]byte(text))
	assert.True(t, got.Empty(), "%q: want nothing, got %v", text, got.Names())
}

// TestCueSpellings: an id word is matched whatever its punctuation,
// abbreviation dots and case; a word that is not one, or one that needs a
// number marker without it, is not.
func TestCueSpellings(t *testing.T) {
	for _, cue := range []string{
		"MRN", "MRN:", "MRN#", "MRN #", "MRN -", "mrn=", `"mrn": "`, "MRN no.", "Med rec no.", "Med. Rec. #", "MED-REC", "med rec",
		"Medical record number:", "Medical Record No.", "medical record #", "Med record", "MR#", "MR #", "MR no.",
		"Pt ID", "pt. id:", "Pt #", "Patient ID", "Patient ID:", "Patient No.", "patient number", "Patient #",
		"Chart #:", "chart no", "Chart ID", "Hospital No", "hospital number:", "Hosp. #", "Record #", "record no.", "EMR #", "URN",
	} {
		for _, sep := range []string{" ", ""} {
			text := "Please pull " + cue + sep + "5512093 today."
			if strings.HasSuffix(cue, `"`) {
				text = cue + `5512093"`
			}
			assertFires(t, "medical-record-number", text)
		}
	}
	for _, text := range []string{
		"order no. 5512093", "Record 5512093 updated", "patient 5512093", "chart 5512093", "Mr. Smith paid 5512093",
		"MRN policy changed. Our invoice total was 5512093.", "the hospital 5512093",
	} {
		assertNone(t, text)
	}
	// Other lists, the same normalisation.
	assertFires(t, "us-bank-routing", "Routing no. 011000015, Acct no. 123456789")
	assertFires(t, "us-bank-routing", "ABA/routing #: 021000021; account 000123456789")
	assertFires(t, "us-ssn", "Soc. Sec. No. 536228410")
	assertFires(t, "us-ssn", "S.S.N. # 536228410")
}

// TestCueDashDigits: a record number joined to its id word by a dash, or
// written with a letter prefix after one.
func TestCueDashDigits(t *testing.T) {
	for _, text := range []string{
		"MRN-12345", "See MRN-0012345678.", "MR-00012345", "mr-00012345 admitted", "MRN12345",
		"Patient ID: PT-884213", "Patient ID PT884213", "MRN: A7731920", "pt id: MR-44120", "Med rec no. H-2231907",
		"Chart #: CH-55120", "medical record number: MRN-5512093",
	} {
		assertFires(t, "medical-record-number", text)
	}
	for _, text := range []string{
		"member ID BCX884512907", "Member ID: BCX-884512907", "Subscriber #: XEH448812001", "policy no. AB-12345678",
		"Group number: 0088213", "Medicaid 88451290",
	} {
		assertFires(t, "health-plan-id", text)
	}
	for _, text := range []string{
		"ORD-12345", "PR-12345 merged", "ID: PT-884213", "see JIRA-55120", "build-20231207", "Policy PRJ-88451 applies",
		"MRN-12", "sha256-884213aa",
	} {
		assertNone(t, text)
	}
}

// luhnComplete returns prefix padded to n digits with a fixed pattern and a
// Luhn check digit.
func luhnComplete(prefix string, n int) string {
	d := []byte(prefix)
	for len(d) < n-1 {
		d = append(d, byte('0'+(len(d)*7+3)%10))
	}
	for c := byte('0'); c <= '9'; c++ {
		cand := append(append([]byte{}, d...), c)
		sum := 0
		for i := len(cand) - 1; i >= 0; i-- {
			v := int(cand[i] - '0')
			if (len(cand)-1-i)%2 == 1 {
				v *= 2
				if v > 9 {
					v -= 9
				}
			}
			sum += v
		}
		if sum%10 == 0 {
			return string(cand)
		}
	}
	panic("unreachable")
}

// group prints digits in groups of the given sizes joined by sep.
func group(d string, sep string, sizes ...int) string {
	var parts []string
	for _, n := range sizes {
		parts = append(parts, d[:n])
		d = d[n:]
	}
	return strings.Join(parts, sep)
}

// fours are the sizes of n digits printed in fours with a shorter last
// group.
func fours(n int) []int {
	var s []int
	for ; n > 4; n -= 4 {
		s = append(s, 4)
	}
	return append(s, n)
}

// TestCardGroupings: each issuer at each of its lengths, whole, in fours
// and in its own printing, is a card; at any other length, in any
// printing, it is not.
func TestCardGroupings(t *testing.T) {
	issuers := []struct {
		name, prefix string
		lengths      []int
		own          map[int][]int // the issuer's own printing at a length
	}{
		{"Visa", "4", []int{13, 16, 19}, map[int][]int{13: {4, 3, 3, 3}}},
		{"Mastercard", "51", []int{16}, nil},
		{"Mastercard 2-series", "2221", []int{16}, nil},
		{"Amex", "34", []int{15}, map[int][]int{15: {4, 6, 5}}},
		{"Amex 37", "37", []int{15}, map[int][]int{15: {4, 6, 5}}},
		{"Diners", "36", []int{14, 15, 16, 17, 18, 19}, map[int][]int{14: {4, 6, 4}}},
		{"Discover", "6011", []int{16, 17, 18, 19}, nil},
		{"JCB", "3530", []int{16, 17, 18, 19}, nil},
		{"UnionPay", "62", []int{16, 17, 18, 19}, nil},
		{"Mir", "2202", []int{16, 17, 18, 19}, nil},
	}
	for _, is := range issuers {
		for n := 12; n <= 20; n++ {
			d := luhnComplete(is.prefix, n)
			valid := slices.Contains(is.lengths, n)
			printings := []string{d, group(d, " ", fours(n)...), group(d, "-", fours(n)...)}
			if own, ok := is.own[n]; ok {
				printings = append(printings, group(d, " ", own...), group(d, "-", own...))
			}
			for _, p := range printings {
				text := "Card on file: " + p + " thanks"
				if valid {
					assertFires(t, "payment-card", text)
				} else {
					got := classifier.Text([]byte(text))
					assert.False(t, got.Has(classifier.PaymentCard), "%s at %d digits: %q is not a card (%v)", is.name, n, p, got.Names())
				}
			}
		}
	}
	// Printings that are no issuer's.
	for _, text := range []string{
		"4242-4242-4242-424", "4242 4242 4242 424", "424242424242424", // a 15-digit Visa
		"4364 804 794 598 1", "4111 111 111 1111 1", "3400 000000 00009 1",
		group(luhnComplete("4", 16), " ", 4, 6, 6), group(luhnComplete("34", 15), " ", 5, 5, 5),
	} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.PaymentCard), "%q: %v", text, got.Names())
	}
	assertFires(t, "payment-card", "Visa 4364 804 794 598 on file")
}

// TestDigitRunsLongerThanACard: a card's digits inside a longer number are
// that number's, not a card; a card beside a shorter group (a CVV, a
// reference) still is.
func TestDigitRunsLongerThanACard(t *testing.T) {
	card := "4111111111111111"
	for _, text := range []string{
		card + "1234",                   // a 20-digit run
		"0" + card,                      // 17 digits, no issuer at that prefix
		"serial 00" + card + "77",       // inside a serial
		"4111 1111 1111 1111 1111",      // 20 digits printed in fours
		"4111 1111 1111 1111 1111 1111", // 24
		"1234 4111 1111 1111 1111",      // a group of four before it
		"SN " + group("55"+card[2:]+"1234", " ", 4, 4, 4, 4, 4), // a Mastercard-looking start
		"tracking " + card + "0000000",
	} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.PaymentCard), "%q: %v", text, got.Names())
	}
	for _, text := range []string{
		"4111 1111 1111 1111 123", "ref 12 4111 1111 1111 1111", "4111 1111 1111 1111 12/27", card + " exp 12/27",
	} {
		assertFires(t, "payment-card", text)
	}
}

// TestCollidingRangesNeedACardWord: RuPay's own ranges (60, 81-82, 508)
// take voucher, container and device serials; their numbers are a card
// only after a card word in the clause.
func TestCollidingRangesNeedACardWord(t *testing.T) {
	for _, prefix := range []string{"81", "82", "60", "508"} {
		d := luhnComplete(prefix, 16)
		for _, text := range []string{"voucher " + d, "container serial " + d, "device " + group(d, " ", 4, 4, 4, 4), d,
			"Paid by card. Voucher " + d} {
			got := classifier.Text([]byte(text))
			assert.False(t, got.Has(classifier.PaymentCard), "%q: %v", text, got.Names())
		}
		for _, text := range []string{"RuPay card " + d, "debit card number: " + group(d, " ", 4, 4, 4, 4), "charge " + d} {
			assertFires(t, "payment-card", text)
		}
	}
}

// TestCueReach: an id word reaches the number it labels, not one another
// word labels, nor one sentences away.
func TestCueReach(t *testing.T) {
	for _, text := range []string{
		"IMEI 490154203237518", "phone IMEI 490154203237518", "My phone's IMEI is 490154203237518",
		"Call me tomorrow. Order 5551234567 shipped.", "My phone broke; the serial was 5551234567",
		"phone! 5551234567", "Text me the results. The invoice is 5551234567.",
		"MRN pending; invoice 5512093", "call on 2026-12-05", "NHS trust budget 2026: 9434765919 pounds", // not the id's number
		"Please call.\n\nTicket 5551234567",
	} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.Phone) || got.Has(classifier.MedicalRecordNumber) || got.Has(classifier.NHSNumber),
			"%q: %v", text, got.Names())
	}
}

// TestPhonesAfterACue: a phone word before a number in any country's
// printing, exchange codes from 0 included.
func TestPhonesAfterACue(t *testing.T) {
	for _, text := range []string{
		"Call 555-123-4567", "my phone: 1-555-123-1234", "phone number is 555 123 4567", "cell: 555.123.4567",
		"Call me at 5551234567", "tel 1 555 123 1234",
		"Tel: 020 7946 0958", "mobile 07700 900123", "phone: 0161 496 0000", // UK
		"Tel. 01 42 68 53 00", "portable : 06 12 34 56 78", // FR
		"Telefon 030 1234567", "Handy: 0171 1234567", "Tel. 089 12345678", // DE
		"Tel. 912 345 678", "movil 612 34 56 78", // ES
		"cellulare 347 123 4567", "tel 06 1234 5678", // IT
		"telefoon 020-1234567", "mobiel 06-12345678", // NL
		"mobile 98765 43210", "phone: 022 2345 6789", // IN
		"celular (11) 98765-4321", "telefone (21) 2345-6789", // BR
		"phone 0412 345 678", "ph (02) 9374 4000", // AU
	} {
		assertFires(t, "phone", text)
	}
}

// TestNationalIdentifiers: every identifier with its check, after its id
// word; the strong formats also alone; a failed check never.
func TestNationalIdentifiers(t *testing.T) {
	cases := []struct {
		detector string
		valid    []string
		invalid  []string
	}{
		{"nhs-number", []string{"NHS number 943 476 5919", "NHS No: 9434765919", "nhs# 401 023 2137", "NHS no. 450-557-7104"},
			[]string{"NHS number 943 476 5918", "943 476 5910"}},
		{"us-medicare-mbi", []string{"1EG4-TE5-MK73", "MBI 1EG4TE5MK73", "Medicare ID: 1EG4-TE5-MK73"},
			[]string{"1SG4-TE5-MK73", "1EG4-TE5-MK7", "0EG4-TE5-MK73", "1eg4-te5-mk73x"}},
		{"au-medicare", []string{"Medicare card 2123 45670 1", "medicare no. 2428778132"}, []string{"Medicare card 2123 45671 1"}},
		{"es-dni", []string{"DNI 12345678Z", "12345678-Z", "NIE X1234567L", "Y1234567X"}, []string{"12345678A", "X1234567A"}},
		{"fr-nir", []string{"NIR 185057800608491", "1 85 05 78 006 084 91", "numéro de sécurité sociale: 2 69 05 49 588 157 80"},
			[]string{"1 85 05 78 006 084 36", "NIR 185057800608436"}},
		{"it-fiscal-code", []string{"RSSMRA85T10A562S", "codice fiscale: MRTMTT91D08F205J"}, []string{"RSSMRA85T10A562T"}},
		{"de-tax-id", []string{"Steuer-ID: 86095742719", "Steueridentifikationsnummer 65929970489", "IdNr. 47 036 892 816"},
			[]string{"Steuer-ID: 86095742718", "Steuer-ID 11111111111"}},
		{"nl-bsn", []string{"BSN 111222333", "burgerservicenummer: 1234.56.782"}, []string{"BSN 111222334"}},
		{"in-aadhaar", []string{"Aadhaar 2345 6789 0124", "aadhaar no: 491827364507"}, []string{"Aadhaar 2345 6789 0123"}},
		{"br-cpf", []string{"123.456.789-09", "CPF 52998224725", "CPF: 529.982.247-25"}, []string{"123.456.789-10", "111.111.111-11"}},
		{"ca-sin", []string{"SIN 046 454 286", "social insurance number: 046454286"}, []string{"SIN 046 454 287"}},
		{"au-tfn", []string{"TFN 123 456 782", "tax file number: 876543210"}, []string{"TFN 123 456 781"}},
		{"uk-nino", []string{"AB123456C", "NI number: AB 12 34 56 C", "JG103759A"}, []string{"AB123456E", "QQ123456C", "BG123456C", "DA123456C"}},
		{"pl-pesel", []string{"PESEL 44051401359", "pesel: 02070803628"}, []string{"PESEL 44051401358"}},
		{"se-personnummer", []string{"personnummer 811228-9874", "personnr: 850709-9805", "Personnummer 19811228-9874"},
			[]string{"personnummer 811228-9875"}},
		{"us-bank-routing", []string{"routing number 011000015 and account number 4451290012"},
			[]string{"routing number 011000016 and account number 4451290012", "routing number 011000015 for Chase"}},
	}
	for _, c := range cases {
		for _, text := range c.valid {
			got := classifier.Text([]byte(text))
			assert.True(t, got.Has(detectorNamed(t, c.detector)), "%q: want %s, got %v", text, c.detector, got.Names())
			assert.False(t, got.Has(classifier.Phone), "%q names its identifier, not a phone: %v", text, got.Names())
		}
		for _, text := range c.invalid {
			got := classifier.Text([]byte(text))
			assert.False(t, got.Has(detectorNamed(t, c.detector)), "%q: %v", text, got.Names())
		}
	}
	// Weak checks need their id word: the same numbers bare are nothing.
	for _, text := range []string{"111222333", "9434765919", "2345 6789 0124", "86095742719", "44051401359", "811228-9874", "011000015",
		"ref 185057800608491"} {
		assertNone(t, text)
	}
}

// TestCueAcrossLanguagesAndTurns: an id word in another language or
// script, a verb of another language between it and its number, and a
// question answered on the next turn of a transcript.
func TestCueAcrossLanguagesAndTurns(t *testing.T) {
	for _, c := range []struct{ detector, text string }{
		{"nl-bsn", "Beste, mijn BSN-nummer is 111222333."},
		{"nl-bsn", `{"bsn_nummer": "1234.56.782"}`},
		{"de-tax-id", "meine Steuer-ID lautet 86095742719."},
		{"de-tax-id", "meine steuer-idnr. lautet 47 036 892 816"},
		{"es-dni", "mi DNI es 12345678z."},
		{"fr-nir", "Mon NIR est le 185057800608491, merci."},
		{"fr-nir", "n° de sécurité sociale : 185057800608491"},
		{"ca-sin", "Bonjour, mon NAS est 046-454-286."},
		{"ca-sin", "mon S.I.N. est 046454286"},
		{"in-aadhaar", "आधार - 2345-6789-0124"},
		{"br-cpf", "Cadastro de Pessoas Físicas 52998224725"},
		{"br-cpf", "CPF nº 52998224725"},
		{"se-personnummer", "Hej, mitt pnr är 8112289874."},
		{"pl-pesel", "Can I have your nr PESEL?\nCaller: Yes, it's 44051401359."},
		{"nhs-number", "Agent: Can I have your NHS number?\nCaller: Yes, it's 943 476 5919.\nAgent: Thank you."},
		{"au-tfn", "Agent: Can I have your TFN?\nCustomer: Sure, it's 123456782."},
		{"health-plan-id", "Agent: Can I have your group number?\nCaller: Yes, it's W308606972."},
	} {
		got := classifier.Text([]byte(c.text))
		assert.True(t, got.Has(detectorNamed(t, c.detector)), "%q: want %s, got %v", c.text, c.detector, got.Names())
	}
	// The turn after the answer, or a question about something else, is
	// out of reach.
	assertNone(t, "Agent: Can I have your NHS number?\nCaller: I don't have it. My order is 9434765919.")
}

// TestStrongFormatsInAnyCase: the formats with a check letter or
// character are read lowercase too, with their printed separators.
func TestStrongFormatsInAnyCase(t *testing.T) {
	for _, c := range []struct{ detector, text string }{
		{"it-fiscal-code", "CF: rssmra85t10a562s"},
		{"es-dni", "x1234567l"}, {"es-dni", "x-1234567-l"}, {"es-dni", "DNI (12.345.678-Z)"},
		{"uk-nino", "ab123456c"}, {"uk-nino", "nino: AB 123456C"},
		{"us-medicare-mbi", "1eg4-te5-mk73"},
		{"fr-nir", "253072B07300470"},
	} {
		got := classifier.Text([]byte(c.text))
		assert.True(t, got.Has(detectorNamed(t, c.detector)), "%q: want %s, got %v", c.text, c.detector, got.Names())
	}
}

// TestLabelledNumbers: a number another id word labels (serial, order,
// room, IMEI...) is not a phone number or a spaced SSN, whatever its
// shape; a phone line's label glued after it is read as a label.
func TestLabelledNumbers(t *testing.T) {
	for _, label := range []string{"Serial number", "S/N", "Order #", "Invoice", "Tracking no.", "Ticket", "Room", "Model", "Ref:", "dial-in code"} {
		for _, n := range []string{"335-569-9492", "(415) 555-2671", "123 45 6789", "020 7946 0958"} {
			assertNone(t, label+" "+n+" on the label")
		}
	}
	assertFires(t, "phone", "07700 900806-Office")
	assertFires(t, "phone", "+49 30 04739793-Fax")
	assertFires(t, "us-ssn", "Room 4, SSN 536-22-8410") // a label reaches its own number only
}

// TestTestCardsInCode: a processor's published test number among the
// words of code or docs about tests is an example; in a customer's words
// it is still a card, and a number not on the list is a card anywhere.
func TestTestCardsInCode(t *testing.T) {
	for _, text := range []string{
		`const testCard = "4242424242424242" // Stripe test Visa`,
		"stripe.PaymentMethod.create(\n    type=\"card\",\n    card={\"number\": \"5555 5555 5555 4444\", \"exp_month\": 12})",
		"it('charges the test card', async () => { await pay({ card: '378282246310005' }) })",
		"# use 4111111111111111 in the sandbox",
	} {
		assertNone(t, text)
	}
	assertFires(t, "payment-card", "my card number is 4242 4242 4242 4242, exp 12/27")
	assertFires(t, "payment-card", `const testCard = "4526018159083012" // a customer's, pasted in a test`)
}

// TestICD10InReferenceText: a code in a coding guideline or code list is
// a diagnosis's code, not a person's diagnosis; on a claim or in a chart
// it is.
func TestICD10InReferenceText(t *testing.T) {
	assertNone(t, "Use E11.9 for type 2 diabetes without complications; do not combine with R73.9 (ICD-10-CM guideline I.B.5).")
	assertNone(t, "Coding guide – common inpatient diagnoses:\nJ18.9   pneumonia, unspecified organism\nI50.9   heart failure")
	assertFires(t, "icd10-diagnosis", "Diagnosis code E11.9 was added to the claim.")
	assertFires(t, "icd10-diagnosis", "Dx: J45.909")
}

// TestIBANNationalPrintings: an IBAN in its country's own grouping (not
// fours), with spaces, dots or dashes, and a space after the country.
func TestIBANNationalPrintings(t *testing.T) {
	for _, text := range []string{
		"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "DE89-3704-0044-0532-0130-00", "DE89.3704.0044.0532.0130.00",
		"DE 89 370400440532013000", "GB82 WEST 1234 5698 7654 32", "GB 82 WEST 12345698765432",
		"PT50 0002 0123 1234 5678 9015 4", // a last group of one
	} {
		assertFires(t, "iban", "refund to "+text+" please")
	}
	for _, text := range []string{"DE89 3704 0044 0532 0130 01", "DE 89 3704 0044 0532 0130"} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.IBAN), "%q: %v", text, got.Names())
	}
}

// TestEscapesInToolArguments: a tool call's arguments are JSON in a JSON
// string; their escaped newlines and quotes do not glue an id word to
// the line before it.
func TestEscapesInToolArguments(t *testing.T) {
	for _, line := range []string{"TFN: 123 456 782", "NHS NUMBER:943-476-5919", "Phone:\n1-791-641-9801", "policy number: W383025010"} {
		args := `{"note":"Dear HR,\nplease update my record.\n` + strings.ReplaceAll(line, "\n", `\n`) + `\nThanks"}`
		body := `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"save","arguments":` + jsonString(args) + `}}]}]}`
		assert.False(t, classifier.Body([]byte(body)).Empty(), "%s", body)
	}
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// TestRoutingBesideAnAccount: a routing number with an account number
// after it needs no routing word.
func TestRoutingBesideAnAccount(t *testing.T) {
	assertFires(t, "us-bank-routing", "121000358, account 4941151225")
	assertFires(t, "us-bank-routing", "Routing: 021000021\nAccount: 000123456789")
	assertNone(t, "121000358 units shipped")
}

// TestNamesWithoutACue: a person's name (the gazetteer's given name and a
// capitalized surname, either order, accents folded) beside a health term
// is phi with no cue word; eponyms, clinicians, organizations, words in
// capitals and names with no health term near are not.
func TestNamesWithoutACue(t *testing.T) {
	for _, text := range []string{
		"John Smith has HIV", "Maria Lopez was admitted with pneumonia.", "FYI Dominic Alexander tested positive for sepsis.",
		"Ágnes Földesy is on warfarin.", "Handoff: Natalie Aupry in 20A is being treated for cellulitis.",
		"Pisano, Fortunato — 42 y/o male w/ hx of asthma", "my father leif ranheim takes insulin",
		"Miyanohara, Mayuhiko — 47 y/o male w/ hx of epilepsy",
		"Summarize for the team: Maha Cazares (53F) came in with sepsis", "Hana Čechová started vancomycin for her leukemia",
		"Mr Takeda has diabetes", "Consult note: David J. Osei, atrial fibrillation",
	} {
		assertFires(t, "health-term-with-identifier", text, "person-name-with-birth-date")
	}
	for _, text := range []string{
		"Patients with Parkinson's disease benefit from exercise.", "Hodgkin lymphoma is highly curable.",
		"Crohn disease and ulcerative colitis are inflammatory bowel diseases.", "Dr. Maria Lopez leads the diabetes clinic.",
		"Emerson Electric Co. sponsors the cancer walk.", "JOHN SMITH DIABETES PROGRAM", "John Smith joined the team on Monday.",
		"The American Diabetes Association guideline recommends metformin.", "180 ms. Order 88123 shipped; the patient portal is down.",
	} {
		assertNone(t, text)
	}
}

// TestHealthTermsFromTheLexicon: the health words near an identifier come
// from the terminology, not only the hand-written stems.
func TestHealthTermsFromTheLexicon(t *testing.T) {
	for _, term := range []string{"pneumonia", "sepsis", "warfarin", "atrial fibrillation", "admitted with chest pain", "cellulitis", "levothyroxine"} {
		assertFires(t, "health-term-with-identifier", "Patient Jane Roe, MRN 5512093: "+term+".", "medical-record-number")
		assertFires(t, "health-term-with-identifier", "jane.roe@example.com "+term, "email")
	}
}

// TestNameWithBirthDate: a name and a date of birth are pii without a
// health term, in every way forms and prose write them; a birth word
// without a date, or a decade, is not a date of birth.
func TestNameWithBirthDate(t *testing.T) {
	for _, text := range []string{
		"Mr. David Osei, DOB 11/02/1949", "Name: Ichita Takeda\nDate of birth: 7 September 1967", "Christian Nobbs (born 03/08/1974) joins the team.",
		"Lo Berggren, b. 02/26/1996, Ormiston", "DOB: 1 January 2000 — Pesonen, Martti", "Passenger: Pap/Viktor Mr  DOB April 23, 1988",
		"Attendee list: Felix Sørensen (11/05/1950), Rafaela Lima (9 Feb 1947)", "Caller Jonáš Zadina. She was born on 7/23/04.",
		"guest_name=Arna Ásgeirsdóttir&dob=1/4/68&room=412", "DOB: 22/01/1960 — Salgado, Nehemias",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
		assert.Contains(t, got.Classes(), "pii")
	}
	assertFires(t, "health-term-with-identifier", "Mr. David Osei, DOB 11/02/1949, on warfarin", "person-name-with-birth-date")
	for _, text := range []string{
		"Median age at diagnosis by decade of birth (1940s-1960s)?", "John Smith was born in a small town.",
		"Felix Sørensen (11/05/2026) follow-up", "Dr. Maria Lopez, born 1962, chairs the board",
	} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
}

// TestICD10WithTheCodeSet: a code of the ICD-10 code set written with its
// dot needs only a health word of the terminology in its clause; a
// version string, or a code outside the set, still needs a diagnosis word.
func TestICD10WithTheCodeSet(t *testing.T) {
	for _, text := range []string{"1. cerebral infarction (I63.9) – continue", "acute appendicitis (K35.80)", "J18.9 pneumonia, unspecified organism"} {
		assertFires(t, "icd10-diagnosis", text)
	}
	for _, text := range []string{"upgrade to E10.4 firmware", "build C50.911 released", "E99.99 cellulitis"} {
		got := classifier.Text([]byte(text))
		assert.False(t, got.Has(classifier.ICD10), "%q: %v", text, got.Names())
	}
}

// TestBirthWordsOfOtherLanguages: a name with a birth word of a language
// the detectors cover, in civil-status, form and list printings.
func TestBirthWordsOfOtherLanguages(t *testing.T) {
	for _, text := range []string{
		"Patient/in: Anette Jansson, geb. 11.06.1938, wohnhaft in Berlin", "Mme RUNÓLFSDÓTTIR Eyþóra, née le 12/03/1987 à Paris",
		"M. LESPÉRANCE Donat, né le 28/05/1959 à PONTOISE", "Intestatario: Jan Kristiansen, nato il 16/06/1977 a Letaba",
		"Titular: Anna Lyberth, nacida el 22/09/1961", "Anna Lindqvist, född 1959-10-17, ska kallas till intervju.",
		"dob: 02/13/1943\nname: david berg", "guest_name=Sille Nielsen&dob=27.07.1965&room=412",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
	assertNone(t, "Der Vertrag, geb. 2019, läuft aus.") // no name
}

// TestRecordNumbersInGroups: a record or member number printed in groups,
// or with its letter prefix apart, after its id word; a long bare number
// a log key labels (trace_id=...) is no card.
func TestRecordNumbersInGroups(t *testing.T) {
	for _, text := range []string{"MRN: 314-393-751", "MR# 717-774-088", "Pt ID 192 190 756", "URN 462-298-337"} {
		assertFires(t, "medical-record-number", text)
	}
	for _, text := range []string{"Insurance ID# SUC 233889992", "subscriber ID - SHH 779827978", "member no. YWC 156582108"} {
		assertFires(t, "health-plan-id", text)
	}
	for _, key := range []string{"dd.trace_id=", "span_id=", "request id ", "session: ", "tweet "} {
		got := classifier.Text([]byte(key + "4157327747296871334 ok"))
		assert.False(t, got.Has(classifier.PaymentCard), "%q: %v", key, got.Names())
	}
}

// TestNamesInAPatientsSentence: a capitalized pair the gazetteer knows one
// word of is a name where the sentence speaks of a person (a patient's
// verb after it, a possessive, a word that introduces one), and an
// initial with a surname is one with an age after it; the same pair in a
// product's or place's sentence is not.
func TestNamesInAPatientsSentence(t *testing.T) {
	for _, text := range []string{
		"Handoff: Maciej Borkowski in 25 is being treated for major depressive disorder",
		"Hi team, Towa Nyberg from bed 36A is asking about her COVID-19 results", "Lily Nolan has pneumonia.",
		"What are the treatment options for Leonti Maslow's leukemia?", "S. Kadyrov (67M) – type 2 diabetes, for review",
		"Consult note: asked to see Maciej Kaczmarek for pneumonia.",
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
	for _, text := range []string{
		"Microsoft Azure hosts the diabetes registry.", "New York reported more influenza cases this week.",
		"S. Kadyrov et al. studied sepsis outcomes.",
	} {
		assertNone(t, text)
	}
}

// TestBareNameReach: a bare name's health term is in its sentence or the
// next, and a pair whose second word the gazetteer lacks is a name only
// where the text speaks of a person or lists one.
func TestBareNameReach(t *testing.T) {
	assertFires(t, "health-term-with-identifier", "Nursing note 0300: Maria Gustavsen restless. Hx CHF exacerbation, on warfarin.")
	for _, text := range []string{
		"Hi Maria, the diabetes guideline draft is attached. Thanks for the review of the insulin section.\n\nBest,\nTom Baker",
		"According to Kaiser Permanente, hypertension affects about 3 in 740 nursing home residents.",
		"Ask Claude Code to refactor the sepsis dashboard.",
	} {
		assertNone(t, text)
	}
}

// TestInternationalizedDomains: an address whose domain is written in
// punycode, the top-level domain too.
func TestInternationalizedDomains(t *testing.T) {
	assertFires(t, "email", "a@xn--d1acufc.xn--p1ai")
	assertFires(t, "email", "write to ivan@xn--80ak6aa92e.com")
	assertNone(t, "pkg@1.2.3")
}

// TestPlaceholdersAndExamples: numbers and addresses that show a format
// (repeated or counting digits, "... style", a placeholder local part on
// a reserved domain, a systemd unit) name no one.
func TestPlaceholdersAndExamples(t *testing.T) {
	for _, text := range []string{
		`phone="000-000-0000"`, "call 123-456-7890", "MRN 1111111", "We store phones as E.164 (+15551234567 style).",
		`email="test.user@example.com"`, "postgresql@16-main.service: Consumed 4h CPU time.", "getty@tty1.service started",
	} {
		assertNone(t, text)
	}
	assertFires(t, "email", "jane.doe@example.com")
	assertFires(t, "phone", "call +1 415 555 2671")
}

// TestCodeListsAndReferences: three ICD-10 codes or more, or codes in a
// reference text, are a person's diagnoses only beside an identifier.
func TestCodeListsAndReferences(t *testing.T) {
	assertNone(t, "ICD-10 codes for sepsis: A41.9 sepsis unspecified organism, R65.20 severe sepsis, R65.21 with septic shock.")
	assertNone(t, "Refactor the ICD-10 lookup so that E11.9 and E11.65 resolve to the same parent category E11.")
	assertFires(t, "icd10-diagnosis", "Coding query: discharge dx for Mrs Pearl Atkinson should be J44.1 not J44.9, she had an exacerbation.",
		"health-term-with-identifier")
	assertFires(t, "icd10-diagnosis", "Problem list: E11.9 diabetes, I10 hypertension (dx 2019).")
}

// TestCardsCutFromLongerNumbers: a card's digits at the end of a longer
// grouped number (a meter's supply point) are that number's.
func TestCardsCutFromLongerNumbers(t *testing.T) {
	assertNone(t, "supply point 00 801 980 4954375571118, estimated consumption 184,000 kWh")
	assertFires(t, "payment-card", "ref 12 4111 1111 1111 1111")
	assertFires(t, "payment-card", "4111 1111 1111 1111 123")
}

// TestStaffAndPlaces: a title of ward staff, a saint's or a place's name
// is no patient's name.
func TestStaffAndPlaces(t *testing.T) {
	assertNone(t, "Congratulations to Sister Bernadette Walsh on 30 years of service to the renal unit!")
	assertNone(t, "200 boxes amoxicillin 500mg capsules to St Anne's Pharmacy.")
}

// TestPhonesOfMoreLanguagesAndEncodings: phone words of the covered
// languages, and a number URL-encoded in a webhook body.
func TestPhonesOfMoreLanguagesAndEncodings(t *testing.T) {
	for _, text := range []string{
		"teléfono 612 48 93 05, pregunte por Carmen", "numer telefonu: 512 338 907", "mobilnummer 070-182 45 63",
		"From=%2B447700900155&Body=Hi", "can+you+call+me+on+07700+900155",
	} {
		assertFires(t, "phone", text)
	}
	assertNone(t, "1+1=2 and 12+30 is 42")
}

// TestNamesInFormsAndRecords: a name in capitals after a form's label,
// and a birth word of another language, or a birth date read further on,
// after a name.
func TestNamesInFormsAndRecords(t *testing.T) {
	for _, text := range []string{
		"PATIENT: KOWALSKI, ANNA  DOB: 19-MAR-1970  SEX: F", "Lika Balashova, född 1990-05-25, ska kallas till intervju.",
		"The birthday on file for John Smith is 1984-08-08 but he says it should be 1984-08-18.",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
}

// TestNamesInRecordsAndParticles: a name at a quoted value's start, in a
// SQL row, with a surname particle, or after a clinician's verb.
func TestNamesInRecordsAndParticles(t *testing.T) {
	for _, text := range []string{
		`{"note":"Emanuel Pavić is HIV positive"}`, "id=90211 patient_name='Elif Yilmaz' diagnosis='acute pancreatitis'",
		"Beatrix van Dijk has diabetes type 2.", "I've seen Perpetua Ansah today, her sickle cell trait was confirmed in pregnancy screening.",
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
}

// TestRecordFormats: identifiers in the formats records travel in: an
// HL7 v2 identifier with its type code, a cheque's MICR line, FHIR and
// form name fields with a birth date.
func TestRecordFormats(t *testing.T) {
	assertFires(t, "nhs-number", "PID|1||9434765919^^^NHS^NH||MORGAN^RHIANNON^^^MRS||19580412|F")
	assertFires(t, "medical-record-number", "PID|1||4411290^^^STMARYS^MR||DOE^JANE")
	assertFires(t, "us-bank-routing", "The check shows ⑆021000021⑆ 7383940812⑈ 1042 at the bottom")
	for _, text := range []string{
		`{"resourceType":"Patient","name":[{"family":"Okoro","given":["Chinwe"]}],"birthDate":"1985-03-02"}`,
		"last_name='Nwosu', first_name='Amara', dob='1991-07-04'",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
	assertNone(t, `{"name": "get_weather", "description": "Returns the weather", "parameters": {}}`)
}

// TestPatientsPhrases: any capitalized pair before a phrase said only of
// patients is a name, and a clinic list's time starts one.
func TestPatientsPhrases(t *testing.T) {
	for _, text := range []string{
		"FYI Sepi Akhtakhanov tested positive for syphilis.", "Hi team, Klaudijo Kundid from bed 38 is asking about his sepsis results.",
		"Nursing note 0300: Dalkhan Rushisvili restless, c/o hematemesis.", "Clinic list Tue: 09:00 Alina Abakumova (preeclampsia); 09:20 cancelled.",
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
	assertNone(t, "Google Cloud was admitted to the HIPAA program; influenza dashboards follow.")
}

// TestCountryNumbers: "my <country> number" is a phone number's phrase.
func TestCountryNumbers(t *testing.T) {
	assertFires(t, "phone", "My Israeli number is 09-7625400")
	assertFires(t, "phone", "my CN number is 13812345678")
	assertNone(t, "my order number is 5551234567")
	assertNone(t, "my Order number is 5551234567")
}

// TestTablesAndRecordsOfPeople: a table whose header names a name and a
// birth field, a record's possessive, a reversed name after a DOB, and
// lowercase names beside a date of birth.
func TestTablesAndRecordsOfPeople(t *testing.T) {
	for _, text := range []string{
		"CSV preview:\nfirst_name,last_name,date_of_birth,postcode\nAmara,Nwosu,1991-07-04,SE15 4QT",
		"Could you fix the typo in Yandar Batukayev's record? His date of birth is 25.09.1972, not the 1st.",
		"DOB: 23 March 1970 — Tazuka, Tatsuto", "dob: 09/07/1955\nname: otohiko sanya",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
	assertNone(t, "CSV preview:\nproduct_name,launch_date,units\nWidget,2021,400")
}

// TestPossessedConditions: a capitalized pair whose possessive holds a
// condition is a person's name.
func TestPossessedConditions(t *testing.T) {
	assertFires(t, "health-term-with-identifier", "What are the treatment options for Topi Sainio's community-acquired pneumonia?")
	assertNone(t, "Read Grey's Anatomy for the pneumonia chapter.")
	assertNone(t, "Move the VPN steps (Cisco AnyConnect 5.1) to the sepsis runbook's appendix.") // CamelCase: a product
}

// TestNotesInSections: a note in SOAP sections is about the patient its
// first line names, through its assessment.
func TestNotesInSections(t *testing.T) {
	assertFires(t, "health-term-with-identifier", "SOAP\nS: Lacey Murray reports dizziness x3 days.\nO: T 38.4, HR 112.\nA: community-acquired pneumonia.\nP: recheck in 48h.")
	assertNone(t, "Agenda\nS: Lacey Murray presents the roadmap.\nO: Q3 numbers.\nNext: the team offsite.\n\nUnrelated: pneumonia vaccines are in stock.")
}

// TestHealthShorthandInjuriesCognates: a hospital note's shorthand in
// capitals (the documented handful no packaged vocabulary lists), an
// injury told as a verb with a body part, and a health word in another
// language's spelling of its Latin root are health terms beside a name;
// the same letters in lowercase, a verb without a body part, and an
// unrelated foreign word are not.
func TestHealthShorthandInjuriesCognates(t *testing.T) {
	for _, term := range []string{"NSTEMI", "new onset AF", "AF with RVR", "CHF exacerbation", "COPD", "DVT", "UTI", "DKA",
		"CKD 3", "AKI", "TKR day 1", "T2DM", "a DNR order"} {
		assertFires(t, "health-term-with-identifier", "Mr Lachlan Fraser, "+term+", reviewed today.")
	}
	for _, term := range []string{"af", "Cap", "CHF1", "AFK", "the UTIL module"} {
		assertNone(t, "Mr Lachlan Fraser, "+term+", reviewed today.")
	}
	for _, injury := range []string{"broke her ankle", "fractured his left wrist", "sprained my knee", "dislocated a shoulder", "tore their right hip"} {
		assertFires(t, "health-term-with-identifier", "Claim: Ms Olga Petrenko "+injury+" skiing in Austria.")
	}
	for _, other := range []string{"broke her record", "cut the budget", "hurt their feelings", "broke the ankle-deep ice"} {
		assertNone(t, "Claim: Ms Olga Petrenko "+other+" skiing in Austria.")
	}
	for _, text := range []string{
		"Sophie Durand a été admise pour une pneumopathie.", // -ie for -y
		"Sophie Durand est sous amoxicilline depuis hier.",  // a French final e
		"La paciente Lucía Romero tiene cáncer de mama.",    // accents folded
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
	assertNone(t, "Sophie Durand a été admise pour une conférence, sous la pluie depuis hier.")
}

// TestUnknownNamesInPatientFrames: a capitalized pair the gazetteer
// lacks is a patient's name in a frame only patients stand in with a
// health term in its clause (a note for them, attended with, seen in, a
// kin's possessive), or with a health term right after has, is ...
// positive, or a patient list's dash; the same pairs of ordinary words
// saying something else about health are not names.
func TestUnknownNamesInPatientFrames(t *testing.T) {
	for _, name := range []string{"Toyokazu Koike", "Esjar Sturluson", "Cirilka Košutnik", "Markha Aslakhanov"} {
		for _, frame := range []string{
			"can u draft a sick note for %s? off work 2 weeks with sepsis",
			"Please write a fit note for %s, off with NSTEMI",
			"Summarise: '%s attended with worsening COPD exacerbation.'",
			"37 y/o female, %s, seen in ED for HIV.",
			"Spoke to %s's son re: chlamydia.",
			"%s has tuberculosis.",
			"%s has pulmonary embolism.",
			"%s is HIV positive and asked us not to tell her employer.",
			"%s - appendicitis - on insulin glargine 20 units qHS",
			"Re: %s – schizophrenia – results attached",
		} {
			assertFires(t, "health-term-with-identifier", strings.ReplaceAll(frame, "%s", name))
		}
	}
	for _, text := range []string{
		"Visual Studio is slow when the dialysis dashboard loads.",
		"Microsoft Teams was down during the oncology meeting.",
		"New York is seeing more asthma cases.",
		"Apple Watch needs an ECG update for AF detection.",
		"Outcomes in Patients With Alzheimer'S Disease: a Retrospective Cohort of 1385 Admissions.",
		"Global Fund is funding tuberculosis programmes.",
		"Toyokazu Koike wrote a review of sepsis guidelines.",
	} {
		assertNone(t, text)
	}
}

// TestRecordsCapsAndOtherLanguages: a record's name field beside a
// health field (key=value, JSON, SQL, CSV, a pipe table), a surname in
// capitals before the given name at a line's start, and the verbs of
// admission and possession of the languages covered make a patient of a
// pair the gazetteer lacks; a header without rows of people, a table of
// products, and capitals that are no name are not.
func TestRecordsCapsAndOtherLanguages(t *testing.T) {
	for _, text := range []string{
		"patient=Toyokazu Koike diagnosis=sepsis",
		`{"name": "Toyokazu Koike", "diagnosis": "sepsis"}`,
		"INSERT INTO patients (name, diagnosis) VALUES ('Toyokazu Koike', 'acute pancreatitis');",
		"name,age,diagnosis\nToyokazu Koike,54,sepsis\nEsjar Sturluson,61,tuberculosis",
		"| Name | Age | Condition |\n|---|---|---|\n| Toyokazu Koike | 54 | sepsis |",
		"full_name\tdx\nToyokazu Koike\tCOPD",
		"KOIKE, TOYOKAZU  Dx: sepsis",
		"KOIKE, Toyokazu - community-acquired pneumonia",
		"KOWALSKI, ANNA  bed 4 - sepsis",
		"Toyokazu Koike ha sido ingresado por neumonía.",
		"Toyokazu Koike è stato ricoverato per polmonite, diabete noto, insulin.",
		"Toyokazu Koike tiene diabetes.",
		"Toyokazu Koike heeft diabetes en astma.",
		"Toyokazu Koike a été hospitalisée pour une pneumopathie.",
		"Pls review Toyokazu Koike - ? cellulitis vs DVT R calf",
		"Toyokazu Koike fractured her wrist falling off a bike",
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
	for _, text := range []string{
		"name,diagnosis\n",
		"product_name,condition,price\nwidget,new,4.99\ngadget,refurbished,9.99",
		"sku,name,condition\nA-100,Blue Widget,used",
		"NOTE, PLEASE read the dialysis guideline first.",
		"Toyokazu Koike tiene una reunión sobre el presupuesto.",
	} {
		assertNone(t, text)
	}
}

// TestQueriesForPatientsAndReversedNamesWithDates: a coding query, an
// assessment and plan, a discharge summary "for" a pair the gazetteer
// lacks, with a health term in its clause, names a patient (an ICD-10
// code in a coding text then is a person's diagnosis); a surname, a comma
// and a given name before a date in parentheses is a name with its date
// of birth.
func TestQueriesForPatientsAndReversedNamesWithDates(t *testing.T) {
	for _, text := range []string{
		"Coding query for Khatu Barsukov: is C50.911 right for malignant neoplasm of right female breast?",
		"Coding query for Zargan Vedzizhev: is F10.239 right for alcohol dependence with withdrawal?",
		"Discharge summary for Esjar Sturluson: admitted with sepsis (A41.9).",
	} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.ICD10), "%q: %v", text, got.Names())
	}
	assertNone(t, "Coding query for Claims Team: is C50.911 still billable under the 2026 guideline?")
	for _, text := range []string{"Miller, Rachael (02/04/1955)", "Shigeki, Yuuna (11/16/1986)", "Smárason, Hafþór (15.04.1947)", "Lundberg, My (8 April 1947)"} {
		got := classifier.Text([]byte(text))
		assert.True(t, got.Has(classifier.PersonNameWithBirthDate), "%q: %v", text, got.Names())
	}
	assertNone(t, "Miller, Rachael (02/04/2026)")
}

// TestKinLowercaseNamesWithHealth: two lowercase words after "my <kin>"
// are a name when "has" or "is" and a health term follow right after;
// words that go on the sentence are not.
func TestKinLowercaseNamesWithHealth(t *testing.T) {
	for _, text := range []string{"my father harri jäntti has hypertension", "my mother ingrid tveit is diabetic, is that hereditary?"} {
		assertFires(t, "health-term-with-identifier", text)
	}
	for _, text := range []string{"my father and mother has hypertension", "my father also is diabetic", "my father harri jäntti has a boat"} {
		assertNone(t, text)
	}
}

// TestHeadingsAndProductTablesAreNoPatients: the frames that make a pair
// the gazetteer lacks a patient (a list's dash, "for", a record's health
// field) also hold documents' headings, teams and tables of drugs; their
// words and a row without a person's two-word name keep them benign.
func TestHeadingsAndProductTablesAreNoPatients(t *testing.T) {
	for _, text := range []string{
		"Board Meeting - cancer strategy", "Release Notes – dialysis module v2", "Product Roadmap - asthma inhaler tracker",
		"Coding query for Billing Ops: is E11.9 right for type 2 diabetes?", "Summary for Product Team: asthma app retention up.",
		"| Name | Condition |\n|---|---|\n| Aspirin | headache |", "INSERT INTO drugs (name, diagnosis) VALUES ('Metformin XR', 'diabetes');",
		"Spoke to Microsoft's son re: chlamydia", "WARNING, CHECK the dialysis line",
	} {
		assertNone(t, text)
	}
}

// TestWardListsAndJobs: a ward's lists and jobs name patients the
// gazetteer lacks: a handover, a job "for" one, an admission verb, a query
// in parentheses, a list's line with a problem and its treatment, a
// surname in capitals before the given name; a line with one health word
// after a place, a company or a product is no patient's.
func TestWardListsAndJobs(t *testing.T) {
	for _, text := range []string{
		"Handover: Tariku Bekele post-op day 2 lap chole, pain controlled.",
		"Oyelaran Adebisi admitted overnight with chest pain, trop pending.",
		"Jobs: bloods for Tariku Bekele, CXR for Ngozi Eze (?LRTI)",
		"Please book a follow-up for Tariku Bekele re his epilepsy meds.",
		"Tariku Bekele: pyelonephritis, on IV abx",
		"Ngozi Eze — fall at home, #NOF, for theatre tomorrow",
		"KADYROV Ruslan 67M sepsis",
	} {
		assertFires(t, "health-term-with-identifier", text)
	}
	for _, text := range []string{
		"Green Valley: diabetes products", "Acme Corp, diabetes supplies", "New York: asthma rates rise", "Visual Studio - cancer",
		"Discussed with Google Cloud: HIPAA diabetes pipeline.", "Our Team (?COPD) pilot is live", "URGENT REVIEW - DKA protocol",
		"JOHN SMITH DIABETES PROGRAM",
	} {
		assertNone(t, text)
	}
}
