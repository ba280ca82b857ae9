package routerproxy

// The MCP endpoint (spec.mcpServer): the router as a Model Context Protocol
// server, one tool per model it publishes. Transport, bearer-token
// middleware and protected-resource metadata are the official Go SDK's; a
// tool call is handed to the inference handler as the POST
// /v1/chat/completions it stands for, so rules, classification, fail-closed,
// allowlists, budgets, failover, audit, metrics and traces are those of the
// HTTP API, not a copy (docs/mcp.md).

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth"
)

// MCPPath is where the endpoint is served on the serving listener.
const MCPPath = "/mcp"

// mcpMetadataPath is the RFC 9728 well-known location of the protected
// resource metadata; the resource's own path is appended to it
// (/.well-known/oauth-protected-resource/mcp). The bare form is served only
// for a resourceURL without a path (RFC 9728 §3.3).
const mcpMetadataPath = "/.well-known/oauth-protected-resource"

// maxMCPAnswer bounds the answer an MCP tool call buffers.
const maxMCPAnswer = 16 << 20

// mcpServer is the router-proxy's MCP endpoint.
type mcpServer struct {
	handler  http.Handler // /mcp: bearer token, origin check, Streamable HTTP
	metadata http.Handler // the RFC 9728 document
	// metadataPath is where the document is served: the well-known prefix
	// and resourceURL's path (RFC 9728 §3.1), and nowhere else.
	metadataPath string
	metadataURL  string
	resource     *url.URL
	tools        []mcpTool      // in the router's order
	order        map[string]int // a tool's name to its index in tools
}

// mcpTool is one model offered as a tool.
type mcpTool struct {
	name   string // the tool's name (mcpToolName of the model id)
	model  string // the model id /v1/models publishes
	vision bool   // the model takes image content
}

// mcpCallKey marks a request the MCP endpoint hands to the inference
// handler with its *mcpCall: the audit entry says so and names the tool.
type mcpCallKey struct{}

// mcpCall is one tool call through the inference handler: the tool, and
// the published model id of the backend that answered it (set by the
// failover when a backend's response is relayed), which the structured
// result names: the upstream's echo names the model the tool asked for,
// or whatever the runtime calls itself.
type mcpCall struct {
	tool   string
	served string
}

// mcpTeamKey carries the verified team from the token check to tools/list.
type mcpTeamKey struct{}

