// Package classifier is the router-proxy's content classifier
// (policy.classification.mode detector and hybrid): it reads the texts a
// model would see in a request body and reports which detectors found a
// personal or health identifier. A detection is a classification (pii or
// phi), and the routing engine's fail-closed rules do the rest: the request
// stays on local backends, or gets 503. Nothing is masked or rewritten.
//
// Every detector validates what its pattern finds (a checksum, an issuer or
// country table, the SSA's rules, an id word leading to the number, a
// name of the gazetteer in routerproxy/classifier/lexicon), so order numbers, UUIDs,
// hashes, dates and versions do not classify a benign request as sensitive.
// The scan is one pass over each text, with bounded look-arounds: linear in
// the body, with no regular expressions and no backtracking
// (docs/classifier.md lists every detector, what it finds and misses).
package classifier

import (
	"math/bits"
	"slices"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// The classification values the detectors yield: the defaults of
// policy.classification.sensitiveClassifications.
const (
	ClassPII = wellknown.ClassPII
	ClassPHI = wellknown.ClassPHI
)

// Classes are the classification values the detectors yield, sorted.
func Classes() []string { return wellknown.DetectorClasses() }

// MaxBodyBytes is the largest body the classifier reads. A larger body is
// not skipped: it is classified as every value the detectors yield
// (fail-closed), with the detector BodyOverLimit.
const MaxBodyBytes = 4 << 20

// Detector is one detector, a bit; a Set holds those that fired.
type Detector uint32

// The detectors, in the order their names are reported.
const (
	PaymentCard Detector = 1 << iota
	USSSN
	IBAN
	Email
	Phone
	MedicalRecordNumber
	ICD10
	HealthTerm
	PersonNameWithBirthDate
	NHSNumber
	USMedicareMBI
	HealthPlanID
	AUMedicare
	ESDNI
	FRNIR
	ITFiscalCode
	DETaxID
	NLBSN
	INAadhaar
	BRCPF
	CASIN
	AUTFN
	UKNINO
	PLPESEL
	SEPersonnummer
	USBankRouting
	BodyOverLimit
	numDetectors = iota
)

// A Set holds every detector as a bit.
var _ [32 - numDetectors]struct{}

// detectorInfo is a detector's stable name (audit, metric label) and the
// classification it yields.
var detectorInfo = [numDetectors]struct{ name, class string }{
	{"payment-card", ClassPII},
	{"us-ssn", ClassPII},
	{"iban", ClassPII},
	{"email", ClassPII},
	{"phone", ClassPII},
	{"medical-record-number", ClassPHI},
	{"icd10-diagnosis", ClassPHI},
	{"health-term-with-identifier", ClassPHI},
	{"person-name-with-birth-date", ClassPII},
	{"nhs-number", ClassPHI},
	{"us-medicare-mbi", ClassPHI},
	{"health-plan-id", ClassPHI},
	{"au-medicare", ClassPHI},
	{"es-dni", ClassPII},
	{"fr-nir", ClassPII},
	{"it-fiscal-code", ClassPII},
	{"de-tax-id", ClassPII},
	{"nl-bsn", ClassPII},
	{"in-aadhaar", ClassPII},
	{"br-cpf", ClassPII},
	{"ca-sin", ClassPII},
	{"au-tfn", ClassPII},
	{"uk-nino", ClassPII},
	{"pl-pesel", ClassPII},
	{"se-personnummer", ClassPII},
	{"us-bank-routing", ClassPII},
	{"body-over-limit", ""}, // every class: see Set.Classes
}

// All lists every detector, in order.
func All() []Detector {
	out := make([]Detector, numDetectors)
	for i := range out {
		out[i] = 1 << uint(i)
	}
	return out
}

// Name is the detector's stable name.
func (d Detector) Name() string { return detectorInfo[bits.TrailingZeros32(uint32(d))].name }

// Class is the classification the detector yields ("" for BodyOverLimit,
// which yields every class).
func (d Detector) Class() string { return detectorInfo[bits.TrailingZeros32(uint32(d))].class }

// Set is the detectors that fired on a request.
type Set uint32

// Has reports whether d fired.
func (s Set) Has(d Detector) bool { return s&Set(d) != 0 }

// Empty reports whether nothing fired.
func (s Set) Empty() bool { return s == 0 }

// Detectors lists the detectors that fired, in order.
func (s Set) Detectors() []Detector {
	if s == 0 {
		return nil
	}
	var out []Detector
	for _, d := range All() {
		if s.Has(d) {
			out = append(out, d)
		}
	}
	return out
}

// Names lists the names of the detectors that fired, in order.
func (s Set) Names() []string {
	var out []string
	for i := range numDetectors {
		if s&(1<<i) != 0 {
			out = append(out, detectorInfo[i].name)
		}
	}
	return out
}

// Classes lists the classifications the set yields, sorted and unique. A
// body over MaxBodyBytes yields every class.
func (s Set) Classes() []string {
	var out []string
	for i := range numDetectors {
		if s&(1<<i) == 0 {
			continue
		}
		c := detectorInfo[i].class
		if c == "" {
			out = append(out, ClassPII, ClassPHI)
		} else {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Body classifies a request body, which must be valid JSON (json.Valid):
// every string in it but the binary payloads (image_url, input_audio and
// file parts, data: URLs and base64 blobs), with its JSON escapes decoded,
// and every long number. A body over MaxBodyBytes is BodyOverLimit.
func Body(body []byte) Set {
	if len(body) > MaxBodyBytes {
		return Set(BodyOverLimit)
	}
	var sc scanner
	walkStrings(body, sc.text, 0)
	return sc.found
}

// Text classifies one text, as Body classifies each string of a body.
func Text(text []byte) Set {
	if len(text) > MaxBodyBytes {
		return Set(BodyOverLimit)
	}
	var sc scanner
	sc.text(text)
	return sc.found
}
