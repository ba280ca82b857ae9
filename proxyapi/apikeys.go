package proxyapi

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// APIKeySource is one entry of policy.auth.apiKeys: a Secret of API keys,
// mounted read-only at Dir, whose every file (a data key of the Secret) is
// one key, all of them authenticating Team. The keys themselves are never in
// the config; the router-proxy reads them from Dir and reads them again when
// the kubelet swaps the volume's files (routerproxy/auth/apikeys.go).
type APIKeySource struct {
	SecretName string `json:"secretName"`
	Team       string `json:"team"`
	// Dir is where the Secret is mounted (wellknown.APIKeysDir on the
	// Proxy plane).
	Dir string `json:"dir"`
	// ExpiresAt, when set, is when the keys stop being accepted.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// APIKeyStatus is the API keys one replica holds, in Status: names and
// counts only, never a key's value.
type APIKeyStatus struct {
	// Generation counts the key sets loaded: it grows by one each time a
	// read of the Secrets' files finds them changed (rotation), so a caller
	// can wait for a change to be taken.
	Generation int64 `json:"generation"`
	// Keys are the names ("<secretName>/<dataKey>") of the keys accepted.
	Keys []string `json:"keys"`
	// Problems are what the last read refused: an unreadable Secret
	// directory, an empty key, a value that is a key of two entries.
	Problems []string `json:"problems,omitempty"`
}

// TeamHeader is the header the verified team is written to: jwt.headerKey,
// or wellknown.TeamHeader when only API keys authenticate.
func (a *Auth) TeamHeader() string {
	if a != nil && a.JWT != nil && a.JWT.HeaderKey != "" {
		return a.JWT.HeaderKey
	}
	return wellknown.TeamHeader
}

// Authenticates reports whether policy.auth verifies a team (a JWT or API
// keys), which allowlists and the MCP endpoint need.
func (a *Auth) Authenticates() bool {
	return a != nil && (a.JWT != nil || len(a.APIKeys) > 0)
}

// validateAPIKeys checks every entry names a Secret, a team and a directory,
// each Secret once.
func (a *Auth) validateAPIKeys(errs []error) []error {
	seen := map[string]bool{}
	for i, k := range a.APIKeys {
		if k.SecretName == "" || k.Team == "" || k.Dir == "" {
			errs = append(errs, fmt.Errorf("policy.auth.apiKeys[%d]: secretName, team and dir are required", i))
		}
		if seen[k.SecretName] {
			errs = append(errs, fmt.Errorf("policy.auth.apiKeys[%d]: secret %q is listed twice", i, k.SecretName))
		}
		seen[k.SecretName] = true
	}
	if len(a.Allowlists) > 0 && !a.Authenticates() {
		errs = append(errs, errors.New("policy.auth.allowlists require policy.auth.jwt or policy.auth.apiKeys: a team is only ever a verified one"))
	}
	return errs
}