// newMCPServer builds the endpoint of a config with MCP set (the config's
// validation guarantees policy.auth.jwt).
func (s *Server) newMCPServer(cfg *proxyapi.Config) (*mcpServer, error) {
	res, err := url.Parse(cfg.MCP.ResourceURL)
	if err != nil {
		return nil, fmt.Errorf("mcp.resourceURL: %w", err)
	}
	m := &mcpServer{resource: res}
	m.metadataPath = mcpMetadataPath + strings.TrimSuffix(res.EscapedPath(), "/")
	m.metadataURL = res.Scheme + "://" + res.Host + m.metadataPath
	m.metadata = mcpauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               cfg.MCP.ResourceURL,
		AuthorizationServers:   []string{cfg.Policy.Auth.JWT.Issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "LLMKube router " + cfg.Router.Namespace + "/" + cfg.Router.Name,
	})
	m.tools = mcpTools(cfg)
	m.order = make(map[string]int, len(m.tools))
	for i, t := range m.tools {
		m.order[t.name] = i
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "llmkube-router-proxy", Title: "LLMKube router " + cfg.Router.Namespace + "/" + cfg.Router.Name, Version: version.Get().Version}, &mcp.ServerOptions{
		// One page holds every tool, so the router's order is the whole
		// list's, not each page's (the CRD bounds the backends far below
		// the SDK's default).
		PageSize: max(mcp.DefaultPageSize, len(m.tools)),
		// What the endpoint does, declared (initialize and the 2026-07-28
		// server/discover): tools; and prompts and resources, which the
		// SDK answers with empty lists whatever is declared, and which
		// some clients list on connect and treat a "method not found" as
		// a broken server. No listChanged: a stateless server keeps no
		// session to notify. No logging: nothing is logged to clients.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
		},
		// Every answer is to the holder of a bearer token, and tools/list
		// depends on the caller's team (its allowlist): never "public"
		// (the SDK's default), which lets any intermediary cache one
		// team's list and serve it to another (the 2026-07-28 draft's
		// cacheScope, as HTTP's Cache-Control: private).
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
		Instructions: "Each tool is a model this router serves: call it with a chat request (messages and generation parameters); the answer's text comes back with its usage. The router's rules, data classification, allowlists and budgets apply to every call.",
	})
	for _, t := range m.tools {
		def, err := t.definition()
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %w", t.name, err)
		}
		srv.AddTool(def, s.mcpToolHandler(t))
	}
	// tools/list shows a team only the models its allowlist reaches; a call
	// to another model's tool still reaches the inference handler, which
	// refuses it as the HTTP API does (a tool error, nothing upstream).
	// The tools come in the router's order, as /v1/models lists the
	// models (the spec's order: an operator lists the model to prefer
	// first); the SDK lists them by name, the order its page cursor walks,
	// and every tool is on its one page (see PageSize below).
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				tools := slices.Clone(lr.Tools)
				if s.auth.Enforced() {
					team, _ := ctx.Value(mcpTeamKey{}).(string)
					if ti := req.GetExtra(); team == "" && ti != nil && ti.TokenInfo != nil {
						team, _ = ti.TokenInfo.Extra["team"].(string)
					}
					tools = slices.DeleteFunc(tools, func(t *mcp.Tool) bool {
						return !s.auth.Allowed(team, m.modelOf(t.Name))
					})
				}
				slices.SortStableFunc(tools, func(a, b *mcp.Tool) int { return cmp.Compare(m.order[a.Name], m.order[b.Name]) })
				lr.Tools = tools
			}
			return res, err
		}
	})
	transport := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: s.maxBody,
	})
	verify := s.auth.ForAudiences(cfg.MCP.ResourceURL)
	bearer := mcpauth.RequireBearerToken(func(ctx context.Context, token string, r *http.Request) (*mcpauth.TokenInfo, error) {
		// An API key of this router is its own: it needs no audience
		// (docs/api-keys.md#mcp).
		if id, exp, aerr, found := verify.KeyIdentity(token); found {
			if aerr != nil {
				return nil, fmt.Errorf("%w: %s", mcpauth.ErrInvalidToken, aerr.Msg)
			}
			return &mcpauth.TokenInfo{UserID: id.Key, Expiration: exp, Extra: map[string]any{"team": id.Team}}, nil
		}
		v, aerr := verify.Verify(ctx, token)
		if aerr != nil {
			return nil, fmt.Errorf("%w: %s", mcpauth.ErrInvalidToken, aerr.Msg)
		}
		return &mcpauth.TokenInfo{UserID: v.Subject, Expiration: v.Expiration, Extra: map[string]any{"team": v.Team}}, nil
	}, &mcpauth.RequireBearerTokenOptions{
		ResourceMetadataURL: m.metadataURL, ClockSkew: auth.Leeway,
		// A JWT's exp is required by its parser; an API key may have none.
		AllowMissingExpiration: true,
	})
	m.handler = m.checkOrigin(invalidTokenChallenge(bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cw, ok := w.(*challengeWriter); ok {
			w = cw.ResponseWriter // past the token check: the transport writes to the connection
		}
		if ti := mcpauth.TokenInfoFromContext(r.Context()); ti != nil {
			if team, ok := ti.Extra["team"].(string); ok {
				r = r.WithContext(context.WithValue(r.Context(), mcpTeamKey{}, team))
			}
		}
		transport.ServeHTTP(w, r)
	}))))
	return m, nil
}

// invalidTokenChallenge adds error="invalid_token" to the 401 challenge of
// a request that presented a bearer token (RFC 6750 §3.1): the SDK's
// RequireBearerToken names only resource_metadata, so a client could not
// tell a refused token (get a new one) from a missing one (authorize).
// A request without a token gets no error code, as RFC 6750 §3.1 asks; one
// with two Authorization headers is refused 400 invalid_request, as on the
// inference paths (the SDK would read the first).
func invalidTokenChallenge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.Header.Values("Authorization")); n > 1 {
			e := auth.MultipleCredentials("Authorization", n)
			answer(w, authRefusal(e), e.Msg)
			return
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&challengeWriter{ResponseWriter: w}, r)
	})
}

