package testenv

import (
	"os"
	"testing"
)

// MakeVar is a path `make test` puts in the environment for the tests
// (HELM, EGCTL, LLMKUBE_IMAGES_DIR): a test that needs one fails, never
// skips, when it is unset or names nothing, and says which make target
// provides it.
func MakeVar(t testing.TB, name, target string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is unset: run the tests with `make test`, which runs `make %s` and sets it", name, target)
	}
	if _, err := os.Stat(v); err != nil {
		t.Fatalf("%s=%s: %v (run `make %s`)", name, v, err, target)
	}
	return v
}
