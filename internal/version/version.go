// Package version is the one place a binary learns what it is: the release
// version, the commit it was built from and the Go toolchain. Release builds
// (make build, make images) stamp Version and Commit with -ldflags -X; a plain
// `go build` or `go install` falls back to the module and VCS information Go
// records in the binary (debug.ReadBuildInfo).
package version

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Stamped by the build:
//
//	-ldflags "-X github.com/llmkube/llmkube-compile/internal/version.Version=v0.2.0
//	          -X github.com/llmkube/llmkube-compile/internal/version.Commit=<sha>"
var (
	Version = ""
	Commit  = ""
)

// Release is the release this source tree is, reported when neither the
// linker nor a module download (`go install ...@vX.Y.Z`) names a version. It
// is also the tag of the default images (internal/images), so a binary built
// from this tree deploys the images built from it. Bump it when releasing.
const Release = "v0.1.0"

// Info describes one build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns this binary's build information.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && isRelease(bi.Main.Version) {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					info.Commit = s.Value
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = Release
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// String is the one-line form every binary prints for --version:
// "NAME VERSION (commit COMMIT, GOVERSION, PLATFORM)".
func String(name string) string {
	i := Get()
	return fmt.Sprintf("%s %s (commit %s, %s, %s)", name, i.Version, i.Commit, i.GoVersion, i.Platform)
}

// JSON is Get as indented JSON with a trailing newline.
func JSON() []byte {
	b, _ := json.MarshalIndent(Get(), "", "  ")
	return append(b, '\n')
}

// isRelease is true for a module version that names a release tag. Go stamps
// work-tree builds with pseudo-versions (v0.0.0-20261201101500-abcdef+dirty);
// no image carries those tags, so they never become the version.
func isRelease(v string) bool {
	return semver.IsValid(v) && semver.Build(v) == "" && !module.IsPseudoVersion(v)
}
