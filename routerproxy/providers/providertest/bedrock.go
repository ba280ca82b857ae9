package providertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Bedrock is a fake of the Bedrock runtime Converse and ConverseStream APIs
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).
// It verifies the SigV4 signature by re-signing the received request with
// the same credentials
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html).
type Bedrock struct {
	*httptest.Server
	recorder
	Creds  aws.Credentials
	Region string
	// ModelID is the only model the fake serves.
	ModelID string
}

// NewBedrock starts a fake that accepts requests signed with creds for region.
func NewBedrock(t testing.TB, creds aws.Credentials, region, modelID string) *Bedrock {
	b := &Bedrock{Creds: creds, Region: region, ModelID: modelID}
	b.Server = start(t, b.serve)
	return b
}

// bedrockError answers in the REST-JSON error shape of
// https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html.
func bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("X-Amzn-Requestid", "2d5b7fb2-7f6c-4c4b-9b7e-2c6f5a0b1e11")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}

// verifySignature re-signs the request and compares the Authorization header.
func (b *Bedrock) verifySignature(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "missing AWS4-HMAC-SHA256 Authorization"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ", ") {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	date := r.Header.Get("X-Amz-Date")
	ts, err := time.Parse("20060102T150405Z", date)
	if err != nil {
		return "bad X-Amz-Date"
	}
	wantScope := b.Creds.AccessKeyID + "/" + date[:8] + "/" + b.Region + "/bedrock/aws4_request"
	if fields["Credential"] != wantScope {
		return "credential scope " + fields["Credential"] + " is not " + wantScope
	}
	if b.Creds.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != b.Creds.SessionToken {
		return "missing X-Amz-Security-Token"
	}
	re, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		if h != "host" && h != "content-length" {
			re.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	re.Header.Del("Authorization")
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(r.Context(), b.Creds, re, hex.EncodeToString(sum[:]), "bedrock", b.Region, ts); err != nil {
		return err.Error()
	}
	if re.Header.Get("Authorization") != auth {
		return "The request signature we calculated does not match the signature you provided."
	}
	return ""
}

// converseKeys are the request members of Converse.
var converseKeys = map[string]bool{"messages": true, "system": true, "inferenceConfig": true, "toolConfig": true,
	"guardrailConfig": true, "additionalModelRequestFields": true, "additionalModelResponseFieldPaths": true,
	"promptVariables": true, "requestMetadata": true, "performanceConfig": true}

func (b *Bedrock) serve(w http.ResponseWriter, r *http.Request) {
	rec := b.Record(r)
	base := "/model/" + strings.ReplaceAll(url.PathEscape(b.ModelID), ":", "%3A")
	stream := rec.Path == base+"/converse-stream"
	if r.Method != http.MethodPost || (rec.Path != base+"/converse" && !stream) {
		bedrockError(w, http.StatusNotFound, "ResourceNotFoundException", "no route for "+rec.Path)
		return
	}
	if msg := b.verifySignature(r, rec.Body); msg != "" {
		bedrockError(w, http.StatusForbidden, "InvalidSignatureException", msg)
		return
	}
	offered, f := checkJSON(r, rec.Body, bedrockFaults, checkConverse)
	b.respond(w, bedrockError, bedrockFaults, f, offered, func(mode Mode, tool bool) { writeConverse(w, mode, tool, stream) })
}

// bedrockFaults are Bedrock's answers in the failing modes.
var bedrockFaults = map[Mode]fault{
	RateLimited: {status: http.StatusTooManyRequests, code: "ThrottlingException", message: "Too many requests, please wait before trying again."},
	Overloaded:  {status: http.StatusServiceUnavailable, code: "ServiceUnavailableException", message: "The service is temporarily unable to handle the request."},
	BadRequest:  {status: http.StatusBadRequest, code: "ValidationException", message: "The provided request is not valid"},
}

// checkConverse checks a Converse request body as Bedrock validates it;
// offered says it offers tools.
func checkConverse(data []byte) (offered bool, f *fault) {
	var body struct {
		Messages []struct {
			Role    string                       `json:"role"`
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"messages"`
		ToolConfig *json.RawMessage `json:"toolConfig"`
	}
	unknown, err := decodeObject(data, &body, converseKeys)
	if err != nil || len(body.Messages) == 0 {
		return false, invalid(bedrockFaults, "Malformed input request")
	}
	if unknown != "" {
		return false, invalid(bedrockFaults, "Unknown member "+unknown)
	}
	for i, m := range body.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want || len(m.Content) == 0 {
			return false, invalid(bedrockFaults, "A conversation must start with a user message and alternate between user and assistant roles.")
		}
		for _, blk := range m.Content {
			if len(blk) != 1 {
				return false, invalid(bedrockFaults, "Each content block must have exactly one member")
			}
			if (blk["toolUse"] != nil || blk["toolResult"] != nil) && body.ToolConfig == nil {
				return false, invalid(bedrockFaults, "toolConfig field must be defined when using toolUse and toolResult content blocks.")
			}
		}
	}
	return body.ToolConfig != nil, nil
}

// writeConverse answers a Converse (or, stream, ConverseStream) request.
func writeConverse(w http.ResponseWriter, mode Mode, tool, stream bool) {
	w.Header().Set("X-Amzn-Requestid", "9c1ab1f4-6cc4-4b0c-a6a1-4c1b8f0e8b33")
	if !stream {
		writeAnswer(w, "application/json", tool, BedrockTextResponse, BedrockToolResponse)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	enc := eventstream.NewEncoder()
	for _, e := range streamFor(mode, tool, bedrockTextStream, bedrockToolStream, bedrockErrorStream) {
		var hs eventstream.Headers
		if e.exception != "" {
			hs.Set(":message-type", eventstream.StringValue("exception"))
			hs.Set(":exception-type", eventstream.StringValue(e.exception))
		} else {
			hs.Set(":message-type", eventstream.StringValue("event"))
			hs.Set(":event-type", eventstream.StringValue(e.typ))
		}
		hs.Set(":content-type", eventstream.StringValue("application/json"))
		_ = enc.Encode(w, eventstream.Message{Headers: hs, Payload: []byte(e.payload)})
		flush(w)
	}
}

// BedrockTextResponse follows the Converse response syntax of
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html.
const BedrockTextResponse = `{"output":{"message":{"role":"assistant","content":[{"text":"Hello! How can I help you today?"}]}},"stopReason":"end_turn","usage":{"inputTokens":12,"outputTokens":10,"totalTokens":22},"metrics":{"latencyMs":350}}`

// BedrockToolResponse is the top_song tool-use answer of
// https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html.
const BedrockToolResponse = `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q","name":"top_song","input":{"sign":"WZPZ"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":375,"outputTokens":35,"totalTokens":410},"metrics":{"latencyMs":1346}}`

type bedrockEvent struct{ typ, exception, payload string }

// The ConverseStream event payloads of
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
// (ConverseStreamOutput members); the service adds a "p" padding member.
var bedrockTextStream = []bedrockEvent{
	{typ: "messageStart", payload: `{"p":"abcdefghijk","role":"assistant"}`},
	{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Hello"},"p":"abcd"}`},
	{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"! How can I help?"},"p":"abcdefg"}`},
	{typ: "contentBlockStop", payload: `{"contentBlockIndex":0,"p":"abcdefghijklmn"}`},
	{typ: "messageStop", payload: `{"p":"abcdefghij","stopReason":"end_turn"}`},
	{typ: "metadata", payload: `{"metrics":{"latencyMs":402},"p":"ab","usage":{"inputTokens":12,"outputTokens":8,"totalTokens":20}}`},
}

var bedrockToolStream = []bedrockEvent{
	{typ: "messageStart", payload: `{"p":"abc","role":"assistant"}`},
	{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Let me look that up."},"p":"abcd"}`},
	{typ: "contentBlockStop", payload: `{"contentBlockIndex":0,"p":"abcd"}`},
	{typ: "contentBlockStart", payload: `{"contentBlockIndex":1,"p":"ab","start":{"toolUse":{"name":"top_song","toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"}}}`},
	{typ: "contentBlockDelta", payload: `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"sign\": "}},"p":"abcdef"}`},
	{typ: "contentBlockDelta", payload: `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"WZPZ\"}"}},"p":"abc"}`},
	{typ: "contentBlockStop", payload: `{"contentBlockIndex":1,"p":"abcdefgh"}`},
	{typ: "messageStop", payload: `{"p":"abcdefghijklmnopq","stopReason":"tool_use"}`},
	{typ: "metadata", payload: `{"metrics":{"latencyMs":1346},"p":"abc","usage":{"inputTokens":375,"outputTokens":35,"totalTokens":410}}`},
}

// bedrockErrorStream ends with a modelStreamErrorException (a ConverseStream
// error member, sent as an exception message).
var bedrockErrorStream = []bedrockEvent{
	bedrockTextStream[0],
	bedrockTextStream[1],
	{exception: "modelStreamErrorException", payload: `{"message":"The model stream failed.","originalStatusCode":500}`},
}
