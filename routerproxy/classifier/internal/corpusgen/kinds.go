package main

import (
	"math/rand/v2"
	"strings"
)

// idKind is a structured identifier: how to draw one, how to check one a
// source supplies, the words that name it (Presidio's recognizer context
// lists, widened with the abbreviations and languages its users write),
// and where the fetched test vectors are.
type idKind struct {
	name string
	gen  func(r *rand.Rand, p person) string
	ok   func(compact string) bool // nil: the source's label is kept as is
	// cues name the identifier; needCue: a weak checksum (about one
	// number in ten passes) is a detection only after one.
	cues    []string
	needCue bool
	// local are frames in the identifier's own language ({cue}, {v}, ...).
	local    []string
	presidio []string
	stdnum   []string
	n        int
}

func simple(f func(*rand.Rand) string) func(*rand.Rand, person) string {
	return func(r *rand.Rand, _ person) string { return f(r) }
}

var idKinds = []idKind{
	{name: "payment-card", gen: simple(card), ok: cardOK, n: 160,
		cues:     []string{"card", "credit card", "card number", "Visa", "Mastercard", "Amex", "debit card", "CC", "card no."},
		presidio: []string{"test_credit_card_recognizer.py"},
		local: []string{
			"Use the card {v} exp {exp} for the renewal.",
			"Hi support, I was charged twice on {v} for order {order}. Can you refund one?",
			"{name} paid with {v} (exp {exp}, cvv {cvv}).",
			"Please update the card on file to {v}, expiry {exp}.",
			"The customer's card {v} was declined at checkout on {date}.",
		}},
	{name: "us-ssn", gen: simple(ssn), ok: ssnOK, n: 140, needCue: false,
		cues:     []string{"SSN", "social security number", "Social Security No.", "SS#", "soc sec #", "social security", "taxpayer id"},
		presidio: []string{"test_us_ssn_recognizer.py"},
		stdnum:   []string{"stdnum/us/ssn.py"},
		local: []string{
			"Employee {name}, SSN {v}, start date {date}.",
			"W-9 for {name}: taxpayer identification number (SSN) {v}.",
			"For the background check, {first}'s social security number is {v}.",
		}},
	{name: "iban", gen: simple(iban), ok: ibanOK, n: 140,
		cues:     []string{"IBAN", "iban", "account (IBAN)", "bank account", "IBAN no."},
		presidio: []string{"test_iban_recognizer.py"},
		stdnum:   []string{"tests/test_iban.doctest", "stdnum/iban.py"},
		local: []string{
			"Bitte überweisen Sie den Betrag auf mein Konto, IBAN {v}, Kontoinhaber {name}.",
			"Merci de rembourser sur le compte {v} au nom de {name}.",
			"Refund to {v} (account holder: {name}) please.",
		}},
	{name: "email", gen: func(r *rand.Rand, p person) string { return emailOf(r, p) }, n: 140,
		cues:     []string{"email", "e-mail", "Email", "mail"},
		presidio: []string{"test_email_recognizer.py"},
		local: []string{
			"Send the signed contract to {v} by Friday.",
			"From: {name} <{v}>\nTo: support\nSubject: refund\n\nHi, my order never arrived.",
			"cc {v} on the thread please",
			"Contact: {name}, {v}, {city}",
		}},
	{name: "phone", gen: func(r *rand.Rand, _ person) string { return phoneNumber(r) }, n: 160,
		cues:     []string{"phone", "Phone", "call", "Call", "mobile", "Tel.", "tel:", "cell", "my phone:", "Mob", "WhatsApp", "phone no.", "contact number"},
		presidio: []string{"test_phone_recognizer.py"},
		local: []string{
			"Call {v} after 5pm and ask for {first}.",
			"my phone: {v}",
			"You can reach {name} on {v} (mobile).",
			"Please text me at {v} when the courier is close.",
			"Tel.: {v} – Fax: none",
			// a number NANP's rules do not make a phone (an exchange from 0
			// or 1) is one after a phone word.
			"Call {weakphone} and ask for {first}.",
			"my phone: 1-{weakphone}",
			"Phone: {weakphone} (after 6pm)",
		}},
	{name: "nhs-number", gen: simple(nhs), ok: nhsOK, n: 140, needCue: true,
		cues:     []string{"NHS number", "NHS No", "NHS no.", "NHS No:", "nhs number", "NHS#", "NHS Number", "NHS"},
		presidio: []string{"test_uk_nhs_recognizer.py"},
		stdnum:   []string{"stdnum/gb/nhs.py"},
		local: []string{
			"Referral for {name}, DOB {dob}, {cue}{v}, to the memory clinic.",
			"GP surgery letter: patient {name} ({cue}{v}) did not attend.",
			"Please can you register {first} with the practice – {cue}{v}.",
		}},
	{name: "us-medicare-mbi", gen: simple(mbi), ok: mbiOK, n: 140,
		cues:     []string{"Medicare number", "MBI", "Medicare Beneficiary Identifier", "Medicare ID", "medicare #"},
		presidio: []string{"test_us_mbi_recognizer.py"},
		local: []string{
			"Beneficiary {name}, {cue}{v}, eligible from {date}.",
			"Please verify eligibility for {v} before the visit on {date}.",
			"New Medicare card came: {v}. Do I need to tell the pharmacy?",
		}},
	{name: "health-plan-id", gen: simple(planID), n: 140, needCue: true,
		cues: []string{"member ID", "Member ID:", "Member #", "member no.", "subscriber ID", "Subscriber #:", "policy number", "Policy No.", "insurance ID", "Insurance ID#", "group number", "Group #", "health plan ID", "plan member number"},
		local: []string{
			"{company} Health PPO, {cue}{v}, copay $25.",
			"Prior auth request: {name}, {cue}{v}, CPT 72148.",
			"Hi, my claim was denied. {cue}{v}. Can you tell me why?",
			"Insurance card front:\n{company} Health\nMember: {name}\n{cue}{v}\nRxBIN 610014",
		}},
	{name: "au-medicare", gen: simple(auMedicare), ok: auMedicareOK, n: 140, needCue: true,
		cues:     []string{"Medicare card", "Medicare number", "Medicare No.", "medicare no:", "Medicare card number", "Medicare #"},
		presidio: []string{"test_au_medicare_recognizer.py"},
		local: []string{
			"G'day, booking for {name}. {cue}{v}, ref 1.",
			"Bulk-billed consult for {first}, {cue}{v}.",
		}},
	{name: "es-dni", gen: simple(dni), ok: dniOK, n: 140,
		cues:     []string{"DNI", "NIE", "DNI/NIE", "NIF", "documento de identidad", "Número de identificación de extranjero"},
		presidio: []string{"test_es_nie_recognizer.py", "test_es_nif_recognizer.py"},
		stdnum:   []string{"stdnum/es/dni.py", "stdnum/es/nie.py"},
		local: []string{
			"Hola, soy {name} y mi DNI es {v}. ¿Podéis cambiar la dirección de envío?",
			"Datos del titular: {name}, NIE {v}, domicilio en {city}.",
			"Adjunto copia del DNI ({v}) para la matrícula.",
			"Factura a nombre de {name}, NIF: {v}",
		}},
	{name: "fr-nir", gen: simple(nir), ok: nirOK, n: 140, needCue: true,
		cues:   []string{"numéro de sécurité sociale", "NIR", "n° de sécurité sociale", "N° SS", "numéro de sécu", "carte Vitale n°", "INSEE"},
		stdnum: []string{"stdnum/fr/nir.py"},
		local: []string{
			"Bonjour, je m'appelle {name}, {cueword} {v}. Mon arrêt maladie n'a pas été pris en compte.",
			"Attestation pour {name} – {cueword} : {v}",
			"Mon {cueword} est le {v}, pouvez-vous mettre à jour mon dossier ?",
		}},
	{name: "it-fiscal-code", gen: func(r *rand.Rand, p person) string { return codiceFiscale(r, p.first, p.last, p.female == "F") }, ok: cfOK, n: 140,
		cues:     []string{"codice fiscale", "C.F.", "CF", "cod. fisc.", "tax code"},
		presidio: []string{"test_it_fiscal_code_recognizer.py"},
		stdnum:   []string{"stdnum/it/codicefiscale.py", "tests/test_it_codicefiscale.doctest"},
		local: []string{
			"Buongiorno, sono {name}, codice fiscale {v}. Vorrei disdire l'abbonamento.",
			"Intestatario: {name} – C.F. {v} – residente a {city}",
			"Per la fattura mi serve il CF: {v}",
		}},
	{name: "de-tax-id", gen: simple(deTaxID), ok: deTaxIDOK, n: 140, needCue: true,
		cues:     []string{"Steuer-ID", "Steuer-IdNr.", "steuerliche Identifikationsnummer", "IdNr.", "Steueridentifikationsnummer", "tax ID", "Tax-ID"},
		presidio: []string{"test_de_tax_id_recognizer.py"},
		stdnum:   []string{"stdnum/de/idnr.py", "tests/test_de_idnr.doctest"},
		local: []string{
			"Sehr geehrte Damen und Herren, meine {cueword} lautet {v}. Mit freundlichen Grüßen, {name}",
			"Lohnabrechnung {first} {last}: {cueword} {v}, Steuerklasse 1.",
			"Bitte tragen Sie die {cueword} ({v}) in das Formular ein.",
		}},
	{name: "nl-bsn", gen: simple(bsn), ok: bsnOK, n: 140, needCue: true,
		cues:   []string{"BSN", "burgerservicenummer", "BSN-nummer", "sofinummer", "citizen service number"},
		stdnum: []string{"stdnum/nl/bsn.py"},
		local: []string{
			"Beste, mijn {cueword} is {v}. Kunt u mijn adres wijzigen? Groet, {name}",
			"Patiënt {name}, {cueword} {v}, afspraak op {date}.",
			"Werknemer: {name} – {cueword}: {v}",
		}},
	{name: "in-aadhaar", gen: simple(aadhaar), ok: aadhaarOK, n: 140, needCue: true,
		cues:     []string{"Aadhaar", "Aadhaar no.", "Aadhaar number", "aadhar card", "UIDAI number", "आधार"},
		presidio: []string{"test_in_aadhaar_recognizer.py"},
		stdnum:   []string{"stdnum/in_/aadhaar.py"},
		local: []string{
			"KYC pending: {name}, {cueword} {v}, PAN attached.",
			"Sir, my {cueword} is {v}, please link it to my bank account.",
		}},
	{name: "br-cpf", gen: simple(cpf), ok: cpfOK, n: 140, needCue: true,
		cues:   []string{"CPF", "CPF nº", "cpf:", "Cadastro de Pessoas Físicas"},
		stdnum: []string{"stdnum/br/cpf.py"},
		local: []string{
			"Olá, meu nome é {name} e meu {cueword} é {v}. Preciso da segunda via do boleto.",
			"Nota fiscal para {name}, {cueword} {v}.",
		}},
	{name: "ca-sin", gen: simple(sin), ok: sinOK, n: 140, needCue: true,
		cues:     []string{"SIN", "social insurance number", "Social Insurance No.", "NAS", "numéro d'assurance sociale", "S.I.N."},
		presidio: []string{"test_ca_sin_recognizer.py"},
		stdnum:   []string{"stdnum/ca/sin.py"},
		local: []string{
			"T4 slip for {name}: {cueword} {v}, box 14 $52,300.",
			"Bonjour, mon {cueword} est {v}.",
		}},
	{name: "au-tfn", gen: simple(tfn), ok: tfnOK, n: 140, needCue: true,
		cues:     []string{"TFN", "tax file number", "Tax File No.", "TFN:"},
		presidio: []string{"test_au_tfn_recognizer.py"},
		stdnum:   []string{"stdnum/au/tfn.py", "tests/test_au_tfn.doctest"},
		local: []string{
			"New starter {name}, {cueword} {v}, super fund AustralianSuper.",
			"Do I put my {cueword} ({v}) on the Centrelink form?",
		}},
	{name: "uk-nino", gen: simple(nino), ok: ninoOK, n: 140,
		cues:     []string{"National Insurance number", "NI number", "NI No.", "NINO", "nino:", "national insurance no"},
		presidio: []string{"test_uk_nino_recognizer.py"},
		local: []string{
			"P45 for {name}, {cueword} {v}, leaving date {date}.",
			"Universal Credit claim: {name}, {v}.",
		}},
	{name: "pl-pesel", gen: simple(pesel), ok: peselOK, n: 140, needCue: true,
		cues:     []string{"PESEL", "nr PESEL", "numer PESEL", "pesel:"},
		presidio: []string{"test_pl_pesel_recognizer.py"},
		stdnum:   []string{"stdnum/pl/pesel.py"},
		local: []string{
			"Dzień dobry, nazywam się {name}, mój {cueword} to {v}.",
			"Pacjent: {name}, {cueword} {v}, skierowanie na {date}.",
		}},
	{name: "se-personnummer", gen: simple(personnummer), ok: personnummerOK, n: 140, needCue: true,
		cues:     []string{"personnummer", "Personnummer", "pnr", "personnr", "personal identity number"},
		presidio: []string{"test_se_personnummer_recognizer.py"},
		stdnum:   []string{"stdnum/se/personnummer.py", "tests/test_se_personnummer.doctest"},
		local: []string{
			"Hej, mitt {cueword} är {v}. Kan ni skicka fakturan igen? /{first}",
			"Patient {name}, {cueword} {v}, remiss till ortopeden.",
		}},
	{name: "us-bank-routing", gen: func(r *rand.Rand, _ person) string { return routingWithAccount(r) }, n: 140,
		cues:     []string{"routing number", "ABA", "routing", "RTN", "ABA routing #"},
		presidio: []string{"test_aba_routing_recognizer.py"},
		stdnum:   []string{"stdnum/us/rtn.py"},
		local: []string{
			"Direct deposit form for {name}: {v}.",
			"Please wire the refund: {v}, beneficiary {name}.",
			"Set up ACH with {v} and start on the 1st.",
		}},
}

