package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	// The controller's packages register controller-runtime's metrics (the
	// reconcile, work queue and client series its /metrics serves).
	_ "github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/engine"
	"github.com/llmkube/llmkube-compile/internal/metricnames"
	"github.com/llmkube/llmkube-compile/internal/reasonscan"
	"github.com/llmkube/llmkube-compile/proxy"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// TestHelmChartMonitoring renders the chart's monitoring objects with the
// helm CLI, applies them strictly to a real API server that has the
// Prometheus Operator CRDs, and checks every PromQL expression of the
// PrometheusRule and the Grafana dashboard: it parses (the Prometheus
// parser, test/promql) and names only series the router-proxy or the
// controller registers, and every alert has its section in
// docs/observability.md.
func TestHelmChartMonitoring(t *testing.T) {
	e, _ := newEnv(t)
	ctx := context.Background()
	const ns = "monitoring"
	if err := e.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	on := []string{"monitoring.prometheusRule.enabled=true", "monitoring.dashboard.enabled=true", "monitoring.labels.release=prometheus"}
	apply := func(objs []*unstructured.Unstructured, kinds ...string) map[string][]*unstructured.Unstructured {
		t.Helper()
		got := map[string][]*unstructured.Unstructured{}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				continue
			}
			got[o.GetKind()] = append(got[o.GetKind()], o)
			if err := e.ApplyStrict(ctx, o); err != nil {
				t.Fatalf("applying %s: %v", testenv.Describe(o), err)
			}
		}
		for _, k := range kinds {
			if len(got[k]) == 0 {
				t.Errorf("the chart renders no %s", k)
			}
		}
		return got
	}
	sm := apply(objectsOf(t, helmTemplate(t, ns, append(on, "monitoring.serviceMonitor.enabled=true")...)), "ServiceMonitor", "Service", "PrometheusRule", "ConfigMap")
	if n := len(sm["ServiceMonitor"]); n != 2 {
		t.Errorf("%d ServiceMonitors, want the controller's and the router-proxies'", n)
	}
	pm := apply(objectsOf(t, helmTemplate(t, ns, "monitoring.podMonitor.enabled=true", "monitoring.routerNamespaces={team-a,team-b}")), "PodMonitor")
	if len(pm["ServiceMonitor"]) > 0 || len(pm["PrometheusRule"]) > 0 {
		t.Errorf("objects rendered that were not asked for: %v", pm)
	}
	for _, o := range append(sm["ServiceMonitor"], sm["PrometheusRule"]...) {
		if o.GetLabels()["release"] != "prometheus" {
			t.Errorf("%s lacks monitoring.labels", testenv.Describe(o))
		}
	}

	// The expressions: the alerts', the dashboard panels' and its variables'.
	var exprs []string
	var alerts []string
	rule := sm["PrometheusRule"][0]
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			rm := r.(map[string]any)
			exprs = append(exprs, rm["expr"].(string))
			alerts = append(alerts, rm["alert"].(string))
		}
	}
	// The rule group as Prometheus loads it (rulefmt: durations, labels,
	// expressions, the annotation templates).
	ruleFile, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	if problems := checkRuleFile(t, ruleFile); problems != "" {
		t.Errorf("the PrometheusRule's groups are not a rule file Prometheus loads:\n%s", problems)
	}

	var dashboard struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	var cm *unstructured.Unstructured
	for _, o := range sm["ConfigMap"] {
		if _, ok, _ := unstructured.NestedString(o.Object, "data", "llmkube.json"); ok {
			cm = o
		}
	}
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap is not labelled for Grafana's sidecar: %v", cm.GetLabels())
	}
	js, _, _ := unstructured.NestedString(cm.Object, "data", "llmkube.json")
	if err := json.Unmarshal([]byte(js), &dashboard); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	panelExprs := 0
	for _, p := range dashboard.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, grafanaToPromQL(tg.Expr))
			panelExprs++
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	for _, v := range dashboard.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)["query"].(string)
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("dashboard variable query %q is not label_values(SELECTOR, LABEL)", q)
			continue
		}
		exprs = append(exprs, m[1])
	}
	if len(alerts) < 6 || panelExprs < 10 {
		t.Fatalf("%d alerts and %d panel queries: the rule or the dashboard is missing", len(alerts), panelExprs)
	}

	exported := map[string]bool{}
	for _, n := range proxy.MetricNames() {
		exported[n] = true
	}
	reg, ok := ctrlmetrics.Registry.(prometheus.Collector)
	if !ok {
		t.Fatalf("controller-runtime's metrics registry is a %T, not a collector", ctrlmetrics.Registry)
	}
	for _, n := range metricnames.Of(reg) {
		exported[n] = true
	}
	// The label values an expression filters on are values the code writes.
	controllerName := regexp.MustCompile(`Named\("([^"]+)"\)`).FindSubmatch(readRepoFile(t, "controller", "setup.go"))
	if controllerName == nil {
		t.Fatal("controller/setup.go names no controller")
	}
	holds := stringConsts(t, "Hold", "proxy", "activation")
	values := map[[2]string]map[string]bool{
		{"llmkube_router_requests_total", "outcome"}:                   stringConsts(t, "Outcome", "proxyapi"),
		{"llmkube_router_pool_holds_abandoned_total", "reason"}:        holds,
		{"llmkube_router_pool_hold_duration_seconds_count", "outcome"}: holds,
		{"llmkube_router_backend_held_seconds", "reason"}:              {engine.HoldRateLimited.String(): true, engine.HoldQuotaExhausted.String(): true},
	}
	for _, r := range parsePromQL(t, exprs) {
		if r.Error != "" {
			t.Errorf("%s: %s", r.Expr, r.Error)
			continue
		}
		for _, m := range r.Labels {
			known := values[[2]string{m.Metric, m.Label}]
			switch {
			case strings.HasPrefix(m.Value, "$") || m.Label == "namespace" || m.Label == "router":
				continue // a dashboard variable, or a label the scrape target gives
			case (m.Label == "controller" || m.Label == "name") && (strings.HasPrefix(m.Metric, "controller_runtime_") || strings.HasPrefix(m.Metric, "workqueue_")):
				known = map[string]bool{string(controllerName[1]): true}
			case known == nil:
				t.Errorf("%s: no known values for label %s of %s (add them to the test from the code that writes them)", r.Expr, m.Label, m.Metric)
				continue
			}
			for _, v := range strings.Split(m.Value, "|") {
				if !known[v] {
					t.Errorf("%s: %s{%s%s%q}: %q is not a value the code writes", r.Expr, m.Metric, m.Label, m.Op, m.Value, v)
				}
			}
		}
		if len(r.Metrics) == 0 {
			t.Errorf("%s names no series", r.Expr)
		}
		for _, m := range r.Metrics {
			if !seriesExported(exported, m) {
				t.Errorf("%s: %s is not a series the router-proxy or the controller exports", r.Expr, m)
			}
		}
	}

	// Every alert's runbook is a section of docs/observability.md.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if !strings.Contains(string(doc), "\n### "+a+"\n") {
			t.Errorf("docs/observability.md has no section \"### %s\" (the alert's runbook_url)", a)
		}
	}
}

