package providertest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Vertex is a fake of Vertex AI's Gemini generateContent and
// streamGenerateContent
// (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent)
// with Google's OAuth 2.0 token endpoint for service accounts on /token
// (https://developers.google.com/identity/protocols/oauth2/service-account#httprest):
// the token request must carry a JWT signed with the service account's key.
type Vertex struct {
	*httptest.Server
	recorder
	Project, Location, Model string
	// ServiceAccountJSON is a service-account key file
	// (https://cloud.google.com/iam/docs/keys-create-delete) whose token_uri
	// is this fake.
	ServiceAccountJSON string
	// PrivateKeyPEM is the key inside it.
	PrivateKeyPEM string
	// TokenRequests counts token exchanges.
	TokenRequests atomic.Int64
	// FailTokens makes the token endpoint answer 400 invalid_grant.
	FailTokens atomic.Bool

	key    *rsa.PrivateKey
	email  string
	tokens atomic.Int64
	issued atomic.Pointer[string]
}

// NewVertex starts a fake serving project/location/model.
func NewVertex(t testing.TB, project, location, model string) *Vertex {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	v := &Vertex{Project: project, Location: location, Model: model, key: key, email: "router@" + project + ".iam.gserviceaccount.com"}
	v.PrivateKeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	v.Server = start(t, v.serve)
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": project, "private_key_id": "1f2e3d4c5b6a79880123456789abcdef01234567",
		"private_key": v.PrivateKeyPEM, "client_email": v.email, "client_id": "109876543210987654321",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": v.URL + "/token",
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	})
	v.ServiceAccountJSON = string(sa)
	return v
}

// AccessToken is the last token the fake issued.
func (v *Vertex) AccessToken() string {
	if p := v.issued.Load(); p != nil {
		return *p
	}
	return ""
}

// googleError is https://cloud.google.com/apis/design/errors.
func googleError(w http.ResponseWriter, status int, gstatus, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q}}`, status, msg, gstatus)
}

// verifyJWT checks an RS256 assertion signed with the service account key.
func (v *Vertex) verifyJWT(assertion string) string {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "malformed assertion"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "malformed signature"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&v.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return "Invalid JWT Signature."
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Iss != v.email || c.Aud != v.URL+"/token" || !strings.Contains(c.Scope, "https://www.googleapis.com/auth/cloud-platform") || c.Exp <= c.Iat {
		return "Invalid JWT claims."
	}
	return ""
}

func (v *Vertex) token(w http.ResponseWriter, r *http.Request) {
	v.TokenRequests.Add(1)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || v.FailTokens.Load() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Invalid grant: account not found"}`)
		return
	}
	if msg := v.verifyJWT(r.PostForm.Get("assertion")); msg != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, msg)
		return
	}
	tok := fmt.Sprintf("ya29.c.fake-access-token-%d", v.tokens.Add(1))
	v.issued.Store(&tok)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	// https://developers.google.com/identity/protocols/oauth2/service-account#httprest
	fmt.Fprintf(w, `{"access_token":%q,"expires_in":3599,"token_type":"Bearer"}`, tok)
}

var generateContentKeys = map[string]bool{"contents": true, "systemInstruction": true, "generationConfig": true, "tools": true,
	"toolConfig": true, "safetySettings": true, "labels": true, "cachedContent": true}

func (v *Vertex) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" && r.Method == http.MethodPost {
		v.token(w, r)
		return
	}
	rec := v.Record(r)
	base := "/v1/projects/" + v.Project + "/locations/" + v.Location + "/publishers/google/models/" + v.Model
	stream := rec.Path == base+":streamGenerateContent"
	if r.Method != http.MethodPost || (rec.Path != base+":generateContent" && !stream) {
		googleError(w, http.StatusNotFound, "NOT_FOUND", "Publisher Model `"+rec.Path+"` was not found or your project does not have access to it.")
		return
	}
	if stream && rec.Query != "alt=sse" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "expected alt=sse")
		return
	}
	if tok := v.AccessToken(); tok == "" || r.Header.Get("Authorization") != "Bearer "+tok {
		googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	offered, f := checkJSON(r, rec.Body, vertexFaults, checkGenerateContent)
	v.respond(w, googleError, vertexFaults, f, offered, func(mode Mode, tool bool) { writeGenerateContent(w, mode, tool, stream) })
}

// vertexFaults are Vertex AI's answers in the failing modes.
var vertexFaults = map[Mode]fault{
	RateLimited: {status: http.StatusTooManyRequests, code: "RESOURCE_EXHAUSTED", message: "Resource exhausted. Please try again later."},
	Overloaded:  {status: http.StatusServiceUnavailable, code: "UNAVAILABLE", message: "The service is currently unavailable."},
	BadRequest:  {status: http.StatusBadRequest, code: "INVALID_ARGUMENT", message: "Request contains an invalid argument."},
}

