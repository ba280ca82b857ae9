package agentgateway

import "github.com/llmkube/llmkube-compile/capability"

// ReasonAPIKeysUnsupportedOnAgentGateway: policy.auth.apiKeys cannot keep
// its meaning on agentgateway (apiKeysRow).
const ReasonAPIKeysUnsupportedOnAgentGateway = "APIKeysUnsupportedOnAgentGateway"

// apiKeysRow refuses policy.auth.apiKeys. agentgateway's
// apiKeyAuthentication reads one Secret (secretRef) or Secrets by label,
// and a key's identity is the JSON metadata stored beside it in the Secret
// (apiKey.group in CEL): a router's entries, each a Secret of plain keys
// mapped to a team in the ModelRouter, have no such metadata, so the
// verified team header could not be set per Secret; one authentication
// policy per route also holds either the JWT or the key check in Strict
// mode, and expiresAt has no counterpart. Refused rather than served with
// another meaning (docs/api-keys.md#data-planes).
func apiKeysRow() capability.Row {
	return capability.Row{Path: "spec.policy.auth.apiKeys", Verdict: capability.Refused, Reason: ReasonAPIKeysUnsupportedOnAgentGateway,
		Message: "dataPlane AgentGateway cannot authenticate by policy.auth.apiKeys with the router's meaning: agentgateway's apiKeyAuthentication identifies a key by metadata stored beside it in the Secret, while the router maps each Secret of plain keys to a team, so the verified team header that allowlists, team budgets and rules read cannot be set, and expiresAt has no counterpart; use the Proxy data plane, or jwt"}
}
