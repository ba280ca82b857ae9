package compiler_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	camelCase = regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`)
	docReason = regexp.MustCompile("`([A-Z][A-Za-z0-9]+)`")
)

// reasonsIn collects the reasons a package's non-test code can emit: its
// Reason constants (const ReasonX = "X"), and the literal reason arguments of
// Errorf/Warnf/ErrorAt/WarnAt, of fileErr, and Reason: fields.
func reasonsIn(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	seen := map[string]bool{}
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && camelCase.MatchString(s) {
				seen[s] = true
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GenDecl:
				if x.Tok == token.CONST {
					for _, spec := range x.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, name := range vs.Names {
							if strings.HasPrefix(name.Name, "Reason") && i < len(vs.Values) {
								add(vs.Values[i])
							}
						}
					}
				}
			case *ast.CallExpr, *ast.KeyValueExpr:
				if r := reasonArg(x); r != nil {
					add(r)
				}
			}
			return true
		})
	}
	var out []string
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// TestEveryReasonIsDocumented keeps docs/diagnostics.md complete: every
// reason the frontend, the pipeline and the CLI can emit has an entry.
func TestEveryReasonIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/diagnostics.md")
	require.NoError(t, err)
	var reasons []string
	for _, dir := range []string{".", "../pipeline", "../cmd/llmkube-compile/cli"} {
		reasons = append(reasons, reasonsIn(t, dir)...)
	}
	require.Greater(t, len(reasons), 40, "the scan should find the frontend's reasons")
	documented := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 {
			for _, m := range docReason.FindAllStringSubmatch(cells[1], -1) {
				documented[m[1]] = true
			}
		}
	}
	var missing []string
	for _, r := range reasons {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	assert.Empty(t, missing, "reasons missing from docs/diagnostics.md")
}

// TestReasonsAreNamed: the frontend and the pipeline name every reason they
// report (compiler.ReasonX, pipeline.ReasonX); no reason argument is a
// string literal.
func TestReasonsAreNamed(t *testing.T) {
	for _, dir := range []string{".", "../pipeline"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			file, err := parser.ParseFile(fs, f, nil, 0)
			require.NoError(t, err)
			literal := func(e ast.Expr) {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					t.Errorf("%s: reason %s is a literal; name it in reasons.go", fs.Position(lit.Pos()), lit.Value)
				}
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if r := reasonArg(n); r != nil {
					literal(r)
				}
				return true
			})
		}
	}
}

// reasonArg is the reason a node passes to a diagnostic: the reason
// argument of Errorf, Warnf, ErrorAt, WarnAt or fileErr, or a Reason: field;
// nil otherwise.
func reasonArg(n ast.Node) ast.Expr {
	switch x := n.(type) {
	case *ast.CallExpr:
		name := ""
		switch fn := x.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		switch {
		case (name == "Errorf" || name == "Warnf" || name == "ErrorAt" || name == "WarnAt") && len(x.Args) >= 2:
			return x.Args[1]
		case name == "fileErr" && len(x.Args) >= 4:
			return x.Args[3]
		}
	case *ast.KeyValueExpr:
		if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Reason" {
			return x.Value
		}
	}
	return nil
}
