package proxyplane

import (
	"os"
	"path/filepath"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/simulate"
)

// writeKeys writes each Secret of cfg's policy.auth.apiKeys to a temporary
// directory, as the kubelet mounts it, and points the config at it: every
// Secret holds one key, simulate.KeyValue of its name and the key's name
// (the request's key's name for the Secret it names, "routing-test" for the
// others). It returns what removes them.
func writeKeys(cfg *proxyapi.Config, key *simulate.APIKey) (func(), error) {
	a := cfg.Policy.Auth
	if a == nil || len(a.APIKeys) == 0 {
		return func() {}, nil
	}
	root, err := os.MkdirTemp("", "routing-test-api-keys-")
	if err != nil {
		return nil, err
	}
	remove := func() { _ = os.RemoveAll(root) }
	for i := range a.APIKeys {
		src := &a.APIKeys[i]
		name := (&simulate.APIKey{}).KeyName()
		if key != nil && key.SecretName == src.SecretName {
			name = key.KeyName()
		}
		src.Dir = filepath.Join(root, src.SecretName)
		if err := os.MkdirAll(src.Dir, 0o700); err != nil {
			remove()
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(src.Dir, name), []byte(simulate.KeyValue(src.SecretName, name)), 0o600); err != nil {
			remove()
			return nil, err
		}
	}
	return remove, nil
}
