package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds router-proxy and llmkube-compile once per test run.
func binaries(t *testing.T) (proxyBin, compileBin string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "router-proxy-test")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir, "github.com/llmkube/llmkube-compile/cmd/router-proxy", "github.com/llmkube/llmkube-compile/cmd/llmkube-compile").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(binDir, "router-proxy"), filepath.Join(binDir, "llmkube-compile")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

type proc struct {
	cmd    *exec.Cmd
	listen string
	admin  string
	stderr *syncbuf.Buffer // read while the process writes it
	stdout *syncbuf.Buffer
	done   chan error
}

// render compiles input with the real llmkube-compile binary and returns
// the objects it renders.
func render(t *testing.T, input string) []*unstructured.Unstructured {
	t.Helper()
	_, compile := binaries(t)
	out, err := exec.Command(compile, "render", "-f", input, "-o", "json").Output()
	require.NoError(t, err)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(out, &list))
	var objs []*unstructured.Unstructured
	for _, it := range list.Items {
		objs = append(objs, &unstructured.Unstructured{Object: it})
	}
	return objs
}

// proxyConfig is the router-proxy config a rendered ConfigMap holds.
func proxyConfig(t *testing.T, cm *unstructured.Unstructured) *proxyapi.Config {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	cfg, err := proxyapi.Parse(strings.NewReader(data["config.json"]))
	require.NoError(t, err)
	return cfg
}

// renderConfig compiles a testdata case with the real llmkube-compile
// binary and returns its router-proxy config.
func renderConfig(t *testing.T, input string) *proxyapi.Config {
	t.Helper()
	for _, u := range render(t, input) {
		if u.GetKind() == "ConfigMap" {
			return proxyConfig(t, u)
		}
	}
	t.Fatal("no ConfigMap rendered")
	return nil
}

