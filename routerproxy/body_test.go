package routerproxy

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanBodyExactKeys(t *testing.T) {
	body := []byte(`{"MODEL":"a","Model":"b","mod\u0065l":"c<&>","stream":true,"x":{"model":"nested"}}`)
	f, err := scanBody(body)
	require.NoError(t, err)
	m, ok := stringValue(body, f.model)
	assert.True(t, ok)
	assert.Equal(t, "c<&>", m, "the exact key, as the upstream decodes it; case variants are other keys")
	_, err = scanBody([]byte(`{"model":"a","model":"b"}`))
	assert.ErrorContains(t, err, `"model" twice`)
}

func TestRewritesSpliceWithoutEscaping(t *testing.T) {
	text := strings.Repeat("<&>", 1000)
	body := []byte(`{"messages":[{"role":"user","content":"` + text + `"}], "model" : "alias" ,"stream":true}`)
	out := withModel(body, "provider/model<1>")
	assert.Equal(t, len(body)-len(`"alias"`)+len(`"provider/model<1>"`), len(out), "only the model changes size")
	assert.Contains(t, string(out), text, "no HTML escaping")
	var v map[string]any
	require.NoError(t, json.Unmarshal(out, &v))
	assert.Equal(t, "provider/model<1>", v["model"])

	for in, want := range map[string]string{
		`{"model":"m","stream":true}`:                                                `{"stream_options":{"include_usage":true},"model":"m","stream":true}`,
		`{"model":"m","stream":true,"stream_options":null}`:                          `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":true,"stream_options":{}}`:                            `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1}}`: `{"model":"m","stream":true,"stream_options":{"include_usage":true,"x":1}}`,
		`{"model":"m","stream":true,"stream_options":{"x":"<"}}`:                     `{"model":"m","stream":true,"stream_options":{"include_usage":true,"x":"<"}}`,
	} {
		f, err := scanBody([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, string(withIncludeUsage([]byte(in), f)), in)
	}
}

// FuzzScanBody holds the scanner to encoding/json on every valid document:
// the same model and stream, and rewrites that stay valid JSON and change
// nothing but their own member.
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m"}`, `{"model":"m","stream":true,"stream_options":{"include_usage":false}}`,
		`{"a":[1,{"b":"}"}],"model":"x\"y"}`, `{}`, `[]`, `null`, `{"model":1}`, ` { "stream" : null , "model":"\u00e9"} `,
		`{"MODEL":"a","model":"b"}`, `{"model":"a","model":"b"}`, `{"stream_options":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		fields, err := scanBody(body)
		var m map[string]json.RawMessage
		objErr := json.Unmarshal(body, &m)
		if err != nil {
			if objErr == nil && m != nil && !bytes.Contains(body, []byte(`\`)) && strings.Count(string(body), `"model"`)+strings.Count(string(body), `"stream"`)+strings.Count(string(body), `"stream_options"`) < 2 {
				t.Fatalf("scanBody refused an object with no duplicate: %v", err)
			}
			return
		}
		if objErr != nil || m == nil {
			if strings.TrimSpace(string(body)) != "null" {
				t.Fatalf("scanBody accepted a non-object: %q", body)
			}
			return
		}
		raw, ok := m["model"]
		if ok != fields.model.ok() {
			t.Fatalf("model present: json %v, scanner %v", ok, fields.model.ok())
		}
		if ok {
			if got := string(body[fields.model.start:fields.model.end]); got != string(raw) {
				t.Fatalf("model span %q, json %q", got, raw)
			}
			out := withModel(body, "<new>")
			var after map[string]json.RawMessage
			if err := json.Unmarshal(out, &after); err != nil {
				t.Fatalf("withModel made invalid JSON %q: %v", out, err)
			}
			var model string
			_ = json.Unmarshal(after["model"], &model)
			if model != "<new>" || len(after) != len(m) {
				t.Fatalf("withModel: %q", out)
			}
		}
		if fields.streamOptions.ok() && body[fields.streamOptions.start] != '{' && string(body[fields.streamOptions.start:fields.streamOptions.end]) != "null" {
			return
		}
		// Exact keys (maps), as the upstream reads them: a struct would
		// match "streAm_options" case-insensitively.
		out := withIncludeUsage(body, fields)
		var top, so map[string]json.RawMessage
		err = json.Unmarshal(out, &top)
		if err == nil {
			err = json.Unmarshal(top["stream_options"], &so)
		}
		if err != nil || string(so["include_usage"]) != "true" {
			t.Fatalf("withIncludeUsage(%q) = %q (%v)", body, out, err)
		}
	})
}

func TestErrorsAreJSONForControlBytes(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, 404, "invalid_request_error", "unknown_url", "unknown route /v1/\x00\x07\x1b<x>")
	var v struct {
		Error struct{ Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v), rec.Body.String())
	assert.Equal(t, "unknown route /v1/\x00\x07\x1b<x>", v.Error.Message)
}

// withModel scans body and splices its model, as a request does.
func withModel(body []byte, model string) []byte {
	f, _ := scanBody(body)
	return reqBody{raw: body, model: f.model}.withModel(model)
}
