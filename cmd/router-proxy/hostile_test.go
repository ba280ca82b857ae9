package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
	"github.com/llmkube/llmkube-compile/test/poll"
	"github.com/llmkube/llmkube-compile/test/tcprelay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailClosedCountsEveryClassificationValue: a sensitive value anywhere
// in the classification header (a second instance, or a list value) makes
// the request sensitive, so it never reaches the cloud rule after the
// fail-closed one while the local backend is down.
func TestFailClosedCountsEveryClassificationValue(t *testing.T) {
	cloud := newStub(t, everyRequest, func(w http.ResponseWriter, _ *http.Request, _ string) {
		providertest.JSON(w, `{"model":"gpt-5","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	downURL := refusedURL() // the local backend is down: connection refused

	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Backends: []proxyapi.Backend{
			{Name: "local", ModelID: "llama", Kind: proxyapi.KindLocal, Tier: "local", URL: downURL, Weight: 1, HealthCheck: probeEvery(200 * time.Millisecond)},
			{Name: "cloud", ModelID: "gpt-5", Kind: proxyapi.KindLocal, Tier: "cloud", URL: cloud.URL, Weight: 1, HealthCheck: probeEvery(200 * time.Millisecond)},
		},
		Rules: []proxyapi.Rule{
			{Name: "pii-local", Match: proxyapi.Match{DataClassification: []string{"pii", "phi"}}, Backends: []string{"local"}, Strategy: "primary-fallback", PoolActivation: "Wait", FailClosed: true},
			{Name: "gpt", Match: proxyapi.Match{Models: []string{"gpt-5"}}, Backends: []string{"cloud"}, Strategy: "primary-fallback", PoolActivation: "Wait"},
		},
		Default: proxyapi.DefaultRoute{Strategy: "Static", Backend: "cloud"},
		Policy: proxyapi.Policy{
			Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification", Sensitive: []string{"pii", "phi"}},
			Audit:          proxyapi.Audit{Sink: "stdout"},
		},
	}
	p := startProxy(t, cfg)
	send := func(values ...string) (int, string) {
		var hdr []string
		for _, v := range values {
			hdr = append(hdr, "X-Llmkube-Classification", v)
		}
		return p.post(t, `{"model":"gpt-5"}`, hdr...)
	}
	for _, values := range [][]string{
		{"pii"},
		{"public", "pii"},
		{"pii, phi"},
		{"public,PHI"},
		{"public", " Pii "},
	} {
		code, body := send(values...)
		assert.Equal(t, http.StatusServiceUnavailable, code, "%q: %s", values, body)
	}
	assert.Empty(t, cloud.received(), "a sensitive request reached the cloud backend")
	// Non-sensitive values still route by model.
	code, body := send("public", "internal")
	assert.Equal(t, 200, code, body)
	assert.Len(t, cloud.received(), 1)
}

// vmHWM is a process's peak resident set, from /proc.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestLargeBodiesAreSplicedAndBounded: a body at the documented limit, full
// of '<', reaches an external backend at its own size (the model spliced,
// nothing HTML-escaped), and four at once stay within the pod's default
// 256Mi memory limit.
func TestLargeBodiesAreSplicedAndBounded(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	var models []string
	up := newStub(t, nil, func(w http.ResponseWriter, _ *http.Request, b string) {
		mu.Lock()
		var v struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal([]byte(b), &v)
		sizes, models = append(sizes, len(b)), append(models, v.Model)
		mu.Unlock()
		providertest.JSON(w, `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	})
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: time.Minute}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Backends:   []proxyapi.Backend{{Name: "ext", ModelID: "alias", Kind: proxyapi.KindExternal, Provider: "openai", Tier: "cloud", URL: up.URL, Model: "gpt-x", Weight: 1}},
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: "ext"},
		Policy:     proxyapi.Policy{Audit: proxyapi.Audit{Sink: "stdout"}},
	}
	p := startProxy(t, cfg)
	prefix, suffix := `{"model":"alias","messages":[{"role":"user","content":"`, `"}]}`
	body := prefix + strings.Repeat("<", 32<<20-len(prefix)-len(suffix)) + suffix
	post := func() int {
		return p.send(t, chatPath, body, "Content-Type", "application/json").code
	}
	require.Equal(t, 200, post())
	mu.Lock()
	require.Len(t, sizes, 1)
	assert.Equal(t, len(body)-len(`"alias"`)+len(`"gpt-x"`), sizes[0], "the upstream receives the client's bytes with only the model spliced")
	assert.Equal(t, "gpt-x", models[0])
	mu.Unlock()

	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = post() }()
	}
	wg.Wait()
	assert.Equal(t, []int{200, 200, 200, 200}, codes, "bodies beyond the memory budget wait their turn")
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("router-proxy peak RSS after 1 + 4 concurrent 32 MiB bodies: %d MiB", peak>>20)
	assert.Less(t, peak, int64(256<<20), "peak RSS must fit the rendered Deployment's 256Mi limit")
}

