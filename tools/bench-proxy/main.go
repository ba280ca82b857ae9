// Command bench-proxy measures the router-proxy's overhead: it starts a stub
// OpenAI upstream (this binary, re-executed in its own process) and a load
// generator (this process), builds and starts the real router-proxy binary
// with 20 rules and the audit log on, and compares latency against the
// upstream directly and through the proxy.
//
// It is its own module (tools/bench-proxy/go.mod, the main module replaced by
// ../..), so the main module does not require the load generator's
// dependencies; run it from its folder:
//
//	cd tools/bench-proxy && GOWORK=off go run . [-n 5000] [-n64 40000]
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

const jsonAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`

var sseChunks = func() []byte {
	var b bytes.Buffer
	for i := range 8 {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":8,\"total_tokens\":20}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}()

// variant is a router-proxy measured against the plain one.
type variant struct {
	name, url string
	pid       int
}

// jwks is the key set the stub serves at /jwks for the JWT scenario.
var jwks []byte

func stub(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if r.URL.Path == "/health" {
		return
	}
	if r.URL.Path == "/v1/traces" || r.URL.Path == "/v1/metrics" {
		// The tracing variants' OTLP collector: an empty export response.
		w.Header().Set("Content-Type", "application/x-protobuf")
		return
	}
	if r.URL.Path == "/jwks" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
		return
	}
	if r.Header.Get("X-Bench-Stream") != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sseChunks)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(jsonAnswer)))
	_, _ = io.WriteString(w, jsonAnswer)
}

func config(upstream, auditPath string) *proxyapi.Config {
	hc := proxyapi.HealthCheck{Path: "/health", Interval: proxyapi.Duration{Duration: 10 * time.Second}, Timeout: proxyapi.Duration{Duration: 2 * time.Second}}
	cfg := &proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "bench", Namespace: "bench"},
		Timeouts:   proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 2 * time.Minute}, StreamIdle: proxyapi.Duration{Duration: 5 * time.Minute}, Quarantine: proxyapi.Duration{Duration: 15 * time.Second}},
		Default:    proxyapi.DefaultRoute{Strategy: "BackendNameMatch", Backend: "b0"},
		Policy: proxyapi.Policy{
			Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification", Sensitive: []string{"pii", "phi"}},
			Budgets:        []proxyapi.Budget{{Name: "all", Scope: "router", MaxTokens: 1 << 50, Window: proxyapi.Duration{Duration: time.Hour}}},
			Audit:          proxyapi.Audit{Sink: "file", FilePath: auditPath, CallerHeader: "x-llmkube-client", LogClientAddress: true},
		},
	}
	for i := range 4 {
		cfg.Backends = append(cfg.Backends, proxyapi.Backend{Name: fmt.Sprintf("b%d", i), ModelID: fmt.Sprintf("model-%d", i), Kind: proxyapi.KindLocal, Tier: "local", URL: upstream, Weight: 1, HealthCheck: hc,
			Cost:      &proxyapi.Cost{PromptUSD: "0.1", CompletionUSD: "0.3"},
			ModelInfo: proxyapi.ModelInfo{InputModalities: []string{"text"}, OutputModalities: []string{"text"}}})
	}
	for i := range 19 {
		cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: fmt.Sprintf("r%d", i), Backends: []string{"b1", "b2"}, Strategy: proxyapi.StrategyPrimaryFallback, PoolActivation: proxyapi.PoolActivationWait,
			Match: proxyapi.Match{Models: []string{fmt.Sprintf("family-%d-*", i)}, Headers: []proxyapi.HeaderMatch{{Name: "x-tenant", Value: fmt.Sprintf("t%d", i)}}}})
	}
	// The benchmark's requests match only the 20th rule.
	cfg.Rules = append(cfg.Rules, proxyapi.Rule{Name: "r19", Backends: []string{"b0", "b1"}, Strategy: proxyapi.StrategyPrimaryFallback, PoolActivation: proxyapi.PoolActivationWait,
		Match: proxyapi.Match{Models: []string{"bench-*"}, Headers: []proxyapi.HeaderMatch{{Name: "x-tenant", Value: "gold"}}}})
	return cfg
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().String()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

const body = `{"model":"bench-8b","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello."}],"max_tokens":16}`
const streamBody = `{"model":"bench-8b","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello."}],"max_tokens":16}`

// bearer is the Authorization header load sends; the JWT scenario sets it.
var bearer string

// benchAPIKey is the API-key scenario's key, in its Secret directory.
const benchAPIKey = "sk-bench-3f9a1c7e5b2d4f60a8c1e3b5d7f90a2c"

// benchIssuer is the JWT scenario's issuer.
const benchIssuer = "https://bench.example"

// signingKey makes the JWT scenario's RSA key, its JWKS and a token valid
// for the run.
func signingKey() (jwksJSON []byte, token string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	must(err)
	b64 := base64.RawURLEncoding.EncodeToString
	jwksJSON, err = json.Marshal(map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}})
	must(err)
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": benchIssuer, "team": "gold", "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "bench"
	token, err = tok.SignedString(k)
	must(err)
	return jwksJSON, token
}

// load sends n requests at concurrency c and returns sorted latencies and errors.
func load(client *http.Client, url string, c, n int, stream bool) ([]time.Duration, int) {
	b := body
	if stream {
		b = streamBody
	}
	return loadBody(client, url, c, n, stream, b)
}

// chatBody is a chat request of about n bytes: ordinary prose with the
// numbers a prompt has (dates, versions, amounts, an order number), nothing
// the content classifier may take for an identifier.
func chatBody(n int) string {
	const para = "The deployment on 2026-12-05 moved 3 services to v2.14.3; latency fell 12% and the p99 is now 180 ms. Order 88123 shipped on Tuesday. Please summarize what changed, what we should watch next week, and which of the teams should own the follow-up work. "
	text := strings.Repeat(para, n/len(para)+1)[:n]
	b, _ := json.Marshal(map[string]any{"model": "bench-8b", "max_tokens": 16, "messages": []map[string]string{{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": text}}})
	return string(b)
}

// loadBody is load with a request body of the caller's.
func loadBody(client *http.Client, url string, c, n int, stream bool, b string) ([]time.Duration, int) {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Tenant", "gold")
				req.Header.Set("X-Llmkube-Client", "bench")
				if bearer != "" && strings.Contains(url, "jwt") {
					req.Header.Set("Authorization", bearer)
				}
				if strings.Contains(url, "apikey") {
					req.Header.Set("Authorization", "Bearer "+benchAPIKey)
				}
				if stream {
					req.Header.Set("X-Bench-Stream", "1")
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != 200 {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return lat, int(errs.Load())
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(float64(len(l))*p/100+0.5) - 1
	return l[max(0, min(i, len(l)-1))]
}

// cpu returns the process's user+system CPU time from /proc.
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// peakRSS is the process's VmHWM in kB (0 when it cannot be read).
func peakRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func main() {
	n1 := flag.Int("n", 5000, "requests per scenario at concurrency 1")
	n64 := flag.Int("n64", 40000, "requests per scenario at concurrency 64")
	var r roles
	flag.StringVar(&r.stubAddr, "serve-stub", "", "internal: serve only the stub upstream on this address")
	flag.StringVar(&r.jwksFile, "jwks", "", "internal: the stub serves this key set at /jwks")
	flag.StringVar(&r.peerAddr, "serve-peer", "", "internal: serve only the baseline peer proxy on this address")
	flag.StringVar(&r.peerTo, "peer-to", "", "internal: the baseline peer proxy's upstream address")
	peerSeconds := flag.Int("peer-seconds", 5, "seconds per wrk point in the peer table (nginx, HAProxy); 0 skips it")
	peersOnly := flag.Bool("peers-only", false, "run only the peer table")
	flag.StringVar(&r.printConfig, "print-config", "", "print the benchmark's router-proxy config for this upstream address and exit (to profile by hand)")
	flag.StringVar(&r.hybridPeer, "serve-hybrid-peer", "", "internal: serve only the net/http server + fasthttp client peer on this address")
	flag.StringVar(&r.fastPeer, "serve-fasthttp-peer", "", "internal: serve only the bare fasthttp reverse proxy on this address")
	flag.StringVar(&r.corePeer, "serve-core-peer", "", "internal: serve only the net/http server + routerproxy/h1 client peer on this address")
	flag.StringVar(&r.ownCorePeer, "serve-own-core-peer", "", "internal: serve only the routerproxy/h1 server + routerproxy/h1 client peer on this address")
	flag.StringVar(&compareBin, "compare", "", "also measure this router-proxy binary (for example one built from another commit) in the peer table, beside the one built from the tree")
	flag.StringVar(&profileDir, "profile", "", "write CPU and allocation profiles of the router-proxy during the peer table's c=32 points to this directory")
	flag.Parse()
	if r.serve() {
		return
	}

	dir, err := os.MkdirTemp("", "bench-proxy")
	must(err)
	defer os.RemoveAll(dir)
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}()
	bin := filepath.Join(dir, "router-proxy")
	build := exec.Command("go", "build", "-o", bin, "./cmd/router-proxy")
	build.Dir = mainModuleDir()
	build.Env = append(os.Environ(), "GOWORK=off")
	out, err := build.CombinedOutput()
	if err != nil {
		must(fmt.Errorf("go build: %v\n%s", err, out))
	}

	if *peersOnly {
		runPeers(bin, dir, false, *peerSeconds)
		runPeers(bin, dir, true, *peerSeconds)
		return
	}
	upAddr := freePort()
	self, err := os.Executable()
	must(err)
	keySet, token := signingKey()
	jwksPath := filepath.Join(dir, "jwks.json")
	must(os.WriteFile(jwksPath, keySet, 0o600))
	up := exec.Command(self, "-serve-stub", upAddr, "-jwks", jwksPath)
	up.Stderr = os.Stderr
	must(up.Start())
	defer func() { _ = up.Process.Kill(); _ = up.Wait() }()
	waitUntil("stub upstream", func() bool { return get("http://"+upAddr+"/health") != 0 })

	cfg := config("http://"+upAddr, filepath.Join(dir, "audit.jsonl"))
	listen, pid := startProxy(bin, dir, "plain", cfg)
	// The JWT scenario: the same router with policy.auth.jwt, keys cached
	// after the first request.
	jwtCfg := config("http://"+upAddr, filepath.Join(dir, "audit-jwt.jsonl"))
	jwtCfg.Policy.Auth = &proxyapi.Auth{JWT: &proxyapi.JWT{Issuer: benchIssuer, JWKSURI: "http://" + upAddr + "/jwks", TeamClaim: "team", HeaderKey: "x-llmkube-team"}}
	jwtListen, jwtPid := startProxy(bin, dir, "jwt", jwtCfg)
	bearer = "Bearer " + token
	// The API-key scenario: the same router with policy.auth.apiKeys, one
	// Secret directory written as the kubelet mounts it (a ..data symlink).
	keyCfg := config("http://"+upAddr, filepath.Join(dir, "audit-apikey.jsonl"))
	keyCfg.Policy.Auth = &proxyapi.Auth{APIKeys: []proxyapi.APIKeySource{{SecretName: "bench-keys", Team: "gold", Dir: secretDir(dir, "bench-keys", "bench", benchAPIKey)}}}
	keyListen, keyPid := startProxy(bin, dir, "apikey", keyCfg)
	// The shared budget store: the same router with its budget in a local
	// redis-server (hack/install-test-deps.sh installs it).
	redisAddr := startRedis()
	storeListen, storePid := startProxy(bin, dir, "redis", config("http://"+upAddr, filepath.Join(dir, "audit-redis.jsonl")), "--budget-store", "redis://"+redisAddr+"/0")

	// Rate limits (docs/rate-limits.md): the JWT router with a per-team
	// limit on requests, input and output tokens, never reached, counted in
	// memory and in the Redis store.
	rlCfg := func(audit string) *proxyapi.Config {
		c := config("http://"+upAddr, filepath.Join(dir, audit))
		c.Policy.Auth = jwtCfg.Policy.Auth
		c.Policy.RateLimits = []proxyapi.RateLimit{{Name: "per-team", Scope: proxyapi.RateLimitScopeTeam,
			RequestsPerMinute: 1 << 50, InputTokensPerMinute: 1 << 50, OutputTokensPerMinute: 1 << 50}}
		return c
	}
	rlListen, rlPid := startProxy(bin, dir, "ratelimits", rlCfg("audit-ratelimits.jsonl"))
	rlStoreListen, rlStorePid := startProxy(bin, dir, "ratelimits-redis", rlCfg("audit-ratelimits-redis.jsonl"), "--budget-store", "redis://"+redisAddr+"/0")
	// API keys with a per-key limit beside the per-team one, in Redis.
	rlKeyCfg := rlCfg("audit-ratelimits-apikey.jsonl")
	rlKeyCfg.Policy.Auth = keyCfg.Policy.Auth
	rlKeyCfg.Policy.RateLimits = append(rlKeyCfg.Policy.RateLimits, proxyapi.RateLimit{Name: "per-key", Scope: proxyapi.RateLimitScopeKey,
		RequestsPerMinute: 1 << 50, OutputTokensPerMinute: 1 << 50})
	rlKeyListen, rlKeyPid := startProxy(bin, dir, "ratelimits-apikey", rlKeyCfg, "--budget-store", "redis://"+redisAddr+"/0")

	// The content classifier: the same router in classification mode
	// detector (docs/classifier.md), against the plain one (header-only).
	detCfg := config("http://"+upAddr, filepath.Join(dir, "audit-detector.jsonl"))
	detCfg.Policy.Classification.Mode = proxyapi.ClassificationDetector
	detListen, detPid := startProxy(bin, dir, "detector", detCfg)

	// Tracing: the same router exporting spans and GenAI metrics over OTLP
	// to the stub (an empty answer per export), at three sampling ratios.
	var tracedProxies []variant
	for _, ratio := range []string{"0", "0.01", "1"} {
		l, _, tp := startProxyAdminEnv(bin, dir, "traced-"+ratio, config("http://"+upAddr, filepath.Join(dir, "audit-traced-"+ratio+".jsonl")),
			[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + upAddr}, "--trace-sampling", ratio)
		share, _ := strconv.ParseFloat(ratio, 64)
		tracedProxies = append(tracedProxies, variant{fmt.Sprintf("tracing, %g%% sampled", share*100), "http://" + l + "/v1/chat/completions", tp})
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 256, DisableCompression: true}}
	peerAddr2 := freePort()
	peer := exec.Command(self, "-serve-peer", peerAddr2, "-peer-to", upAddr)
	peer.Stderr = os.Stderr
	must(peer.Start())
	defer func() { _ = peer.Process.Kill(); _ = peer.Wait() }()
	waitUntil("baseline peer proxy", func() bool { return get("http://"+peerAddr2+"/health") != 0 })

	t := &tables{client: client, proxied: "http://" + listen + "/v1/chat/completions", pid: pid, n1: *n1, n64: *n64}
	direct := "http://" + upAddr + "/v1/chat/completions"
	withJWT := "http://" + jwtListen + "/v1/chat/completions?jwt"
	baseline := "http://" + peerAddr2 + "/v1/chat/completions"

	fmt.Printf("router-proxy benchmark: %s/%s, GOMAXPROCS=%d, %d CPUs, 20 rules (the 20th matches), audit to a file, one router budget\n\n", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	t.overhead(direct, baseline)
	fmt.Printf("\npeak RSS of the proxy (VmHWM): %d kB\n", peakRSS(pid))
	if *peerSeconds > 0 {
		runPeers(bin, dir, false, *peerSeconds)
		runPeers(bin, dir, true, *peerSeconds)
	}
	t.classifier("http://"+detListen+"/v1/chat/completions", detPid)

	// Variants of the same router, each against the in-memory proxy:
	// policy.auth.jwt (RS256, cached keys), the Redis budget store, JWT
	// with rate limits (in memory and in Redis), and
	// OpenTelemetry at 0, 1 and 100 % sampling (docs/observability.md).
	withStore := "http://" + storeListen + "/v1/chat/completions"
	withKey := "http://" + keyListen + "/v1/chat/completions?apikey"
	t.variants(append([]variant{{"JWT", withJWT, jwtPid}, {"API key", withKey, keyPid}, {"Redis budget store", withStore, storePid},
		{"JWT + rate limits", "http://" + rlListen + "/v1/chat/completions?jwt", rlPid},
		{"JWT + rate limits, Redis store", "http://" + rlStoreListen + "/v1/chat/completions?jwt", rlStorePid},
		{"API key + team and key rate limits, Redis store", "http://" + rlKeyListen + "/v1/chat/completions?apikey", rlKeyPid}}, tracedProxies...))
	if t.errs > 0 {
		must(fmt.Errorf("%d errors", t.errs))
	}
}

// secretDir writes one key, name: value, into dir/secret as the kubelet
// mounts a Secret (the file in a ..<timestamp> directory, ..data a symlink
// to it, the key a symlink through ..data) and returns its path.
func secretDir(dir, secret, name, value string) string {
	d := filepath.Join(dir, secret)
	ts := filepath.Join(d, "..2026_01_01_00_00_00.1")
	must(os.MkdirAll(ts, 0o700))
	must(os.WriteFile(filepath.Join(ts, name), []byte(value), 0o600))
	must(os.Symlink("..2026_01_01_00_00_00.1", filepath.Join(d, "..data")))
	must(os.Symlink(filepath.Join("..data", name), filepath.Join(d, name)))
	return d
}

// roles are the internal modes this binary is re-executed in: the stub
// upstream, the peer proxies, or printing the config.
type roles struct {
	stubAddr, jwksFile, peerAddr, peerTo, printConfig string
	hybridPeer, fastPeer, corePeer, ownCorePeer       string
}

// serve runs the role the flags name, if any, and says whether it did.
func (r roles) serve() bool {
	switch {
	case r.stubAddr != "":
		// The stub runs in its own process, as a real upstream would, so the
		// direct and proxied paths cross the same kind of process boundary.
		if r.jwksFile != "" {
			var err error
			jwks, err = os.ReadFile(r.jwksFile)
			must(err)
		}
		must(http.ListenAndServe(r.stubAddr, http.HandlerFunc(stub)))
	case r.printConfig != "":
		b, err := proxyapi.Marshal(config("http://"+r.printConfig, filepath.Join(os.TempDir(), "bench-audit.jsonl")))
		must(err)
		fmt.Println(string(b))
	case r.hybridPeer != "":
		serveHybridPeer(r.hybridPeer, r.peerTo)
	case r.fastPeer != "":
		serveFastHTTPPeer(r.fastPeer, r.peerTo)
	case r.ownCorePeer != "":
		serveOwnCorePeer(r.ownCorePeer, r.peerTo)
	case r.corePeer != "":
		serveCorePeer(r.corePeer, r.peerTo)
	case r.peerAddr != "":
		// The baseline peer: the standard library's reverse proxy, with no
		// routing, budgets, metrics or audit. It shows what the extra hop
		// alone costs on this machine.
		target, err := url.Parse("http://" + r.peerTo)
		must(err)
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.Transport = &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 256, DisableCompression: true}
		rp.FlushInterval = -1
		must(http.ListenAndServe(r.peerAddr, rp))
	default:
		return false
	}
	return true
}

// startRedis starts a local redis-server (hack/install-test-deps.sh
// installs it), stopped with the other processes, and returns its address.
func startRedis() string {
	redisAddr := freePort()
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	redisCmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", redisPort, "--save", "", "--appendonly", "no")
	must(redisCmd.Start())
	procs = append(procs, redisCmd)
	waitUntil("redis-server", func() bool {
		c, err := net.Dial("tcp", redisAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return redisAddr
}

// tables prints the benchmark's tables against the plain router-proxy
// (proxied, process pid) and counts the failed requests.
type tables struct {
	client  *http.Client
	proxied string
	pid     int
	n1, n64 int // requests per scenario at concurrency 1 and 64
	errs    int
}

// requests is the number of requests per scenario at concurrency c.
func (t *tables) requests(c int) int {
	if c == 64 {
		return t.n64
	}
	return t.n1
}

// overhead is the main table: the latency the proxy adds over the
// upstream directly, beside the baseline peer's.
func (t *tables) overhead(direct, baseline string) {
	client, proxied, pid := t.client, t.proxied, t.pid
	fmt.Println("| concurrency | body | requests | direct p50 | direct p99 | proxy p50 | proxy p99 | added p50 | added p99 | peer added p50 | peer added p99 | proxy req per CPU-s | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range []int{1, 64} {
		n := t.requests(c)
		for _, stream := range []bool{false, true} {
			// Warm both paths (connections, pools).
			load(client, direct, c, min(n, 2000), stream)
			load(client, proxied, c, min(n, 2000), stream)
			load(client, baseline, c, min(n, 2000), stream)
			b, be := load(client, baseline, c, n, stream)
			d, de := load(client, direct, c, n, stream)
			c0 := cpu(pid)
			p, pe := load(client, proxied, c, n, stream)
			used := cpu(pid) - c0
			kind := "json"
			if stream {
				kind = "sse"
			}
			rps := "n/a"
			if used > 0 {
				rps = strconv.Itoa(int(float64(n) / used.Seconds()))
			}
			t.errs += de + pe + be
			fmt.Printf("| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", c, kind, n,
				us(pct(d, 50)), us(pct(d, 99)), us(pct(p, 50)), us(pct(p, 99)), us(pct(p, 50)-pct(d, 50)), us(pct(p, 99)-pct(d, 99)),
				us(pct(b, 50)-pct(d, 50)), us(pct(b, 99)-pct(d, 99)), rps, de+pe)
		}
	}
}

// classifier is the content classifier's cost: CPU per request with
// classification mode detector (withDetector, process detPid) against
// header-only, on chat bodies of 4 KiB and 64 KiB, in one run (issue 48's
// goal: at most 1.25x at 4 KiB).
func (t *tables) classifier(withDetector string, detPid int) {
	client, proxied, pid := t.client, t.proxied, t.pid
	fmt.Println("\n| content classifier | body | concurrency | requests | header-only p50 | detector p50 | header-only CPU per request | detector CPU per request | ratio | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, size := range []int{4 << 10, 64 << 10} {
		b := chatBody(size)
		for _, c := range []int{1, 16} {
			n := t.n1
			if size > 4<<10 {
				n = max(n/4, 200)
			}
			loadBody(client, withDetector, c, min(n, 500), false, b)
			loadBody(client, proxied, c, min(n, 500), false, b)
			c0 := cpu(pid)
			p, pe := loadBody(client, proxied, c, n, false, b)
			plainCPU := cpu(pid) - c0
			c0 = cpu(detPid)
			d, de := loadBody(client, withDetector, c, n, false, b)
			detCPU := cpu(detPid) - c0
			t.errs += pe + de
			fmt.Printf("| detector | %d KiB | %d | %d | %s | %s | %s | %s | %.2fx | %d |\n", len(b)>>10, c, n, us(pct(p, 50)), us(pct(d, 50)),
				us(plainCPU/time.Duration(n)), us(detCPU/time.Duration(n)), float64(detCPU)/float64(max(plainCPU, 1)), pe+de)
		}
	}
}

// variants is each variant of the same router against the plain one.
func (t *tables) variants(vs []variant) {
	client, proxied, pid := t.client, t.proxied, t.pid
	fmt.Println("\n| variant | concurrency | requests | proxy p50 | variant p50 | added p50 | proxy CPU per request | variant CPU per request | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, v := range vs {
		for _, c := range []int{1, 64} {
			n := t.requests(c)
			load(client, v.url, c, min(n, 2000), false)
			c0 := cpu(pid)
			p, pe := load(client, proxied, c, n, false)
			plainCPU := cpu(pid) - c0
			c0 = cpu(v.pid)
			j, je := load(client, v.url, c, n, false)
			varCPU := cpu(v.pid) - c0
			t.errs += pe + je
			fmt.Printf("| %s | %d | %d | %s | %s | %s | %s | %s | %d |\n", v.name, c, n, us(pct(p, 50)), us(pct(j, 50)), us(pct(j, 50)-pct(p, 50)),
				us(plainCPU/time.Duration(n)), us(varCPU/time.Duration(n)), pe+je)
		}
	}
}

// startProxy writes cfg and starts the router-proxy binary on it; it
// returns the serving address and the process id.
func startProxy(bin, dir, name string, cfg *proxyapi.Config, extra ...string) (string, int) {
	listen, _, pid := startProxyAdmin(bin, dir, name, cfg, extra...)
	return listen, pid
}

// startProxyAdmin is startProxy that also returns the admin address.
func startProxyAdmin(bin, dir, name string, cfg *proxyapi.Config, extra ...string) (string, string, int) {
	return startProxyAdminEnv(bin, dir, name, cfg, nil, extra...)
}

// startProxyAdminEnv is startProxyAdmin with variables added to the
// proxy's environment.
func startProxyAdminEnv(bin, dir, name string, cfg *proxyapi.Config, env []string, extra ...string) (string, string, int) {
	cb, err := proxyapi.Marshal(cfg)
	must(err)
	cfgPath := filepath.Join(dir, name+".json")
	must(os.WriteFile(cfgPath, cb, 0o600))
	listen, admin := freePort(), freePort()
	cmd := exec.Command(bin, append([]string{"--config", cfgPath, "--listen", listen, "--admin-listen", admin}, extra...)...)
	cmd.Stderr = os.Stderr
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	must(cmd.Start())
	procs = append(procs, cmd)
	waitUntil("router-proxy "+name, func() bool { return get("http://"+admin+"/ready") == 200 })
	return listen, admin, cmd.Process.Pid
}

// waitUntil polls ready for up to 10 s and exits when it never holds.
func waitUntil(what string, ready func() bool) {
	for i := 0; !ready(); i++ {
		if i > 500 {
			must(fmt.Errorf("%s never became ready", what))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get is a GET's status code, 0 when it fails.
func get(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// procs are the router-proxy processes, killed on exit.
var procs []*exec.Cmd

func us(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Nanoseconds())/1000, 'f', 0, 64) + " µs"
}

// mainModuleDir is the main module's folder (this module replaces it with
// ../..), where the router-proxy is built from the tree.
func mainModuleDir() string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/llmkube/llmkube-compile")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		must(fmt.Errorf("go list -m github.com/llmkube/llmkube-compile: %v", err))
	}
	return strings.TrimSpace(string(out))
}
