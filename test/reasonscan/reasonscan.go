// Package reasonscan reads, from a target's source, the reasons of the
// diagnostics it gives (ErrorAt and WarnAt calls), resolving the named
// constants they pass. Tests use it to hold an emitter to its capability
// table and its documentation, and its StringConsts to read a package's
// other named values (a metric label's outcomes); no binary links it.
package reasonscan

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// Use is one reason a target passes to a diagnostic.
type Use struct {
	Reason string
	// Error is true for ErrorAt, false for WarnAt.
	Error bool
	// At is the call's position, for messages.
	At string
}

// Emitted lists every ErrorAt/WarnAt reason in dir's non-test Go files.
// A reason must be a constant declared in dir's package or in package
// targets (the parent directory, as targets.ReasonX); a literal or anything
// else is returned in bad, with its position.
func Emitted(dir string) (uses []Use, bad []string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, nil, err
	}
	own, err := StringConsts(dir, "Reason")
	if err != nil {
		return nil, nil, err
	}
	shared, err := StringConsts(filepath.Dir(dir), "Reason")
	if err != nil {
		return nil, nil, err
	}
	err = eachFile(dir, func(fs *token.FileSet, file *ast.File) {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "ErrorAt" && sel.Sel.Name != "WarnAt") {
				return true
			}
			at := fs.Position(call.Args[1].Pos()).String()
			var value string
			switch a := call.Args[1].(type) {
			case *ast.Ident:
				value = own[a.Name]
			case *ast.SelectorExpr:
				if x, ok := a.X.(*ast.Ident); ok && x.Name == "targets" {
					value = shared[a.Sel.Name]
				}
			}
			if value == "" {
				bad = append(bad, fmt.Sprintf("%s: the reason is not a named Reason constant of the plane's folder or of package targets", at))
				return true
			}
			uses = append(uses, Use{Reason: value, Error: sel.Sel.Name == "ErrorAt", At: at})
			return true
		})
	})
	return uses, bad, err
}

// StringConsts are the string constants named prefix* of dir's non-test
// files, by name.
func StringConsts(dir, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := eachFile(dir, func(_ *token.FileSet, file *ast.File) {
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) || !strings.HasPrefix(name.Name, prefix) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	})
	return out, err
}

func eachFile(dir string, fn func(*token.FileSet, *ast.File)) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fs := token.NewFileSet()
		file, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			return err
		}
		fn(fs, file)
	}
	return nil
}