// writeConfig writes cfg to a file of the test's own and returns its path.
func writeConfig(t *testing.T, cfg *proxyapi.Config) string {
	t.Helper()
	b, err := proxyapi.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// refusedAtStart runs the real binary with args, env added to its
// environment; it must exit non-zero. It returns what the binary printed.
func refusedAtStart(t *testing.T, env []string, args ...string) string {
	t.Helper()
	bin, _ := binaries(t)
	// (A guard, not a timing assertion: a proxy that serves never exits.)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the router-proxy started with %q (env %q):\n%s", args, env, out)
	assert.NotZero(t, exit.ExitCode())
	return string(out)
}

// startProxy runs the real binary on cfg and waits until /ready answers 200.
func startProxy(t *testing.T, cfg *proxyapi.Config, extra ...string) *proc {
	t.Helper()
	return startProxyEnv(t, cfg, nil, extra...)
}

// startProxyEnv is startProxy with extra environment variables.
func startProxyEnv(t *testing.T, cfg *proxyapi.Config, env []string, extra ...string) *proc {
	t.Helper()
	bin, _ := binaries(t)
	path := writeConfig(t, cfg)
	p := &proc{listen: freeAddr(t), admin: freeAddr(t), stderr: &syncbuf.Buffer{}, stdout: &syncbuf.Buffer{}, done: make(chan error, 1)}
	args := append([]string{"--config", path, "--listen", p.listen, "--admin-listen", p.admin}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = p.stderr
	p.cmd.Stdout = p.stdout
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("router-proxy stderr:\n%s", p.stderr.String())
		}
	})
	var exited bool
	var exitErr error
	require.Eventually(t, func() bool {
		select {
		case exitErr = <-p.done:
			p.done <- exitErr // for the cleanup and the tests that wait for the exit
			exited = true
			return true
		default:
		}
		resp, err := http.Get("http://" + p.admin + "/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 20*time.Second, 20*time.Millisecond)
	require.False(t, exited, "router-proxy exited before it was ready (%v):\n%s", exitErr, p.stderr.String())
	return p
}

// chatPath is the OpenAI chat completions path the tests post to.
const chatPath = "/v1/chat/completions"

// answer is one response as a client sees it.
type answer struct {
	code   int
	hdr    http.Header
	body   string
	closes bool // the answer closes its connection
}

// request sends method to path on p's serving address with body and the
// headers hdr, name and value in turn (a name given twice is sent with
// both values), and reads the answer whole. It fails no test, so a
// goroutine may call it.
func (p *proc) request(client *http.Client, method, path, body string, hdr ...string) (answer, error) {
	req, err := http.NewRequest(method, "http://"+p.listen+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // an answer cut short is what the client got
	return answer{resp.StatusCode, resp.Header, string(b), resp.Close}, nil
}

// send posts body to path with the headers hdr.
func (p *proc) send(t *testing.T, path, body string, hdr ...string) answer {
	t.Helper()
	a, err := p.request(http.DefaultClient, http.MethodPost, path, body, hdr...)
	require.NoError(t, err)
	return a
}

// post posts a chat completion and returns the answer's status and body.
func (p *proc) post(t *testing.T, body string, hdr ...string) (int, string) {
	t.Helper()
	a := p.send(t, chatPath, body, hdr...)
	return a.code, a.body
}

// get reads path on the serving address, with a bearer token when one is
// given.
func (p *proc) get(t *testing.T, path, token string) (int, http.Header, string) {
	t.Helper()
	var hdr []string
	if token != "" {
		hdr = []string{"Authorization", "Bearer " + token}
	}
	a, err := p.request(http.DefaultClient, http.MethodGet, path, "", hdr...)
	require.NoError(t, err)
	return a.code, a.hdr, a.body
}

// getBody is the body of a GET of url, whatever its status.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// metrics is the text of p's /metrics.
func (p *proc) metrics(t *testing.T) string {
	t.Helper()
	return getBody(t, "http://"+p.admin+"/metrics")
}

// status reads p's /status.
func (p *proc) status(t *testing.T) proxyapi.Status {
	t.Helper()
	st, err := p.readStatus()
	require.NoError(t, err)
	return st
}

// readStatus reads p's /status, as far as it could be read. It fails no
// test, so a goroutine may call it.
func (p *proc) readStatus() (proxyapi.Status, error) {
	var st proxyapi.Status
	resp, err := http.Get("http://" + p.admin + wellknown.StatusPath)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// stub is a model server on loopback. It answers its health probe
// (/health) 200; every other request it reads whole (as a model server
// does), records when keep says so (none when keep is nil), and then
// answers with serve, the body readable again. It closes when the test
// ends.
type stub struct {
	*httptest.Server
	mu  sync.Mutex
	got []sent
}

// sent is a request a stub recorded.
type sent struct {
	header http.Header
	body   string
}

// everyRequest is the keep of a stub that records every request.
func everyRequest(*http.Request) bool { return true }

func newStub(t *testing.T, keep func(r *http.Request) bool, serve func(w http.ResponseWriter, r *http.Request, body string)) *stub {
	s := &stub{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/health" {
			return
		}
		if keep != nil && keep(r) {
			s.mu.Lock()
			s.got = append(s.got, sent{r.Header.Clone(), string(b)})
			s.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		serve(w, r, string(b))
	}))
	t.Cleanup(s.Close)
	return s
}

// received are the requests the stub recorded, in order.
func (s *stub) received() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sent(nil), s.got...)
}

// headers are the headers of the requests the stub recorded, in order.
func (s *stub) headers() []http.Header {
	var hs []http.Header
	for _, r := range s.received() {
		hs = append(hs, r.header)
	}
	return hs
}

// bodies are the bodies of the requests the stub recorded, in order.
func (s *stub) bodies() []string {
	var bs []string
	for _, r := range s.received() {
		bs = append(bs, r.body)
	}
	return bs
}

