package routingtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// TestDecodeReportsEveryProblemWithItsPath: a bad test file gets what a bad
// router gets: every problem at once, with file, test and field path.
func TestDecodeReportsEveryProblemWithItsPath(t *testing.T) {
	files, diags := Decode("t.yaml", []byte(`apiVersion: routing.llmkube.dev/v1alpha2
kind: RoutingTest
metadata: {name: bad}
spec:
  router: chat
  extra: 1
  cases:
    - name: one
      request: {model: m, headers: {Authorization: Bearer x}}
      expect: {}
    - name: one
      request: {model: m, token: {invalid: "yes"}}
      expect: {status: 999, budgets: [{key: blue}], refused: X, backend: b}
`))
	assert.Empty(t, files)
	got := map[string]string{}
	for _, d := range diags {
		assert.Equal(t, "t.yaml", d.File)
		assert.Equal(t, "RoutingTest/bad", d.Object)
		got[d.Field] = d.Reason
	}
	assert.Equal(t, map[string]string{
		"apiVersion": "UnsupportedVersion",
		"spec.extra": "UnknownField",
		"spec.cases[0].request.headers[Authorization]": "UseToken",
		"spec.cases[0].expect":                         "RequiredField",
		"spec.cases[1].name":                           "DuplicateCase",
		"spec.cases[1].request.token.invalid":          "WrongType",
		"spec.cases[1].expect.status":                  "WrongType",
		"spec.cases[1].expect.budgets[0].name":         "RequiredField",
		"spec.cases[1].expect.refused":                 "ConflictingExpectation",
	}, got)
}

func TestJudge(t *testing.T) {
	e := Expect{Backend: "a", Status: 200, Attempts: []string{"b", "a"}, NotForwarded: []string{"Authorization"}, Budgets: []Budget{{Name: "x", Key: "blue"}},
		set: map[string]bool{"status": true, "attempts": true, "budgets": true}}
	ok := Result{Status: 200, Router: "ns/r", Backend: "a", Attempts: []string{"b", "a"}, Budgets: []Budget{{Name: "x", Key: "blue"}}, Upstream: []string{"content-type"}}
	assert.Empty(t, judge(e, ok, "ns/r"))
	bad := ok
	bad.Router, bad.Upstream, bad.Budgets = "ns/other", []string{"authorization"}, []Budget{{Name: "x", Key: "platform"}}
	fails := judge(e, bad, "ns/r")
	require.Len(t, fails, 3)
	assert.Contains(t, fails[0], "backend a of ns/other answered, want a of ns/r")
	assert.Contains(t, fails[1], "budgets charged [x[platform]], want [x[blue]]")
	assert.Contains(t, fails[2], "header Authorization reaches the backend")
}

// TestPlanesDisagreeAreReported: one input, a case both planes serve
// differently (the router-proxy refuses a token without the team claim,
// the gateway admits it), is reported as a disagreement naming each plane.
func TestPlanesDisagreeAreReported(t *testing.T) {
	in := &compiler.Inputs{}
	require.False(t, in.Decode("in.yaml", []byte(`apiVersion: inference.llmkube.dev/v1alpha1
kind: ModelRouter
metadata: {name: r, namespace: ml}
spec:
  dataPlane: Gateway
  gatewayRef: {name: gw}
  backends: [{name: a, external: {provider: openai, model: gpt-5}}]
  defaultRoute: a
  policy:
    auth:
      jwt: {provider: p, issuer: https://i.example, jwksURI: https://i.example/k, teamClaim: team}
`)).HasErrors())
	planes, err := Planes(in, builtin.Registry(), pipeline.Options{}, []ir.DataPlane{ir.DataPlaneProxy, ir.DataPlaneGateway}, nil)
	require.NoError(t, err)
	files, d := Decode("t.yaml", []byte(`apiVersion: routing.llmkube.dev/v1alpha1
kind: RoutingTest
metadata: {name: t}
spec:
  router: ml/r
  cases:
    - name: token without a team
      request: {model: gpt-5, token: {claims: {}}}
      expect: {notForwarded: [authorization]}
`))
	require.False(t, d.HasErrors(), "%v", d)
	require.False(t, Check(files, planes, "").HasErrors())
	rep := Run(files, planes, "")
	require.Len(t, rep.Disagreements, 1, "%+v", rep.Results)
	assert.Equal(t, "401", rep.Disagreements[0].ByPlane["Proxy"])
	assert.True(t, strings.HasPrefix(rep.Disagreements[0].ByPlane["Gateway"], "200 from a"), rep.Disagreements[0].ByPlane["Gateway"])
	assert.Equal(t, 0, rep.Failed())
}
