package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Benign work: texts full of numbers, dates, codes and public names that
// carry nobody's identifier. Each kind is a set of frames drawn with
// random values; the test holds each kind to at most 1% routed as
// sensitive.

func hex(r *rand.Rand, n int) string {
	const h = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = h[r.IntN(16)]
	}
	return string(b)
}

func uuid(r *rand.Rand) string {
	h := hex(r, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func version(r *rand.Rand) string {
	return fmt.Sprintf("%d.%d.%d", r.IntN(5), r.IntN(30), r.IntN(40))
}

func isoTime(r *rand.Rand) string {
	return fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
}

func ip(r *rand.Rand) string {
	return fmt.Sprintf("%d.%d.%d.%d", []int{10, 172, 192, 203}[r.IntN(4)], r.IntN(256), r.IntN(256), 1+r.IntN(254))
}

func amount(r *rand.Rand) string {
	return fmt.Sprintf("%d,%03d.%02d", 1+r.IntN(99), r.IntN(1000), r.IntN(100))
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// testCards are published test numbers, as code and docs carry them.
var testCards = []string{"4242424242424242", "4242 4242 4242 4242", "4000056655665556", "5555555555554444", "5555 5555 5555 4444",
	"2223003122003222", "5200828282828210", "5105105105105100", "378282246310005", "3782 822463 10005", "371449635398431",
	"6011111111111117", "6011000990139424", "3056930009020004", "36227206271667", "3566002020360505", "6200000000000005",
	"4111111111111111", "4111 1111 1111 1111", "4012888888881881", "4000002500003155", "4000000000009995", "4000000000000002"}

func benignCode(r *rand.Rand, invalidVectors []string) string {
	switch r.IntN(16) {
	case 0:
		return fmt.Sprintf("const testCard = %q // Stripe test Visa, any CVC\nconst expMonth, expYear = 12, %d", pick(r, testCards), 2030+r.IntN(5))
	case 1:
		return fmt.Sprintf("pm = stripe.PaymentMethod.create(\n    type=\"card\",\n    card={\"number\": %q, \"exp_month\": %d, \"exp_year\": %d, \"cvc\": \"%03d\"},\n)", pick(r, testCards), 1+r.IntN(12), 2027+r.IntN(6), r.IntN(1000))
	case 2:
		return fmt.Sprintf("id := uuid.MustParse(%q)\nreq.Header.Set(\"X-Request-Id\", %q)", uuid(r), uuid(r))
	case 3:
		var b strings.Builder
		for range 4 {
			fmt.Fprintf(&b, "%s %s\n", hex(r, 7), pick(r, []string{"fix: retry on 503", "chore(deps): bump golang.org/x/net to v0.3" + fmt.Sprint(r.IntN(9)) + ".0", "feat: add pagination to /v2/orders", "test: cover the empty cart", "docs: update README"}))
		}
		return "git log --oneline\n" + b.String()
	case 4:
		return fmt.Sprintf("{\n  \"name\": \"web-app\",\n  \"version\": %q,\n  \"dependencies\": {\"react\": \"^18.%d.0\", \"axios\": \"1.%d.%d\", \"zod\": \"3.%d.%d\"}\n}", version(r), r.IntN(4), r.IntN(8), r.IntN(9), r.IntN(24), r.IntN(9))
	case 5:
		return fmt.Sprintf("SELECT o.id, o.total FROM orders o WHERE o.id = %d AND o.created_at > '2025-%02d-%02d' ORDER BY o.id LIMIT 50;", 1000000000+r.IntN(999999999), 1+r.IntN(12), 1+r.IntN(28))
	case 6:
		return fmt.Sprintf("image: ghcr.io/acme/api@sha256:%s\nresources:\n  limits: {cpu: \"%dm\", memory: %dMi}\nmetadata:\n  uid: %s\n  resourceVersion: \"%d\"", hex(r, 64), 100*(1+r.IntN(20)), 128*(1+r.IntN(16)), uuid(r), 10000000+r.IntN(90000000))
	case 7:
		v := pick(r, invalidVectors)
		return fmt.Sprintf("func TestRejects(t *testing.T) {\n\tfor _, in := range []string{%q, %q} {\n\t\tif Valid(in) {\n\t\t\tt.Errorf(\"Valid(%%q) = true\", in)\n\t\t}\n\t}\n}", v, pick(r, invalidVectors))
	case 8:
		return fmt.Sprintf("panic: runtime error: index out of range [%d] with length %d\n\ngoroutine %d [running]:\nmain.(*Cache).Get(0xc000%s, 0x%s)\n\t/src/cache.go:%d +0x%s", r.IntN(20), r.IntN(20), r.IntN(500), hex(r, 6), hex(r, 8), 10+r.IntN(400), hex(r, 3))
	case 9:
		return fmt.Sprintf("# The card number must pass Luhn; use %s in tests (never a real card).\nassert luhn_valid(%q)\nassert not luhn_valid(%q)", pick(r, testCards), pick(r, testCards), "4242424242424241")
	case 10:
		return fmt.Sprintf("const EPOCH_MS = %d; // %s\nconst SNOWFLAKE = %dn;\nconst MAX_RETRIES = %d;", 1700000000000+r.Int64N(90000000000), isoTime(r), 1100000000000000000+r.Int64N(800000000000000000), 1+r.IntN(9))
	case 11:
		return fmt.Sprintf("checksums:\n  linux-amd64: sha256:%s\n  darwin-arm64: sha256:%s\nversion: v%s", hex(r, 64), hex(r, 64), version(r))
	case 12:
		return fmt.Sprintf("curl -s https://api.example.com/v1/orders/%d -H 'Idempotency-Key: %s' | jq '.items[%d].sku'", 100000+r.IntN(900000), uuid(r), r.IntN(9))
	case 13:
		return fmt.Sprintf("it('charges the test card', async () => {\n  const res = await pay({ card: '%s', amount: %d, currency: 'usd' });\n  expect(res.status).toBe('succeeded');\n});", pick(r, testCards), 100*(1+r.IntN(500)))
	case 14:
		return fmt.Sprintf("ERROR in ./src/index.ts %d:%d\nTS2345: Argument of type 'number' is not assignable to parameter of type 'string'.\nwebpack %s compiled with 1 error in %d ms", 1+r.IntN(300), 1+r.IntN(80), version(r), 500+r.IntN(9000))
	default:
		return fmt.Sprintf("[[package]]\nname = \"tokio\"\nversion = \"1.%d.%d\"\nchecksum = \"%s\"", r.IntN(45), r.IntN(5), hex(r, 64))
	}
}

func benignInvoice(r *rand.Rand, companies []string) string {
	co, cust := pick(r, companies), pick(r, companies)
	qty, unit := 1+r.IntN(40), 5+r.IntN(900)
	switch r.IntN(7) {
	case 6:
		return fmt.Sprintf("%s\nVAT No. GB %s %s %s | Company no. %s | EIN %s-%s\nInvoice %d-%04d  Due %s  Amount %s GBP", co, digits(r, 3), digits(r, 4), digits(r, 2), digits(r, 8), digits(r, 2), digits(r, 7), 2026, r.IntN(9999), isoTime(r)[:10], amount(r))
	case 0:
		return fmt.Sprintf("INVOICE INV-%d-%05d\nDate: 2026-%02d-%02d\nBill to: %s\nPO: PO-%d\n\nItem              Qty   Unit      Total\nSKU-%d-%s   %d    %d.00    %d.00\nShipping                          %d.50\nSubtotal: %d.00  VAT 20%%: %d.00\nTotal due: %s EUR\nPayment terms: Net 30", 2026, r.IntN(99999), 1+r.IntN(12), 1+r.IntN(28), cust, 4500000000+r.IntN(99999999), 1000+r.IntN(9000), strings.ToUpper(hex(r, 3)), qty, unit, qty*unit, 5+r.IntN(40), qty*unit, qty*unit/5, amount(r))
	case 1:
		return fmt.Sprintf("Hi team, can you check invoice #%d from %s? They billed %d units at $%d each but the PO %d says %d. Total on the invoice is $%s.", 100000+r.IntN(900000), co, qty, unit, 4500000000+r.IntN(99999999), qty-1, amount(r))
	case 2:
		return fmt.Sprintf("Credit note CN-%06d against invoice %d-%04d, amount -%s USD, reason: damaged goods (RMA %d).", r.IntN(999999), 2026, r.IntN(9999), amount(r), 700000+r.IntN(300000))
	case 3:
		return fmt.Sprintf("Order %d-%07d-%07d shipped via UPS 1Z%s%08d, %d items, weight %d.%d kg. Customs value %s GBP, HS code %04d.%02d.", 100+r.IntN(900), r.IntN(9999999), r.IntN(9999999), strings.ToUpper(hex(r, 6)), r.IntN(99999999), qty, r.IntN(40), r.IntN(10), amount(r), 8400+r.IntN(100), r.IntN(100))
	case 4:
		return fmt.Sprintf("Receipt %s\n%s\n%d x Coffee beans 1kg   %d.%02d\n%d x Filter papers     %d.%02d\nCard payment: ****%04d  Auth code %06d\nTotal: %s", uuid(r)[:8], co, qty%5+1, 10+r.IntN(30), r.IntN(100), qty%3+1, 2+r.IntN(8), r.IntN(100), r.IntN(10000), r.IntN(1000000), amount(r))
	default:
		return fmt.Sprintf("Please reconcile: statement line %s, ref %d/%d, %s EUR, matched to invoice %d-%05d of %s (due 2026-%02d-%02d).", isoTime(r)[:10], r.IntN(9999), 2026, amount(r), 2026, r.IntN(99999), co, 1+r.IntN(12), 1+r.IntN(28))
	}
}

func benignLog(r *rand.Rand) string {
	switch r.IntN(11) {
	case 9:
		return fmt.Sprintf("%s INFO [dd.service=checkout dd.env=prod dd.trace_id=%d dd.span_id=%d] charge completed in %dms", isoTime(r), r.Uint64()>>uint(r.IntN(4)), r.Uint64()>>1, 20+r.IntN(900))
	case 10:
		return fmt.Sprintf("audit: user_id=%d action=export rows=%d file=report-%s.csv bytes=%d session=%s", 100000+r.IntN(900000), r.IntN(100000), isoTime(r)[:10], r.IntN(99999999), hex(r, 24))
	case 0:
		return fmt.Sprintf("%s - - [%02d/Mar/2026:%02d:%02d:%02d +0000] \"GET /api/v2/orders/%d?page=%d HTTP/1.1\" %d %d \"-\" \"Mozilla/5.0\" rt=%d.%03d", ip(r), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 100000+r.IntN(900000), r.IntN(20), pick(r, []int{200, 200, 304, 404, 500}), r.IntN(99999), r.IntN(3), r.IntN(1000))
	case 1:
		return fmt.Sprintf("%s level=error msg=\"upstream timeout\" trace_id=%s span_id=%s duration_ms=%d retries=%d", isoTime(r), hex(r, 32), hex(r, 16), r.IntN(30000), r.IntN(5))
	case 2:
		return fmt.Sprintf("Mar %2d %02d:%02d:%02d node-%d kernel: [%d.%06d] oom-kill: pid=%d comm=java rss=%dkB", 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(40), r.IntN(99999), r.IntN(999999), 1000+r.IntN(60000), r.IntN(99999999))
	case 3:
		return fmt.Sprintf("{\"ts\":%d,\"level\":\"info\",\"event\":\"order.created\",\"order_id\":%d,\"user_id\":%d,\"amount_cents\":%d,\"request_id\":%q}", 1700000000000+r.Int64N(90000000000), 1000000000000000000+r.Int64N(900000000000000000), 10000+r.IntN(9000000), r.IntN(1000000), uuid(r))
	case 4:
		return fmt.Sprintf("kafka: partition=%d offset=%d lag=%d topic=payments.v3 group=ledger-%d", r.IntN(64), r.Int64N(9999999999), r.IntN(100000), r.IntN(9))
	case 5:
		return fmt.Sprintf("Warning  BackOff  %dm  kubelet  Back-off restarting failed container api in pod api-%s-%s_prod(%s)", r.IntN(60), hex(r, 10), hex(r, 5), uuid(r))
	case 6:
		return fmt.Sprintf("[%s] GC(%d) Pause Young (Normal) (G1 Evacuation Pause) %dM->%dM(%dM) %d.%03dms", isoTime(r), r.IntN(9999), 100+r.IntN(4000), 50+r.IntN(2000), 4096, r.IntN(200), r.IntN(1000))
	case 7:
		return fmt.Sprintf("%s WARN  payment-svc  card_bin=%d last4=%04d declined code=05 attempt=%d merchant=%d", isoTime(r), 400000+r.IntN(99999), r.IntN(10000), 1+r.IntN(3), 100000000+r.IntN(899999999))
	default:
		return fmt.Sprintf("build #%d finished in %dm%ds: %d passed, %d skipped, %d failed (commit %s, runner %s)", 1000+r.IntN(90000), r.IntN(60), r.IntN(60), r.IntN(5000), r.IntN(50), r.IntN(3), hex(r, 40), ip(r))
	}
}

var popConditions = []string{"Crohn's disease", "Graves' disease", "Hodgkin lymphoma", "Hashimoto's thyroiditis", "Guillain-Barré syndrome", "Parkinson's disease", "Alzheimer's disease", "atrial fibrillation", "type 2 diabetes", "hypertension", "HIV", "depression", "asthma", "COPD", "dementia", "breast cancer", "obesity", "chronic kidney disease", "sepsis", "hepatitis C", "opioid use disorder", "long COVID", "gestational diabetes", "stroke"}
var populations = []string{"adults over 65", "women aged 40-49", "children under 5", "men who smoke", "people in rural counties", "Medicare beneficiaries", "veterans", "adolescents aged 12-17", "pregnant women", "nursing home residents", "adults in England", "the EU population"}

func benignResearch(r *rand.Rand) string {
	c, p := pick(r, popConditions), pick(r, populations)
	y := 2005 + r.IntN(20)
	switch r.IntN(17) {
	case 15:
		return fmt.Sprintf("According to %s, %s affects about %d in %d %s. Is that consistent with the %d GBD estimates?", pick(r, []string{"Johns Hopkins Medicine", "the Mayo Clinic", "Mount Sinai", "Great Ormond Street Hospital", "Kaiser Permanente", "Cleveland Clinic", "Addenbrooke's Hospital", "Charité Berlin"}), c, 1+r.IntN(9), 10*(1+r.IntN(100)), p, y)
	case 16:
		return fmt.Sprintf("Summarise the %d Lancet review on %s: incidence rose from %d.%d to %d.%d per 100,000 between %d and %d.", y, c, 1+r.IntN(20), r.IntN(10), 2+r.IntN(30), r.IntN(10), y-10, y)
	case 12:
		return fmt.Sprintf("Medicare Part D spending per beneficiary was $%d,%03d in %d; total Medicare spending reached $%d,%03d,%03d,000. How does %d compare?", 2+r.IntN(3), r.IntN(1000), y, 900+r.IntN(200), r.IntN(1000), r.IntN(1000), y+1)
	case 13:
		return fmt.Sprintf("NHS England's %d/%02d budget was £%d.%d billion and NHS 111 handled %d,%03d,%03d calls. What share of those calls ended in an ambulance dispatch?", y, (y+1)%100, 150+r.IntN(30), r.IntN(10), 15+r.IntN(10), r.IntN(1000), r.IntN(1000))
	case 14:
		return fmt.Sprintf("Aadhaar enrolment reached %d,%03d,%03d,%03d residents by %d (UIDAI); how many authentications per day does the system handle?", 1, 300+r.IntN(90), r.IntN(1000), r.IntN(1000), y)
	case 10:
		ic := pick(r, icdCodes)
		return fmt.Sprintf("Among the %d,%03d admissions coded %s (%s) in %d, what share were readmitted within 30 days?", 1+r.IntN(90), r.IntN(1000), ic.code, ic.desc, y)
	case 11:
		return fmt.Sprintf("Median age at diagnosis of %s in the UK Biobank (n=502,%03d), by sex and decade of birth (1940s-1960s)?", c, r.IntN(1000))
	case 0:
		return fmt.Sprintf("What share of %s have %s?", p, c)
	case 1:
		return fmt.Sprintf("How did the prevalence of %s among %s change between %d and %d?", c, p, y, y+5)
	case 2:
		return fmt.Sprintf("Compare 5-year survival for %s in NHANES %d-%d versus SEER data; n=%d, CI 95%%.", c, y, y+2, 1000+r.IntN(90000))
	case 3:
		return fmt.Sprintf("Is there evidence that statins reduce mortality in %s with %s? Summarize RCTs published after %d.", p, c, y)
	case 4:
		return fmt.Sprintf("Write a short literature review: incidence of %s per 100,000 person-years among %s, %d–%d.", c, p, y, y+10)
	case 5:
		return fmt.Sprintf("In a cohort of %d %s, %d.%d%% developed %s within %d years. Is that higher than the national rate?", 1000+r.IntN(50000), p, r.IntN(30), r.IntN(10), c, 1+r.IntN(10))
	case 6:
		return fmt.Sprintf("Which factors explain the regional variation in %s hospitalisations across the %d NHS trusts?", c, 100+r.IntN(130))
	case 7:
		return fmt.Sprintf("Draft a survey question for %s about access to %s treatment; target sample %d, margin of error %d%%.", p, c, 500+r.IntN(3000), 2+r.IntN(4))
	case 8:
		return fmt.Sprintf("Outcomes in Patients With %s: a Retrospective Cohort of %d Admissions (%d-%d). What was the 30-day readmission rate?", titleCase(c), 1000+r.IntN(20000), y, y+3)
	default:
		return fmt.Sprintf("How many ED visits for %s were recorded in %d per the CDC, and what fraction were %s?", c, y, p)
	}
}

var guidelineDrugs = []struct{ drug, dose string }{
	{"Warfarin", "start 5 mg daily; adjust to INR 2.0-3.0; check INR on days 3, 5 and 7"},
	{"Apixaban", "5 mg twice daily; reduce to 2.5 mg if 2 of: age >= 80, weight <= 60 kg, creatinine >= 1.5 mg/dL"},
	{"Metformin", "500 mg once daily with meals, increase by 500 mg weekly to 2,000 mg; stop if eGFR < 30"},
	{"Amoxicillin", "45 mg/kg/day divided q12h for 5-7 days (max 4 g/day)"},
	{"Vancomycin", "15-20 mg/kg IV q8-12h; target AUC 400-600 mg*h/L"},
	{"Enoxaparin", "1 mg/kg SC q12h for treatment; 40 mg SC daily for prophylaxis"},
	{"Insulin glargine", "0.1-0.2 units/kg once daily; titrate by 2 units every 3 days to fasting glucose 80-130 mg/dL"},
	{"Ceftriaxone", "1-2 g IV once daily; meningitis 2 g q12h"},
	{"Furosemide", "20-40 mg IV; double the dose if urine output < 100 mL/h at 2 h"},
}

func benignGuideline(r *rand.Rand) string {
	switch r.IntN(11) {
	case 10:
		return fmt.Sprintf("%s: first-line therapy per the %s guideline (%d): %s; refer to a specialist if no response at %d weeks.", strings.ToUpper(pick(r, popConditions)[:1])+pick(r, popConditions)[1:], pick(r, []string{"NICE", "ESC", "ADA", "AASLD", "ACR", "Johns Hopkins"}), 2015+r.IntN(11), pick(r, guidelineDrugs).drug, 4+r.IntN(12))
	case 8:
		return pick(r, []string{
			"Positive patient identification: check two identifiers (full name and date of birth, or MRN) against the wristband before every transfusion.",
			"Record the NHS number on every referral; if it is unknown, use the hospital number and flag the record for tracing.",
			"Enter the member ID exactly as printed on the insurance card, without dashes; the group number goes in box 11.",
			"Specimen labels must carry the MRN, the collection time and the collector's initials; unlabelled samples are discarded.",
			"Medicare claims need the MBI (11 characters) from the beneficiary's card; the old HICN is no longer accepted after 2020.",
			"Ask for the patient's date of birth, never read it to them; confirm the spelling of the surname.",
		}) + fmt.Sprintf(" (Policy %s-%03d, reviewed %d.)", pick(r, []string{"CL", "IPC", "HR", "QA"}), r.IntN(1000), 2019+r.IntN(7))
	case 9:
		return fmt.Sprintf("Pediatric paracetamol: %d mg/kg every 4-6 hours, max %d mg/kg/day; weight 10 kg -> %d mg per dose. Do not exceed %d doses in 24 h.", 15, 60+15*r.IntN(2), 150, 4)
	case 0:
		d := pick(r, guidelineDrugs)
		return fmt.Sprintf("%s dosing (adults): %s. Review in renal impairment. Guideline v%d.%d, %d.", d.drug, d.dose, 1+r.IntN(6), r.IntN(10), 2018+r.IntN(8))
	case 1:
		var b strings.Builder
		b.WriteString("Coding guide – common inpatient diagnoses (ICD-10-CM):\n")
		for _, i := range r.Perm(len(icdCodes))[:4] {
			fmt.Fprintf(&b, "%-8s %s\n", icdCodes[i].code, icdCodes[i].desc)
		}
		return b.String()
	case 2:
		c := pick(r, icdCodes)
		return fmt.Sprintf("Use %s for %s; do not combine with R%02d.%d symptom codes when the diagnosis is confirmed (ICD-10-CM guideline I.B.%d).", c.code, c.desc, r.IntN(70), r.IntN(10), 1+r.IntN(18))
	case 3:
		return fmt.Sprintf("Sepsis bundle (hour 1): measure lactate; obtain blood cultures before antibiotics; give broad-spectrum antibiotics; give %d mL/kg crystalloid for hypotension or lactate >= 4 mmol/L; vasopressors if MAP < 65 mmHg.", 30)
	case 4:
		d := pick(r, guidelineDrugs)
		return fmt.Sprintf("| Drug | Dose | Monitoring |\n|---|---|---|\n| %s | %s | every %d weeks |\n| Lisinopril | 10-40 mg daily | K+ and creatinine at 1-2 weeks |", d.drug, d.dose, 1+r.IntN(12))
	case 5:
		return fmt.Sprintf("NICE NG%d: offer anticoagulation to people with atrial fibrillation and a CHA2DS2-VASc score of 2 or above; consider for men with a score of 1. Reassess bleeding risk (ORBIT) at least every %d months.", 100+r.IntN(150), 6+r.IntN(7))
	case 6:
		return fmt.Sprintf("Prenatal care schedule: booking visit by 10 weeks; dating scan 11-14 weeks; anomaly scan 18-20 weeks; OGTT at 24-28 weeks if risk factors; anti-D at 28 weeks for RhD-negative women. Version %d.", 2020+r.IntN(6))
	default:
		return fmt.Sprintf("If the patient has eGFR %d-%d mL/min/1.73m2, reduce the dose by %d%%; if < 15, avoid. Recheck potassium within %d days of any change.", 15+r.IntN(15), 30+r.IntN(30), 25*(1+r.IntN(3)), 3+r.IntN(10))
	}
}

var publicFigures = []string{"Barack Obama", "Serena Williams", "Taylor Swift", "Elon Musk", "Angela Merkel", "Lionel Messi", "Greta Thunberg", "Keir Starmer", "Emmanuel Macron", "Satya Nadella", "Jacinda Ardern", "Roger Federer", "Marie Curie", "Albert Einstein"}

// imei draws a Luhn-valid IMEI (15 digits, a TAC of 35 or 86).
func imei(r *rand.Rand) string {
	return luhnComplete(pick(r, []string{"35", "86", "01"}) + digits(r, 12))
}

// container draws an ISO 6346 container number (owner, U, serial, check).
func container(r *rand.Rand) string {
	owner := pick(r, []string{"MSC", "MAE", "CMA", "HLX", "TGH"}) + "U"
	serial := digits(r, 6)
	val := func(c byte) int {
		if c >= '0' && c <= '9' {
			return int(c - '0')
		}
		// ISO 6346: A=10 upwards, skipping the multiples of 11.
		return []int{10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 34, 35, 36, 37, 38}[c-'A']
	}
	s := owner + serial
	sum := 0
	for i := 0; i < 10; i++ {
		sum += val(s[i]) << i
	}
	return fmt.Sprintf("%s %s %d", owner, serial, sum%11%10)
}

func benignChat(r *rand.Rand) string {
	f := pick(r, publicFigures)
	switch r.IntN(16) {
	case 14:
		return fmt.Sprintf("%s (%d–%d) is on the list, next to %s. Write %d lines on why they matter.", pick(r, []string{"Marie Curie", "Albert Einstein", "Ada Lovelace", "Nelson Mandela"}), 1815+r.IntN(60), 1930+r.IntN(60), pick(r, publicFigures), 3+r.IntN(5))
	case 15:
		return fmt.Sprintf("Routing table: 10.%d.0.0/16 via %s metric %d; account for the %d,%03d routes before the BGP session resets.", r.IntN(256), ip(r), r.IntN(200), 1+r.IntN(900), r.IntN(1000))
	case 12:
		return fmt.Sprintf("I'll call the bank tomorrow. Anyway, the invoice total was %s and the reference is %d%02d%02d%d. Can you draft the reminder?", amount(r), 2026, 1+r.IntN(12), 1+r.IntN(28), r.IntN(100))
	case 13:
		return fmt.Sprintf("Phone upgrade: the new model has %d GB storage and a %d mAh battery; the shop's order number is %d.", 128*(1+r.IntN(4)), 4000+r.IntN(1500), 100000000+r.IntN(899999999))
	case 0:
		return fmt.Sprintf("What did %s say in the speech on %d March %d? Give me three quotes.", f, 1+r.IntN(28), 2010+r.IntN(15))
	case 1:
		return fmt.Sprintf("My phone's IMEI is %s — how do I check if it's unlocked?", imei(r))
	case 2:
		return fmt.Sprintf("Container %s left Rotterdam on 2026-%02d-%02d; ETA Shanghai %d days. Booking ref %s.", container(r), 1+r.IntN(12), 1+r.IntN(28), 20+r.IntN(15), strings.ToUpper(hex(r, 8)))
	case 3:
		return fmt.Sprintf("The voucher code %s%s didn't work at checkout, is it expired? It was for €%d.", pick(r, []string{"81", "82", "60", "50"}), digits(r, 14), 10*(1+r.IntN(10)))
	case 4:
		return fmt.Sprintf("Write a tweet about %s's %d world tour, ticket prices from $%d.", f, 2020+r.IntN(7), 49+r.IntN(300))
	case 5:
		return fmt.Sprintf("Serial number %s on the router label; firmware %s. Reset didn't help.", pick(r, []string{"S/N " + digits(r, 10), "SN" + digits(r, 12), strings.ToUpper(hex(r, 4)) + "-" + digits(r, 4) + "-" + digits(r, 4), "G" + digits(r, 2) + strings.ToUpper(hex(r, 2)) + "-" + digits(r, 6)}), version(r))
	case 6:
		return fmt.Sprintf("I'll call you tomorrow. The package left the depot on Monday. Its tracking number is 9400 %s %s %s %s %s.", digits(r, 4), digits(r, 4), digits(r, 4), digits(r, 4), digits(r, 2))
	case 7:
		return fmt.Sprintf("Rent went up from £%d to £%d a month on %d/%02d/%d — is a %d%% rise legal?", 900+r.IntN(600), 1500+r.IntN(600), 1+r.IntN(28), 1+r.IntN(12), 2026, 5+r.IntN(20))
	case 8:
		return fmt.Sprintf("Flight BA%d on %d Apr is delayed %d min; gate B%d. Can I still make the %02d:%02d connection?", 100+r.IntN(900), 1+r.IntN(30), 20+r.IntN(200), 1+r.IntN(50), r.IntN(24), r.IntN(60))
	case 9:
		return fmt.Sprintf("ISBN 978-%d-%s-%s-%d: is this the %d edition of the book %s recommended?", r.IntN(2), digits(r, 3), digits(r, 5), r.IntN(10), 2000+r.IntN(25), f)
	case 10:
		return fmt.Sprintf("Meeting moved to %d:%02d; dial-in code %s, room %d. Budget is %s EUR for Q%d.", 9+r.IntN(8), 15*r.IntN(4), digits(r, 9), 100+r.IntN(500), amount(r), 1+r.IntN(4))
	default:
		return fmt.Sprintf("Gift card balance: %s; PIN scratched off. Order #%d, placed %s.", amount(r), 100000000+r.IntN(899999999), isoTime(r)[:10])
	}
}

// benignLongEmail is an ordinary thread: quoted replies, a signature and a
// disclaimer, full of dates, amounts and references, and no one's
// identifier.
func benignLongEmail(r *rand.Rand, companies []string) string {
	co := pick(r, companies)
	return fmt.Sprintf("Hi all,\n\nFollowing up on Tuesday's call: the Q%d forecast is %s EUR (up %d.%d%%), PO %d is approved and delivery moves to %d %s. "+
		"Ticket %d stays open until the vendor confirms the patch (v%s).\n\nAction items:\n1. Finance to book the accrual by the %dth.\n2. Ops to update the runbook, section %d.%d.\n3. Everyone: review the deck before Friday 10:00.\n\nThanks,\nThe %s team\n\n"+
		"-----Original Message-----\nSent: %s\nSubject: RE: Q%d planning\n\n> Can we get the numbers by Thursday? Last year's figure was %s.\n\n"+
		"This email and any attachments are confidential and intended solely for the addressee. If you received it in error, please delete it.",
		1+r.IntN(4), amount(r), r.IntN(20), r.IntN(10), 4500000000+r.IntN(99999999), 1+r.IntN(28), pick(r, []string{"March", "June", "October"}),
		100000+r.IntN(900000), version(r), 20+r.IntN(8), 1+r.IntN(9), r.IntN(10), co, isoTime(r)[:10], 1+r.IntN(4), amount(r))
}

// titleCase upper-cases the first letter of each word, a word starting after
// any byte but a letter, a digit or '_' (strings.Title's rule, which is
// deprecated for its Unicode punctuation; the texts here are ASCII).
func titleCase(s string) string {
	b := []byte(s)
	sep := true
	for i, c := range b {
		if sep && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		sep = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
	}
	return string(b)
}