// probeEvery is a backend's health check on /health every interval, each
// probe given a second.
func probeEvery(interval time.Duration) proxyapi.HealthCheck {
	return proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: interval}, Timeout: proxyapi.Duration{Duration: time.Second}}
}

// refusedURL is a loopback URL where nothing listens: a backend that is
// down, its connections refused.
func refusedURL() string {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	return s.URL
}

// upstream is a controllable model server: an OpenAI chat completion
// whose id is the upstream's name (served reads it), an event stream when
// the request asks for one, or an Anthropic message on /v1/messages. It
// records every inference request (received).
type upstream struct {
	*stub
	name string
	fail atomic.Bool
	hits atomic.Int64
	// posts counts inference requests only (no probe).
	posts atomic.Int64
}

func newUpstream(t *testing.T, name string) *upstream {
	u := &upstream{name: name}
	u.stub = newStub(t, func(r *http.Request) bool { return r.Method == http.MethodPost }, func(w http.ResponseWriter, r *http.Request, body string) {
		if r.Header.Get("X-Llmkube-Shadow") == "" {
			u.hits.Add(1)
			if r.Method == http.MethodPost {
				u.posts.Add(1)
			}
		}
		if u.fail.Load() {
			w.WriteHeader(500)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/messages") {
			providertest.JSON(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`, name)
			return
		}
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, part := range []string{"Summary", " ready."} {
				fmt.Fprintf(w, "data: {\"id\":%q,\"model\":%q,\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", name, name, part)
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		completion := 5
		if r.Header.Get("X-Big-Usage") != "" {
			completion = 1_000_000_000 // $90 at 0.09 USD per million
		}
		// id names the backend (served reads it): the model the client
		// sees is the one it asked for, whatever the upstream echoes.
		providertest.JSON(w, `{"id":%q,"model":%q,"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}`, name, name, completion, completion+10)
	})
	return u
}

// loopbackBackends points every backend of cfg at an upstream of its own on
// loopback and returns them by backend name, with the environment to start
// the proxy with (credentialEnv).
func loopbackBackends(t *testing.T, cfg *proxyapi.Config) (map[string]*upstream, []string) {
	ups := map[string]*upstream{}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		ups[b.Name] = newUpstream(t, b.Name)
		b.URL = ups[b.Name].URL
	}
	return ups, credentialEnv(cfg)
}

// serveOnLoopback starts the router-proxy of cfg with every backend on a
// loopback upstream of its own (loopbackBackends) and its audit in a file
// (fileAudit): the process, the upstreams by backend name and the audit
// file's path.
func serveOnLoopback(t *testing.T, cfg *proxyapi.Config) (*proc, map[string]*upstream, string) {
	t.Helper()
	ups, env := loopbackBackends(t, cfg)
	auditPath := fileAudit(t, cfg)
	return startProxyEnv(t, cfg, env), ups, auditPath
}

// credentialEnv gives every credential variable of cfg's backends a value
// of the backend's own, provider-key-<backend>.
func credentialEnv(cfg *proxyapi.Config) []string {
	var env []string
	for _, b := range cfg.Backends {
		for _, c := range b.Credentials {
			env = append(env, c.Env+"=provider-key-"+b.Name)
		}
	}
	return env
}

// trustIssuer points cfg's policy.auth.jwt at a new test issuer on
// loopback and returns it.
func trustIssuer(t *testing.T, cfg *proxyapi.Config) *authtest.Issuer {
	t.Helper()
	is := authtest.NewIssuer(t)
	cfg.Policy.Auth.JWT.JWKSURI, cfg.Policy.Auth.JWT.Issuer = is.Server.URL, authtest.IssuerURL
	return is
}

// issuerAuth is a policy.auth that verifies the tokens of a new test
// issuer on loopback, also returned: the team in claim team, sent on in
// the team header.
func issuerAuth(t *testing.T) (*proxyapi.Auth, *authtest.Issuer) {
	t.Helper()
	is := authtest.NewIssuer(t)
	return &proxyapi.Auth{JWT: is.JWT()}, is
}

// bearer is the Authorization value of is's token for team (no audience).
func bearer(t *testing.T, is *authtest.Issuer, team string) string {
	t.Helper()
	return "Bearer " + is.Token(t, team)
}

// ecBearer is bearer signed with the issuer's EC key.
func ecBearer(t *testing.T, is *authtest.Issuer, team string) string {
	t.Helper()
	return "Bearer " + is.Sign(t, jwt.SigningMethodES256, "ec-1", authtest.Claims(team))
}

// chat is a chat request for model with one user message, hi.
func chat(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
}

// chatFor is a chat request for model with one user message.
func chatFor(model, text string) string {
	b, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": text}}})
	return string(b)
}

// mustJSON is v in JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// decodeJSON decodes data into v; JSON of another shape fails the test,
// naming it.
func decodeJSON[D string | []byte](t *testing.T, data D, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal([]byte(data), v), "%s", data)
}

// served is the backend that answered: the id a newUpstream gives its
// answers.
func served(t *testing.T, body string) string {
	var v struct {
		ID string `json:"id"`
	}
	decodeJSON(t, body, &v)
	return v.ID
}

// echoedModel is the model an answer names.
func echoedModel(t *testing.T, body string) string {
	var v struct {
		Model string `json:"model"`
	}
	decodeJSON(t, body, &v)
	return v.Model
}

// TestEndToEnd renders testdata/production-platform with the real compiler,
// points its backends at loopback upstreams and drives the real binary.
func TestEndToEnd(t *testing.T) {
	cfg := renderConfig(t, "../../testdata/production-platform/input.yaml")

	ups := map[string]*upstream{}
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		if b.Kind == proxyapi.KindLocal {
			ups[b.Name] = newUpstream(t, b.Name)
			b.URL = ups[b.Name].URL
		}
		// Activation of the pool's members needs an API server; this test
		// is about routing (pool_test.go runs activation end to end).
		b.Pool = nil
	}
	require.Contains(t, ups, "qwen")
	require.Contains(t, ups, "coder")
	auditPath := fileAudit(t, cfg)
	p := startProxy(t, cfg)

	// Routing: rules in order, then BackendNameMatch, then the default route.
	code, body := p.post(t, `{"model":"qwen3-coder-30b"}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "coder", served(t, body))
	_, body = p.post(t, `{"model":"writer"}`)
	assert.Equal(t, "writer", served(t, body))
	_, body = p.post(t, `{"model":"anything"}`, "x-agent-mode", "on")
	assert.Equal(t, "qwen", served(t, body), "weighted rule; claude (anthropic) cannot serve in this build")
	_, body = p.post(t, `{"model":"unknown"}`)
	assert.Equal(t, "qwen", served(t, body), "default route")

	// Budgets: team scope, maxUSD 50.
	code, _ = p.post(t, `{"model":"unknown"}`, "x-llmkube-team", "red", "x-big-usage", "1")
	require.Equal(t, 200, code)
	code, body = p.post(t, `{"model":"unknown"}`, "x-llmkube-team", "red")
	assert.Equal(t, http.StatusTooManyRequests, code, body)
	assert.Contains(t, body, "budget_exceeded")
	code, _ = p.post(t, `{"model":"unknown"}`, "x-llmkube-team", "blue")
	assert.Equal(t, 200, code)
	st := p.status(t)
	assert.Equal(t, "platform", st.Router.Name)
	byName := map[string]proxyapi.BudgetStatus{}
	for _, b := range st.Budgets {
		byName[b.Name] = b
	}
	assert.Equal(t, "1.000000", byName["team"].Utilization)
	for _, b := range st.Backends {
		if b.Name == "claude" {
			assert.False(t, b.Healthy)
			assert.NotEmpty(t, b.Message)
		}
	}

	// Failover: coder fails, the code rule falls over to qwen.
	ups["coder"].fail.Store(true)
	qwenBefore := ups["qwen"].hits.Load()
	code, body = p.post(t, `{"model":"code-assist"}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "qwen", served(t, body))
	assert.Equal(t, qwenBefore+1, ups["qwen"].hits.Load())

	// Fail-closed: phi requests may only reach qwen/coder; both down -> 503
	// and nothing else is tried.
	ups["qwen"].fail.Store(true)
	code, body = p.post(t, `{"model":"anything"}`, "x-llmkube-classification", "PHI")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "fail_closed")
	writerHits := ups["writer"].hits.Load()
	code, _ = p.post(t, `{"model":"anything"}`, "x-llmkube-classification", "phi")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, writerHits, ups["writer"].hits.Load())

	// The audit file has one entry per request; SIGTERM flushes it.
	entries, _ := stopForAudit(t, p, auditPath)
	require.Len(t, entries, 10)
	last := entries[len(entries)-1]
	assert.Equal(t, proxyapi.OutcomeFailClosed, last.Outcome)
	assert.Equal(t, "phi-local", last.Rule)
	assert.Equal(t, "phi", last.Classification)
}

