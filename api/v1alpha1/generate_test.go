/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedFilesUpToDate runs `make generate-api` (controller-gen v0.23.0,
// through the Go module proxy on a cold cache) in a scratch copy of the
// repository's api/, hack/, Makefile and go.mod/go.sum, with the generated
// files removed, and compares the output with the checked-in deepcopy files
// and config/crd.
func TestGeneratedFilesUpToDate(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()

	for _, f := range []string{"go.mod", "go.sum", "Makefile", "hack/boilerplate.go.txt"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(tmp, f))
	}
	err := filepath.WalkDir(filepath.Join(root, "api"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, "_test.go") || isGenerated(path) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		copyFile(t, path, filepath.Join(tmp, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("make", "--no-print-directory", "generate-api")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make generate: %v\n%s", err, out)
	}

	want, got := generatedFiles(t, root), generatedFiles(t, tmp)
	if diff := cmp.Diff(keys(want), keys(got)); diff != "" {
		t.Errorf("generated file set differs; run make generate (-checked-in +generated):\n%s", diff)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			continue
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s is out of date; run make generate (-checked-in +generated):\n%s", name, diff)
		}
	}
}

// isGenerated reports whether path is controller-gen output.
// embedFile is the Go file that embeds the generated CRD (package config/crd).
const embedFile = "crd.go"

func isGenerated(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "zz_generated.")
}

// generatedFiles reads the controller-gen output under dir: the deepcopy files
// under api/ and everything in config/crd, keyed by path relative to dir.
func generatedFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	add := func(path string) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(raw)
	}
	err := filepath.WalkDir(filepath.Join(dir, "api"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isGenerated(path) {
			add(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := os.ReadDir(filepath.Join(dir, "config", "crd"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range crds {
		// crd.go embeds the CRD for the compiler; it is ours, not controller-gen's.
		if e.Name() != kustomization && e.Name() != embedFile {
			add(filepath.Join(dir, "config", "crd", e.Name()))
		}
	}
	return files
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
