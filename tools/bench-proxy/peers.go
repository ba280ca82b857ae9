package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/llmkube/llmkube-compile/routerproxy/h1"
)

// The peer table: the router-proxy beside nginx and HAProxy (Debian's
// packages, hack/install-bench.sh) and the standard library's reverse
// proxy, all in front of one nginx upstream that answers a fixed chat
// completion, loaded by wrk in one run. Ratios are to nginx.

// upstreamAnswer is the fixed 250-byte-class chat completion the nginx
// upstream returns (JSON), and its SSE form.
const upstreamAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"stub","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`

// peerResult is one path's measurement.
type peerResult struct {
	name      string
	p50       time.Duration // at concurrency 1
	rps32     float64       // at concurrency 32
	cpuPerReq time.Duration // of the path's proxy process, at concurrency 32
	rssKB     int64
	errors    int
}

// runPeers measures every path for one body kind and prints the table.
func runPeers(bin, dir string, stream bool, seconds int) {
	nginxUp := freePort()
	writeFile(filepath.Join(dir, "sse.txt"), sseChunks)
	writeFile(filepath.Join(dir, "answer.json"), []byte(upstreamAnswer))
	upConf := fmt.Sprintf(`daemon off; master_process off; worker_processes 1; error_log stderr error; pid %[1]s/up-%[3]s.pid;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  server { listen %[2]s;
    location /health { return 200; }
    location / { if ($http_x_bench_stream) { rewrite ^ /sse.txt last; } rewrite ^ /answer.json last; }
    location = /answer.json { default_type application/json; error_page 405 =200 $uri; root %[1]s; }
    location = /sse.txt { default_type text/event-stream; error_page 405 =200 $uri; root %[1]s; } } }`, dir, nginxUp, kindOf(stream))
	startPeer("nginx upstream", dir, "up-"+kindOf(stream)+".conf", upConf, "nginx", "-e", "stderr", "-c")
	waitUntil("nginx upstream", func() bool { return get("http://"+nginxUp+"/health") == 200 })

	// Peers in front of the upstream, each one process.
	nginxProxy := freePort()
	ngConf := fmt.Sprintf(`daemon off; master_process off; worker_processes 1; error_log stderr error; pid %[1]s/px-%[4]s.pid;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  upstream up { server %[3]s; keepalive 64; }
  server { listen %[2]s; location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; } } }`, dir, nginxProxy, nginxUp, kindOf(stream))
	ngPid := startPeer("nginx proxy", dir, "px-"+kindOf(stream)+".conf", ngConf, "nginx", "-e", "stderr", "-c")
	haProxy := freePort()
	haConf := fmt.Sprintf(`global
  nbthread 1
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  option http-keep-alive
frontend f
  bind %s
  default_backend b
backend b
  http-reuse always
  server up %s
`, haProxy, nginxUp)
	haPid := startPeer("haproxy", dir, "ha-"+kindOf(stream)+".cfg", haConf, "haproxy", "-db", "-f")
	bare, barePid := startSelf("-serve-peer", nginxUp)
	var extra []string
	if profileDir != "" {
		extra = append(extra, "--debug-pprof")
	}
	hybrid, hybridPid := startSelf("-serve-hybrid-peer", nginxUp)
	core, corePid := startSelf("-serve-core-peer", nginxUp)
	ownCore, ownCorePid := startSelf("-serve-own-core-peer", nginxUp)
	fast, fastPid := startSelf("-serve-fasthttp-peer", nginxUp)
	rpListen, rpAdmin, rpPid := startProxyAdmin(bin, dir, "peers-"+kindOf(stream), config("http://"+nginxUp, filepath.Join(dir, "audit-peers.jsonl")), extra...)
	for _, a := range []string{nginxProxy, haProxy, bare, fast, hybrid, core, ownCore} {
		waitUntil("peer "+a, func() bool { return get("http://"+a+"/health") == 200 })
	}

	paths := []struct {
		name, addr string
		pid        int
	}{
		{"direct", nginxUp, 0},
		{"nginx 1.22 reverse proxy", nginxProxy, ngPid},
		{"HAProxy 2.6", haProxy, haPid},
		{"bare httputil.ReverseProxy", bare, barePid},
		{"bare fasthttp proxy", fast, fastPid},
		{"net/http server + fasthttp client", hybrid, hybridPid},
		{"net/http server + routerproxy/h1 client", core, corePid},
		{"routerproxy/h1 server + client (router-proxy's core)", ownCore, ownCorePid},
		{"router-proxy", rpListen, rpPid},
	}
	// The nginx and HAProxy peers run one worker thread each; the same
	// router-proxy on one P shows what Go's scheduler spends moving work
	// between threads (GOMAXPROCS is otherwise the node's CPUs, and at
	// least 2 under a cgroup limit).
	oneListen, _, onePid := startProxyAdminEnv(bin, dir, "peers-one-"+kindOf(stream), config("http://"+nginxUp, filepath.Join(dir, "audit-peers-one.jsonl")), []string{"GOMAXPROCS=1"})
	paths = append(paths, struct {
		name, addr string
		pid        int
	}{"router-proxy, GOMAXPROCS=1", oneListen, onePid})
	if compareBin != "" {
		cmpListen, _, cmpPid := startProxyAdmin(compareBin, dir, "compare-"+kindOf(stream), config("http://"+nginxUp, filepath.Join(dir, "audit-compare.jsonl")))
		paths = append(paths, struct {
			name, addr string
			pid        int
		}{"router-proxy (" + filepath.Base(compareBin) + ")", cmpListen, cmpPid})
	}
	script := filepath.Join(dir, "post.lua")
	header := ""
	if stream {
		header = `wrk.headers["X-Bench-Stream"] = "1"` + "\n"
	}
	reqBody := body
	if stream {
		reqBody = streamBody
	}
	writeFile(script, []byte(`wrk.method = "POST"
wrk.body = '`+reqBody+`'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Tenant"] = "gold"
wrk.headers["X-Llmkube-Client"] = "bench"
`+header))
	var results []peerResult
	for _, p := range paths {
		url := "http://" + p.addr + "/v1/chat/completions"
		wrkRun(url, script, 1, 2) // warm
		p50, _, e1 := wrkRun(url, script, 1, seconds)
		var c0 time.Duration
		if p.pid != 0 {
			c0 = cpu(p.pid)
		}
		var profiled chan struct{}
		if profileDir != "" && p.name == "router-proxy" {
			profiled = make(chan struct{})
			go func() {
				defer close(profiled)
				fetchProfile(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", rpAdmin, max(seconds-1, 1)), filepath.Join(profileDir, "cpu-"+kindOf(stream)+".pprof"))
			}()
		}
		_, rps, e2 := wrkRun(url, script, 32, seconds)
		if profiled != nil {
			<-profiled
			fetchProfile("http://"+rpAdmin+"/debug/pprof/allocs", filepath.Join(profileDir, "allocs-"+kindOf(stream)+".pprof"))
			fetchProfile("http://"+rpAdmin+"/debug/pprof/heap", filepath.Join(profileDir, "heap-"+kindOf(stream)+".pprof"))
		}
		r := peerResult{name: p.name, p50: p50, rps32: rps, errors: e1 + e2}
		if p.pid != 0 {
			r.cpuPerReq = (cpu(p.pid) - c0) / time.Duration(max(rps*float64(seconds), 1))
			r.rssKB = peakRSS(p.pid)
		}
		results = append(results, r)
	}
	kind := strings.ToUpper(kindOf(stream))
	direct, ng := results[0], results[1]
	fmt.Printf("\n%s, wrk one thread, %ds per point (ratios to nginx):\n\n", kind, seconds)
	fmt.Println("| path | added p50, c=1 | throughput, c=32 | proxy CPU per request | peak RSS | errors |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range results {
		if r.name == "direct" {
			fmt.Printf("| direct | (%s p50) | %.1fk rps | – | – | %d |\n", us(r.p50), r.rps32/1000, r.errors)
			continue
		}
		added, ngAdded := r.p50-direct.p50, ng.p50-direct.p50
		fmt.Printf("| %s | %s (%.1f×) | %.1fk rps (%.2f×) | %s (%.1f×) | %d kB | %d |\n", r.name,
			us(added), ratio(added, ngAdded), r.rps32/1000, r.rps32/ng.rps32, us(r.cpuPerReq), ratio(r.cpuPerReq, ng.cpuPerReq), r.rssKB, r.errors)
	}
	for _, r := range results {
		if r.name == "router-proxy" {
			printTargets(r, direct, ng)
		}
	}
}

// printTargets says, for the router-proxy in this run, which of the
// performance targets (ratios to nginx in the same run) are met.
func printTargets(r, direct, ng peerResult) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "missed"
	}
	cpuX := ratio(r.cpuPerReq, ng.cpuPerReq)
	p50X := ratio(r.p50-direct.p50, ng.p50-direct.p50)
	rpsX := r.rps32 / ng.rps32
	rssMiB := float64(r.rssKB) / 1024
	fmt.Printf("\nrouter-proxy against the targets: CPU per request %.1f× nginx (≤ 2×: %s), added p50 %.1f× (≤ 2×: %s), "+
		"throughput %.2f× (≥ 0.5×: %s), peak RSS %.1f MiB (≤ 40 MiB: %s), errors %d (%s).\n",
		cpuX, verdict(cpuX <= 2), p50X, verdict(p50X <= 2), rpsX, verdict(rpsX >= 0.5), rssMiB, verdict(r.rssKB > 0 && rssMiB <= 40),
		r.errors, verdict(r.errors == 0))
	fmt.Println("Where the time goes: -profile DIR writes the router-proxy's profiles of this load; docs/performance.md reads them.")
}

