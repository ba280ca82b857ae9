package providers

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"
	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// Amazon Bedrock Converse and ConverseStream, signed with SigV4.
// Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html.
type bedrock struct {
	*common
	base   string
	region string
	creds  aws.Credentials
	signer *v4.Signer
}

// bedrockHost matches the regional runtime endpoints
// (https://docs.aws.amazon.com/general/latest/gr/bedrock.html).
var bedrockHost = regexp.MustCompile(`^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$`)

func newBedrock(c *common, base string, creds map[string]string) (Provider, error) {
	region := ""
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || u.Host == "" {
			return nil, errors.New("url is not an absolute URL")
		}
		if m := bedrockHost.FindStringSubmatch(u.Hostname()); m != nil {
			region = m[1]
		}
	}
	if region == "" {
		region = creds[wellknown.PurposeAWSRegion]
	}
	if region == "" {
		return nil, errors.New("no region: the url is not https://bedrock-runtime.<region>.amazonaws.com and AWS_REGION is not set")
	}
	if base == "" {
		base = "https://bedrock-runtime." + region + ".amazonaws.com"
	}
	b := &bedrock{common: c, base: strings.TrimSuffix(base, "/"), region: region, signer: v4.NewSigner(),
		creds: aws.Credentials{AccessKeyID: creds[wellknown.PurposeAWSAccessKeyID], SecretAccessKey: creds[wellknown.PurposeAWSSecretKey], SessionToken: creds[wellknown.PurposeAWSSessionToken], Source: "llmkube"}}
	if b.creds.AccessKeyID == "" || b.creds.SecretAccessKey == "" {
		return nil, errors.New("no AWS credentials: the backend needs credentialsSecretRef with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return b, nil
}

func (b *bedrock) BaseURL() string { return b.base }

// Region is the signing region.
func (b *bedrock) Region() string { return b.region }

func (b *bedrock) url(stream bool) (*url.URL, error) {
	op := "converse"
	if stream {
		op = "converse-stream"
	}
	u, err := url.Parse(b.base)
	if err != nil {
		return nil, err
	}
	esc := strings.TrimSuffix(u.EscapedPath(), "/")
	u.Path = strings.TrimSuffix(u.Path, "/") + "/model/" + b.model + "/" + op
	u.RawPath = esc + "/model/" + httpbinding.EscapePath(b.model, true) + "/" + op // as the AWS SDKs escape a URI label (a model ARN's ':' and '/' too)
	return u, nil
}

func (b *bedrock) RoundTrip(req *http.Request) (*http.Response, error) {
	return b.roundTrip(req, b, bedrockError)
}

func (b *bedrock) endpoint(stream bool) (string, string, error) {
	u, err := b.url(stream)
	if err != nil {
		return "", "", err
	}
	return u.String(), "application/vnd.amazon.eventstream", nil
}

// authorize signs the request with SigV4.
func (b *bedrock) authorize(up *http.Request, body []byte) error {
	sum := sha256.Sum256(body)
	if err := b.signer.SignHTTP(up.Context(), b.creds, up, hex.EncodeToString(sum[:]), "bedrock", b.region, b.now()); err != nil {
		return errors.New("bedrock: signing failed")
	}
	return nil
}

// answerID is the completion id of an answer: its request id.
func answerID(resp *http.Response) string { return "chatcmpl-" + resp.Header.Get("X-Amzn-Requestid") }

func (b *bedrock) stream(resp *http.Response, ch chunker) func(*bytes.Buffer) error {
	ch.id = answerID(resp)
	st := &brStream{src: bufio.NewReaderSize(resp.Body, 32<<10), dec: eventstream.NewDecoder(), ch: ch, redact: b.redact}
	return st.step
}

// ---- request ----

type brRequest struct {
	Messages        []turn[brBlock] `json:"messages"`
	System          []brBlock       `json:"system,omitempty"`
	InferenceConfig *brInference    `json:"inferenceConfig,omitempty"`
	ToolConfig      *brToolConfig   `json:"toolConfig,omitempty"`
}

type brBlock struct {
	Text       *string       `json:"text,omitempty"`
	Image      *brImage      `json:"image,omitempty"`
	ToolUse    *brToolUse    `json:"toolUse,omitempty"`
	ToolResult *brToolResult `json:"toolResult,omitempty"`
}

type brImage struct {
	Format string `json:"format"`
	Source struct {
		Bytes string `json:"bytes"`
	} `json:"source"`
}

type brToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type brToolResult struct {
	ToolUseID string    `json:"toolUseId"`
	Content   []brBlock `json:"content"`
}

type brInference struct {
	MaxTokens *int64 `json:"maxTokens,omitempty"`
	sampling
}

type brToolConfig struct {
	Tools      []brTool                   `json:"tools"`
	ToolChoice map[string]json.RawMessage `json:"toolChoice,omitempty"`
}

type brTool struct {
	ToolSpec brToolSpec `json:"toolSpec"`
}

type brToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema struct {
		JSON json.RawMessage `json:"json"`
	} `json:"inputSchema"`
}