// fileAudit makes cfg audit to a file of the test's own and returns its
// path.
func fileAudit(t *testing.T, cfg *proxyapi.Config) string {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Policy.Audit.Sink, cfg.Policy.Audit.FilePath = proxyapi.SinkFile, path
	return path
}

// stopForAudit stops the router-proxy (SIGTERM flushes its audit; it must
// exit cleanly) and returns the entries of the audit file at auditPath and
// the file's text, for what it must never hold.
func stopForAudit(t *testing.T, p *proc, auditPath string) ([]proxyapi.AuditEntry, string) {
	t.Helper()
	p.stop(t)
	raw, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	return auditEntries(t, raw), string(raw)
}

// stop sends p SIGTERM and waits for it to exit cleanly.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
}

// auditEntries decodes an audit log written to a file, one entry a line.
func auditEntries(t *testing.T, raw []byte) []proxyapi.AuditEntry {
	t.Helper()
	var entries []proxyapi.AuditEntry
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var e proxyapi.AuditEntry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		entries = append(entries, e)
	}
	require.NoError(t, sc.Err())
	return entries
}

// auditSoFar is the entries of the audit file at path whose lines are
// written whole so far: none before the file exists.
func auditSoFar(t *testing.T, path string) []proxyapi.AuditEntry {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return auditEntries(t, raw[:bytes.LastIndexByte(raw, '\n')+1])
}