// checkGenerateContent checks a generateContent request body as Vertex AI
// validates it; offered says it offers tools.
func checkGenerateContent(data []byte) (offered bool, f *fault) {
	var body struct {
		Contents []struct {
			Role  string                       `json:"role"`
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
		Tools []json.RawMessage `json:"tools"`
	}
	unknown, err := decodeObject(data, &body, generateContentKeys)
	if err != nil || len(body.Contents) == 0 {
		return false, invalid(vertexFaults, "contents is not specified")
	}
	if unknown != "" {
		return false, invalid(vertexFaults, `Invalid JSON payload received. Unknown name "`+unknown+`": Cannot find field.`)
	}
	for _, c := range body.Contents {
		if (c.Role != "user" && c.Role != "model") || len(c.Parts) == 0 {
			return false, invalid(vertexFaults, "Please use a valid role: user, model.")
		}
		for _, p := range c.Parts {
			if len(p) != 1 {
				return false, invalid(vertexFaults, "a part must have exactly one data field")
			}
		}
	}
	return len(body.Tools) > 0, nil
}

// writeGenerateContent answers a generateContent (or, stream,
// streamGenerateContent) request.
func writeGenerateContent(w http.ResponseWriter, mode Mode, tool, stream bool) {
	if !stream {
		writeAnswer(w, "application/json; charset=UTF-8", tool, VertexTextResponse, VertexToolResponse)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range streamFor(mode, tool, vertexTextStream, vertexToolStream, vertexErrorStream) {
		fmt.Fprint(w, "data: "+c+"\r\n\r\n")
		flush(w)
	}
}

// VertexTextResponse follows the response example of
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference.
const VertexTextResponse = `{
  "candidates": [{
    "content": {"role": "model", "parts": [{"text": "The sky appears blue because of Rayleigh scattering."}]},
    "finishReason": "STOP",
    "avgLogprobs": -0.1873
  }],
  "usageMetadata": {"promptTokenCount": 6, "candidatesTokenCount": 10, "totalTokenCount": 16,
    "trafficType": "ON_DEMAND",
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 6}],
    "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 10}]},
  "modelVersion": "gemini-2.0-flash-001",
  "createTime": "2025-02-12T18:25:07.385437Z",
  "responseId": "IwqtZ5nnF4m6mNAP2qGWyQY"
}`

// VertexToolResponse is the function-calling answer of
// https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling.
const VertexToolResponse = `{
  "candidates": [{
    "content": {"role": "model", "parts": [{"functionCall": {"name": "get_current_weather", "args": {"location": "Boston"}}}]},
    "finishReason": "STOP"
  }],
  "usageMetadata": {"promptTokenCount": 28, "candidatesTokenCount": 7, "totalTokenCount": 35},
  "modelVersion": "gemini-2.0-flash-001",
  "responseId": "6QqtZ_7eNLCBmNAPpOGD4Ac"
}`

// vertexTextStream follows the streamGenerateContent (alt=sse) example of
// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference.
var vertexTextStream = []string{
	`{"candidates": [{"content": {"role": "model","parts": [{"text": "The"}]}}],"usageMetadata": {},"modelVersion": "gemini-2.0-flash-001","createTime": "2025-02-12T18:26:09.447385Z","responseId": "MQqtZ6iCG8mYmNAPtY2fgAY"}`,
	`{"candidates": [{"content": {"role": "model","parts": [{"text": " sky appears blue"}]}}],"modelVersion": "gemini-2.0-flash-001","createTime": "2025-02-12T18:26:09.447385Z","responseId": "MQqtZ6iCG8mYmNAPtY2fgAY"}`,
	`{"candidates": [{"content": {"role": "model","parts": [{"text": " due to Rayleigh scattering."}]},"finishReason": "STOP"}],"usageMetadata": {"promptTokenCount": 6,"candidatesTokenCount": 9,"totalTokenCount": 15,"trafficType": "ON_DEMAND"},"modelVersion": "gemini-2.0-flash-001","createTime": "2025-02-12T18:26:09.447385Z","responseId": "MQqtZ6iCG8mYmNAPtY2fgAY"}`,
}

var vertexToolStream = []string{
	`{"candidates": [{"content": {"role": "model","parts": [{"functionCall": {"name": "get_current_weather","args": {"location": "Boston"}}}]},"finishReason": "STOP"}],"usageMetadata": {"promptTokenCount": 28,"candidatesTokenCount": 7,"totalTokenCount": 35},"modelVersion": "gemini-2.0-flash-001","responseId": "7QqtZ_7eNLCBmNAPpOGD4Ac"}`,
}

// vertexErrorStream ends with an error object in the stream.
var vertexErrorStream = []string{
	vertexTextStream[0],
	`{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}`,
}