// bedrockFormat is the image format of a media type (ImageBlock.format).
func bedrockFormat(mt string) string {
	switch mt {
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpeg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	}
	return ""
}

func (b *bedrock) translate(cr *chatRequest) ([]byte, error) {
	var out brRequest
	var err error
	out.Messages, err = writer[brBlock]{assistant: "assistant",
		system: func(t string) { out.System = append(out.System, brText(t)) },
		text:   brText,
		image:  brImageBlock,
		call: func(tc *toolCall, args json.RawMessage) brBlock {
			return brBlock{ToolUse: &brToolUse{ToolUseID: tc.ID, Name: tc.Function.Name, Input: args}}
		},
		result: func(_ int, m *chatMessage) (brBlock, error) {
			return brBlock{ToolResult: &brToolResult{ToolUseID: m.ToolCallID, Content: []brBlock{brText(m.text())}}}, nil
		},
	}.turns(cr.Messages)
	if err != nil {
		return nil, err
	}
	toolBlocks := slices.ContainsFunc(out.Messages, func(t turn[brBlock]) bool { return slices.ContainsFunc(t.Blocks, brToolBlock) })
	if cr.samplingSet() {
		out.InferenceConfig = &brInference{MaxTokens: cr.maxTokensSet(), sampling: cr.sampling()}
	}
	if len(cr.Tools) > 0 && (cr.choice.mode != "none" || toolBlocks) { // a conversation with tool calls or results needs the tools
		out.ToolConfig = brTools(cr)
	}
	return json.Marshal(out)
}

// brToolBlock reports whether a block is a tool call or a tool result.
func brToolBlock(b brBlock) bool { return b.ToolUse != nil || b.ToolResult != nil }

func brText(t string) brBlock { return brBlock{Text: strp(t)} }

// brImageBlock is an image block: Bedrock takes image bytes only.
func brImageBlock(img *image) (brBlock, error) {
	f := bedrockFormat(img.mediaType)
	if img.data == "" || f == "" {
		return brBlock{}, errors.New("images must be data URLs of png, jpeg, gif or webp (Bedrock takes no image URLs)")
	}
	bi := &brImage{Format: f}
	bi.Source.Bytes = img.data
	return brBlock{Image: bi}, nil
}

// brTools is the tool configuration: the tools' specs and the choice
// (none has no Bedrock form: it is sent as no choice).
func brTools(cr *chatRequest) *brToolConfig {
	tc := &brToolConfig{}
	for _, t := range cr.Tools {
		spec := brToolSpec{Name: t.Function.Name, Description: t.Function.Description}
		spec.InputSchema.JSON = t.inputSchema()
		tc.Tools = append(tc.Tools, brTool{ToolSpec: spec})
	}
	switch cr.choice.mode {
	case "auto":
		tc.ToolChoice = map[string]json.RawMessage{"auto": json.RawMessage(`{}`)}
	case "required":
		tc.ToolChoice = map[string]json.RawMessage{"any": json.RawMessage(`{}`)}
	case "function":
		name, _ := json.Marshal(map[string]string{"name": cr.choice.name})
		tc.ToolChoice = map[string]json.RawMessage{"tool": name}
	}
	return tc
}

// ---- response ----

type brUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	TotalTokens           int64 `json:"totalTokens"`
	CacheReadInputTokens  int64 `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
}

func (u brUsage) openai() usage {
	p := u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
	return newUsage(p, u.OutputTokens, u.TotalTokens, u.CacheReadInputTokens)
}

type brOutBlock struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
}

type brResponse struct {
	Output struct {
		Message struct {
			Content []brOutBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string  `json:"stopReason"`
	Usage      brUsage `json:"usage"`
}

func (b *bedrock) convert(resp *http.Response, raw []byte, created int64) ([]byte, error) {
	r, err := decodeAnswer[brResponse](b.name, raw)
	if err != nil {
		return nil, err
	}
	var ans answer
	for _, c := range r.Output.Message.Content {
		switch {
		case c.Text != nil:
			ans.text.WriteString(*c.Text)
		case c.ToolUse != nil:
			ans.call(c.ToolUse.ToolUseID, c.ToolUse.Name, c.ToolUse.Input)
		}
	}
	return ans.completion(answerID(resp), b.model, created, stopFinish(r.StopReason), r.Usage.openai()), nil
}

// bedrockError reads the x-amzn-ErrorType header and the {"message"} body.
func bedrockError(h http.Header, body []byte) (code, msg string) {
	code, _, _ = strings.Cut(h.Get("X-Amzn-Errortype"), ":")
	var e struct {
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(body, &e)
	if e.Message == "" {
		e.Message = e.MessageU
	}
	return code, e.Message
}

// brStream converts ConverseStream's event-stream messages
// (https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html
// describes the framing) to chat.completion.chunk events.
type brStream struct {
	src     io.Reader
	dec     *eventstream.Decoder
	buf     []byte
	ch      chunker
	usage   *brUsage
	stopped bool
	redact  func(string) string
}

type brEvent struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta *struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
	} `json:"delta"`
	StopReason string   `json:"stopReason"`
	Usage      *brUsage `json:"usage"`
	Message    string   `json:"message"`
}

func header(m eventstream.Message, name string) string {
	if v := m.Headers.Get(name); v != nil {
		return v.String()
	}
	return ""
}

func (s *brStream) step(out *bytes.Buffer) error {
	s.ch.out = out
	m, err := s.dec.Decode(s.src, s.buf[:0])
	if err == io.EOF {
		return s.ch.endStream("bedrock", s.stopped, "before messageStop", openaiUsage(s.usage))
	}
	if err != nil {
		return streamError("bedrock", err)
	}
	s.buf = m.Payload
	var ev brEvent
	if len(m.Payload) > 0 {
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			return streamError("bedrock", errors.New("unreadable event payload"))
		}
	}
	switch header(m, ":message-type") {
	case "event":
	case "exception":
		typ := header(m, ":exception-type")
		return s.fail(typ, ev.Message)
	default: // "error"
		return s.fail(header(m, ":error-code"), header(m, ":error-message"))
	}
	s.event(header(m, ":event-type"), &ev)
	return nil
}

// event converts one event of the stream (other than an exception).
func (s *brStream) event(typ string, ev *brEvent) {
	switch typ {
	case "messageStart":
		s.ch.start()
	case "contentBlockStart":
		if ev.Start != nil && ev.Start.ToolUse != nil {
			s.ch.blockCall(ev.ContentBlockIndex, ev.Start.ToolUse.ToolUseID, ev.Start.ToolUse.Name)
		}
	case "contentBlockDelta":
		s.blockDelta(ev)
	case "messageStop":
		s.stopped = true
		s.ch.finish(stopFinish(ev.StopReason))
	case "metadata":
		if ev.Usage != nil {
			s.usage = ev.Usage
		}
	}
}

// blockDelta continues a text block or a started tool call's arguments.
func (s *brStream) blockDelta(ev *brEvent) {
	d := ev.Delta
	switch {
	case d == nil:
	case d.Text != nil:
		s.ch.text(*d.Text)
	case d.ToolUse != nil:
		s.ch.blockArgs(ev.ContentBlockIndex, d.ToolUse.Input)
	}
}

func (s *brStream) fail(typ, msg string) error {
	return s.ch.fail("bedrock", typ, s.redact(msg), openaiUsage(s.usage))
}
