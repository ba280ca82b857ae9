package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Vertex AI Gemini generateContent / streamGenerateContent with OAuth access
// tokens minted from a service-account JSON.
// Reference: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference,
// https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent,
// https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling.
type vertex struct {
	*common
	base     string // configured base URL (probes)
	origin   string // scheme://host
	version  string // /v1 or /v1beta1
	project  string
	location string
	ts       oauth2.TokenSource
}

// CloudPlatformScope is the OAuth scope of Vertex AI calls.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

var (
	vertexPath = regexp.MustCompile(`^(/v1(?:beta1)?)?/projects/([^/]+)/locations/([^/]+)`)
	vertexHost = regexp.MustCompile(`^([a-z0-9-]+)-aiplatform\.googleapis\.com$`)
)

func newVertex(c *common, base string, creds map[string]string) (Provider, error) {
	sa := creds[wellknown.PurposeGoogleSAJSON]
	if sa == "" {
		return nil, errors.New("no service account: the backend needs credentialsSecretRef with GOOGLE_APPLICATION_CREDENTIALS_JSON")
	}
	if base == "" {
		base = "https://aiplatform.googleapis.com"
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, errors.New("url is not an absolute URL")
	}
	v := &vertex{common: c, base: strings.TrimSuffix(base, "/"), origin: u.Scheme + "://" + u.Host, version: "/v1"}
	if m := vertexPath.FindStringSubmatch(u.Path); m != nil {
		if m[1] != "" {
			v.version = m[1]
		}
		v.project, v.location = m[2], m[3]
	} else if m := vertexHost.FindStringSubmatch(u.Hostname()); m != nil {
		v.location = m[1]
	} else {
		v.location = "global"
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: c.next, Timeout: 30 * time.Second})
	gc, err := google.CredentialsFromJSONWithType(ctx, []byte(sa), google.ServiceAccount, CloudPlatformScope)
	if err != nil {
		return nil, errors.New("GOOGLE_APPLICATION_CREDENTIALS_JSON is not a usable service-account JSON")
	}
	if v.project == "" {
		v.project = gc.ProjectID
	}
	if v.project == "" {
		return nil, errors.New("no project: the url has no /projects/<p>/locations/<l> and the service-account JSON has no project_id")
	}
	v.ts = gc.TokenSource
	return v, nil
}

func (v *vertex) BaseURL() string { return v.base }

// Target is the project and location requests go to.
func (v *vertex) Target() (project, location string) { return v.project, v.location }

func (v *vertex) url(stream bool) string {
	model := v.model
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	u := v.origin + v.version + "/projects/" + url.PathEscape(v.project) + "/locations/" + url.PathEscape(v.location) + "/publishers/google/models/" + url.PathEscape(model)
	if stream {
		return u + ":streamGenerateContent?alt=sse"
	}
	return u + ":generateContent"
}

func (v *vertex) RoundTrip(req *http.Request) (*http.Response, error) {
	return v.roundTrip(req, v, vertexError)
}

func (v *vertex) endpoint(stream bool) (string, string, error) { return v.url(stream), "", nil }

// authorize adds an access token of the service account.
func (v *vertex) authorize(up *http.Request, _ []byte) error {
	tok, err := v.ts.Token()
	if err != nil {
		msg := "vertex_ai: obtaining an access token from the service account failed"
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			msg += " (token endpoint status " + strconv.Itoa(re.Response.StatusCode) + ")"
		}
		return errors.New(msg)
	}
	up.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

func (v *vertex) stream(resp *http.Response, ch chunker) func(*bytes.Buffer) error {
	st := &gmStream{sse: newSSEReader(resp.Body), ch: ch, redact: v.redact}
	return st.step
}

// ---- request ----

type gmRequest struct {
	Contents          []gmContent   `json:"contents"`
	SystemInstruction *gmContent    `json:"systemInstruction,omitempty"`
	GenerationConfig  *gmGenConfig  `json:"generationConfig,omitempty"`
	Tools             []gmTool      `json:"tools,omitempty"`
	ToolConfig        *gmToolConfig `json:"toolConfig,omitempty"`
}

type gmContent struct {
	Role  string   `json:"role,omitempty"`
	Parts []gmPart `json:"parts"`
}

