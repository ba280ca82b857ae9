package wellknown

// The classification values the router-proxy's content classifier yields
// (policy.classification.mode detector and hybrid): the compiler requires
// each in sensitiveClassifications and defaults that list to them, the
// classifier reports them.
const (
	ClassPII = "pii"
	ClassPHI = "phi"
)

// DetectorClasses are the classification values the content classifier
// yields, sorted.
func DetectorClasses() []string { return []string{ClassPII, ClassPHI} }