// streamingUpstream is a backend that answers its health check, and a chat
// with an event stream: first, flushed, then what rest writes.
func streamingUpstream(t *testing.T, first string, rest func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, first)
		w.(http.Flusher).Flush()
		rest(w, r)
	}))
	t.Cleanup(up.Close)
	return up
}

// SIGTERM stops accepting, lets a running stream finish, then exits 0.
func TestShutdownDrainsStreams(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	up := streamingUpstream(t, "data: {\"choices\":[{\"delta\":{\"content\":\"first\"}}]}\n\n", func(w http.ResponseWriter, _ *http.Request) {
		started <- struct{}{}
		<-release
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"last\"}}]}\n\ndata: [DONE]\n\n")
	})
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Second}},
		Backends:   []proxyapi.Backend{{Name: "a", ModelID: "a", Kind: proxyapi.KindLocal, Tier: "local", URL: up.URL, Weight: 1, HealthCheck: probeEvery(time.Hour)}},
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: "a"},
		Policy:     proxyapi.Policy{Audit: proxyapi.Audit{Sink: "stdout"}},
	}
	p := startProxy(t, cfg, "--shutdown-timeout", "1m")
	resp, err := http.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"a","stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "first")
	<-started

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// New connections are refused once the listener closes.
	waitListenerClosed(t, p.listen, 20*time.Second)
	select {
	case err := <-p.done:
		t.Fatalf("exited before the stream finished: %v", err)
	default:
	}
	close(release)
	rest, err := io.ReadAll(rd)
	require.NoError(t, err, "the in-flight stream finishes cleanly")
	assert.Contains(t, string(rest), "last")
	assert.Contains(t, string(rest), "[DONE]")
	require.NoError(t, <-p.done, "clean exit")
}

