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
	"github.com/llmkube/llmkube-compile/internal/metricnames"
	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/engine"
	"github.com/llmkube/llmkube-compile/test/reasonscan"
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
	sm := applyByKind(ctx, t, e, objectsOf(t, helmTemplate(t, ns, append(on, "monitoring.serviceMonitor.enabled=true")...)), "ServiceMonitor", "Service", "PrometheusRule", "ConfigMap")
	if n := len(sm["ServiceMonitor"]); n != 2 {
		t.Errorf("%d ServiceMonitors, want the controller's and the router-proxies'", n)
	}
	pm := applyByKind(ctx, t, e, objectsOf(t, helmTemplate(t, ns, "monitoring.podMonitor.enabled=true", "monitoring.routerNamespaces={team-a,team-b}")), "PodMonitor")
	if len(pm["ServiceMonitor"]) > 0 || len(pm["PrometheusRule"]) > 0 {
		t.Errorf("objects rendered that were not asked for: %v", pm)
	}
	for _, o := range append(sm["ServiceMonitor"], sm["PrometheusRule"]...) {
		if o.GetLabels()["release"] != "prometheus" {
			t.Errorf("%s lacks monitoring.labels", testenv.Describe(o))
		}
	}

	// The expressions: the alerts', the dashboard panels' and its variables'.
	exprs, alerts := ruleExprs(t, sm["PrometheusRule"][0])
	dashExprs, panelExprs := dashboardExprs(t, sm["ConfigMap"])
	exprs = append(exprs, dashExprs...)
	if len(alerts) < 6 || panelExprs < 10 {
		t.Fatalf("%d alerts and %d panel queries: the rule or the dashboard is missing", len(alerts), panelExprs)
	}
	checkExprs(t, exprs, exportedSeries(t))

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

// applyByKind applies the rendered objects but the CRDs strictly and
// returns them by kind; each of kinds must be among them.
func applyByKind(ctx context.Context, t *testing.T, e *testenv.Env, objs []*unstructured.Unstructured, kinds ...string) map[string][]*unstructured.Unstructured {
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

// ruleExprs are the PrometheusRule's alerts and their expressions, after
// checking its groups are a rule file Prometheus loads (rulefmt:
// durations, labels, expressions, the annotation templates).
func ruleExprs(t *testing.T, rule *unstructured.Unstructured) (exprs, alerts []string) {
	t.Helper()
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			rm := r.(map[string]any)
			exprs = append(exprs, rm["expr"].(string))
			alerts = append(alerts, rm["alert"].(string))
		}
	}
	ruleFile, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	if problems := checkRuleFile(t, ruleFile); problems != "" {
		t.Errorf("the PrometheusRule's groups are not a rule file Prometheus loads:\n%s", problems)
	}
	return exprs, alerts
}

// dashboardExprs are the Grafana dashboard's expressions (in its
// ConfigMap, labelled for Grafana's sidecar): its panels' queries, as
// PromQL, and its query variables' selectors; panels counts the panels'.
func dashboardExprs(t *testing.T, configMaps []*unstructured.Unstructured) (exprs []string, panels int) {
	t.Helper()
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
	for _, o := range configMaps {
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
	for _, p := range dashboard.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, grafanaToPromQL(tg.Expr))
			panels++
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
	return exprs, panels
}

// exportedSeries are the metric families the router-proxy and the
// controller (controller-runtime's registry) export.
func exportedSeries(t *testing.T) map[string]bool {
	t.Helper()
	exported := map[string]bool{}
	for _, n := range routerproxy.MetricNames() {
		exported[n] = true
	}
	reg, ok := ctrlmetrics.Registry.(prometheus.Collector)
	if !ok {
		t.Fatalf("controller-runtime's metrics registry is a %T, not a collector", ctrlmetrics.Registry)
	}
	for _, n := range metricnames.Of(reg) {
		exported[n] = true
	}
	return exported
}

// checkExprs holds every expression to the code: it parses, names series
// the code exports, and filters labels on values the code writes.
func checkExprs(t *testing.T, exprs []string, exported map[string]bool) {
	t.Helper()
	controllerName := regexp.MustCompile(`Named\("([^"]+)"\)`).FindSubmatch(readRepoFile(t, "controller", "setup.go"))
	if controllerName == nil {
		t.Fatal("controller/setup.go names no controller")
	}
	holds := stringConsts(t, "Hold", "routerproxy", "activation")
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
			checkLabelValues(t, r.Expr, m, values, string(controllerName[1]))
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
}

// checkLabelValues: a label expr filters on holds values the code writes
// (values, by metric and label; the controller's name for
// controller-runtime's series). A dashboard variable, or a label the
// scrape target gives, is not checked.
func checkLabelValues(t *testing.T, expr string, m promQLLabel, values map[[2]string]map[string]bool, controllerName string) {
	t.Helper()
	known := values[[2]string{m.Metric, m.Label}]
	switch {
	case strings.HasPrefix(m.Value, "$") || m.Label == "namespace" || m.Label == "router":
		return
	case (m.Label == "controller" || m.Label == "name") && (strings.HasPrefix(m.Metric, "controller_runtime_") || strings.HasPrefix(m.Metric, "workqueue_")):
		known = map[string]bool{controllerName: true}
	case known == nil:
		t.Errorf("%s: no known values for label %s of %s (add them to the test from the code that writes them)", expr, m.Label, m.Metric)
		return
	}
	for _, v := range strings.Split(m.Value, "|") {
		if !known[v] {
			t.Errorf("%s: %s{%s%s%q}: %q is not a value the code writes", expr, m.Metric, m.Label, m.Op, m.Value, v)
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
	Expr    string        `json:"expr"`
	Error   string        `json:"error"`
	Metrics []string      `json:"metrics"`
	Labels  []promQLLabel `json:"labels"`
}

// promQLLabel is a label matcher of an expression: metric{label op value}.
type promQLLabel struct {
	Metric, Label, Op, Value string
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
