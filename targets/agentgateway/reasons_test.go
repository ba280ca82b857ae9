package agentgateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryReasonIsDocumented keeps docs/targets/agentgateway.md complete:
// every reason this target emits is named there.
func TestEveryReasonIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/targets/agentgateway.md")
	require.NoError(t, err)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var reasons []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "ErrorAt" || sel.Sel.Name == "WarnAt") {
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					r, _ := strconv.Unquote(lit.Value)
					reasons = append(reasons, r)
				}
			}
			return true
		})
	}
	require.Greater(t, len(reasons), 15)
	for _, r := range reasons {
		if r == "InternalError" {
			continue // a compiler bug, never an input's fault
		}
		assert.Contains(t, string(doc), "`"+r+"`", "reason %s is not documented", r)
	}
}
