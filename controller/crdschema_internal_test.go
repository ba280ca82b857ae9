package controller

import (
	"encoding/json"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCompatibilityDocNamesEveryRelease keeps the releases the CRDsOutdated
// message names and docs/compatibility.md's table one fact: each message's
// release appears in the table.
func TestCompatibilityDocNamesEveryRelease(t *testing.T) {
	doc, err := os.ReadFile("../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`(v[0-9]+\.[0-9]+\.[0-9]+|main at [0-9a-f]{7,})`)
	for _, u := range upstreamRelease {
		for _, v := range version.FindAllString(u.release, -1) {
			v = strings.TrimPrefix(v, "main at ")
			if !strings.Contains(string(doc), v) {
				t.Errorf("%s (%s %s) is not in docs/compatibility.md", v, u.group, u.path)
			}
		}
	}
}

// TestCompatibilityEvidenceExists: every test docs/compatibility.md names
// as evidence exists.
func TestCompatibilityEvidenceExists(t *testing.T) {
	doc, err := os.ReadFile("../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test[A-Za-z0-9]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(named) < 5 {
		t.Fatalf("only %d tests named", len(named))
	}
	var sources strings.Builder
	err = filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sources.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range named {
		if !strings.Contains(sources.String(), "func "+m[1]+"(") {
			t.Errorf("docs/compatibility.md names %s, which no test defines", m[1])
		}
	}
}

// TestCheckSchemaReportsFieldsAndEnums: an undeclared field (nested, in a
// list) and a string outside an enum are each reported with their path;
// a map's values, a preserved-unknown subtree and declared fields are not.
func TestCheckSchemaReportsFieldsAndEnums(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{
		"list":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}},
		"mode":{"type":"string","enum":["A","B"]},
		"labels":{"type":"object","additionalProperties":{"type":"string"}},
		"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`)
	var found []string
	checkSchema(map[string]any{
		"list":   []any{map[string]any{"a": "x", "b": "y"}},
		"mode":   "C",
		"labels": map[string]any{"any": "thing"},
		"free":   map[string]any{"whatever": 1},
	}, s, "spec", &found)
	want := []string{`spec.list[].b: not declared`, `spec.mode: value "C" not in the installed enum ["A", "B"]`}
	if strings.Join(sorted(found), "\n") != strings.Join(want, "\n") {
		t.Errorf("found %q, want %q", found, want)
	}
}

func mustSchema(t *testing.T, js string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func sorted(l []string) []string {
	out := append([]string(nil), l...)
	sort.Strings(out)
	return out
}
