/*
Copyright 2026 The llmkube-compile Authors.

Licensed under the Apache License, Version 2.0.
*/

package v1alpha1_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// constraintKeys are the schema keywords the field table lists.
var constraintKeys = []string{"enum", "minimum", "maximum", "pattern", "minLength", "maxLength", "minItems", "maxItems", "format"}

// TestCRDMatchesFieldTable checks every row of the field table against the
// generated CRD: the path exists with the right type, it is required exactly
// when marked, and it carries exactly the listed constraints.
func TestCRDMatchesFieldTable(t *testing.T) {
	root := openAPISchema(t, loadCRD(t, filepath.Join(repoRoot(t), crdFile)))

	for _, row := range loadFieldTable(t) {
		t.Run(row.path, func(t *testing.T) {
			node, parent := lookup(root, row.path)
			if node == nil {
				t.Fatalf("field table line %d: %s not in the CRD schema", row.line, row.path)
			}
			checkType(t, row, node)

			leaf := row.path[strings.LastIndex(row.path, ".")+1:]
			required := slices.Contains(toStrings(parent["required"]), leaf)
			if required != row.required {
				t.Errorf("required = %v, field table says %v", required, row.required)
			}

			if row.core() {
				return
			}
			for _, key := range constraintKeys {
				want, listed := row.constraints[key]
				got, present := node[key]
				switch {
				case listed && !present:
					t.Errorf("%s: missing, want %s", key, want)
				case !listed && present:
					t.Errorf("%s: unexpected %v", key, got)
				case listed:
					checkConstraint(t, key, want, got)
				}
			}
		})
	}
}

func checkType(t *testing.T, row fieldRow, node schema) {
	t.Helper()
	typ, _, _ := strings.Cut(row.typ, " ") // "object (corev1.Affinity)" -> "object"
	if item, isArray := strings.CutPrefix(typ, "[]"); isArray {
		if node["type"] != "array" {
			t.Fatalf("type = %v, want array", node["type"])
		}
		if got := dig(node, "items", "type"); got != item {
			t.Errorf("items type = %v, want %s", got, item)
		}
		return
	}
	if node["type"] != typ {
		t.Errorf("type = %v, want %s", node["type"], typ)
	}
}

