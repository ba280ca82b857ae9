package compiler

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTypeErrorsKeepEveryListIndex: a value of the wrong type is reported
// at its full path, every list index and map key kept, wherever it is (a
// list of objects, a list in a list item, a map value, a list item itself),
// and a second one beside it is reported too, at its own path.
func TestTypeErrorsKeepEveryListIndex(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"  rules:\n    - name: r\n      match: {headers: [X-Team]}\n", []string{"spec.rules[0].match.headers"}},
		{"  rules:\n    - name: r\n      match: {headers: {X-Team: 5}}\n", []string{"spec.rules[0].match.headers[X-Team]"}},
		{"  rules:\n    - name: r\n      match: {headers: {X-Team: {a: b}}}\n", []string{"spec.rules[0].match.headers[X-Team]"}},
		{"  rules:\n    - name: r\n      match: {headers: {X.Team: 5}}\n", []string{"spec.rules[0].match.headers[X.Team]"}},
		{"  rules:\n    - name: ok\n    - name: r\n      match: {models: gpt}\n", []string{"spec.rules[1].match.models"}},
		{"  rules:\n    - name: r\n      route: {backends: a}\n", []string{"spec.rules[0].route.backends"}},
		{"  rules:\n    - name: r\n      route: {backends: [a, 3]}\n", []string{"spec.rules[0].route.backends[1]"}},
		{"  backends:\n    - name: a\n      capabilities: [vision, 3]\n", []string{"spec.backends[0].capabilities[1]"}},
		{"  backends:\n    - name: a\n    - name: b\n      balancing: {sessionAffinity: {headers: x}}\n", []string{"spec.backends[1].balancing.sessionAffinity.headers"}},
		{"  backends:\n    - {name: a, weight: true}\n", []string{"spec.backends[0].weight"}},
		{"  backends: [x, y]\n", []string{"spec.backends[0]", "spec.backends[1]"}},
		{"  policy:\n    auth:\n      allowlists:\n        - {team: a}\n        - {team: b, models: x}\n", []string{"spec.policy.auth.allowlists[1].models"}},
		{"  policy:\n    budgets:\n      - {name: a, maxTokens: many}\n      - {name: b, maxTokens: [1]}\n", []string{"spec.policy.budgets[0].maxTokens", "spec.policy.budgets[1].maxTokens"}},
		{"  rules:\n    - name: r\n      match: {headers: [X-Team]}\n    - name: s\n      match: {headers: [Y]}\n", []string{"spec.rules[0].match.headers", "spec.rules[1].match.headers"}},
		{"  rules: {a: 1}\n", []string{"spec.rules"}},
	} {
		diags := (&Inputs{}).Decode("r.yaml", []byte(chatDoc("\n"+tc.spec)))
		var got []string
		for _, d := range diags {
			if d.Reason == ReasonInvalidType {
				got = append(got, d.Field)
			}
		}
		assert.Equal(t, tc.want, got, "%s", tc.spec)
	}
}
