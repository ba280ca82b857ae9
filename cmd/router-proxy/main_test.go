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

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/test/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// startProxy runs the real binary on cfg and waits until /ready answers 200.
func startProxy(t *testing.T, cfg *proxyapi.Config, extra ...string) *proc {
	t.Helper()
	return startProxyEnv(t, cfg, nil, extra...)
}

// startProxyEnv is startProxy with extra environment variables.
func startProxyEnv(t *testing.T, cfg *proxyapi.Config, env []string, extra ...string) *proc {
	t.Helper()
	bin, _ := binaries(t)
	b, err := proxyapi.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
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

func (p *proc) post(t *testing.T, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.listen+"/v1/chat/completions", strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// upstream is a controllable OpenAI stub.
type upstream struct {
	*httptest.Server
	name string
	fail atomic.Bool
	hits atomic.Int64
	// posts counts inference requests only (no probe).
	posts atomic.Int64
}

func newUpstream(t *testing.T, name string) *upstream {
	u := &upstream{name: name}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // a large body is read whole, as a model server does
		if r.URL.Path == "/health" {
			return
		}
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
		completion := 5
		if r.Header.Get("X-Big-Usage") != "" {
			completion = 1_000_000_000 // $90 at 0.09 USD per million
		}
		w.Header().Set("Content-Type", "application/json")
		// id names the backend (served reads it): the model the client
		// sees is the one it asked for, whatever the upstream echoes.
		fmt.Fprintf(w, `{"id":%q,"model":%q,"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}`, name, name, completion, completion+10)
	}))
	t.Cleanup(u.Close)
	return u
}

// loopbackBackends points every backend of cfg at an upstream of its own on
// loopback and returns them by backend name, with a placeholder value for
// every credential variable (the environment to start the proxy with).
func loopbackBackends(t *testing.T, cfg *proxyapi.Config) (map[string]*upstream, []string) {
	ups := map[string]*upstream{}
	var env []string
	for i := range cfg.Backends {
		b := &cfg.Backends[i]
		ups[b.Name] = newUpstream(t, b.Name)
		b.URL = ups[b.Name].URL
		for _, c := range b.Credentials {
			env = append(env, c.Env+"=test-key")
		}
	}
	return ups, env
}

// served is the backend that answered: the id a newUpstream gives its
// answers.
func served(t *testing.T, body string) string {
	var v struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v.ID
}

// echoedModel is the model an answer names.
func echoedModel(t *testing.T, body string) string {
	var v struct {
		Model string `json:"model"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
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
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Policy.Audit.FilePath = auditPath
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
	resp, err := http.Get("http://" + p.admin + wellknown.StatusPath)
	require.NoError(t, err)
	var st proxyapi.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	resp.Body.Close()
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
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	f, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	entries := auditEntries(t, f)
	require.Len(t, entries, 10)
	last := entries[len(entries)-1]
	assert.Equal(t, proxyapi.OutcomeFailClosed, last.Outcome)
	assert.Equal(t, "phi-local", last.Rule)
	assert.Equal(t, "phi", last.Classification)
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
		Backends:   []proxyapi.Backend{{Name: "a", ModelID: "a", Kind: proxyapi.KindLocal, Tier: "local", URL: up.URL, Weight: 1, HealthCheck: proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: time.Hour}, Timeout: proxyapi.Duration{Duration: time.Second}}}},
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
		Policy:     proxyapi.Policy{Audit: proxyapi.Audit{Sink: "file", FilePath: filepath.Join(t.TempDir(), "audit.jsonl")}},
	}
	p := startProxy(t, cfg, "--shutdown-timeout", "200ms")
	resp, err := http.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"a","stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	_, err = io.ReadAll(resp.Body)
	assert.Error(t, err, "the stream is cut at the drain deadline")
	audit, err := os.ReadFile(cfg.Policy.Audit.FilePath)
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
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer up.Close()
	// The delay is long enough that a busy machine still finds the proxy in
	// it after the readiness check and three requests.
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal), "--drain-delay", "15s", "--shutdown-timeout", "40s")
	// A keep-alive connection opened before the signal.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	post := func() (*http.Response, error) {
		return client.Post("http://"+p.listen+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"a","messages":[{"role":"user","content":"hi"}]}`))
	}
	resp, err := post()
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.False(t, resp.Close, "before SIGTERM the connection is kept")

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
		resp, err := post()
		require.NoError(t, err, "request %d during the drain delay", i)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.True(t, resp.Close, "an answer during the drain delay closes its connection")
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
	cfg := budgetConfig(up.URL, proxyapi.Budget{MaxTokens: 1_000_000, Window: proxyapi.Duration{Duration: time.Hour}})
	cfg.Policy.Budgets = nil
	p := startProxy(t, cfg, "--max-connections", "4")
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
	cfg := oneBackend("http://127.0.0.1:1", proxyapi.KindLocal)
	b, err := proxyapi.Marshal(cfg)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	own := hex.EncodeToString(sum[:])

	// The matching hash: serving, and it says which config.
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
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
	// (A guard, not a timing assertion: a proxy that serves never exits.)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", path, "--listen", freeAddr(t), "--admin-listen", freeAddr(t))
	cmd.Env = append(os.Environ(), wellknown.ConfigHashEnv+"="+other)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the router-proxy served another generation's config:\n%s", out)
	assert.NotZero(t, exit.ExitCode())
	assert.Contains(t, string(out), "another generation")
	assert.Contains(t, string(out), own, "names the file's hash")
	assert.Contains(t, string(out), other, "and the one the pod expects")
}

// With --listen and --admin-listen on port 0 (the laptop run), the
// "router-proxy serving" line names the ports bound, the admin one too:
// it is the only place a caller learns where /status is.
func TestServingLogNamesTheBoundAdminAddress(t *testing.T) {
	bin, _ := binaries(t)
	up := newUpstream(t, "local")
	cfg := quotaConfig(t, up.URL) // one local backend
	b, err := proxyapi.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
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