// genericFrames carry any identifier: chats, emails, tickets, forms and
// records. {cue} is a cue word with its punctuation, {cueword} the bare
// word, {cuekey} the word as a field name.
var genericFrames = []string{
	"{cue}{v}",
	"My {cueword} is {v}. Can you check why my application was rejected?",
	"Hi, this is {name}. {cue}{v}. Please update my address to {street}, {city}.",
	"Subject: Updated details\n\nDear HR team,\n\nplease update my record.\nName: {name}\n{cue}{v}\nStart date: {date}\n\nBest regards,\n{first}",
	"Ticket {ticket}: customer {name} cannot log in to the portal. Verified identity with {cueword} {v}.",
	"| {name} | {cueword}: {v} | {city} |",
	"Please fill in the onboarding form for {name} ({cueword} {v}) and send it back by Friday.",
	"{cuekey}={v};name={name};city={city}",
	"customer:\n  name: {name}\n  {cuekey}: \"{v}\"\n  city: {city}",
	"Can you translate this letter for me? It says my {cueword} ({v}) was registered on {date}.",
	"{first} here — quick one: the bank asked for my {cueword}, it's {v}, is it safe to send by email?",
	"Summarize this call transcript:\nAgent: Can I have your {cueword}?\nCaller: Yes, it's {v}.\nAgent: Thank you, {title} {last}.",
	`{"name": "{name}", "{cuekey}": "{v}", "status": "pending"}`,
}

