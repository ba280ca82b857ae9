package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The fetched sources this generator reads (see testdata/heldout.SOURCES.md
// for their repositories, commits and licenses). Each path is relative to
// its checkout under -src.
const (
	presidioResearch = "presidio-research"
	presidio         = "presidio"
	stdnum           = "python-stdnum"

	templatesFile = "presidio_evaluator/data_generator/raw_data/templates.txt"
	namesFile     = "presidio_evaluator/data_generator/raw_data/FakeNameGenerator.com_3000.csv"
	companiesFile = "presidio_evaluator/data_generator/raw_data/companies_and_organizations.csv"
	presidioTests = "presidio-analyzer/tests"
)

// person is one row of presidio-research's FakeNameGenerator table: made-up
// people of many name sets.
type person struct {
	title, first, last, female, street, city, zip, country, job, company string
}

func readNames(src string) ([]person, error) {
	f, err := os.Open(filepath.Join(src, presidioResearch, namesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", namesFile, err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimPrefix(h, "\ufeff")] = i
	}
	for _, c := range []string{"Title", "GivenName", "Surname", "Gender", "StreetAddress", "City", "ZipCode", "CountryFull", "Occupation", "Company"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: no column %s", namesFile, c)
		}
	}
	var out []person
	for _, r := range rows[1:] {
		p := person{r[col["Title"]], r[col["GivenName"]], r[col["Surname"]], r[col["Gender"]], r[col["StreetAddress"]],
			r[col["City"]], r[col["ZipCode"]], r[col["CountryFull"]], r[col["Occupation"]], r[col["Company"]]}
		if p.first == "" || p.last == "" || strings.ContainsAny(p.first+p.last, " .") {
			continue
		}
		p.female = map[bool]string{true: "F", false: "M"}[r[col["Gender"]] == "female"]
		out = append(out, p)
	}
	return out, nil
}

func readCompanies(src string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(src, presidioResearch, companiesFile))
	if err != nil {
		return nil, err
	}
	var out []string
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), `"`))
		if i == 0 || l == "" || strings.ContainsAny(l, "@0123456789") {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

func readTemplates(src string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(src, presidioResearch, templatesFile))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(strings.ReplaceAll(l, "\ufffd", "-"))
		if l != "" {
			out = append(out, strings.ReplaceAll(l, `\n`, "\n"))
		}
	}
	return out, nil
}

// presidioCase is one row of a Presidio recognizer test's parametrize
// table: a text and how many entities the recognizer must find in it.
type presidioCase struct {
	text string
	n    int
}

var caseRow = regexp.MustCompile(`^\s*\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*\\?\s*(\d+)`)

func readPresidioCases(src, file string) ([]presidioCase, error) {
	b, err := os.ReadFile(filepath.Join(src, presidio, presidioTests, file))
	if err != nil {
		return nil, err
	}
	var out []presidioCase
	for _, l := range strings.Split(string(b), "\n") {
		m := caseRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text, err := strconv.Unquote(`"` + m[1] + `"`)
		if err != nil {
			text = m[1]
		}
		n, _ := strconv.Atoi(m[2])
		out = append(out, presidioCase{text, n})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no test cases found", file)
	}
	return out, nil
}

// stdnumVectors reads the numbers python-stdnum's doctests validate: the
// `numbers = ”'...”'` lists of valid numbers found online, and each
// `validate('x')` whose next line is not a traceback (valid) or is one
// (invalid).
var validateCall = regexp.MustCompile(`^>>> (?:[a-z_]+\.)?(validate|is_valid)\('([^']+)'\)`)

func readStdnum(src string, files ...string) (valid, invalid []string, err error) {
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(src, stdnum, file))
		if err != nil {
			return nil, nil, err
		}
		lines := strings.Split(string(b), "\n")
		inList := false
		for i, l := range lines {
			switch {
			case strings.HasPrefix(l, ">>> numbers = '''"):
				inList = true
				continue
			case inList && strings.HasPrefix(l, "... '''"):
				inList = false
				continue
			case inList:
				if v := strings.TrimSpace(strings.TrimPrefix(l, "...")); v != "" {
					valid = append(valid, v)
				}
				continue
			}
			m := validateCall.FindStringSubmatch(l)
			if m == nil || i+1 >= len(lines) {
				continue
			}
			next := strings.TrimSpace(lines[i+1])
			switch {
			case strings.HasPrefix(next, "Traceback") || next == "False":
				invalid = append(invalid, m[2])
			case m[1] == "validate" || next == "True":
				valid = append(valid, m[2])
			}
		}
	}
	return valid, invalid, nil
}
