package routingtest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Counts are the run's totals.
type Counts struct{ Passed, Failed, Skipped int }

// NoneRan reports whether no case ran on any plane: never a pass.
func (r *Report) NoneRan() bool {
	c := r.Counts()
	return c.Passed+c.Failed == 0
}

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

// Summary is the closing line.
func (r *Report) Summary() string {
	c := r.Counts()
	verdict := "PASS"
	if c.Failed > 0 {
		verdict = "FAIL"
	}
	if c.Passed+c.Failed == 0 {
		return fmt.Sprintf("FAIL: no case ran on any data plane (%d skipped): nothing was tested", c.Skipped)
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
				what := summary(x.Got)
				if x.Expect.Refused != "" {
					what = x.Got.Skipped
				}
				fmt.Fprintf(w, "ok   %s: %s\n", name, what)
			}
		default:
			fmt.Fprintf(w, "FAIL %s (%s)\n", name, x.File)
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
			if m := c.missed(); m != "" {
				fmt.Fprintf(w, "; never exercised: %s", m)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, r.Summary())
}

// Below are the tested routers whose coverage is below FailUnder.
func (r *Report) Below() []Coverage {
	var out []Coverage
	for _, c := range r.Coverage {
		if r.FailUnder > 0 && c.Percent() < r.FailUnder {
			out = append(out, c)
		}
	}
	return out
}

// BelowMessage says that c is below FailUnder.
func (r *Report) BelowMessage(c Coverage) string {
	return fmt.Sprintf("coverage of %s is %.0f%%, below --fail-under %.0f%%", c.Router, c.Percent(), r.FailUnder)
}

// missed lists what of c no case exercised.
func (c Coverage) missed() string {
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
	return strings.Join(missed, "; ")
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
		"failUnder": r.FailUnder, "belowFailUnder": belowNames(r.Below()),
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
// case per case.
func (r *Report) WriteJUnit(w io.Writer) error {
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
		jc := junitCase{Name: x.Case, Classname: x.Test + "." + x.Plane}
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
	if r.WithCoverage || r.FailUnder > 0 {
		// One suite "coverage": a property per figure of each tested
		// router, and a test case per router that fails below --fail-under.
		cs := junitSuite{Name: "coverage"}
		below := map[string]bool{}
		for _, c := range r.Below() {
			below[c.Router] = true
		}
		for _, c := range r.Coverage {
			p := "coverage." + c.Router + "."
			cs.Properties = append(cs.Properties,
				junitProperty{p + "percent", fmt.Sprintf("%.1f", c.Percent())},
				junitProperty{p + "covered", fmt.Sprint(c.Covered)},
				junitProperty{p + "total", fmt.Sprint(c.Total)},
				junitProperty{p + "neverExercised", c.missed()})
			jc := junitCase{Name: "coverage of " + c.Router, Classname: "coverage"}
			cs.Tests++
			out.Tests++
			if below[c.Router] {
				jc.Failure = &junitFailure{Message: r.BelowMessage(c), Text: "never exercised: " + c.missed()}
				cs.Failures++
				out.Failures++
			}
			cs.Cases = append(cs.Cases, jc)
		}
		if r.FailUnder > 0 {
			cs.Properties = append(cs.Properties, junitProperty{"coverage.failUnder", fmt.Sprintf("%.1f", r.FailUnder)})
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

func belowNames(cs []Coverage) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Router)
	}
	return out
}