func planID(r *rand.Rand) string {
	switch r.IntN(7) {
	case 5:
		return string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26)), byte('A' + r.IntN(26))}) + " " + digits(r, 9)
	case 6:
		return "W" + digits(r, 9)
	case 0:
		return string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26)), byte('A' + r.IntN(26))}) + digits(r, 9)
	case 1:
		return "W" + digits(r, 9)
	case 2:
		return digits(r, 9) + "-0" + string(byte('1'+r.IntN(4)))
	case 3:
		return string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))}) + digits(r, 8)
	default:
		return "XYZ" + digits(r, 6) + string(byte('A'+r.IntN(26))) + digits(r, 2)
	}
}

func routingWithAccount(r *rand.Rand) string {
	rt, acct := routing(r), digits(r, 8+r.IntN(5))
	switch r.IntN(6) {
	case 0:
		return "routing number " + rt + ", account number " + acct
	case 1:
		return "ABA " + rt + " / acct " + acct
	case 2:
		return "Routing: " + rt + "\nAccount: " + acct
	case 3:
		return "RTN " + rt + " account # " + acct
	case 4:
		return "bank routing no. " + rt + " and checking account " + acct
	default:
		return "acct " + acct + " (routing " + rt + ")"
	}
}

var mailDomains = []string{"gmail.com", "outlook.com", "yahoo.co.uk", "proton.me", "icloud.com", "web.de", "orange.fr", "libero.it", "hotmail.es", "acme-corp.com", "mail.example.org", "uni-heidelberg.de"}

