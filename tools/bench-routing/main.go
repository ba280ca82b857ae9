// Command bench-routing compares pod pickers at the HTTP level: the
// router-proxy's balancing (round-robin, and LoadAware with prefix and
// session affinity) against the Gateway API Inference Extension's Endpoint
// Picker (EPP v1.5.0, default scheduling profile) behind a minimal Envoy
// stand-in that speaks ext_proc to it.
//
// The fleet is 8 fake vLLM replicas (engine.go: continuous batching, a paged
// KV cache with prefix caching and LRU eviction, a FIFO queue, real-time
// steps, vLLM's metrics including vllm:cache_config_info), registered as
// Ready Pods in a real kube-apiserver (envtest binaries) with a Service,
// an EndpointSlice and an InferencePool. The pods listen on TEST-NET-2
// addresses (198.51.100.10-17), which the API server accepts in
// EndpointSlices, so run.sh runs this inside a network namespace of its own
// that holds them. The workload (workload.go) is open-loop: 48 shared
// documents of about 3k tokens with Zipf popularity, half of the requests in
// 4-turn sessions.
//
// It is a benchmark, not a test: it prints a table (and -json lines) and
// asserts nothing. make bench-routing runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

const (
	gatewayAddr = "127.0.0.1:18080"
	adminAddr   = "127.0.0.1:19190"
	eppGRPC     = "127.0.0.1:19002"
)

var pickers = []string{"round-robin", "router-proxy", "router-proxy-no-session", "router-proxy-before", "epp"}

