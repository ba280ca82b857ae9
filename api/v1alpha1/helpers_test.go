/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const crdFile = "config/crd/inference.llmkube.dev_modelrouters.yaml"

// repoRoot is the directory holding go.mod, found by walking up from the
// test's working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// sharedDir is the read-only reference folder, ../shared from the repo root.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "..", "shared")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("reference folder ../shared not found: %v", err)
	}
	return dir
}

// schema is one node of an openAPIV3Schema, as decoded from YAML.
type schema = map[string]any

// loadCRD decodes a CRD file into a generic map.
func loadCRD(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return crd
}

// openAPISchema returns the openAPIV3Schema of the CRD's only version.
func openAPISchema(t *testing.T, crd map[string]any) schema {
	t.Helper()
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) != 1 {
		t.Fatalf("CRD has %d versions, want 1", len(versions))
	}
	s, ok := dig(versions[0], "schema", "openAPIV3Schema").(schema)
	if !ok {
		t.Fatal("CRD has no openAPIV3Schema")
	}
	return s
}

// dig follows map keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// lookup walks a field-table path ("spec.backends[].name") through a schema.
// It returns the node and its parent object (whose required list names the
// leaf), or nil when the path does not exist.
func lookup(root schema, path string) (node, parent schema) {
	node = root
	for _, seg := range strings.Split(path, ".") {
		name, isArray := strings.CutSuffix(seg, "[]")
		parent = node
		next, ok := dig(node, "properties", name).(schema)
		if !ok {
			return nil, nil
		}
		node = next
		if isArray {
			items, ok := node["items"].(schema)
			if !ok {
				return nil, nil
			}
			node = items
		}
	}
	return node, parent
}

// fieldRow is one row of shared/spec/modelrouter-fields.tsv.
type fieldRow struct {
	path        string
	typ         string
	required    bool
	constraints map[string]string
	line        int // line in the TSV, for messages
}

// core reports whether the row is a core Kubernetes type passed through
// whole (affinity, tolerations, ...), written "object (corev1.X)".
func (r fieldRow) core() bool { return strings.Contains(r.typ, "corev1.") }

var constraintKey = regexp.MustCompile(`(?:^|;)(enum|minimum|maximum|pattern|minLength|maxLength|minItems|maxItems|format)=`)

// parseConstraints splits "format=int32;minimum=1;maximum=65535". A value runs
// up to the next ";key=", so patterns may contain ';'.
func parseConstraints(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if s == "" {
		return out
	}
	idx := constraintKey.FindAllStringSubmatchIndex(s, -1)
	if len(idx) == 0 || idx[0][0] != 0 {
		t.Fatalf("unparseable constraints %q", s)
	}
	for i, m := range idx {
		end := len(s)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		out[s[m[2]:m[3]]] = s[m[1]:end]
	}
	return out
}

// loadFieldTable reads every row of the field table.
func loadFieldTable(t *testing.T) []fieldRow {
	t.Helper()
	path := filepath.Join(sharedDir(t), "spec", "modelrouter-fields.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var rows []fieldRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 4 {
			t.Fatalf("%s:%d: want at least 4 columns, got %d", path, n, len(cols))
		}
		rows = append(rows, fieldRow{
			path:        cols[0],
			typ:         cols[1],
			required:    cols[2] == "required",
			constraints: parseConstraints(t, cols[3]),
			line:        n,
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", path)
	}
	return append(rows, extensionRows...)
}

// extensionRows are the fields this API adds to the reference's, each
// documented as an extension where it is described.
var extensionRows = []fieldRow{
	// docs/mcp.md: the MCP endpoint's URL, the tokens' audience.
	{path: "spec.mcpServer.resourceURL", typ: "string", constraints: map[string]string{}},
	// docs/router-proxy.md#authentication: the audiences a token must name.
	{path: "spec.policy.auth.jwt.audiences", typ: "[]string", constraints: map[string]string{"maxItems": "64"}},
	// docs/targets/gateway.md#hostnames: the hosts a router claims on its
	// Gateway (the same shape as the reference's agentGatewayRef.hostnames).
	{path: "spec.gatewayRef.hostnames", typ: "[]string", constraints: map[string]string{"minItems": "1", "maxItems": "16"}},
	// docs/reliability.md#poddisruptionbudget: the router-proxy's
	// PodDisruptionBudget (the reference names none).
	{path: "spec.proxy.podDisruptionBudget", typ: "object", constraints: map[string]string{}},
	{path: "spec.proxy.podDisruptionBudget.enabled", typ: "boolean", constraints: map[string]string{}},
	{path: "spec.proxy.podDisruptionBudget.maxUnavailable", typ: "integer", constraints: map[string]string{"format": "int32", "minimum": "1"}},
	// docs/rate-limits.md: requests and tokens per minute per team or key.
	{path: "spec.policy.rateLimits", typ: "[]object", constraints: map[string]string{"maxItems": "64"}},
	{path: "spec.policy.rateLimits[].name", typ: "string", required: true, constraints: map[string]string{"pattern": "^[a-z0-9][a-z0-9-]{0,62}$"}},
	{path: "spec.policy.rateLimits[].scope", typ: "string", required: true, constraints: map[string]string{"enum": "team, key"}},
	{path: "spec.policy.rateLimits[].teams", typ: "[]string", constraints: map[string]string{"maxItems": "256"}},
	{path: "spec.policy.rateLimits[].keys", typ: "[]string", constraints: map[string]string{"maxItems": "256"}},
	{path: "spec.policy.rateLimits[].requestsPerMinute", typ: "integer", constraints: map[string]string{"format": "int64", "minimum": "1"}},
	{path: "spec.policy.rateLimits[].inputTokensPerMinute", typ: "integer", constraints: map[string]string{"format": "int64", "minimum": "1"}},
	{path: "spec.policy.rateLimits[].outputTokensPerMinute", typ: "integer", constraints: map[string]string{"format": "int64", "minimum": "1"}},
	// docs/api-keys.md: API keys from Secrets, beside or instead of jwt.
	{path: "spec.policy.auth.apiKeys", typ: "[]object", constraints: map[string]string{"maxItems": "64"}},
	{path: "spec.policy.auth.apiKeys[].secretName", typ: "string", required: true, constraints: map[string]string{"minLength": "1", "maxLength": "253", "pattern": `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`}},
	{path: "spec.policy.auth.apiKeys[].team", typ: "string", required: true, constraints: map[string]string{"minLength": "1"}},
	{path: "spec.policy.auth.apiKeys[].expiresAt", typ: "string", constraints: map[string]string{"format": "date-time"}},
	// docs/upstream-quota.md: how long the router-proxy skips a backend
	// its provider rate limited, or whose quota is spent.
	{path: "spec.proxy.rateLimitHold", typ: "string", constraints: map[string]string{}},
	{path: "spec.proxy.quotaExhaustedHold", typ: "string", constraints: map[string]string{}},
}
