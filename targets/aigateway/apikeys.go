package aigateway

import "github.com/llmkube/llmkube-compile/capability"

// ReasonAPIKeysUnsupportedOnGateway: policy.auth.apiKeys cannot keep its
// meaning on Envoy Gateway (apiKeysRow).
const ReasonAPIKeysUnsupportedOnGateway = "APIKeysUnsupportedOnGateway"

// apiKeysRow refuses policy.auth.apiKeys. Envoy Gateway's SecurityPolicy
// apiKeyAuth (v1.9.1) takes the same Secret format (every data key a client
// id, its value the key) but can only forward the client id
// (forwardClientIDHeader), not the team of the Secret it came from: the
// verified team header that allowlists, team budgets and rules read would
// hold the data key, which the Secret's author chooses per key and nothing
// ties to the entry's team. One SecurityPolicy per route also holds one
// apiKeyAuth beside the router's jwt, with no order between the two, and
// expiresAt has no counterpart. Refused rather than served with another
// meaning (docs/api-keys.md#data-planes).
func apiKeysRow() capability.Row {
	return capability.Row{Path: "spec.policy.auth.apiKeys", Verdict: capability.Refused, Reason: ReasonAPIKeysUnsupportedOnGateway,
		Message: "dataPlane Gateway cannot authenticate by policy.auth.apiKeys with the router's meaning: Envoy Gateway's apiKeyAuth forwards a key's client id (the Secret's data key), not the team of the Secret it came from, so the verified team header that allowlists, team budgets and rules read cannot be derived, and expiresAt has no counterpart; use the Proxy data plane, or jwt"}
}