// TestSlowClientDoesNotQuarantine: a client that stops reading a large
// response for longer than streamIdleTimeout loses only its own response;
// the backend stays healthy for the next request.
func TestSlowClientDoesNotQuarantine(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 64<<20)
	up := bigOrSmall(t, big, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	cfg := oneBackend(up.URL, proxyapi.KindLocal)
	// A 3-s idle timeout: the loopback upstream (this process) never
	// stalls that long, even on a busy machine; the client's pause is well
	// past it.
	cfg.Timeouts.StreamIdle.Duration = 3 * time.Second
	p := startProxy(t, cfg, "--client-write-timeout", "20s")
	conn, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: 1\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"model\":\"a\"}"
	_, err = conn.Write([]byte(req))
	require.NoError(t, err)
	head := make([]byte, 512)
	_, err = io.ReadAtLeast(conn, head, 512)
	require.NoError(t, err)
	time.Sleep(8 * time.Second) // stop reading: back-pressure well past streamIdleTimeout
	// Then read on: the whole response arrives, as the upstream never went silent.
	rest, err := io.ReadAll(conn)
	conn.Close()
	assert.GreaterOrEqual(t, len(rest), len(big)-len(head), "the paused response was cut: %v", err)

	code, body := p.post(t, `{"model":"a"}`)
	assert.Equal(t, 200, code, "the backend was quarantined for the client's stall: %s", body)
}

func oneBackend(url string, kind string) *proxyapi.Config {
	b := proxyapi.Backend{Name: "a", ModelID: "a", Kind: kind, Tier: "local", URL: url, Weight: 1}
	if kind == proxyapi.KindExternal {
		b.Provider, b.Tier, b.Model = "openai", "cloud", "gpt-x"
	}
	return &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "r", Namespace: "ns"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 10 * time.Second}, StreamIdle: proxyapi.Duration{Duration: time.Minute}, Quarantine: proxyapi.Duration{Duration: time.Minute}},
		Backends:   []proxyapi.Backend{b},
		Default:    proxyapi.DefaultRoute{Strategy: "Static", Backend: "a"},
		Policy:     proxyapi.Policy{Audit: proxyapi.Audit{Sink: "stdout"}},
	}
}