// challengeWriter rewrites the challenge of a 401 as it is sent.
type challengeWriter struct{ http.ResponseWriter }

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		h := c.Header()
		if v := h.Get("WWW-Authenticate"); v != "" && !strings.Contains(v, "error=") {
			h.Set("WWW-Authenticate", v+`, error="invalid_token"`)
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// checkOrigin refuses a browser request from another origin (DNS-rebinding
// and cross-site requests, as the Streamable HTTP transport requires): an
// Origin header must be the resource URL's origin, or a localhost origin
// on a request whose Host is localhost too (a page beside kubectl
// port-forward); a rebinding attacker's page sends its own host in both.
// Clients that are not browsers send none.
func (m *mcpServer) checkOrigin(next http.Handler) http.Handler {
	want := m.resource.Scheme + "://" + m.resource.Host
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, want) && !(isLocalhost(originHost(o)) && isLocalhost(r.Host)) {
			writeError(w, http.StatusForbidden, "permission_error", "origin_not_allowed", "Origin "+strings.ToValidUTF8(o, "?")+" is not this MCP endpoint's ("+want+")")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originHost is an origin's host[:port].
func originHost(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return u.Host
}

// isLocalhost reports whether host[:port] names the loopback interface.
func isLocalhost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	return strings.EqualFold(h, "localhost") || h == "127.0.0.1" || h == "::1"
}

func (m *mcpServer) modelOf(tool string) string {
	for _, t := range m.tools {
		if t.name == tool {
			return t.model
		}
	}
	return ""
}

// mcpTools are the models /v1/models publishes (displayName or name, each
// once, in config order), each a tool named by mcpToolName. Two ids that
// map to one name get -2, -3... in order.
func mcpTools(cfg *proxyapi.Config) []mcpTool {
	var out []mcpTool
	names := map[string]bool{}
	for _, pm := range publishedModels(cfg) {
		id, b := pm.id, pm.backend
		base := mcpToolName(id)
		name := base
		for k := 2; names[name]; k++ {
			suffix := "-" + strconv.Itoa(k)
			name = base[:min(len(base), mcpToolNameMax-len(suffix))] + suffix
		}
		names[name] = true
		out = append(out, mcpTool{name: name, model: id, vision: slices.Contains(inputModalities(b), "image")})
	}
	return out
}

// mcpToolNameMax is the longest tool name the MCP specification allows
// (tool names are 1 to 128 characters; the Go SDK logs longer ones as
// invalid).
const mcpToolNameMax = 128

// mcpToolName is a model id as an MCP tool name: the characters the spec
// allows (letters, digits, '_', '-', '.') kept, every other one '_', at
// most mcpToolNameMax characters.
func mcpToolName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > mcpToolNameMax {
		b = b[:mcpToolNameMax]
	}
	if len(b) == 0 {
		return "model"
	}
	return string(b)
}

// definition is the tool as tools/list shows it: its input and output
// schemas are derived from the Go types a call is decoded into and its
// result is encoded from (mcpToolArgs, mcpToolOutput).
func (t mcpTool) definition() (*mcp.Tool, error) {
	in, err := mcpInputSchema(t.vision)
	if err != nil {
		return nil, err
	}
	out, err := jsonschema.For[mcpToolOutput](nil)
	if err != nil {
		return nil, err
	}
	desc := "Chat with the model " + t.model + " through the router (its rules, data classification, allowlists and budgets apply). Text only."
	if t.vision {
		desc = "Chat with the model " + t.model + " through the router (its rules, data classification, allowlists and budgets apply). Takes text and images (content parts)."
	}
	return &mcp.Tool{
		Name:         t.name,
		Title:        t.model,
		Description:  desc,
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, nil
}

func ptr[T any](v T) *T { return &v }

// mcpToolArgs are the tool's input: a chat request without model and
// stream, which the tool decides. The tool's input schema is this type's
// (mcpInputSchema): a call with a member it does not name is refused.
type mcpToolArgs struct {
	Messages    []mcpMessage `json:"messages"`
	Temperature *float64     `json:"temperature,omitempty"`
	TopP        *float64     `json:"top_p,omitempty"`
	MaxTokens   *int64       `json:"max_tokens,omitempty"`
	Stop        mcpStop      `json:"stop,omitzero"`
	Seed        *int64       `json:"seed,omitempty"`
}

// mcpMessage is one chat message, passed on as the client wrote it; its
// schema (a role and a content) is mcpMessageSchema.
type mcpMessage struct{ json.RawMessage }

// mcpStop is the stop sequence, or sequences, passed on as written.
type mcpStop struct{ json.RawMessage }

// mcpInputSchema is the schema of mcpToolArgs, with what its Go types
// cannot say: the message's shape (which a vision model's tool widens to
// content parts), the one message at least, the sampling bounds.
func mcpInputSchema(vision bool) (*jsonschema.Schema, error) {
	str := &jsonschema.Schema{Type: "string"}
	s, err := jsonschema.For[mcpToolArgs](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[mcpMessage](): mcpMessageSchema(vision),
		reflect.TypeFor[mcpStop]():    {AnyOf: []*jsonschema.Schema{str, {Type: "array", Items: str}}},
	}})
	if err != nil {
		return nil, err
	}
	p := s.Properties
	p["messages"].MinItems = ptr(1)
	p["temperature"].Minimum, p["temperature"].Maximum = ptr(0.0), ptr(2.0)
	p["top_p"].Minimum, p["top_p"].Maximum = ptr(0.0), ptr(1.0)
	p["max_tokens"].Minimum = ptr(1.0)
	return s, nil
}

