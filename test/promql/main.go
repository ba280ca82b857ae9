// Command promql parses PromQL expressions with the Prometheus parser and
// names the metrics each one selects. It is its own module so the main
// module does not take on github.com/prometheus/prometheus and its
// dependencies for one test (test/e2e's chart alerts and dashboard test runs
// it with `go run`, GOWORK=off).
//
// With -rules, stdin is instead a Prometheus rule file (groups:) and it is
// checked as Prometheus loads one (rulefmt: fields, durations, label names,
// each expression, the annotation and label templates); each problem is a
// line on stdout and the exit status is 1.
//
// Input (stdin): a JSON array of expressions. Output (stdout): a JSON array
// of {"expr", "error", "metrics", "labels"} in the same order (labels: every
// label matcher, with its metric); exit 0 even when an expression does not
// parse (the caller reports which).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

type result struct {
	Expr    string    `json:"expr"`
	Error   string    `json:"error,omitempty"`
	Metrics []string  `json:"metrics"`
	Labels  []matcher `json:"labels"`
}

// matcher is one label matcher of a selector other than the name's.
type matcher struct {
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Op     string `json:"op"`
	Value  string `json:"value"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-rules" {
		checkRules()
		return
	}
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		fmt.Fprintln(os.Stderr, "promql: reading the expressions:", err)
		os.Exit(2)
	}
	out := make([]result, 0, len(exprs))
	for _, e := range exprs {
		out = append(out, check(e))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "promql:", err)
		os.Exit(2)
	}
}

func check(expr string) result {
	r := result{Expr: expr, Metrics: []string{}, Labels: []matcher{}}
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		if name == "" {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
		}
		if name == "" {
			r.Error = "selector " + vs.String() + " names no metric"
			return nil
		}
		if !slices.Contains(r.Metrics, name) {
			r.Metrics = append(r.Metrics, name)
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != labels.MetricName {
				r.Labels = append(r.Labels, matcher{Metric: name, Label: m.Name, Op: m.Type.String(), Value: m.Value})
			}
		}
		return nil
	})
	return r
}

func checkRules() {
	content, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "promql: reading the rules:", err)
		os.Exit(2)
	}
	_, errs := rulefmt.Parse(content, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	for _, e := range errs {
		fmt.Println(e)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
}