// TestWhatUpstreamsReceive: headers a Connection header names never cross
// the proxy, and an external backend receives only the allowlisted headers.
func TestWhatUpstreamsReceive(t *testing.T) {
	got := make(chan http.Header, 2)
	up := newStub(t, nil, func(w http.ResponseWriter, r *http.Request, _ string) {
		got <- r.Header.Clone()
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "secret")
		providertest.JSON(w, `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	send := func(p *proc) answer {
		return p.send(t, chatPath, `{"model":"a"}`,
			"Content-Type", "application/json", "User-Agent", "sdk/1", "Connection", "X-Client-Hop", "X-Client-Hop", "1",
			"X-Llmkube-Team", "t", "X-Llmkube-Classification", "internal", "X-Forwarded-For", "10.0.0.1",
			"Openai-Organization", "org-other", "Ocp-Apim-Subscription-Key", "k", "X-Amz-Security-Token", "s", "Authorization", "Bearer client")
	}

	local := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	a := send(local)
	h := <-got
	assert.Empty(t, h.Get("X-Client-Hop"), "a header named by Connection is hop-by-hop")
	assert.Equal(t, "t", h.Get("X-Llmkube-Team"), "a local backend receives the client's headers")
	assert.Empty(t, a.hdr.Get("X-Upstream-Hop"), "and so in the response")

	ext := startProxy(t, oneBackend(up.URL, proxyapi.KindExternal))
	send(ext)
	h = <-got
	for k := range h {
		switch k {
		case "Content-Type", "User-Agent", "Accept-Encoding", "Content-Length":
		default:
			t.Errorf("an external backend received %s: %v", k, h[k])
		}
	}
}

// TestUpstreamUpgradeIsRefused: a 101 from an upstream answers a POST with
// 502 instead of hanging the client.
func TestUpstreamUpgradeIsRefused(t *testing.T) {
	// The upstream holds the upgraded connection until the test ends: a
	// proxy that relayed the upgrade would hang the client for its minute.
	hold := make(chan struct{})
	up := newStub(t, nil, func(w http.ResponseWriter, _ *http.Request, _ string) {
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
		<-hold
	})
	defer close(hold) // before the stub's Close, which waits for the handler
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	a, err := p.request(&http.Client{Timeout: time.Minute}, http.MethodPost, chatPath, `{"model":"a"}`, "Content-Type", "application/json")
	require.NoError(t, err, "the client hung on a relayed upgrade")
	assert.Equal(t, http.StatusBadGateway, a.code)
}

// TestMalformedChunkedBodyIs400: the client is told, and the audit agrees.
func TestMalformedChunkedBodyIs400(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	resp, body, _ := rawExchange(t, p.listen, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"mod\r\nzz\r\n")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "invalid_body")
	assert.Zero(t, up.hits.Load())
}

// TestModelKeyIsExact: a case-variant MODEL key does not route; the model
// the upstream reads does.
func TestModelKeyIsExact(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	code, body := p.post(t, `{"MODEL":"a"}`)
	assert.Equal(t, 400, code, body)
	assert.Contains(t, body, "model_required")
	code, body = p.post(t, `{"model":"a","model":"b"}`)
	assert.Equal(t, 400, code, body)
}

// TestConflictingFramingClosesTheConnection: Content-Length with
// Transfer-Encoding is answered, then the connection is closed (RFC 9112
// §6.1), so a smuggled second request never runs.
func TestConflictingFramingClosesTheConnection(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	conn, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	defer conn.Close()
	body := `{"model":"a"}`
	smuggled := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n" + body
	req := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n%s", len(body), body, smuggled)
	_, err = conn.Write([]byte(req))
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	assert.Equal(t, 200, resp.StatusCode)
	assert.True(t, resp.Close, "the response announces Connection: close")
	_, err = http.ReadResponse(rd, nil)
	assert.Error(t, err, "the smuggled request got an answer")
	assert.EqualValues(t, 1, up.hits.Load(), "only the first request reached the upstream")
}

// TestTrickledBodyIsCut: a client that declares a large body and sends one
// byte is answered 408 at the body read timeout.
func TestTrickledBodyIsCut(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal), "--body-read-timeout", "1s")
	resp, _, _ := rawExchange(t, p.listen, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 33000000\r\n\r\n{")
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "the trickling client is answered at the body read timeout")
}

// TestHostileRequestAuditBounded: a 60 KB classification header and a huge
// model name are cut in the audit line; a client that never reads its
// response is cut at the write timeout and audited as such, and upstream
// usage with a negative count neither crashes the handler nor is trusted.
func TestHostileRequestAuditBounded(t *testing.T) {
	up := bigOrSmall(t, bytes.Repeat([]byte("y"), 32<<20), `{"choices":[],"usage":{"prompt_tokens":-1000000000,"completion_tokens":5,"total_tokens":5}}`)
	cfg := oneBackend(up.URL, proxyapi.KindLocal)
	cfg.Backends[0].ModelID = strings.Repeat("m", 100<<10)
	fileAudit(t, cfg)
	p := startProxy(t, cfg, "--client-write-timeout", "1s")

	code, body := p.post(t, `{"model":"`+cfg.Backends[0].ModelID+`"}`, "X-Llmkube-Classification", strings.Repeat("c", 60<<10))
	assert.Equal(t, 200, code, body)

	conn, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	_, err = conn.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: 1\r\nContent-Length: 13\r\n\r\n{\"model\":\"a\"}"))
	require.NoError(t, err)
	var audit string
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(cfg.Policy.Audit.FilePath)
		audit = string(b)
		return strings.Count(audit, "\n") >= 2
	}, 20*time.Second, 100*time.Millisecond, "the stalled client's request never ended")
	conn.Close()
	// Each entry is written as its request ends; they are told apart by
	// what they hold, not by order.
	var hostile, stalled string
	for _, l := range strings.Split(strings.TrimSpace(audit), "\n") {
		if strings.Contains(l, "client stopped reading") {
			stalled = l
		} else {
			hostile = l
		}
	}
	assert.NotEmpty(t, stalled, "the stalled client's entry says why it ended: %s", audit)
	assert.Less(t, len(hostile), 4096, "the audit line holds the hostile header and model whole")
	assert.Contains(t, hostile, `"tokensEstimated":true`, "negative upstream usage is not trusted")
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), "implausible usage") }, time.Minute, 20*time.Millisecond, "the log says why the usage was not trusted")
}

// bigOrSmall is an upstream answering big to requests with X-Big and small
// to the others.
func bigOrSmall(t *testing.T, big []byte, small string) *stub {
	return newStub(t, nil, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.Header.Get("X-Big") != "" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(big)
			return
		}
		providertest.JSON(w, "%s", small)
	})
}

// TestLargeResponseUsageIsRead: a non-stream answer over 4 MiB (an
// embeddings batch) is charged its reported usage, not an estimate by size.
func TestLargeResponseUsageIsRead(t *testing.T) {
	big := append([]byte(`{"data":[{"embedding":[`), bytes.Repeat([]byte("0.1,"), 2<<20)...)
	big = append(big, []byte(`0.1]}],"model":"e5","usage":{"prompt_tokens":15,"total_tokens":15}}`)...)
	up := bigOrSmall(t, big, `{}`)
	cfg := oneBackend(up.URL, proxyapi.KindLocal)
	fileAudit(t, cfg)
	p := startProxy(t, cfg)
	code, _ := p.post(t, `{"model":"a"}`, "X-Big", "1")
	require.Equal(t, 200, code)
	var audit []byte
	require.Eventually(t, func() bool { audit, _ = os.ReadFile(cfg.Policy.Audit.FilePath); return len(audit) > 0 }, 10*time.Second, 50*time.Millisecond)
	assert.Contains(t, string(audit), `"totalTokens":15`)
	assert.NotContains(t, string(audit), `"tokensEstimated":true`)
}

// TestHeadOfTinyLinesIsRefused: heads of 1 MiB of "a:" lines with a
// Content-Length and no body (each was held for the body timeout and cost
// about 35 MiB: 8 of them took the process past 256 MiB) are refused with
// 431 as soon as they pass the head limits, and cost the process nothing
// to speak of.
func TestHeadOfTinyLinesIsRefused(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n" + strings.Repeat("a:\n", (1<<20)/3) + "\r\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", p.listen)
			if !assert.NoError(t, err) {
				return
			}
			defer conn.Close()
			go func() { _, _ = io.WriteString(conn, head) }()
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err == nil {
				assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
				return
			}
			// The refusal may be lost to the reset of a connection whose
			// client kept sending; it must not be held.
			var ne net.Error
			assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection was held: %v", err)
		}()
	}
	wg.Wait()
	assert.Less(t, vmHWM(t, p.cmd.Process.Pid), int64(96<<20), "peak RSS")
}

// TestNeverReadingClientIsClosed: a client that pipelines GETs and never
// reads their answers loses its connection at --client-write-timeout
// (/health and /v1/models are written by the server core, outside the
// relay's own deadlines), and SIGTERM's drain does not wait on it for the
// whole --shutdown-timeout.
func TestNeverReadingClientIsClosed(t *testing.T) {
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal), "--client-write-timeout", "1s", "--shutdown-timeout", "10m")
	began := time.Now()
	conn, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	defer conn.Close()
	closed := make(chan time.Time, 1)
	go func() {
		batch := strings.Repeat("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n", 200)
		for {
			if _, err := io.WriteString(conn, batch); err != nil {
				closed <- time.Now()
				return
			}
		}
	}()
	at := poll.Recv(t, closed, 20*time.Second, "the never-reading client still has its connection")
	t.Logf("closed %v after the test began", at.Sub(began))

	// Again, and SIGTERM while it is held: the drain ends with it.
	conn2, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	defer conn2.Close()
	go func() {
		batch := strings.Repeat("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 400)
		for {
			if _, err := io.WriteString(conn2, batch); err != nil {
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// The whole --shutdown-timeout is 10 minutes.
	require.NoError(t, poll.Recv(t, p.done, 60*time.Second, "the drain waits on a client that never reads"))
	t.Logf("exited %v after SIGTERM", time.Since(start))
}

// rawExchange writes raw on a new connection and reads one response.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "%q got no answer", raw)
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), time.Since(start)
}

// TestLowFramingDefects: chunked with an invalid or empty Content-Length is
// 400 (as net/http and nginx answer), an HTTP/0.9 request line is refused
// at once (not held for the 30 s header timeout), and an upstream's two
// equal Content-Length lines reach the client as one.
func TestLowFramingDefects(t *testing.T) {
	up := tcprelay.Listen(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			body := `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n%s", len(body), len(body), body)
		}
	})
	p := startProxy(t, oneBackend("http://"+up, proxyapi.KindLocal))

	for _, cl := range []string{"Content-Length: abc\r\n", "Content-Length:\r\n", "Content-Length: \r\n"} {
		resp, _, _ := rawExchange(t, p.listen, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"+cl+"\r\nd\r\n{\"model\":\"a\"}\r\n0\r\n\r\n")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%q", cl)
	}
	// At once: rawExchange reads for 10 s, a third of the header timeout
	// that a held request line would wait out.
	resp, _, _ := rawExchange(t, p.listen, "GET /health\r\n")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	conn, err := net.Dial("tcp", p.listen)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n{\"model\":\"a\"}")
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	tp := textproto.NewReader(br)
	status, err := tp.ReadLine()
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 200 OK", status)
	h, err := tp.ReadMIMEHeader()
	require.NoError(t, err)
	assert.Len(t, h["Content-Length"], 1, "the upstream's repeated Content-Length is relayed once")
}