// seriesExported: name is a registered family, or a histogram's (or
// summary's) _bucket, _sum or _count series of one.
func seriesExported(families map[string]bool, name string) bool {
	if families[name] {
		return true
	}
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, s); ok && families[base] {
			return true
		}
	}
	return false
}

// grafanaToPromQL replaces Grafana's range variables with a duration, as
// Grafana does before it sends the query ($namespace and the like sit in
// label values, where PromQL takes them as text).
func grafanaToPromQL(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h").Replace(expr)
}

type promQLResult struct {
	Expr    string   `json:"expr"`
	Error   string   `json:"error"`
	Metrics []string `json:"metrics"`
	Labels  []struct {
		Metric, Label, Op, Value string
	} `json:"labels"`
}

func readRepoFile(t *testing.T, path ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stringConsts are the values of the string constants named prefix* in the
// non-test files of a package of this repository.
func stringConsts(t *testing.T, prefix string, dir ...string) map[string]bool {
	t.Helper()
	pkgDir := filepath.Join(append([]string{"..", ".."}, dir...)...)
	consts, err := reasonscan.StringConsts(pkgDir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, v := range consts {
		out[v] = true
	}
	if len(out) == 0 {
		t.Fatalf("no %s* string constants in %s", prefix, pkgDir)
	}
	return out
}

// checkRuleFile runs test/promql -rules on a rule file: what Prometheus
// would refuse in it, "" when nothing.
func checkRuleFile(t *testing.T, content []byte) string {
	t.Helper()
	out, stderr, err := runPromQL(content, "-rules")
	if err != nil && len(out) == 0 {
		t.Fatalf("test/promql -rules: %v\n%s", err, stderr)
	}
	return string(out)
}

// runPromQL runs test/promql (its own module: the Prometheus module stays
// out of the main go.mod) with args, on stdin.
func runPromQL(stdin []byte, args ...string) (out []byte, stderr string, err error) {
	cmd := exec.Command("go", append([]string{"run", "."}, args...)...)
	cmd.Dir = filepath.Join("..", "promql")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdin = bytes.NewReader(stdin)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err = cmd.Output()
	return out, errOut.String(), err
}

// parsePromQL runs test/promql on the expressions.
func parsePromQL(t *testing.T, exprs []string) []promQLResult {
	t.Helper()
	in, _ := json.Marshal(exprs)
	out, stderr, err := runPromQL(in)
	if err != nil {
		t.Fatalf("test/promql: %v\n%s", err, stderr)
	}
	var res []promQLResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("test/promql output: %v\n%s", err, out)
	}
	if len(res) != len(exprs) || !slices.EqualFunc(res, exprs, func(r promQLResult, e string) bool { return r.Expr == e }) {
		t.Fatalf("test/promql answered %d results for %d expressions", len(res), len(exprs))
	}
	return res
}