func main() {
	routerProxy := flag.String("router-proxy", "", "router-proxy binary (this tree)")
	baseline := flag.String("router-proxy-before", "", "router-proxy binary of an earlier commit (the router-proxy-before picker)")
	epp := flag.String("epp", "", "EPP v1.5.0 binary")
	crds := flag.String("crds", "", "directory of the Gateway API Inference Extension CRDs (InferencePool v1)")
	work := flag.String("work", os.TempDir(), "scratch directory")
	pick := flag.String("pickers", "round-robin,router-proxy,epp", "comma-separated pickers: "+strings.Join(pickers, ", "))
	loads := flag.String("loads", "moderate=14,near-saturation=28,overload=38", "comma-separated name=requests-per-second")
	duration := flag.Duration("duration", 60*time.Second, "measured arrivals per cell")
	warmup := flag.Duration("warmup", 30*time.Second, "arrivals before the measured window in each cell (caches fill; not counted)")
	seed := flag.Uint64("seed", 1, "random seed (workload)")
	seedList := flag.String("seeds", "", "comma-separated seeds (overrides -seed): every cell runs once per seed, and a summary over the seeds follows (one cell's hit rate moves by about 0.1 points per cold request, busiest/mean by several hundredths)")
	reference := flag.String("reference", "epp", "with -seeds: the picker every other picker's hit rate is compared with, seed by seed (paired: both saw the same arrivals)")
	jsonOut := flag.String("json", "", "also write one JSON line per cell to this file")
	samplesDir := flag.String("samples", "", "also write every request of each cell (one JSON line each) to <dir>/<load>-<picker>.jsonl")
	podIPs := flag.String("pod-ips", "198.51.100.10,198.51.100.11,198.51.100.12,198.51.100.13,198.51.100.14,198.51.100.15,198.51.100.16,198.51.100.17", "the pods' addresses (local to this network namespace)")
	noMaxTokens := flag.Bool("no-max-tokens", false, "clients send no max_tokens (the engines answer as long as with it): a router must learn the answers' length from their usage")
	decodePerCtx := flag.Duration("decode-per-ctx", time.Microsecond, "step cost per token of each decoding sequence's context (0: decode costs no more for long conversations)")
	flag.Parse()
	log.SetFlags(log.Ltime)
	if *samplesDir != "" {
		// Made before the first cell: a missing directory used to end the
		// run after its first cell's 90 s.
		if err := os.MkdirAll(*samplesDir, 0o755); err != nil {
			log.Fatalf("-samples: %v", err)
		}
	}

	ips := strings.Split(*podIPs, ",")
	var names []string
	eng := map[string]*engine{}
	params := engineParams{MaxRunning: 32, CacheBlocks: 4000, BlockTokens: 16, StepTokens: 1024,
		StepBase: 6 * time.Millisecond, DecodePerSeq: 500 * time.Microsecond, DecodePerCtx: *decodePerCtx,
		PrefillPerToken: 300 * time.Microsecond, AnswerTokens: answerTokens}
	for i, ip := range ips {
		name := fmt.Sprintf("vllm-%d", i)
		names = append(names, name)
		e := newEngine(name, params)
		eng[name] = e
		if err := servePod(fmt.Sprintf("%s:%d", ip, podPort), e); err != nil {
			log.Fatalf("pod %s on %s: %v (run inside run.sh's network namespace)", name, ip, err)
		}
	}
	ctx := context.Background()
	cl, err := startCluster(*crds, *work)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.stop()
	if err := cl.createFleet(ctx, ips, names); err != nil {
		log.Fatal(err)
	}
	log.Printf("API server %s: %d Ready pods, Service, EndpointSlice, InferencePool", cl.cfg.Host, len(ips))

	var out io.Writer = io.Discard
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	seeds := []uint64{*seed}
	if *seedList != "" {
		seeds = nil
		for _, f := range strings.Split(*seedList, ",") {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				log.Fatalf("-seeds %q: %v", *seedList, err)
			}
			seeds = append(seeds, n)
		}
	}
	var results []result
	for _, seed := range seeds {
		for _, l := range strings.Split(*loads, ",") {
			name, rateS, _ := strings.Cut(l, "=")
			rate, err := strconv.ParseFloat(rateS, 64)
			if err != nil {
				log.Fatalf("-loads %q: %v", l, err)
			}
			wp := workloadParams{Docs: 48, DocTokens: 3000, QuestionToks: 150, AnswerToks: answerTokens, NoMaxTokens: *noMaxTokens, Turns: 4, SessionShare: 0.5,
				Think: time.Second, Rate: rate, Warmup: *warmup, Duration: *duration, Seed: seed}
			w := newWorkload(wp)
			for _, p := range strings.Split(*pick, ",") {
				stop, err := startPicker(p, *routerProxy, *baseline, *epp, cl.kubeconfig, *work)
				if err != nil {
					log.Fatalf("%s: %v", p, err)
				}
				for _, e := range eng {
					e.reset()
				}
				log.Printf("%s at %s (%.0f req/s) for %s + %s warm-up, seed %d", p, name, rate, *duration, *warmup, seed)
				t0 := time.Now()
				samples := runLoad(ctx, w, "http://"+gatewayAddr+"/v1/chat/completions", func(pod string) bool {
					e := eng[pod]
					return e != nil && e.waitingLen() > 0
				})
				res := summarize(samples, names, warmup.Seconds(), duration.Seconds(), time.Since(t0).Seconds())
				if *samplesDir != "" {
					file := name + "-" + p + ".jsonl"
					if len(seeds) > 1 {
						file = fmt.Sprintf("%s-%s-seed%d.jsonl", name, p, seed)
					}
					if err := writeSamples(filepath.Join(*samplesDir, file), samples); err != nil {
						log.Fatal(err)
					}
				}
				stop()
				res.Load, res.Rate, res.Picker, res.Seed = name, rate, p, seed
				for _, e := range eng {
					_, _, _, mq := e.stats()
					res.MaxQueue = max(res.MaxQueue, mq)
				}
				results = append(results, res)
				b, _ := json.Marshal(res)
				fmt.Fprintln(out, string(b))
				log.Printf("%s", b)
			}
		}
	}
	printTable(os.Stdout, results)
	if len(seeds) > 1 {
		fmt.Println()
		printSummary(os.Stdout, results)
		fmt.Println()
		printPaired(os.Stdout, results, *reference)
	}
}

func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tseed\tpicker\treq/s\tTTFT p50\tp90\tp99\thit rate\tbusiest/mean\tsticky\tsticky (pod not hot)\tcold\tmaxQueue\terrors\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t\n", r.Load, r.Seed, r.Picker, r.Throughput, r.TTFTP50, r.TTFTP90, r.TTFTP99,
			r.HitRate, r.Busiest, r.Sticky, r.StickyCool, r.Cold, r.MaxQueue, r.Errors)
	}
	_ = tw.Flush()
}