// A stream longer than --shutdown-timeout is cut at the deadline.
func TestShutdownDeadline(t *testing.T) {
	up := streamingUpstream(t, "data: {}\n\n", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}},
		Backends:   []proxyapi.Backend{{Name: "a", Kind: proxyapi.KindLocal, Tier: "local", URL: up.URL, Weight: 1}},
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: "a"},
	}
	auditPath := fileAudit(t, cfg)
	p := startProxy(t, cfg, "--shutdown-timeout", "200ms")
	resp, err := http.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"a","stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	p.stop(t)
	_, err = io.ReadAll(resp.Body)
	assert.Error(t, err, "the stream is cut at the drain deadline")
	audit, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"outcome":"shutdown_deadline"`, "a stream cut at the drain deadline has its own outcome, not client_cancelled")
}

func TestBadFlagsAndConfig(t *testing.T) {
	var stderr bytes.Buffer
	assert.Error(t, run([]string{"--nope"}, io.Discard, &stderr))
	bad := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"apiVersion":"x"}`), 0o600))
	err := run([]string{"--config", bad}, io.Discard, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "apiVersion")
}

// TestDebugPprofIsOptIn: the profiler is served on the admin address only
// with --debug-pprof.
func TestDebugPprofIsOptIn(t *testing.T) {
	up := newUpstream(t, "a")
	for _, on := range []bool{false, true} {
		var extra []string
		if on {
			extra = append(extra, "--debug-pprof")
		}
		p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal), extra...)
		resp, err := http.Get("http://" + p.admin + "/debug/pprof/")
		require.NoError(t, err)
		resp.Body.Close()
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		assert.Equal(t, want, resp.StatusCode, "--debug-pprof=%v", on)
	}
}

// After SIGTERM the proxy fails readiness at once but keeps accepting and
// serving for --drain-delay, each answer closing its connection, so clients
// that kube-proxy still sends here are answered and reconnect elsewhere;
// only then does the listener close. The real-cluster rollout test found
// requests refused and reset when the listener closed at SIGTERM.
func TestShutdownDrainDelayKeepsServing(t *testing.T) {
	up := newStub(t, nil, func(w http.ResponseWriter, _ *http.Request, _ string) {
		providertest.JSON(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	// The delay is long enough that a busy machine still finds the proxy in
	// it after the readiness check and three requests.
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal), "--drain-delay", "15s", "--shutdown-timeout", "40s")
	// A keep-alive connection opened before the signal.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	post := func() (answer, error) {
		return p.request(client, http.MethodPost, chatPath, chat("a"), "Content-Type", "application/json")
	}
	a, err := post()
	require.NoError(t, err)
	assert.False(t, a.closes, "before SIGTERM the connection is kept")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		r, err := http.Get("http://" + p.admin + "/ready")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusServiceUnavailable
	}, 10*time.Second, 10*time.Millisecond, "readiness fails at once")

	// Still serving: the kept connection and new ones are answered, and each
	// answer says Connection: close.
	for i := 0; i < 3; i++ {
		a, err := post()
		require.NoError(t, err, "request %d during the drain delay", i)
		assert.Equal(t, http.StatusOK, a.code, "%s", a.body)
		assert.True(t, a.closes, "an answer during the drain delay closes its connection")
	}
	select {
	case err := <-p.done:
		t.Fatalf("exited during the drain delay: %v", err)
	default:
	}
	// Then the listener closes and the process exits cleanly.
	waitListenerClosed(t, p.listen, time.Minute)
	require.NoError(t, <-p.done, "clean exit")
}

