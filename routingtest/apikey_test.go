package routingtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecodeAPIKey(t *testing.T) {
	files, diags := Decode("t.yaml", []byte(testsOf("keys", "chat", `    - name: both credentials
      request: {model: m, token: {claims: {team: a}}, apiKey: {secretName: k}}
      expect: {status: 200}
    - name: a header keys are not sent in
      request: {model: m, apiKey: {secretName: k, header: cookie}}
      expect: {status: 200}
    - name: no Secret
      request: {model: m, apiKey: {name: batch, extra: 1}}
      expect: {status: 200}
`)))
	assert.Empty(t, files)
	got := map[string]string{}
	for _, d := range diags {
		got[d.Field] = d.Reason
	}
	assert.Equal(t, map[string]string{
		"spec.cases[0].request.apiKey":            "OneCredential",
		"spec.cases[1].request.apiKey.header":     "UnknownValue",
		"spec.cases[2].request.apiKey.secretName": "RequiredField",
		"spec.cases[2].request.apiKey.extra":      "UnknownField",
	}, got)

	files, diags = Decode("t.yaml", []byte(testsOf("keys", "chat", `    - name: a key by x-api-key
      request: {model: m, apiKey: {secretName: k, name: batch, header: x-api-key}}
      expect: {status: 200}
`)))
	assert.Empty(t, diags)
	if assert.Len(t, files, 1) {
		assert.Equal(t, &APIKey{SecretName: "k", Name: "batch", Header: "x-api-key"}, files[0].Cases[0].Request.APIKey)
	}
}