func kindOf(stream bool) string {
	if stream {
		return "sse"
	}
	return "json"
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func writeFile(path string, data []byte) { must(os.WriteFile(path, data, 0o600)) }

// startPeer writes a config and starts a peer process on it (config path
// last), returning its pid.
func startPeer(what, dir, name, conf, bin string, args ...string) int {
	path := filepath.Join(dir, name)
	writeFile(path, []byte(conf))
	cmd := exec.Command(bin, append(args, path)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		must(fmt.Errorf("%s: %w (run hack/install-bench.sh)", what, err))
	}
	procs = append(procs, cmd)
	return cmd.Process.Pid
}

var (
	wrkLatency = regexp.MustCompile(`(?m)^\s+50%\s+([0-9.]+)(us|ms|s)`)
	wrkRPS     = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkErrors  = regexp.MustCompile(`(?m)Non-2xx or 3xx responses: (\d+)|Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrkRun runs wrk and returns its p50 latency, requests per second and errors.
func wrkRun(url, script string, conns, seconds int) (time.Duration, float64, int) {
	out, err := exec.Command("wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(seconds)+"s", "--latency", "-s", script, url).CombinedOutput()
	if err != nil {
		must(fmt.Errorf("wrk: %v\n%s", err, out))
	}
	s := string(out)
	var p50 time.Duration
	if m := wrkLatency.FindStringSubmatch(s); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[2]]
		p50 = time.Duration(v * float64(unit))
	}
	var rps float64
	if m := wrkRPS.FindStringSubmatch(s); m != nil {
		rps, _ = strconv.ParseFloat(m[1], 64)
	}
	errs := 0
	for _, m := range wrkErrors.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			n, _ := strconv.Atoi(g)
			errs += n
		}
	}
	return p50, rps, errs
}

// profileDir, when set, receives the router-proxy's profiles.
var profileDir string

// compareBin, when set, is a second router-proxy binary measured in the
// peer table with the same config: an A/B of two builds in one run.
var compareBin string

func fetchProfile(url, path string) {
	resp, err := http.Get(url)
	must(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(err)
	must(os.MkdirAll(filepath.Dir(path), 0o755))
	writeFile(path, b)
	fmt.Fprintf(os.Stderr, "profile: %s\n", path)
}

// serveFastHTTPPeer is the other server core's floor: valyala/fasthttp's
// server and HostClient with keep-alive, forwarding every request to the
// upstream with no routing, budgets, metrics or audit. Responses are
// buffered (the upstream's SSE body is a few hundred bytes), so it measures
// the core, not streaming.
func serveFastHTTPPeer(addr, upstream string) {
	hc := &fasthttp.HostClient{Addr: upstream, MaxConns: 512}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if err := hc.Do(&ctx.Request, &ctx.Response); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadGateway)
		}
	}}
	must(srv.ListenAndServe(addr))
}

// serveHybridPeer is net/http's server with fasthttp's client: which half of
// the standard library's cost is the transport.
func serveHybridPeer(addr, upstream string) {
	hc := &fasthttp.HostClient{Addr: upstream, MaxConns: 512}
	must(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(r.Method)
		req.SetRequestURI(r.URL.RequestURI())
		req.Header.SetHost(upstream)
		for k, vs := range r.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		req.SetBody(body)
		if err := hc.Do(req, resp); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header.All() {
			w.Header().Add(string(k), string(v))
		}
		w.WriteHeader(resp.StatusCode())
		_, _ = w.Write(resp.Body())
	})))
}

// serveCorePeer is the router-proxy's former server core with no features:
// net/http's server and the routerproxy/h1 client, the body read whole and the
// response relayed.
func serveCorePeer(addr, upstream string) {
	must(http.ListenAndServe(addr, coreHandler(upstream)))
}

// serveOwnCorePeer is the router-proxy's core with no features: routerproxy/h1's
// server and client. Beside the router-proxy it separates what the core
// costs from what routing, budgets, metrics and the audit log cost.
func serveOwnCorePeer(addr, upstream string) {
	ln, err := net.Listen("tcp", addr)
	must(err)
	must((&h1.Server{Handler: coreHandler(upstream), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}).Serve(ln))
}

func coreHandler(upstream string) http.Handler {
	tr := h1.New(http.DefaultTransport, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		// Writes as the router-proxy's relay does (a pooled buffer, not
		// the ResponseWriter's ReadFrom, which sends the head on its own).
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		_, _ = io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, *bp)
	})
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// startSelf runs this binary as the peer proxy its role flag names, in
// front of upstream, on a free port it returns; it is stopped with the
// other processes. pid is its process.
func startSelf(role, upstream string) (addr string, pid int) {
	self, err := os.Executable()
	must(err)
	addr = freePort()
	cmd := exec.Command(self, role, addr, "-peer-to", upstream)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	procs = append(procs, cmd)
	return addr, cmd.Process.Pid
}