// waitListenerClosed waits until a new connection to addr is refused.
func waitListenerClosed(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	}, within, 10*time.Millisecond, "the listener at %s still accepts", addr)
}

// TestIdleConnectionsDoNotStarveNewClients: with more idle keep-alive
// connections open than --max-connections, a new client is served (the
// longest-idle connection gives up its slot), as nginx does; a client that
// keeps its connection busy is never the one closed.
func TestIdleConnectionsDoNotStarveNewClients(t *testing.T) {
	up := newUpstream(t, "qwen")
	p := startProxy(t, qwenConfig(up.URL), "--max-connections", "4")
	const idle = 12
	for range idle {
		c, err := net.Dial("tcp", p.listen)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		// A request, answered, then the connection kept open and idle; it
		// may be one whose slot a later connection has already taken.
		_, _ = io.WriteString(c, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	// The server counts a connection idle just after its answer is
	// written, so the last answer's slot may not be free yet: a new client
	// is served once it is (a server that starves it never serves it).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		code, body := p.post(t, `{"model":"qwen"}`)
		if code == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "a new client past the bound of idle connections: %d %s", code, body)
	}
}

// TestConfigOfAnotherGenerationIsRefused: with LLMKUBE_CONFIG_SHA256 (the
// pod template's config hash, by the downward API) the router-proxy starts
// only on the file that hash names. A pod that mounts another generation's
// ConfigMap (the controller stopped between writing it and the Deployment)
// exits, never ready, instead of serving that config under this template.
func TestConfigOfAnotherGenerationIsRefused(t *testing.T) {
	bin, _ := binaries(t)
	path := writeConfig(t, oneBackend("http://127.0.0.1:1", proxyapi.KindLocal))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	own := hex.EncodeToString(sum[:])

	// The matching hash: serving, and it says which config.
	ok := exec.Command(bin, "--config", path, "--listen", freeAddr(t), "--admin-listen", freeAddr(t))
	ok.Env = append(os.Environ(), wellknown.ConfigHashEnv+"="+own)
	stderr, err := ok.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, ok.Start())
	t.Cleanup(func() { _ = ok.Process.Kill(); _ = ok.Wait() })
	sc := bufio.NewScanner(stderr)
	serving := ""
	for serving == "" && sc.Scan() {
		if strings.Contains(sc.Text(), "router-proxy serving") {
			serving = sc.Text()
		}
	}
	assert.Contains(t, serving, `"configSHA256":"`+own+`"`)

	// Another generation's hash: refused at start, with the reason.
	other := strings.Repeat("ab", 32)
	out := refusedAtStart(t, []string{wellknown.ConfigHashEnv + "=" + other}, "--config", path, "--listen", freeAddr(t), "--admin-listen", freeAddr(t))
	assert.Contains(t, out, "another generation")
	assert.Contains(t, out, own, "names the file's hash")
	assert.Contains(t, out, other, "and the one the pod expects")
}

// With --listen and --admin-listen on port 0 (the laptop run), the
// "router-proxy serving" line names the ports bound, the admin one too:
// it is the only place a caller learns where /status is.
func TestServingLogNamesTheBoundAdminAddress(t *testing.T) {
	bin, _ := binaries(t)
	up := newUpstream(t, "local")
	path := writeConfig(t, quotaConfig(t, up.URL)) // one local backend
	stderr := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--config", path, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var line struct{ Listen, Admin string }
	ok := assert.Eventually(t, func() bool {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, `"msg":"router-proxy serving"`) {
				return json.Unmarshal([]byte(l), &line) == nil
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond)
	require.True(t, ok, "no serving line:\n%s", stderr.String())
	assert.NotEqual(t, "127.0.0.1:0", line.Admin)
	resp, err := http.Get("http://" + line.Admin + "/ready")
	require.NoError(t, err, "the logged admin address %q", line.Admin)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	resp, err = http.Get("http://" + line.Listen + "/health")
	require.NoError(t, err, "the logged serving address %q", line.Listen)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}
