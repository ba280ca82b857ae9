// Package images checks the image archives `make images` wrote: what users
// `docker load` or `crane push`. It opens each with go-containerregistry,
// checks both platforms, the entrypoint, user and labels, extracts the
// binary and runs it.
package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/test/testenv"
	"github.com/llmkube/llmkube-compile/tools/imagebuild"
)

func dir(t *testing.T) string {
	t.Helper()
	return testenv.MakeVar(t, "LLMKUBE_IMAGES_DIR", "images")
}

// untar unpacks an archive (the OCI layout) into a directory.
func untar(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("%v (run `make images`)", err)
	}
	defer f.Close()
	out := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(out, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, out) {
			t.Fatalf("archive entry %q escapes", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// binaryOf extracts the file at path from the image's layers.
func binaryOf(t *testing.T, img v1.Image, path string) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var found []byte
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if "/"+strings.TrimPrefix(h.Name, "./") == path {
				found, _ = io.ReadAll(tr)
				if h.Mode&0o111 == 0 {
					t.Errorf("%s is not executable (mode %o)", path, h.Mode)
				}
			}
			if strings.HasSuffix(h.Name, "bin/sh") {
				t.Errorf("the image has a shell: %s", h.Name)
			}
		}
		rc.Close()
	}
	if found == nil {
		t.Fatalf("no %s in the image", path)
	}
	return found
}

func TestImageArchives(t *testing.T) {
	for _, c := range []struct{ file, name string }{
		{"router-proxy.tar", images.RouterProxy},
		{"controller.tar", images.Controller},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir(t), c.file)
			// What `crane push FILE` and `docker load` read: the docker-archive
			// manifest, tagged with the default reference.
			tag, err := name.NewTag(images.Ref(c.name))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tarball.ImageFromPath(file, &tag); err != nil {
				t.Fatalf("the archive has no image tagged %s (the default reference render and the installs emit): %v", tag, err)
			}
			if c.name == images.RouterProxy && images.RouterProxyRef() != tag.String() {
				t.Fatalf("router-proxy reference %s != %s", images.RouterProxyRef(), tag)
			}
			// The OCI layout: every platform.
			lp, err := layout.FromPath(untar(t, file))
			if err != nil {
				t.Fatal(err)
			}
			top, err := lp.ImageIndex()
			if err != nil {
				t.Fatal(err)
			}
			tm, _ := top.IndexManifest()
			if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["io.containerd.image.name"] != tag.String() {
				t.Fatalf("index.json %+v, want one index named %s", tm.Manifests, tag)
			}
			idx, err := top.ImageIndex(tm.Manifests[0].Digest)
			if err != nil {
				t.Fatal(err)
			}
			im, _ := idx.IndexManifest()
			platforms := map[string]bool{}
			for _, d := range im.Manifests {
				platforms[d.Platform.OS+"/"+d.Platform.Architecture] = true
				img, err := idx.Image(d.Digest)
				if err != nil {
					t.Fatal(err)
				}
				checkPlatformImage(t, img, d, c.name)
			}
			if !platforms["linux/amd64"] || !platforms["linux/arm64"] || len(platforms) != 2 {
				t.Errorf("platforms %v, want linux/amd64 and linux/arm64", platforms)
			}
		})
	}
}

// checkPlatformImage checks one platform's image of the archive: its config
// (entrypoint, user, platform, labels), its binary (static ELF for the
// platform) and, on this machine's architecture, the binary run with
// --version.
func checkPlatformImage(t *testing.T, img v1.Image, d v1.Descriptor, name string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	entry := "/usr/local/bin/" + name
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != entry {
		t.Errorf("%s entrypoint %v, want [%s]", d.Platform, cf.Config.Entrypoint, entry)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("%s user %q", d.Platform, cf.Config.User)
	}
	if cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
		t.Errorf("config says %s/%s under %s", cf.OS, cf.Architecture, d.Platform)
	}
	labels := cf.Config.Labels
	if labels[imagebuild.LabelVersion] != version.Release || labels[imagebuild.LabelSource] == "" || len(labels[imagebuild.LabelRevision]) < 7 {
		t.Errorf("%s labels %v", d.Platform, labels)
	}
	bin := binaryOf(t, img, entry)
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: %s is not ELF: %v", d.Platform, entry, err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[d.Platform.Architecture]
	if ef.Machine != want {
		t.Errorf("%s binary is for %v", d.Platform, ef.Machine)
	}
	if ef.Section(".interp") != nil {
		t.Errorf("%s binary is dynamically linked", d.Platform)
	}
	if d.Platform.Architecture == runtime.GOARCH {
		runVersion(t, bin, name, labels[imagebuild.LabelRevision])
	}
}

// runVersion runs the image's binary with --version: the stamped version
// and the image's revision label.
func runVersion(t *testing.T, bin []byte, name, revision string) {
	t.Helper()
	exe := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", name, err, out)
	}
	if w := name + " " + version.Release + " (commit " + revision + ","; !strings.HasPrefix(string(out), w) {
		t.Errorf("--version printed %q, want prefix %q", out, w)
	}
}

// TestAssemblyIsReproducible: the same binaries and commit give the same digest.
func TestAssemblyIsReproducible(t *testing.T) {
	spec := imagebuild.Spec{Name: "x", Binaries: map[string][]byte{"amd64": []byte("a"), "arm64": []byte("b")}, Source: "s", Version: "v1", Revision: "r"}
	a, err := imagebuild.Index(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := imagebuild.Index(spec)
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("digests differ: %s %s", da, db)
	}
	spec.Revision = "other"
	c, _ := imagebuild.Index(spec)
	if dc, _ := c.Digest(); dc == da {
		t.Fatal("a different revision gave the same digest")
	}
}
