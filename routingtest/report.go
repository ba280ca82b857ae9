package routingtest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Counts are the run's totals.
type Counts struct{ Passed, Failed, Skipped int }

// Counts totals the case runs.
func (r *Report) Counts() Counts {
	var c Counts
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			c.Skipped++
		case x.Passed:
			c.Passed++
		default:
			c.Failed++
		}
	}
	return c
}

// NothingRan reports whether no case ran on any plane (every run skipped):
// a run that tested nothing does not pass.
func (r *Report) NothingRan() bool {
	c := r.Counts()
	return c.Passed == 0 && c.Failed == 0
}

// Summary is the closing line.
func (r *Report) Summary() string {
	c := r.Counts()
	verdict := "PASS"
	if c.Failed > 0 || r.NothingRan() {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped (case runs across data planes)", verdict, c.Passed, c.Failed, c.Skipped)
}

// WriteText prints every failure with its trace, skips, disagreements and,
// with coverage, what no case exercised.
func (r *Report) WriteText(w io.Writer, verbose, withCoverage bool) {
	for _, x := range r.Results {
		name := fmt.Sprintf("%s/%s [%s]", x.Test, x.Case, x.Plane)
		switch {
		case x.Skipped != "":
			if verbose {
				fmt.Fprintf(w, "SKIP %s: %s\n", name, x.Skipped)
			}
		case x.Passed:
			if verbose {
				what := summary(x.Got, Expect{})
				if x.Expect.Refused != "" {
					what = x.Got.Skipped
				}
				fmt.Fprintf(w, "ok   %s: %s\n", name, what)
			}
		default:
			fmt.Fprintf(w, "FAIL %s (%s)\n", name, x.Where())
			for _, f := range x.Failures {
				fmt.Fprintf(w, "     - %s\n", f)
			}
			fmt.Fprintf(w, "     what the data plane did:\n")
			for _, t := range x.Got.Trace {
				fmt.Fprintf(w, "       %s\n", t)
			}
		}
	}
	for _, d := range r.Disagreements {
		var planes []string
		for p := range d.ByPlane {
			planes = append(planes, p)
		}
		sort.Strings(planes)
		var parts []string
		for _, p := range planes {
			parts = append(parts, p+": "+d.ByPlane[p])
		}
		fmt.Fprintf(w, "DIFF %s/%s: the data planes disagree: %s\n", d.Test, d.Case, strings.Join(parts, "; "))
	}
	if withCoverage {
		for _, c := range r.Coverage {
			fmt.Fprintf(w, "coverage %s: %.0f%% (%d/%d)", c.Router, c.Percent(), c.Covered, c.Total)
			var missed []string
			if len(c.MissedRules) > 0 {
				missed = append(missed, "rules "+strings.Join(c.MissedRules, ", "))
			}
			if len(c.MissedBackends) > 0 {
				missed = append(missed, "backends "+strings.Join(c.MissedBackends, ", "))
			}
			if len(c.MissedBudgets) > 0 {
				missed = append(missed, "budgets "+strings.Join(c.MissedBudgets, ", "))
			}
			if len(c.MissedTeams) > 0 {
				missed = append(missed, "teams "+strings.Join(c.MissedTeams, ", "))
			}
			if len(c.MissedAllowlists) > 0 {
				missed = append(missed, "allowlist entries "+strings.Join(c.MissedAllowlists, "; "))
			}
			if len(missed) > 0 {
				fmt.Fprintf(w, "; never exercised: %s", strings.Join(missed, "; "))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, r.Summary())
}

// WriteJSON writes the whole report.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	c := r.Counts()
	return enc.Encode(map[string]any{
		"apiVersion": APIVersion, "kind": "RoutingTestReport",
		"passed": c.Passed, "failed": c.Failed, "skipped": c.Skipped,
		"results": r.Results, "disagreements": r.Disagreements, "coverage": r.Coverage,
		"failUnder": r.FailUnder, "coverageFailures": r.CoverageFailures(),
	})
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes JUnit XML: a suite per test and data plane, a test
// case per case; withCoverage (or a FailUnder) adds the coverage suite.
func (r *Report) WriteJUnit(w io.Writer, withCoverage bool) error {
	out := junitSuites{}
	idx := map[string]int{}
	for _, x := range r.Results {
		suite := x.Test + " [" + x.Plane + "]"
		i, ok := idx[suite]
		if !ok {
			i = len(out.Suites)
			idx[suite] = i
			out.Suites = append(out.Suites, junitSuite{Name: suite})
		}
		s := &out.Suites[i]
		jc := junitCase{Name: x.Case, Classname: x.Test + "." + x.Plane, File: x.File, Line: x.Line}
		s.Tests++
		out.Tests++
		switch {
		case x.Skipped != "":
			jc.Skipped = &junitSkipped{Message: x.Skipped}
			s.Skipped++
			out.Skipped++
		case !x.Passed:
			jc.Failure = &junitFailure{Message: strings.Join(x.Failures, "; "), Text: strings.Join(x.Got.Trace, "\n")}
			s.Failures++
			out.Failures++
		}
		s.Cases = append(s.Cases, jc)
	}
	// Coverage: one suite, a property per figure and router, and with
	// --fail-under a test case per router that fails below it.
	if len(r.Coverage) > 0 && (withCoverage || r.FailUnder > 0) {
		cs := junitSuite{Name: "coverage"}
		for _, c := range r.Coverage {
			p := "coverage." + c.Router + "."
			cs.Properties = append(cs.Properties,
				junitProperty{p + "percent", strconv.FormatFloat(c.Percent(), 'f', 1, 64)},
				junitProperty{p + "covered", strconv.Itoa(c.Covered)},
				junitProperty{p + "total", strconv.Itoa(c.Total)},
				junitProperty{p + "missedRules", strings.Join(c.MissedRules, ",")},
				junitProperty{p + "missedBackends", strings.Join(c.MissedBackends, ",")},
				junitProperty{p + "missedBudgets", strings.Join(c.MissedBudgets, ",")},
				junitProperty{p + "missedTeams", strings.Join(c.MissedTeams, ",")},
				junitProperty{p + "missedAllowlists", strings.Join(c.MissedAllowlists, ";")})
			if r.FailUnder > 0 {
				jc := junitCase{Name: "coverage of " + c.Router, Classname: "coverage"}
				if c.Percent() < r.FailUnder {
					jc.Failure = &junitFailure{Message: fmt.Sprintf("coverage %.0f%% is below --fail-under %.0f%%", c.Percent(), r.FailUnder)}
					cs.Failures++
					out.Failures++
				}
				cs.Cases = append(cs.Cases, jc)
				cs.Tests++
				out.Tests++
			}
		}
		out.Suites = append(out.Suites, cs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Where is the case's file:line (the file alone when the line is unknown).
func (x CaseResult) Where() string {
	if x.Line > 0 {
		return fmt.Sprintf("%s:%d", x.File, x.Line)
	}
	return x.File
}