type gmPart struct {
	Text             *string             `json:"text,omitempty"`
	InlineData       *gmBlob             `json:"inlineData,omitempty"`
	FileData         *gmFile             `json:"fileData,omitempty"`
	FunctionCall     *gmFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *gmFunctionResponse `json:"functionResponse,omitempty"`
}

type gmBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type gmFile struct {
	MimeType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

type gmFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gmFunctionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gmGenConfig struct {
	MaxOutputTokens *int64 `json:"maxOutputTokens,omitempty"`
	sampling
}

type gmTool struct {
	FunctionDeclarations []gmFuncDecl `json:"functionDeclarations"`
}

type gmFuncDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type gmToolConfig struct {
	FunctionCallingConfig gmFuncCallingConfig `json:"functionCallingConfig"`
}

type gmFuncCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

func (v *vertex) translate(cr *chatRequest) ([]byte, error) {
	var out gmRequest
	system := func(t string) {
		if out.SystemInstruction == nil {
			out.SystemInstruction = &gmContent{}
		}
		out.SystemInstruction.Parts = append(out.SystemInstruction.Parts, gmPart{Text: strp(t)})
	}
	ts, err := writer[gmPart]{assistant: "model", system: system,
		text:  func(t string) gmPart { return gmPart{Text: strp(t)} },
		image: gmImage,
		call: func(tc *toolCall, args json.RawMessage) gmPart {
			return gmPart{FunctionCall: &gmFunctionCall{Name: tc.Function.Name, Args: args}}
		},
		result: func(i int, m *chatMessage) (gmPart, error) { return gmToolResponse(cr.Messages, i, m) },
	}.turns(cr.Messages)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		out.Contents = append(out.Contents, gmContent{Role: t.Role, Parts: t.Blocks})
	}
	if cr.samplingSet() {
		out.GenerationConfig = &gmGenConfig{MaxOutputTokens: cr.maxTokensSet(), sampling: cr.sampling()}
	}
	if len(cr.Tools) > 0 {
		var decls []gmFuncDecl
		for _, t := range cr.Tools {
			decls = append(decls, gmFuncDecl{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.parameters()})
		}
		out.Tools = []gmTool{{FunctionDeclarations: decls}}
		out.ToolConfig = gmChoice(cr.choice)
	}
	return json.Marshal(out)
}

// gmToolResponse is tool message i of msgs as the user's function
// response, named after the call it answers.
func gmToolResponse(msgs []chatMessage, i int, m *chatMessage) (gmPart, error) {
	name := toolName(msgs, i, m.ToolCallID)
	if name == "" {
		return gmPart{}, fmt.Errorf("messages[%d]: tool_call_id %q matches no earlier tool call", i, m.ToolCallID)
	}
	return gmPart{FunctionResponse: &gmFunctionResponse{Name: name, Response: gmToolResult(m.text())}}, nil
}

// gmToolResult is a tool result as a function response: a JSON object as
// it is, any other text as {"content": text}.
func gmToolResult(t string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) == nil && obj != nil {
		return json.RawMessage(t)
	}
	resp, _ := json.Marshal(map[string]string{"content": t})
	return resp
}

// gmImage is an image part: inline data, or a file Gemini fetches by URI.
func gmImage(img *image) (gmPart, error) {
	if img.data != "" {
		return gmPart{InlineData: &gmBlob{MimeType: img.mediaType, Data: img.data}}, nil
	}
	if img.mediaType == "" {
		return gmPart{}, errors.New("image URLs need a .png, .jpg, .jpeg, .gif or .webp name (Gemini needs the MIME type)")
	}
	return gmPart{FileData: &gmFile{MimeType: img.mediaType, FileURI: img.url}}, nil
}

// gmChoice is the function calling config for a tool_choice, nil when
// none was set.
func gmChoice(c toolChoice) *gmToolConfig {
	switch c.mode {
	case "auto":
		return &gmToolConfig{gmFuncCallingConfig{Mode: "AUTO"}}
	case "none":
		return &gmToolConfig{gmFuncCallingConfig{Mode: "NONE"}}
	case "required":
		return &gmToolConfig{gmFuncCallingConfig{Mode: "ANY"}}
	case "function":
		return &gmToolConfig{gmFuncCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{c.name}}}
	}
	return nil
}

// ---- response ----

type gmUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
}

func (u gmUsage) openai() usage {
	return newUsage(u.PromptTokenCount, u.CandidatesTokenCount+u.ThoughtsTokenCount, u.TotalTokenCount, u.CachedContentTokenCount)
}