func checkConstraint(t *testing.T, key, want string, got any) {
	t.Helper()
	switch key {
	case "enum":
		wantVals := strings.Split(want, ", ")
		if diff := cmp.Diff(wantVals, toStrings(got)); diff != "" {
			t.Errorf("enum (-table +crd):\n%s", diff)
		}
	case "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems":
		w, err := strconv.ParseFloat(want, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", key, want, err)
		}
		if g, ok := got.(float64); !ok || g != w {
			t.Errorf("%s = %v, want %s", key, got, want)
		}
	default: // pattern, format
		if got != want {
			t.Errorf("%s = %v, want %s", key, got, want)
		}
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// TestCRDHasNoExtraFields walks the CRD and requires every property to be a
// row of the field table; core Kubernetes types are not descended into.
func TestCRDHasNoExtraFields(t *testing.T) {
	root := openAPISchema(t, loadCRD(t, filepath.Join(repoRoot(t), crdFile)))
	rows := map[string]fieldRow{}
	for _, r := range loadFieldTable(t) {
		rows[r.path] = r
	}

	var walk func(node schema, prefix string)
	walk = func(node schema, prefix string) {
		props, _ := node["properties"].(schema)
		for name, child := range props {
			path := prefix + name
			row, ok := rows[path]
			if !ok {
				t.Errorf("CRD field %s is not in the field table", path)
				continue
			}
			if row.core() || path == "metadata" {
				continue
			}
			c := child.(schema)
			if c["type"] == "array" {
				if items, ok := c["items"].(schema); ok {
					walk(items, path+"[].")
				}
				continue
			}
			walk(c, path+".")
		}
	}
	walk(root, "")
}

// TestCRDHasNoDefaults guards the single place defaults live: the compiler.
// A schema default (upstream's tier: local) would make the API server
// rewrite objects before the compiler sees them. The only defaults allowed
// are the empty-string names k8s.io/api puts on its LocalObjectReference.
func TestCRDHasNoDefaults(t *testing.T) {
	root := openAPISchema(t, loadCRD(t, filepath.Join(repoRoot(t), crdFile)))

	var walk func(node schema, path string)
	walk = func(node schema, path string) {
		props, _ := node["properties"].(schema)
		for name, child := range props {
			c := child.(schema)
			if d, ok := c["default"]; ok {
				coreName := name == "name" && d == "" && node["x-kubernetes-map-type"] == "atomic"
				if !coreName {
					t.Errorf("%s%s has default %v; defaults belong to the compiler", path, name, d)
				}
			}
			walk(c, path+name+".")
		}
		if items, ok := node["items"].(schema); ok {
			walk(items, strings.TrimSuffix(path, ".")+"[].")
		}
	}
	walk(root, "")
}

// TestConfigCRDHoldsOnlyModelRouter checks config/crd: one CRD, the
// ModelRouter's (the read-only views must not become CRDs), with its
// resource settings, beside the hand-written kustomization.
// kustomization is config/crd's hand-written kustomize file, not generated.
const kustomization = "kustomization.yaml"

func TestConfigCRDHoldsOnlyModelRouter(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "config", "crd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != kustomization && e.Name() != embedFile {
			names = append(names, e.Name())
		}
	}
	if diff := cmp.Diff([]string{filepath.Base(crdFile)}, names); diff != "" {
		t.Errorf("config/crd files (-want +got):\n%s", diff)
	}

	crd := loadCRD(t, filepath.Join(repoRoot(t), crdFile))
	spec := crd["spec"].(map[string]any)
	if spec["group"] != v1.GroupVersion.Group || spec["scope"] != "Namespaced" {
		t.Errorf("group/scope = %v/%v", spec["group"], spec["scope"])
	}
	wantNames := map[string]any{
		"kind": "ModelRouter", "listKind": "ModelRouterList", "plural": "modelrouters",
		"singular": "modelrouter", "shortNames": []any{"mr"},
	}
	if diff := cmp.Diff(wantNames, spec["names"]); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	version := spec["versions"].([]any)[0].(map[string]any)
	if version["name"] != v1.GroupVersion.Version || version["served"] != true || version["storage"] != true {
		t.Errorf("version = %v served=%v storage=%v", version["name"], version["served"], version["storage"])
	}
	if diff := cmp.Diff(map[string]any{"status": map[string]any{}}, version["subresources"]); diff != "" {
		t.Errorf("subresources (-want +got):\n%s", diff)
	}
	wantColumns := []any{
		map[string]any{"name": "DataPlane", "type": "string", "jsonPath": ".spec.dataPlane"},
		map[string]any{"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
		map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
	}
	if diff := cmp.Diff(wantColumns, version["additionalPrinterColumns"]); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
}

// TestEnumConstants ties the exported constants to the field table's enums.
func TestEnumConstants(t *testing.T) {
	constants := map[string][]string{
		"spec.dataPlane":                      strs(v1.DataPlaneProxy, v1.DataPlaneGateway, v1.DataPlaneAgentGateway),
		"spec.defaultRouteStrategy":           strs(v1.DefaultRouteStatic, v1.DefaultRouteBackendNameMatch),
		"spec.agentGatewayRef.routing":        strs(v1.RoutingInferencePool, v1.RoutingModel),
		"spec.backends[].tier":                strs(v1.TierLocal, v1.TierCloud),
		"spec.backends[].resolution":          strs(v1.ResolutionService, v1.ResolutionEndpoint),
		"spec.backends[].balancing.mode":      strs(v1.BalancingRoundRobin, v1.BalancingLoadAware),
		"spec.backends[].external.provider":   strs(v1.ProviderAnthropic, v1.ProviderOpenAI, v1.ProviderBedrock, v1.ProviderVertexAI, v1.ProviderLiteLLM),
		"spec.endpoint.type":                  strs(v1.EndpointTypeClusterIP, v1.EndpointTypeNodePort, v1.EndpointTypeLoadBalancer),
		"spec.endpoint.externalTrafficPolicy": strs(v1.ExternalTrafficPolicyCluster, v1.ExternalTrafficPolicyLocal),
		"spec.policy.auditLog.sink":           strs(v1.SinkStdout, v1.SinkFile, v1.SinkOTLP),
		"spec.policy.budgets[].scope":         strs(v1.ScopeRouter, v1.ScopeRule, v1.ScopeTeam),
		"spec.policy.rateLimits[].scope":      strs(v1.RateLimitScopeTeam, v1.RateLimitScopeKey),
		"spec.policy.classification.mode":     strs(v1.ClassificationHeaderOnly, v1.ClassificationDetector, v1.ClassificationHybrid),
		"spec.rules[].match.taskComplexity":   strs(v1.TaskComplexitySimple, v1.TaskComplexityModerate, v1.TaskComplexityComplex),
		"spec.rules[].route.poolActivation":   strs(v1.PoolActivationWait, v1.PoolActivationIfIdle),
		"spec.rules[].route.strategy":         strs(v1.StrategyPrimaryFallback, v1.StrategyWeighted, v1.StrategyShadow),
		"status.phase":                        strs(v1.PhasePending, v1.PhaseProvisioning, v1.PhaseReady, v1.PhaseDegraded, v1.PhaseFailed),
		"status.conditions[].status":          {"True", "False", "Unknown"}, // metav1.ConditionStatus
	}
	seen := map[string]bool{}
	for _, row := range loadFieldTable(t) {
		enum, ok := row.constraints["enum"]
		if !ok {
			continue
		}
		seen[row.path] = true
		got, ok := constants[row.path]
		if !ok {
			t.Errorf("%s: enum %q has no exported constants", row.path, enum)
			continue
		}
		if diff := cmp.Diff(strings.Split(enum, ", "), got); diff != "" {
			t.Errorf("%s constants (-table +go):\n%s", row.path, diff)
		}
	}
	for path := range constants {
		if !seen[path] {
			t.Errorf("%s: constants listed for a field without an enum", path)
		}
	}

	conditions := strs(v1.ConditionValidated, v1.ConditionBackendsReady, v1.ConditionAvailable,
		v1.ConditionDegraded, v1.ConditionGatewayReady, v1.ConditionAgentGatewayReady)
	sort.Strings(conditions)
	want := []string{"AgentGatewayReady", "Available", "BackendsReady", "Degraded", "GatewayReady", "Validated"}
	if diff := cmp.Diff(want, conditions); diff != "" {
		t.Errorf("condition types (-want +got):\n%s", diff)
	}
}

func strs[T ~string](vals ...T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}