// TestHostileConnectionsStayUnderMemoryLimit: the default connection cap's
// worth of connections, each sending a head at the limits (just under
// 64 KiB in about 240 long lines) that declares a body it never sends, are
// all held at once, the next connection is answered 503 with Retry-After,
// and the process's peak RSS stays under the pod's default 256Mi memory
// limit, with room for the body budget (measured: about 110 KiB of heap
// per such connection).
func TestHostileConnectionsStayUnderMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a thousand connections")
	}
	up := newUpstream(t, "a")
	p := startProxy(t, oneBackend(up.URL, proxyapi.KindLocal))
	var b strings.Builder
	b.WriteString("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n")
	for i := 0; b.Len() < 64<<10-400; i++ {
		fmt.Fprintf(&b, "X-Pad-%d: %s\r\n", i, strings.Repeat("v", 250))
	}
	b.WriteString("\r\n{")
	head := b.String()
	conns := make([]net.Conn, 0, DefaultMaxConnections)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range DefaultMaxConnections {
		c, err := net.Dial("tcp", p.listen)
		require.NoError(t, err)
		conns = append(conns, c)
		go func() { _, _ = io.WriteString(c, head) }()
	}
	// One more is over the limit once every slot carries a request. A
	// hostile connection whose head has not arrived yet is idle, and a
	// probe takes its slot (idle connections never starve a new client):
	// then a new hostile connection refills it, until the probe is refused.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", p.listen)
		if err != nil {
			return false
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "1" {
			return true
		}
		if h, err := net.Dial("tcp", p.listen); err == nil {
			conns = append(conns, h)
			_, _ = io.WriteString(h, head)
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "a connection past the cap is not answered 503")
	time.Sleep(2 * time.Second) // every head parsed and held for its body
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("peak RSS with %d hostile connections: %d MiB", DefaultMaxConnections, peak>>20)
	assert.Less(t, peak, int64(256<<20), "peak RSS")
	// The cap's worth of connections is held open, waiting for bodies;
	// only the ones whose slots a probe took were closed.
	open := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			open++
		}
	}
	assert.Equal(t, DefaultMaxConnections, open, "held connections")
}
