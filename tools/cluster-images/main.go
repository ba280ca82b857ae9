// Command images builds the images `make e2e-cluster` runs beside the
// project's own (which `make images` builds): the pod sandbox (pause), the
// cluster DNS (CoreDNS, built by hack/cluster/install.sh from its module) and
// the stub model server of the scenarios. There is no registry here, so each
// is an image archive that containerd imports; they are built for this
// machine's architecture only, with tools/imagebuild like the shipped images.
//
//	go run ./tools/cluster-images -out DIR -coredns PATH
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/llmkube/llmkube-compile/tools/imagebuild"
)

// The references the cluster's configuration names. They are written once,
// here; the run also writes them to DIR/refs.env for hack/cluster/cluster.sh
// (containerd's sandbox image) and test/cluster (the pods it creates).
const (
	PauseRef     = "llmkube.local/e2e/pause:1"
	CoreDNSRef   = "llmkube.local/e2e/coredns:1"
	StubModelRef = "llmkube.local/e2e/stubmodel:1"
)

func main() {
	out := flag.String("out", "", "directory for the image archives")
	coredns := flag.String("coredns", "", "the CoreDNS binary (static, linux)")
	flag.Parse()
	if *out == "" || *coredns == "" {
		fmt.Fprintln(os.Stderr, "usage: images -out DIR -coredns PATH")
		os.Exit(2)
	}
	if err := run(*out, *coredns); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(out, coredns string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "llmkube-e2e-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	refs := fmt.Sprintf("PAUSE_IMAGE=%s\nCOREDNS_IMAGE=%s\nSTUBMODEL_IMAGE=%s\n", PauseRef, CoreDNSRef, StubModelRef)
	if err := os.WriteFile(filepath.Join(out, "refs.env"), []byte(refs), 0o644); err != nil {
		return err
	}
	for _, im := range []struct{ name, ref, pkg, bin string }{
		{"pause", PauseRef, "./test/cluster/pause", ""},
		{"stubmodel", StubModelRef, "./test/cluster/stubmodel", ""},
		{"coredns", CoreDNSRef, "", coredns},
	} {
		bin := im.bin
		if bin == "" {
			bin = filepath.Join(work, im.name)
			if err := imagebuild.GoBuild(im.pkg, bin, runtime.GOARCH); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
		spec := imagebuild.Spec{Name: im.name, Ref: im.ref, Binaries: map[string][]byte{p.Architecture: data},
			Source: "https://github.com/llmkube/llmkube-compile", Version: "e2e", Revision: "e2e", Created: time.Unix(0, 0).UTC()}
		img, err := imagebuild.Image(spec, p, data)
		if err != nil {
			return err
		}
		idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
		file := filepath.Join(out, im.name+".tar")
		if err := imagebuild.WriteArchive(file, im.ref, idx); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Printf("%s  %s\n", file, im.ref)
	}
	return nil
}
