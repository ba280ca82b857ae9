// Command routersim is a discrete-event simulation of a fleet of vLLM-like
// pods behind the router-proxy's balancer. Each pod has a paged KV cache of
// fixed capacity with LRU eviction of unreferenced pages, a prefill cost per
// uncached prompt token, a decode cost per output token and a batch limit
// with a FIFO queue. The LoadAware arms call the real routerproxy/engine/balance code
// (the same Balancer, prompt hashing and scoring the proxy runs); only the
// random, session-hash and oracle baselines are simulator-side.
//
//	go run ./tools/routersim -workload shared-prefix|sessions|hot-tenant|all -json
//
// prints one JSON object per line per arm. docs/measurements/2026-12-pod-balancing-report.md holds the method
// and the table.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "routersim:", err)
		os.Exit(2)
	}
}

// options are the command line.
type options struct {
	workload string
	json     bool
	arms     []string
	scale    float64
	seed     uint64
	rate     float64
	warmup   float64
	// noMaxTokens: the documents workload's clients send no max_tokens.
	noMaxTokens bool
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("routersim", flag.ContinueOnError)
	wl := fs.String("workload", "all", "shared-prefix, sessions, hot-tenant or all")
	js := fs.Bool("json", false, "print one JSON object per line per arm")
	arm := fs.String("arm", "", "run only this arm")
	scale := fs.Float64("scale", 1, "multiply the number of requests (tests use a small scale)")
	seed := fs.Uint64("seed", 1, "random seed")
	rate := fs.Float64("rate", 14, "requests per second of the documents workload")
	warmup := fs.Duration("warmup", 30*time.Second, "documents workload: arrivals before the measured window (not counted)")
	noMax := fs.Bool("no-max-tokens", false, "documents workload: clients send no max_tokens (the router learns the answers' length)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate <= 0 {
		return fmt.Errorf("-rate must be positive (have %g)", *rate)
	}
	if *warmup < 0 {
		return fmt.Errorf("-warmup must not be negative (have %s)", *warmup)
	}
	o := options{workload: *wl, json: *js, scale: *scale, seed: *seed, rate: *rate, warmup: warmup.Seconds(), noMaxTokens: *noMax, arms: arms}
	if *arm != "" {
		if !slices.Contains(arms, *arm) {
			return fmt.Errorf("unknown arm %q (have %v)", *arm, arms)
		}
		o.arms = []string{*arm}
	}
	names := []string{o.workload}
	if o.workload == "all" {
		names = workloads
	} else if !slices.Contains(workloads, o.workload) {
		return fmt.Errorf("unknown workload %q (have %v)", o.workload, workloads)
	}
	for _, name := range names {
		res := runWorkload(name, o)
		if o.json {
			enc := json.NewEncoder(out)
			for _, r := range res {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			continue
		}
		printTable(out, name, res)
	}
	return nil
}

var workloads = []string{"shared-prefix", "sessions", "hot-tenant", "documents"}

// fleet is the simulated deployment (see docs/measurements/2026-12-pod-balancing-report.md for the numbers).
func fleet(seed uint64) simParams {
	const (
		pods, maxRunning = 8, 32
		groups, ctx, q   = 150, 6000, 1200
		out              = 200
		kvDemand         = 0.73
	)
	// KV demand = every group's shared context once, plus a full batch of
	// questions and answers on every pod, over the fleet's KV capacity.
	demand := groups*ctx + pods*maxRunning*(q+out)
	kv := int(float64(demand) / kvDemand / pods)
	return simParams{
		Pods: pods,
		Pod: podParams{
			MaxRunning:      maxRunning,
			KVTokens:        kv,
			PageTokens:      16,
			StepTokens:      8192,
			StepBase:        0.008,
			DecodePerSeq:    0.0002,
			PrefillPerToken: 0.00005,
		},
		ScrapeInterval: 0.1,
		BlockBytes:     balance.DefaultBlockBytes,
		MaxBlocks:      balance.DefaultMaxBlocks,
		Seed:           seed,
	}
}

// documentsFleet is tools/bench-routing's fleet (its engine's parameters):
// a small KV cache (64k tokens, about 20 documents) and a slow prefill, so
// a cold document costs about 0.9 s.
func documentsFleet(seed uint64) simParams {
	return simParams{
		Pods: 8,
		Pod: podParams{
			MaxRunning:      32,
			KVTokens:        4000 * 16,
			PageTokens:      16,
			StepTokens:      1024,
			StepBase:        0.006,
			DecodePerSeq:    0.0005,
			DecodePerCtx:    0.000001,
			PrefillPerToken: 0.0003,
		},
		ScrapeInterval: 0.5,
		BlockBytes:     balance.DefaultBlockBytes,
		MaxBlocks:      balance.DefaultMaxBlocks,
		Seed:           seed,
	}
}

// newWorkload returns a workload and the fleet it runs on.
func newWorkload(name string, o options, seed uint64) (workload, simParams) {
	n := func(v int) int { return max(int(float64(v)*o.scale), 1) }
	rng := rand.New(rand.NewPCG(seed, 11))
	users := 8 * 32 * 5 / 4 // 1.25 requests per batch slot: the fleet is saturated
	switch name {
	case "shared-prefix":
		return &sharedPrefix{rng: rng, groups: 150, ctx: 6000, q: 1200, out: 200, nUsers: users, nTotal: n(6000)}, fleet(seed)
	case "hot-tenant":
		return &sharedPrefix{rng: rng, groups: 100, ctx: 6000, q: 1200, out: 200, nUsers: users, nTotal: n(6000), hotShare: 0.4}, fleet(seed)
	case "documents": // -warmup (30 s), then 180 s measured
		w := newDocuments(rng, o.rate, o.warmup, 180*o.scale)
		w.bounded = !o.noMaxTokens
		return w, documentsFleet(seed)
	default: // sessions
		return &sessions{rng: rng, sys: 1000, q: 200, out: 200, turns: 8, nUsers: 160, nTotal: n(6000), thinkMean: 2}, fleet(seed)
	}
}

func runWorkload(name string, o options) []result {
	var res []result
	for _, arm := range o.arms {
		w, p := newWorkload(name, o, o.seed)
		r := newSim(p, arm, w).run()
		r.Workload = name // stickiness is nil unless the workload has sessions
		res = append(res, r)
	}
	return res
}

func (s *sim) report() result {
	r := result{Arm: s.arm, SimSeconds: round(s.now, 3)}
	warm := 0.0
	if w, ok := s.w.(warmed); ok {
		warm = w.warmup()
	}
	byArrival := slices.Clone(s.done)
	slices.SortStableFunc(byArrival, func(a, b *request) int { return cmp.Compare(a.arrive, b.arrive) })
	var prompt, hit, outTok float64
	ttft := make([]float64, 0, len(s.done))
	perPod := make([]int, len(s.pods))
	seen := map[int]bool{} // documents (groups) sent anywhere so far
	sticky, stickyOf := 0, 0
	for _, q := range byArrival {
		first := !seen[q.group]
		seen[q.group] = true
		outTok += float64(q.output.tokens)
		if q.arrive < warm {
			continue
		}
		r.Requests++
		perPod[q.pod]++
		prompt += float64(q.promptTokens)
		hit += float64(q.hitTokens)
		ttft = append(ttft, q.firstTok-q.arrive)
		if 2*q.hitTokens < q.promptTokens {
			r.Cold++
			if first {
				r.ColdFirst++
			}
		}
		if q.session >= 0 && q.turn > 0 && q.prevPod >= 0 {
			stickyOf++
			if q.prevPod == q.pod {
				sticky++
			}
		}
	}
	if r.Requests > 0 {
		r.Busiest = round(float64(slices.Max(perPod))*float64(len(perPod))/float64(r.Requests), 3)
	}
	if prompt > 0 {
		r.HitRate = round(hit/prompt, 4)
	}
	if s.now > 0 {
		r.Throughput = round(outTok/s.now, 1)
	}
	sort.Float64s(ttft)
	r.TTFTP50 = round(quantile(ttft, 0.5), 3)
	r.TTFTP90 = round(quantile(ttft, 0.9), 3)
	r.TTFTP99 = round(quantile(ttft, 0.99), 3)
	for _, p := range s.pods {
		r.MaxQueue = max(r.MaxQueue, p.maxQueue)
	}
	if stickyOf > 0 {
		v := round(float64(sticky)/float64(stickyOf), 4)
		r.Stickiness = &v
	}
	return r
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)]
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

func printTable(out io.Writer, name string, res []result) {
	fmt.Fprintf(out, "workload %s\n", name)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "arm\thitRate\tthroughput\tttftP50\tttftP90\tmaxQueue\tstickiness\tbusiest\tcold (first)\t")
	for _, r := range res {
		st := "-"
		if r.Stickiness != nil {
			st = fmt.Sprintf("%.3f", *r.Stickiness)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.0f\t%.2f\t%.2f\t%d\t%s\t%.2f\t%d (%d)\t\n", r.Arm, r.HitRate, r.Throughput, r.TTFTP50, r.TTFTP90, r.MaxQueue, st, r.Busiest, r.Cold, r.ColdFirst)
	}
	tw.Flush()
	fmt.Fprintln(out)
}
