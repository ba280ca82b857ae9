package simulate

import "strings"

// APIKeyHeader is the header Anthropic clients send their key in.
const APIKeyHeader = "X-Api-Key"

// APIKey is an API key a caller presents: a key of the router's Secret
// SecretName (policy.auth.apiKeys) named Name, or with Invalid a key the
// router does not hold. The models do not read Secrets: a plane that
// serves API keys holds, for each Secret of the router, the key RawValue
// gives (simulate/proxyplane writes it where the router-proxy reads it).
type APIKey struct {
	SecretName string
	// Name is the key's data key in the Secret (default "routing-test").
	Name string
	// Header is APIKeyHeader to send x-api-key; anything else sends
	// Authorization: Bearer.
	Header  string
	Invalid bool
}

// KeyPrefix starts every key value the routing tests send, so that a key
// reaching a backend can be recognised.
const KeyPrefix = "routing-test-key-"

// KeyName is the key's name in its Secret.
func (k *APIKey) KeyName() string {
	if k.Name != "" {
		return k.Name
	}
	return "routing-test"
}

// RawValue is the key as sent.
func (k *APIKey) RawValue() string {
	if k.Invalid {
		return KeyPrefix + "unknown"
	}
	return KeyValue(k.SecretName, k.KeyName())
}

// KeyValue is the value of the key name of Secret secret, as a plane that
// serves API keys holds it.
func KeyValue(secret, name string) string {
	return KeyPrefix + strings.ReplaceAll(secret, ".", "-") + "-" + name
}