func emailOf(r *rand.Rand, p person) string {
	f, l := strings.ToLower(asciiFold(p.first)), strings.ToLower(asciiFold(p.last))
	d := mailDomains[r.IntN(len(mailDomains))]
	switch r.IntN(6) {
	case 0:
		return f + "." + l + "@" + d
	case 1:
		return f[:1] + l + "@" + d
	case 2:
		return f + "_" + l + digits(r, 2) + "@" + d
	case 3:
		return f + "+billing@" + d
	case 4:
		return strings.ToUpper(f[:1]) + f[1:] + "." + strings.ToUpper(l[:1]) + l[1:] + "@" + d
	default:
		return l + "." + f + "@" + d
	}
}

// phoneNumber draws a number in a national or international printing of
// the countries the corpus covers.
func phoneNumber(r *rand.Rand) string {
	nxx := func() string { return string(byte('2'+r.IntN(8))) + digits(r, 2) }
	switch r.IntN(14) {
	case 0:
		return "(" + nxx() + ") " + nxx() + "-" + digits(r, 4)
	case 1:
		return nxx() + "-" + nxx() + "-" + digits(r, 4)
	case 2:
		return nxx() + "." + nxx() + "." + digits(r, 4)
	case 3:
		return "+1 " + nxx() + " " + nxx() + " " + digits(r, 4)
	case 4:
		return "1-" + nxx() + "-" + nxx() + "-" + digits(r, 4)
	case 5:
		return "+44 20 7946 0" + digits(r, 3)
	case 6:
		return "07700 900" + digits(r, 3)
	case 7:
		return "+33 6 " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2)
	case 8:
		return "06 " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2)
	case 9:
		return "+49 30 " + digits(r, 8)
	case 10:
		return "+34 6" + digits(r, 2) + " " + digits(r, 3) + " " + digits(r, 3)
	case 11:
		return "+91 9" + digits(r, 4) + " " + digits(r, 5)
	case 12:
		return "+61 4" + digits(r, 2) + " " + digits(r, 3) + " " + digits(r, 3)
	default:
		return "0" + string(byte('2'+r.IntN(7))) + " " + digits(r, 4) + " " + digits(r, 4)
	}
}