// mcpMessageSchema is a message's schema: a role and a text content, or,
// for a vision model, OpenAI content parts (text and images) too.
func mcpMessageSchema(vision bool) *jsonschema.Schema {
	str := &jsonschema.Schema{Type: "string"}
	content := str
	if vision {
		content = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{str, {Type: "array", Items: &jsonschema.Schema{
			Type:     "object",
			Required: []string{"type"},
			Properties: map[string]*jsonschema.Schema{
				"type":      {Type: "string", Enum: []any{"text", "image_url"}},
				"text":      str,
				"image_url": {Type: "object", Required: []string{"url"}, Properties: map[string]*jsonschema.Schema{"url": str}},
			},
		}}}}
	}
	return &jsonschema.Schema{
		Type:     "object",
		Required: []string{"role", "content"},
		Properties: map[string]*jsonschema.Schema{
			"role":    {Type: "string", Enum: []any{"system", "user", "assistant"}},
			"content": content,
		},
	}
}

// mcpToolOutput is a call's structured result; the tool's output schema is
// this type's.
type mcpToolOutput struct {
	// Model is the published id of the backend that served the call.
	Model        string   `json:"model"`
	FinishReason string   `json:"finish_reason"`
	Usage        mcpUsage `json:"usage"`
}

type mcpUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// mcpToolHandler runs one tool call: the chat request it stands for goes
// through the inference handler with the caller's headers (its bearer token
// among them), and the answer, or the refusal, comes back as the result.
func (s *Server) mcpToolHandler(t mcpTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		var args mcpToolArgs
		dec := json.NewDecoder(bytes.NewReader(req.Params.Arguments))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return toolError("invalid arguments: " + err.Error()), nil
		}
		if len(args.Messages) == 0 {
			return toolError("invalid arguments: messages must hold at least one message"), nil
		}
		if !t.vision && hasImagePart(args.Messages) {
			return toolError("model " + t.model + " takes text only; this message has image content"), nil
		}
		body, err := json.Marshal(struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
			mcpToolArgs
		}{t.model, false, args})
		if err != nil {
			return toolError("encoding the chat request: " + err.Error()), nil
		}
		call := &mcpCall{tool: t.name}
		hr, err := http.NewRequestWithContext(context.WithValue(ctx, mcpCallKey{}, call), http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if extra := req.GetExtra(); extra != nil {
			for k, v := range extra.Header {
				if !mcpDropHeader[http.CanonicalHeaderKey(k)] {
					hr.Header[k] = slices.Clone(v)
				}
			}
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.ContentLength = int64(len(body))
		hr.RemoteAddr, _ = ctx.Value(mcpRemoteKey{}).(string)
		rec := &mcpRecorder{header: http.Header{}}
		defer func() {
			// A response broken mid-body aborts the handler (as it aborts
			// an HTTP client's connection): a tool error here.
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					panic(p)
				}
				res, err = toolError("the upstream response broke off"), nil
			}
		}()
		s.inference(rec, hr)
		return mcpResult(rec, call.served), nil
	}
}

// mcpRemoteKey carries the MCP request's peer address to the tool call
// (the audit's client address).
type mcpRemoteKey struct{}

// mcpDropHeader are the MCP request's headers that do not belong on the
// chat request: the transport's own and the body's framing.
var mcpDropHeader = map[string]bool{
	"Content-Length": true, "Content-Type": true, "Accept": true, "Accept-Encoding": true, "Mcp-Session-Id": true,
	"Mcp-Protocol-Version": true, "Last-Event-Id": true, "Origin": true, "Connection": true, "Transfer-Encoding": true,
}

