package version

import (
	"strings"
	"testing"
)

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.2.0":                               true,
		"v1.0.0-rc.1":                          true,
		"(devel)":                              false,
		"":                                     false,
		"v0.0.0-20261201101500-abcdefabcdef":   false,
		"v0.1.1-0.20261201101500-abcdefabcdef": false,
		"v0.0.0-20261201101500-abcdefabcdef+dirty": false,
	} {
		if got := isRelease(v); got != want {
			t.Errorf("isRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestStampWins(t *testing.T) {
	old, oldC := Version, Commit
	t.Cleanup(func() { Version, Commit = old, oldC })
	Version, Commit = "v3.2.1", "abc"
	if s := String("x"); !strings.HasPrefix(s, "x v3.2.1 (commit abc, go") {
		t.Errorf("String = %q", s)
	}
	Version, Commit = "", ""
	if i := Get(); i.Version != Release || i.Commit == "" {
		t.Errorf("unstamped test binary: %+v, want the tree's release %s", i, Release)
	}
}