// printSummary gives each load and picker's mean over the seeds, with the
// lowest and highest cell in brackets: single cells differ by more than the
// effects being compared.
func printSummary(w io.Writer, rs []result) {
	type key struct{ load, picker string }
	var order []key
	by := map[key][]result{}
	for _, r := range rs {
		k := key{r.Load, r.Picker}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	mean := func(cells []result, f func(result) float64) float64 {
		sum := 0.0
		for _, c := range cells {
			sum += f(c)
		}
		return sum / float64(len(cells))
	}
	stat := func(cells []result, f func(result) float64, format string) string {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range cells {
			lo, hi = min(lo, f(c)), max(hi, f(c))
		}
		return fmt.Sprintf(format+" ["+format+"–"+format+"]", mean(cells, f), lo, hi)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\tpicker\tseeds\tTTFT p90\tp99\thit rate\tbusiest/mean\tsticky (pod not hot)\tcold (new to the fleet)\t")
	for _, k := range order {
		c := by[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", k.load, k.picker, len(c),
			stat(c, func(r result) float64 { return r.TTFTP90 }, "%.2f"),
			stat(c, func(r result) float64 { return r.TTFTP99 }, "%.2f"),
			stat(c, func(r result) float64 { return r.HitRate }, "%.3f"),
			stat(c, func(r result) float64 { return r.Busiest }, "%.2f"),
			stat(c, func(r result) float64 { return r.StickyCool }, "%.2f"),
			stat(c, func(r result) float64 { return float64(r.Cold) }, "%.1f")+fmt.Sprintf(" (%.1f)", mean(c, func(r result) float64 { return float64(r.ColdFirst) })))
	}
	_ = tw.Flush()
}

// pairedDiff is one picker's hit rate against the reference picker's over
// the seeds both ran at one load: seed by seed, since both saw the same
// arrivals, so the documents' popularity draw cancels out.
type pairedDiff struct {
	load, picker         string
	n                    int
	ahead, level, behind int
	// mean and half are the mean difference (points: hit rate × 100) and
	// the half-width of its 95% interval (Student's t with n-1 degrees of
	// freedom, from gonum; NaN for one seed).
	mean, half float64
}

// pairedDiffs compares every picker with ref, load by load, on the seeds
// both ran. A cell is level when the two hit rates agree to 0.01 points
// (the fourth decimal the tables print).
func pairedDiffs(rs []result, ref string) []pairedDiff {
	type cell struct {
		load string
		seed uint64
	}
	refHit := map[cell]float64{}
	for _, r := range rs {
		if r.Picker == ref {
			refHit[cell{r.Load, r.Seed}] = r.HitRate
		}
	}
	type key struct{ load, picker string }
	var order []key
	diffs := map[key][]float64{}
	for _, r := range rs {
		h, ok := refHit[cell{r.Load, r.Seed}]
		if r.Picker == ref || !ok {
			continue
		}
		k := key{r.Load, r.Picker}
		if _, seen := diffs[k]; !seen {
			order = append(order, k)
		}
		diffs[k] = append(diffs[k], 100*(r.HitRate-h))
	}
	var out []pairedDiff
	for _, k := range order {
		ds := diffs[k]
		d := pairedDiff{load: k.load, picker: k.picker, n: len(ds), half: math.NaN()}
		for _, x := range ds {
			switch {
			case math.Abs(x) < 0.01:
				d.level++
			case x > 0:
				d.ahead++
			default:
				d.behind++
			}
		}
		var sd float64
		d.mean, sd = stat.MeanStdDev(ds, nil)
		if n := float64(len(ds)); n > 1 {
			t95 := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
			d.half = t95 * stat.StdErr(sd, n)
		}
		out = append(out, d)
	}
	return out
}

// printPaired prints pairedDiffs: whether a picker's hit rate is at least
// the reference's is a question the seeds' spread answers, not one cell.
func printPaired(w io.Writer, rs []result, ref string) {
	ds := pairedDiffs(rs, ref)
	if len(ds) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\tpicker\tseeds\thit rate - %s's (points, mean ± 95%%)\tahead / level / behind\t\n", ref)
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%+.2f ± %.2f\t%d / %d / %d\t\n", d.load, d.picker, d.n, d.mean, d.half, d.ahead, d.level, d.behind)
	}
	_ = tw.Flush()
}

// proxyConfig is the router-proxy's config for one picker: one local
// backend with endpoint resolution over the pool's Service.
func proxyConfig(picker string) proxyapi.Config {
	bal := proxyapi.Balancing{Mode: "RoundRobin"}
	if picker != "round-robin" {
		bal = proxyapi.Balancing{Mode: "LoadAware", PrefixAffinity: &proxyapi.PrefixAffinity{BlockBytes: 1024, MaxBlocksPerEndpoint: 16384}}
		if picker != "router-proxy-no-session" {
			bal.SessionAffinity = &proxyapi.SessionAffinity{Headers: []string{"x-session-id"}, IdleTimeout: proxyapi.Duration{Duration: 30 * time.Minute}}
		}
	}
	return proxyapi.Config{
		APIVersion: proxyapi.APIVersion,
		Router:     proxyapi.RouterInfo{Name: "bench", Namespace: benchNS},
		Timeouts: proxyapi.Timeouts{ResponseHeader: proxyapi.Duration{Duration: 2 * time.Minute}, StreamIdle: proxyapi.Duration{Duration: 5 * time.Minute},
			Quarantine: proxyapi.Duration{Duration: 15 * time.Second}},
		Backends: []proxyapi.Backend{{Name: "pool", ModelID: modelName, Kind: proxyapi.KindLocal, Tier: "local", URL: fmt.Sprintf("http://%s.%s.svc:%d", poolName, benchNS, podPort),
			Weight:    1,
			Endpoints: &proxyapi.Endpoints{Service: poolName, Namespace: benchNS, Port: podPort, Balancing: bal}}},
		Default: proxyapi.DefaultRoute{Strategy: proxyapi.DefaultStatic, Backend: "pool"},
		Policy: proxyapi.Policy{Classification: proxyapi.Classification{Mode: "header-only", HeaderKey: "x-llmkube-classification"},
			Audit: proxyapi.Audit{Sink: proxyapi.SinkStdout}},
	}
}

// startPicker starts the gateway for a picker on gatewayAddr and returns
// once it serves; stop ends it.
func startPicker(picker, routerProxy, baseline, epp, kubeconfig, work string) (stop func(), err error) {
	logf, err := os.Create(filepath.Join(work, picker+".log"))
	if err != nil {
		return nil, err
	}
	switch picker {
	case "round-robin", "router-proxy", "router-proxy-no-session", "router-proxy-before":
		bin := routerProxy
		if picker == "router-proxy-before" {
			bin = baseline
		}
		if bin == "" {
			return nil, fmt.Errorf("no binary (-router-proxy / -router-proxy-before)")
		}
		cfg, _ := json.MarshalIndent(proxyConfig(picker), "", "  ")
		cfgPath := filepath.Join(work, picker+".json")
		if err := writeFile(cfgPath, cfg); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "--config", cfgPath, "--listen", gatewayAddr, "--admin-listen", adminAddr, "--kubeconfig", kubeconfig, "--log-level", "warn")
		cmd.Stdout, cmd.Stderr = io.Discard, logf // stdout: the audit log
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		stop := func() { terminate(cmd); logf.Close() }
		// Ready, and the pods known (the status page lists them).
		if err := waitFor(30*time.Second, func() bool {
			resp, err := http.Get("http://" + adminAddr + "/ready")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK && podsKnown()
		}); err != nil {
			stop()
			return nil, fmt.Errorf("router-proxy not ready: %w (log %s)", err, logf.Name())
		}
		return stop, nil
	case "epp":
		if epp == "" {
			return nil, fmt.Errorf("no -epp binary")
		}
		_, port, _ := strings.Cut(eppGRPC, ":")
		cmd := exec.Command(epp, "--pool-name", poolName, "--pool-namespace", benchNS, "--grpc-port", port, "--grpc-health-port", "19003",
			"--metrics-port", "19091", "--metrics-endpoint-auth=false", "--tracing=false", "--enable-pprof=false", "--v=1")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		gw, err := newEnvoyGateway(eppGRPC)
		if err != nil {
			terminate(cmd)
			return nil, err
		}
		gctx, cancel := context.WithCancel(context.Background())
		stop := func() { cancel(); gw.close(); terminate(cmd); logf.Close() }
		if err := serveHTTP(gctx, gatewayAddr, gw); err != nil {
			stop()
			return nil, err
		}
		// Ready when a short request (no whole prefix block) is placed and
		// answered; EPP then knows the pods and their metrics.
		if err := waitFor(60*time.Second, func() bool { return probe() == nil }); err != nil {
			stop()
			return nil, fmt.Errorf("EPP not ready: %w (log %s)", err, logf.Name())
		}
		return stop, nil
	}
	return nil, fmt.Errorf("unknown picker %q (have %v)", picker, pickers)
}

// podsKnown: a request is answered by a pod (before the EndpointSlice
// sync the proxy would send it to the Service URL, which does not resolve
// here); then one scrape interval for the engine metrics.
func podsKnown() bool {
	if probe() != nil {
		return false
	}
	time.Sleep(time.Second)
	return true
}

func probe() error {
	body := `{"model":"bench-model","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"ping"}]}`
	resp, err := http.Post("http://"+gatewayAddr+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Pod") == "" {
		return fmt.Errorf("probe: %s", resp.Status)
	}
	return nil
}

func waitFor(d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return errNotReady
}

func terminate(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// answerTokens is every answer's length: the workload's max_tokens, and what
// an engine answers a request without one.
const answerTokens = 32