// hasImagePart reports whether a message has a content part other than
// text.
func hasImagePart(msgs []mcpMessage) bool {
	for _, raw := range msgs {
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw.RawMessage, &m) != nil {
			continue
		}
		var parts []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p.Type != "text" {
				return true
			}
		}
	}
	return false
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// mcpResult turns the inference handler's answer into the tool's result:
// the completion's text with the model that served it (served, the
// backend's published id) and its usage in structured content; the
// router's refusal, or an error a backend answered with, as a tool error.
func mcpResult(rec *mcpRecorder, served string) *mcp.CallToolResult {
	if rf := rec.refusal; rf != nil {
		return toolError(fmt.Sprintf("the router refused the call with HTTP %d: %s (%s)", refusals[rf.kind].status, rf.msg, refusals[rf.kind].code))
	}
	body := rec.body.Bytes()
	if rec.status >= 300 {
		return toolError(fmt.Sprintf("the model's backend answered HTTP %d: %s", rec.status, upstreamErrorMessage(body)))
	}
	var c struct {
		Choices []struct {
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage mcpUsage `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return toolError("the model's answer is not a chat completion: " + err.Error())
	}
	var text strings.Builder
	finish := ""
	if len(c.Choices) > 0 {
		finish = c.Choices[0].FinishReason
		switch v := c.Choices[0].Message.Content.(type) {
		case string:
			text.WriteString(v)
		case []any:
			for _, p := range v {
				if m, ok := p.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						text.WriteString(s)
					}
				}
			}
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text.String()}},
		StructuredContent: mcpToolOutput{Model: served, FinishReason: finish, Usage: c.Usage},
	}
}

// upstreamErrorMessage is the message of an error a backend answered with
// and the router relayed (an OpenAI error object, with its code), or the
// body as it came.
func upstreamErrorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return strings.TrimSpace(string(body))
	}
	if c, ok := e.Error.Code.(string); ok && c != "" {
		return e.Error.Message + " (" + c + ")"
	}
	return e.Error.Message
}

// mcpRecorder buffers the inference handler's answer to a tool call. A
// refusal (answer) is handed to it as it is, its kind and message, not
// written as an OpenAI error to be parsed back.
type mcpRecorder struct {
	header  http.Header
	status  int
	body    bytes.Buffer
	refusal *mcpRefusal
}

// mcpRefusal is how the router refused a tool call.
type mcpRefusal struct {
	kind refusalKind
	msg  string
}

// refuse records the router's refusal of the call.
func (r *mcpRecorder) refuse(k refusalKind, msg string) {
	r.refusal = &mcpRefusal{kind: k, msg: msg}
	r.WriteHeader(refusals[k].status)
}

func (r *mcpRecorder) Header() http.Header { return r.header }

func (r *mcpRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *mcpRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(b) > maxMCPAnswer {
		return 0, errors.New("the answer is larger than an MCP tool call buffers")
	}
	return r.body.Write(b)
}

// SetWriteDeadline and SetReadDeadline let http.ResponseController's calls
// in the inference handler succeed: the buffer neither blocks nor reads.
func (r *mcpRecorder) SetWriteDeadline(time.Time) error { return nil }
func (r *mcpRecorder) SetReadDeadline(time.Time) error  { return nil }
func (r *mcpRecorder) Flush()                           {}

// serveMCP serves the endpoint and its metadata; ok is false for other
// paths.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) (ok bool) {
	m := s.mcp
	if m == nil {
		return false
	}
	switch {
	case r.URL.Path == MCPPath:
		r = r.WithContext(context.WithValue(r.Context(), mcpRemoteKey{}, r.RemoteAddr))
		m.handler.ServeHTTP(w, r)
	case r.URL.EscapedPath() == m.metadataPath:
		m.metadata.ServeHTTP(w, r)
	case r.URL.Path == mcpMetadataPath || strings.HasPrefix(r.URL.Path, mcpMetadataPath+"/"):
		// RFC 9728 §3.3: a document's resource must be the identifier its
		// URL was built from. The bare path stands for the origin and any
		// other suffix for another resource, neither of which this router
		// protects under resourceURL's audience: no document there.
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url",
			"no protected resource here: the metadata of "+m.resource.String()+" is at "+m.metadataURL)
	default:
		return false
	}
	return true
}
