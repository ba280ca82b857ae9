// Package imagebuild assembles the project's container images without a
// Docker daemon, with go-containerregistry: one static binary per platform in
// a single layer, no shell, no package manager, user 65532, OCI labels.
// Assembly is deterministic (fixed timestamps, sorted entries, the commit
// time as the creation time), so the same binaries give the same digest.
//
// An archive is an OCI image layout (index.json with every platform) in a
// tar, plus a docker-archive manifest.json naming the linux/amd64 image, the
// shape `docker save` writes since Docker 25: `docker load` and
// `crane push FILE REF` read it, and `crane push --index DIR REF` on the
// unpacked layout pushes every platform.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the numeric non-root user every image runs as (distroless' nonroot).
const User = "65532:65532"

// BinDir is where the binary sits in the image.
const BinDir = "/usr/local/bin"

// OCI label keys.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
)

// Platforms every image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Spec describes one image.
type Spec struct {
	// Name is the binary's and the image's name (router-proxy).
	Name string
	// Ref is the full reference the archive is tagged with.
	Ref string
	// Binaries maps an architecture (amd64, arm64) to a static linux binary.
	Binaries map[string][]byte
	Source   string
	Version  string
	Revision string
	// Created is the image's creation time: the commit's time, for reproducibility.
	Created time.Time
	// Args are default arguments after the entrypoint (none when empty).
	Args []string
}

// Index assembles the multi-platform image index.
func Index(s Spec) (v1.ImageIndex, error) {
	var idx v1.ImageIndex = empty.Index
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	for _, p := range Platforms {
		bin, ok := s.Binaries[p.Architecture]
		if !ok {
			return nil, fmt.Errorf("%s: no binary for %s/%s", s.Name, p.OS, p.Architecture)
		}
		img, err := Image(s, p, bin)
		if err != nil {
			return nil, err
		}
		pl := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pl}})
	}
	return idx, nil
}

// Image assembles one platform's image.
func Image(s Spec, p v1.Platform, bin []byte) (v1.Image, error) {
	layerTar, err := rootfs(s.Name, bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created:   v1.Time{Time: s.Created},
		CreatedBy: "llmkube-compile tools/images: " + s.Name,
		Comment:   "static binary",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.OS, p.Architecture
	cf.Created = v1.Time{Time: s.Created}
	cf.Config.Entrypoint = []string{path.Join(BinDir, s.Name)}
	cf.Config.Cmd = s.Args
	cf.Config.User = User
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=" + BinDir}
	cf.Config.Labels = map[string]string{
		LabelSource:   s.Source,
		LabelVersion:  s.Version,
		LabelRevision: s.Revision,
		LabelTitle:    s.Name,
		LabelCreated:  s.Created.UTC().Format(time.RFC3339),
	}
	return mutate.ConfigFile(img, cf)
}

// rootfs is the image's only layer: the directories, an empty writable /tmp
// and the binary, owned by root and executable by everyone.
func rootfs(binName string, bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	dirs := []struct {
		name string
		mode int64
	}{{"tmp/", 0o1777}, {"usr/", 0o755}, {"usr/local/", 0o755}, {"usr/local/bin/", 0o755}} // in tar order
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path.Join(BinDir[1:], binName), Mode: 0o755, Size: int64(len(bin)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteArchive writes idx to path as an OCI layout tar with a docker-archive
// manifest.json for the linux/amd64 image tagged ref. The file is written
// beside path and renamed into place, so a failed build never leaves half an
// archive.
func WriteArchive(file, ref string, idx v1.ImageIndex) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	tmp, err := os.CreateTemp(path.Dir(file), ".image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeArchive(tmp, tag, idx); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

type tarWriter struct {
	tw   *tar.Writer
	seen map[string]bool
}

func (w *tarWriter) file(name string, data []byte) error {
	if w.seen[name] {
		return nil
	}
	w.seen[name] = true
	if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

func (w *tarWriter) blob(h v1.Hash, data []byte) (string, error) {
	p := path.Join("blobs", h.Algorithm, h.Hex)
	return p, w.file(p, data)
}

// image writes one platform's image, its manifest named digest: its
// layers, its config and the manifest, as blobs; cfgPath and layerPaths
// are where the config and the layers are.
func (w *tarWriter) image(img v1.Image, digest v1.Hash) (cfgPath string, layerPaths []string, err error) {
	layers, err := img.Layers()
	if err != nil {
		return "", nil, err
	}
	for _, l := range layers {
		p, err := w.layer(l)
		if err != nil {
			return "", nil, err
		}
		layerPaths = append(layerPaths, p)
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return "", nil, err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return "", nil, err
	}
	if cfgPath, err = w.blob(cfgName, cfg); err != nil {
		return "", nil, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return "", nil, err
	}
	if _, err := w.blob(digest, raw); err != nil {
		return "", nil, err
	}
	return cfgPath, layerPaths, nil
}

// layer writes a compressed layer as a blob and returns its path.
func (w *tarWriter) layer(l v1.Layer) (string, error) {
	dg, err := l.Digest()
	if err != nil {
		return "", err
	}
	rc, err := l.Compressed()
	if err != nil {
		return "", err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return "", err
	}
	return w.blob(dg, data)
}

func writeArchive(out io.Writer, tag name.Tag, idx v1.ImageIndex) error {
	w := &tarWriter{tw: tar.NewWriter(out), seen: map[string]bool{}}
	if err := w.file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	var dockerManifest []map[string]any
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		cfgPath, layerPaths, err := w.image(img, d.Digest)
		if err != nil {
			return err
		}
		if d.Platform != nil && d.Platform.Architecture == "amd64" {
			dockerManifest = append(dockerManifest, map[string]any{"Config": cfgPath, "RepoTags": []string{tag.String()}, "Layers": layerPaths})
		}
	}
	rawIdx, err := idx.RawManifest()
	if err != nil {
		return err
	}
	dg, err := idx.Digest()
	if err != nil {
		return err
	}
	if _, err := w.blob(dg, rawIdx); err != nil {
		return err
	}
	// index.json points at the image index, named as containerd and Docker
	// name what they load.
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIImageIndex,
			Size:      int64(len(rawIdx)),
			Digest:    dg,
			Annotations: map[string]string{
				"io.containerd.image.name":          tag.String(),
				"org.opencontainers.image.ref.name": tag.TagStr(),
			},
		}},
	}
	topRaw, err := json.Marshal(top)
	if err != nil {
		return err
	}
	if err := w.file("index.json", topRaw); err != nil {
		return err
	}
	dm, err := json.Marshal(dockerManifest)
	if err != nil {
		return err
	}
	if err := w.file("manifest.json", dm); err != nil {
		return err
	}
	return w.tw.Close()
}

// GoBuild cross-compiles a Go package into a static linux binary for arch,
// reproducibly (no cgo, trimmed paths, no VCS stamp), with extra linker
// flags after -s -w.
func GoBuild(pkg, outFile, arch string, ldflags ...string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", strings.Join(append([]string{"-s", "-w"}, ldflags...), " "), "-o", outFile, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for linux/%s: %w", pkg, arch, err)
	}
	return nil
}
