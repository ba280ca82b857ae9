package routerproxy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
)

// TestRefusalTable: every row answers with a status and an audit outcome,
// and tells the client an OpenAI error type and code unless the client has
// gone.
func TestRefusalTable(t *testing.T) {
	for k, rf := range refusals {
		assert.NotZero(t, rf.status, "refusal %d", k)
		assert.NotEmpty(t, rf.outcome, "refusal %d", k)
		if !rf.silent {
			assert.NotEmpty(t, rf.typ, "refusal %d", k)
			assert.NotEmpty(t, rf.code, "refusal %d", k)
		}
	}
}

// TestAuthRefusals: policy.auth's refusals keep routerproxy/auth's code and
// carry the Bearer challenge, naming the error when a credential was sent
// (RFC 6750 §3.1): invalid_token for a refused one, invalid_request (400)
// for one sent twice.
func TestAuthRefusals(t *testing.T) {
	for _, tc := range []struct {
		status               int
		code, typ, challenge string
	}{
		{http.StatusUnauthorized, auth.CodeMissingToken, "authentication_error", `Bearer realm="llmkube"`},
		{http.StatusUnauthorized, auth.CodeInvalidToken, "authentication_error", `Bearer realm="llmkube", error="invalid_token"`},
		{http.StatusBadRequest, auth.CodeMultipleCredentials, "invalid_request_error", `Bearer realm="llmkube", error="invalid_request"`},
	} {
		w := httptest.NewRecorder()
		ent := &proxyapi.AuditEntry{}
		e := &auth.Error{Status: tc.status, Code: tc.code, Msg: "no"}
		refuseAs(w, ent, authRefusal(e), e.Msg, "")
		assert.Equal(t, tc.status, w.Code)
		assert.Equal(t, tc.challenge, w.Header().Get("WWW-Authenticate"))
		assert.Contains(t, w.Body.String(), `"type":"`+tc.typ+`"`)
		assert.Contains(t, w.Body.String(), `"code":"`+tc.code+`"`)
		assert.Equal(t, proxyapi.OutcomeUnauthorized, ent.Outcome)
	}
}

// TestClientCancelledAnswersNothing: a client that has gone is recorded
// (499) and told nothing.
func TestClientCancelledAnswersNothing(t *testing.T) {
	w := httptest.NewRecorder()
	ent := &proxyapi.AuditEntry{}
	refuseAs(w, ent, refClientCancelled, "client went away", "")
	assert.Equal(t, 499, ent.Status)
	assert.Equal(t, proxyapi.OutcomeClientCancelled, ent.Outcome)
	assert.Equal(t, "client went away", ent.Error)
	assert.False(t, w.Flushed)
	assert.Empty(t, w.Body.String())
	assert.Empty(t, w.Header())
}

// TestAuditEndingWrittenOnce: an audit entry's outcome, status and error
// are assigned in one place (ending.record); a refusal goes through
// refuseAs, a relayed response through relay's ending.
func TestAuditEndingWrittenOnce(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var sites []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok {
					return true
				}
				for _, lhs := range as.Lhs {
					sel, ok := lhs.(*ast.SelectorExpr)
					if !ok {
						continue
					}
					x, _ := sel.X.(*ast.Ident)
					if sel.Sel.Name == "Outcome" || (x != nil && x.Name == "ent" && (sel.Sel.Name == "Status" || sel.Sel.Name == "Error")) {
						sites = append(sites, fn.Name.Name+" "+fset.Position(as.Pos()).String())
						break
					}
				}
				return true
			})
		}
	}
	require.Len(t, sites, 1, "%v", sites)
	assert.True(t, strings.HasPrefix(sites[0], "record "), "%v", sites)
}