type gmOutPart struct {
	Text         *string         `json:"text"`
	Thought      bool            `json:"thought"`
	FunctionCall *gmFunctionCall `json:"functionCall"`
}

type gmResponse struct {
	Candidates []struct {
		Content struct {
			Parts []gmOutPart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *gmUsage `json:"usageMetadata"`
	ModelVersion  string   `json:"modelVersion"`
	ResponseID    string   `json:"responseId"`
	Error         *gmError `json:"error"`
}

type gmError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

func gmFinish(r string, calls bool) string {
	switch r {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	return "stop"
}

// blocked reports whether Gemini refused the prompt itself (and gave no
// candidate).
func (r *gmResponse) blocked() bool {
	return r.PromptFeedback != nil && r.PromptFeedback.BlockReason != ""
}

// gmVisible walks the parts of a candidate the client sees (a thought is
// not): a function call by call, a text by text.
func gmVisible(parts []gmOutPart, call func(fc *gmFunctionCall), text func(t string)) {
	for _, p := range parts {
		switch {
		case p.Thought:
		case p.FunctionCall != nil:
			call(p.FunctionCall)
		case p.Text != nil:
			text(*p.Text)
		}
	}
}

func callID(fc *gmFunctionCall, i int) string {
	if fc.ID != "" {
		return fc.ID
	}
	return "call_" + strconv.Itoa(i)
}

func (v *vertex) convert(_ *http.Response, b []byte, created int64) ([]byte, error) {
	r, err := decodeAnswer[gmResponse](v.name, b)
	if err != nil {
		return nil, err
	}
	var ans answer
	finish := "stop"
	if len(r.Candidates) > 0 {
		c := r.Candidates[0]
		gmVisible(c.Content.Parts, func(fc *gmFunctionCall) { ans.call(callID(fc, len(ans.calls)), fc.Name, fc.Args) },
			func(t string) { ans.text.WriteString(t) })
		finish = gmFinish(c.FinishReason, len(ans.calls) > 0)
	} else if r.blocked() {
		finish = "content_filter"
	}
	var u usage
	if r.UsageMetadata != nil {
		u = r.UsageMetadata.openai()
	}
	return ans.completion("chatcmpl-"+r.ResponseID, v.modelOf(r.ModelVersion), created, finish, u), nil
}

// vertexError reads Google's error object (https://cloud.google.com/apis/design/errors),
// also when wrapped in an array.
func vertexError(_ http.Header, body []byte) (code, msg string) {
	var e struct {
		Error gmError `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		var arr []struct {
			Error gmError `json:"error"`
		}
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return "", ""
		}
		e.Error = arr[0].Error
	}
	return e.Error.Status, e.Error.Message
}

// gmStream converts streamGenerateContent?alt=sse chunks.
type gmStream struct {
	sse      *sseReader
	ch       chunker
	calls    int
	usage    *gmUsage
	finished bool
	redact   func(string) string
}

func (s *gmStream) step(out *bytes.Buffer) error {
	s.ch.out = out
	_, r, err := nextEvent[gmResponse](s.sse, "vertex_ai", func() error {
		return s.ch.endStream("vertex_ai", s.finished, "without a finishReason", openaiUsage(s.usage))
	})
	if err != nil {
		return err
	}
	if r.Error != nil {
		return s.ch.fail("vertex_ai", r.Error.Status, s.redact(r.Error.Message), openaiUsage(s.usage))
	}
	if s.ch.id == "" && r.ResponseID != "" {
		s.ch.id = "chatcmpl-" + r.ResponseID
	}
	if r.ModelVersion != "" {
		s.ch.model = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		s.usage = r.UsageMetadata
	}
	s.ch.start()
	if len(r.Candidates) == 0 {
		if r.blocked() && !s.finished {
			s.finished = true
			s.ch.finish("content_filter")
		}
		return nil
	}
	c := r.Candidates[0]
	gmVisible(c.Content.Parts, func(fc *gmFunctionCall) {
		i := s.calls
		s.calls++
		s.ch.toolStart(i, callID(fc, i), fc.Name)
		s.ch.toolArgs(i, compactJSON(fc.Args))
	}, s.ch.text)
	if c.FinishReason != "" && !s.finished {
		s.finished = true
		s.ch.finish(gmFinish(c.FinishReason, s.calls > 0))
	}
	return nil
}
