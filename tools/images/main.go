// Command images builds the project's container images without a Docker
// daemon (`make images`): the router-proxy and the controller, each as static
// linux/amd64 and linux/arm64 binaries stamped with the version and commit,
// assembled by tools/imagebuild into dist/images/router-proxy.tar and
// dist/images/controller.tar.
//
//	go run ./tools/images [-out dist/images] [-version v0.1.0] [-commit SHA]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/tools/imagebuild"
)

// Source is the repository the images are built from (OCI source label).
const Source = "https://github.com/llmkube/llmkube-compile"

// VersionPkg is the package whose variables the linker stamps.
const VersionPkg = "github.com/llmkube/llmkube-compile/internal/version"

// image is one image: its binary's package and its archive's file name.
type image struct {
	name, pkg, file string
}

var all = []image{
	{images.RouterProxy, "./cmd/router-proxy", "router-proxy.tar"},
	{images.Controller, "./cmd/llmkube-controller", "controller.tar"},
}

func main() {
	out := flag.String("out", "dist/images", "directory for the image archives")
	ver := flag.String("version", "", "version to stamp and tag (default: this tree's release, "+version.Release+")")
	commit := flag.String("commit", "", "commit to stamp (default: git rev-parse HEAD)")
	flag.Parse()
	if err := run(*out, *ver, *commit); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(out, ver, commit string) error {
	if ver == "" {
		ver = version.Get().Version
	}
	if commit == "" {
		commit = git("rev-parse", "HEAD")
	}
	if commit == "" {
		commit = "unknown"
	}
	// The commit's time is the images' creation time: rebuilding a commit
	// gives the same digest. SOURCE_DATE_EPOCH wins, as reproducible builds expect.
	created := time.Unix(0, 0).UTC()
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		epoch = git("log", "-1", "--format=%ct")
	}
	if s, err := strconv.ParseInt(epoch, 10, 64); err == nil {
		created = time.Unix(s, 0).UTC()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "llmkube-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, im := range all {
		bins := map[string][]byte{}
		for _, p := range imagebuild.Platforms {
			bin := filepath.Join(work, im.name+"-"+p.Architecture)
			if err := build(im.pkg, bin, p.Architecture, ver, commit); err != nil {
				return err
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				return err
			}
			bins[p.Architecture] = data
		}
		spec := imagebuild.Spec{Name: im.name, Ref: images.Registry + "/" + im.name + ":" + ver, Binaries: bins, Source: Source, Version: ver, Revision: commit, Created: created}
		idx, err := imagebuild.Index(spec)
		if err != nil {
			return err
		}
		file := filepath.Join(out, im.file)
		if err := imagebuild.WriteArchive(file, spec.Ref, idx); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		dg, _ := idx.Digest()
		fmt.Printf("%s  %s  %s\n", file, spec.Ref, dg)
	}
	return nil
}

// build cross-compiles a static, reproducible binary stamped with the
// version and commit.
func build(pkg, outFile, arch, ver, commit string) error {
	return imagebuild.GoBuild(pkg, outFile, arch, "-buildid=",
		"-X", VersionPkg+".Version="+ver, "-X", VersionPkg+".Commit="+commit)
}

// git runs a git command and returns its trimmed output ("" on failure).
func git(args ...string) string {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
