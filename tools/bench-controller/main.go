// Command bench-controller measures the ModelRouter controller at scale: for
// each N it starts a real kube-apiserver and etcd (envtest, with every CRD
// the tests install), runs the llmkube-controller binary as a process with
// its real flags (--leader-elect, metrics on loopback, no webhook), creates N
// ModelRouters spread over the three data planes and several Gateways with
// the InferenceServices they reference, and reports:
//
//   - the time from the first create to every router settled, and the time
//     one spec change takes to settle at N;
//   - the controller process's peak RSS (/proc/<pid>/status VmHWM) and CPU
//     seconds (/proc/<pid>/stat utime+stime);
//   - the API requests by verb during the settle and over a steady-state
//     window (the kube-apiserver's apiserver_request_total, read before and
//     after with an admin client), with the writes by resource, and the
//     controller's own requests (its rest_client_requests_total);
//   - the cost of the cluster-wide checks that compare routers: routers on
//     ONE Gateway (-one-gateway 250,500,1000), whose growth is reported.
//
// It is a benchmark, not a test: it prints tables and asserts nothing
// (docs/performance.md, "Controller at scale", has the method and the
// numbers). Run it with `make bench-controller`; arguments go in
// BENCH_CONTROLLER_ARGS, e.g. BENCH_CONTROLLER_ARGS='-n 50 -steady 20s -one-gateway ""'.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

var (
	flagN          = flag.String("n", "100,1000,5000", "router counts of the spread runs (three planes, several Gateways); empty: none")
	flagOneGW      = flag.String("one-gateway", "250,500,1000", "router counts of the one-Gateway runs (every router on one Gateway); empty: none")
	flagOnePlanes  = flag.String("one-gateway-planes", "Gateway,AgentGateway", "planes of the one-Gateway runs")
	flagSteady     = flag.Duration("steady", 5*time.Minute, "steady-state window of the spread runs")
	flagOneSteady  = flag.Duration("one-gateway-steady", 0, "steady-state window of the one-Gateway runs (0: none)")
	flagGateways   = flag.Int("gateways", 4, "Gateways per gateway plane in the spread runs")
	flagPerNS      = flag.Int("routers-per-namespace", 100, "routers per namespace")
	flagIsvcs      = flag.Int("isvcs-per-namespace", 10, "Ready InferenceServices per namespace (each router references two)")
	flagWorkers    = flag.Int("create-workers", 16, "parallel creates")
	flagTimeout    = flag.Duration("settle-timeout", 30*time.Minute, "give up on a settle after this long")
	flagDataplane  = flag.String("dataplane", "absent", "absent: settled is the documented phase with no data plane (Provisioning, Pending/AwaitingDataPlane); played: the harness plays the Deployment and gateway controllers and settled is Ready")
	flagController = flag.String("controller", "", "llmkube-controller binary (default: go build ./cmd/llmkube-controller)")
	flagWork       = flag.String("work", "", "directory for kubeconfigs and controller logs (default: a temporary one)")
	flagJSON       = flag.String("json", "", "append one JSON line per run to this file")
	flagTrace      = flag.Bool("trace-change", false, "print every status the watch shows of the routers given a spec change")
	flagPortBase   = flag.Int("port-base", 38470, "first loopback port tried for the controller's metrics, probe and profiler addresses")
	flagProfile    = flag.Duration("profile", 0, "length of the controller's CPU profiles, one from the first create and one from the first spec change, plus a heap profile once settled (0: none)")
	flagProfileDir = flag.String("profile-dir", "", "directory for the profiles (default: each run's work directory)")
)

// result is one run's figures.
type result struct {
	Name        string
	Routers     int
	Planes      string
	Gateways    int
	Dataplane   string
	EnvStart    time.Duration
	CreateTook  time.Duration            // creating the N routers
	Settle      time.Duration            // first create to every router settled
	Settled     int                      // routers settled (all of them, unless the settle timed out)
	SettleBy    map[string]time.Duration // per plane: first create to its last router settled
	SettleWin   window
	Steady      *window
	SteadyChurn int                      // router updates the watch saw during the steady window
	Change      map[string]time.Duration // per plane: spec patch to that router settled at the new generation
	ChangeBy    map[string]window        // per plane: the controller during that change (the work queue)
	ChangeWin   *window
	PeakRSSMiB  float64
	CPUTotal    time.Duration // controller CPU from start to the end of the run
	PlayerW     int64         // writes made by the played data plane (included in the API figures)
	Err         string        `json:",omitempty"`
}

func main() {
	flag.Parse()
	logf.SetLogger(logr.Discard()) // controller-runtime's envtest and cache: quiet
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-controller:", err)
		os.Exit(1)
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run() error {
	ns, err := ints(*flagN)
	if err != nil {
		return err
	}
	oneGW, err := ints(*flagOneGW)
	if err != nil {
		return err
	}
	if *flagDataplane != "absent" && *flagDataplane != "played" {
		return fmt.Errorf("-dataplane %q: absent or played", *flagDataplane)
	}
	work := *flagWork
	if work == "" {
		if work, err = os.MkdirTemp("", "bench-controller-"); err != nil {
			return err
		}
	}
	bin := *flagController
	if bin == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			return err
		}
		bin = filepath.Join(work, "llmkube-controller")
		fmt.Println("building the controller")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/llmkube-controller")
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	cpus, _ := exec.Command("nproc").Output()
	fmt.Printf("machine: %s CPUs, load %s; controller %s; work %s; data plane %s\n", strings.TrimSpace(string(cpus)), loadavg(), bin, work, *flagDataplane)

	var layouts []struct {
		name   string
		l      layout
		steady time.Duration
	}
	for _, n := range ns {
		layouts = append(layouts, struct {
			name   string
			l      layout
			steady time.Duration
		}{fmt.Sprintf("spread-%d", n), layout{n: n, gateways: *flagGateways, routersPerNS: *flagPerNS, isvcsPerNS: *flagIsvcs}, *flagSteady})
	}
	for _, p := range strings.Split(*flagOnePlanes, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if p != planeGateway && p != planeAgentGW && p != planeProxy {
			return fmt.Errorf("-one-gateway-planes: unknown plane %q", p)
		}
		for _, n := range oneGW {
			layouts = append(layouts, struct {
				name   string
				l      layout
				steady time.Duration
			}{fmt.Sprintf("one-%s-%d", p, n), layout{n: n, onePlane: p, gateways: 1, routersPerNS: *flagPerNS, isvcsPerNS: *flagIsvcs}, *flagOneSteady})
		}
	}
	// Ctrl-C stops the run in progress cleanly (the controller, the API
	// server and etcd are stopped by runOne's deferred calls).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var results []result
	for _, sc := range layouts {
		if ctx.Err() != nil {
			break
		}
		fmt.Printf("\n=== %s: %d routers (load %s)\n", sc.name, sc.l.n, loadavg())
		res := runOne(ctx, sc.name, sc.l, sc.steady, bin, filepath.Join(work, sc.name))
		if res.Err != "" {
			fmt.Printf("    FAILED: %s\n", res.Err)
		}
		results = append(results, res)
		if *flagJSON != "" {
			if f, err := os.OpenFile(*flagJSON, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				b, _ := json.Marshal(res)
				fmt.Fprintln(f, string(b))
				f.Close()
			}
		}
	}
	report(results)
	return nil
}

// bench is one run's live state.
type bench struct {
	restClient  rest.Interface
	metricsAddr string
	pprofAddr   string
	ctrl        *exec.Cmd
	exited      chan error // the controller process's exit
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1.AddToScheme(s)
	return s
}()

func runOne(parent context.Context, name string, l layout, steady time.Duration, bin, dir string) (res result) {
	res = result{Name: name, Routers: l.n, Gateways: l.gateways, Dataplane: *flagDataplane, Planes: "Proxy, Gateway, AgentGateway"}
	if l.onePlane != "" {
		res.Planes = l.onePlane
	}
	fail := func(err error) result { res.Err = err.Error(); return res }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	began := time.Now()
	env, err := startCluster()
	if err != nil {
		return fail(err)
	}
	defer env.stop()
	res.EnvStart = time.Since(began)
	fmt.Printf("    API server up with %d CRDs in %s\n", env.crds, res.EnvStart.Round(time.Second))
	c, err := client.New(env.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fail(err)
	}
	cs, err := kubernetes.NewForConfig(env.cfg)
	if err != nil {
		return fail(err)
	}
	b := &bench{restClient: cs.CoreV1().RESTClient()}
	if err := createFixtures(ctx, c, l); err != nil {
		return fail(fmt.Errorf("fixtures: %w", err))
	}
	stopController, err := b.startController(ctx, c, env, bin, dir)
	if err != nil {
		return fail(err)
	}
	defer stopController()

	prof, err := newProfiler(b.pprofAddr, name, dir)
	if err != nil {
		return fail(err)
	}
	r := &benchRun{ctx: ctx, l: l, c: c, bench: b, routers: l.routers(), res: &res, prof: prof}
	defer r.waitProfiles()
	pl, err := r.watch(env.cfg)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if pl != nil {
			res.PlayerW = pl.writes.Load()
		}
	}()
	s1, err := r.settle()
	if err != nil {
		return fail(err)
	}
	last, err := r.steady(s1, steady)
	if err != nil {
		return fail(err)
	}
	if err := r.changeEach(); err != nil {
		return fail(err)
	}
	s3, err := b.snap(ctx)
	if err != nil {
		return fail(err)
	}
	w := between(last, s3)
	res.ChangeWin = &w
	res.PeakRSSMiB = float64(s3.proc.hwmKiB) / 1024
	res.CPUTotal = s3.proc.cpu
	return res
}

// startController runs the controller, as a process, with the admin's
// kubeconfig, and waits until it is ready; stop ends it (SIGTERM, then
// SIGKILL after a minute) and closes its log.
func (b *bench) startController(ctx context.Context, c client.Client, env *cluster, bin, dir string) (stop func(), err error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := env.writeKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	metricsPort, err := freePort(*flagPortBase)
	if err != nil {
		return nil, err
	}
	probePort, err := freePort(metricsPort + 1)
	if err != nil {
		return nil, err
	}
	pprofPort, err := freePort(probePort + 1)
	if err != nil {
		return nil, err
	}
	b.metricsAddr = fmt.Sprintf("127.0.0.1:%d", metricsPort)
	b.pprofAddr = fmt.Sprintf("127.0.0.1:%d", pprofPort)
	logFile, err := os.Create(filepath.Join(dir, "controller.log"))
	if err != nil {
		return nil, err
	}
	b.ctrl = exec.Command(bin, "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", leaseNS,
		"--metrics-bind-address", b.metricsAddr,
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probePort),
		"--pprof-bind-address", b.pprofAddr,
		"--webhook-port", "0",
		"--proxy-image", "example.test/router-proxy:bench")
	b.ctrl.Stdout, b.ctrl.Stderr = logFile, logFile
	if err := b.ctrl.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	b.exited = make(chan error, 1)
	go func() { b.exited <- b.ctrl.Wait() }()
	stop = func() {
		_ = b.ctrl.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
		case <-time.After(60 * time.Second):
			_ = b.ctrl.Process.Kill()
			<-b.exited
		}
		logFile.Close()
	}
	if err := waitControllerReady(ctx, c, probePort, logFile.Name(), b.exited); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// benchRun is one run's phases after the controller is up: the settle,
// the steady state and one spec change per plane, each writing its
// figures into res.
type benchRun struct {
	ctx context.Context
	l   layout
	c   client.Client
	*bench
	routers []router
	tr      *tracker
	res     *result
	prof    *profiler
	// profiles are the CPU profiles under way; waitProfiles waits for them
	// (the controller must still run) and says where they went.
	profiles []func() string
}

func (r *benchRun) waitProfiles() {
	for _, wait := range r.profiles {
		note(wait())
	}
	r.profiles = nil
}

// note prints a message of the profiler's, if any.
func note(msg string) {
	if msg != "" {
		fmt.Println("    " + msg)
	}
}

// watch starts the harness's own watches: routers (the settle), and with a
// played data plane the objects it answers for (the player, nil when the
// data plane is absent).
func (r *benchRun) watch(cfg *rest.Config) (*player, error) {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	r.tr = newTracker(expected(*flagDataplane == "played"), r.routers)
	if err := r.tr.start(r.ctx, ca); err != nil {
		return nil, err
	}
	var pl *player
	if *flagDataplane == "played" {
		pl = newPlayer(r.c, ca)
		if err := pl.start(r.ctx); err != nil {
			return nil, err
		}
	}
	go func() { _ = ca.Start(r.ctx) }()
	if !ca.WaitForCacheSync(r.ctx) {
		return nil, errors.New("harness cache did not sync")
	}
	return pl, nil
}

// settle creates every router and waits until every one is settled; s1 is
// the snapshot then.
func (r *benchRun) settle() (s1 snapshot, err error) {
	ctx, l, tr, res := r.ctx, r.l, r.tr, r.res
	s0, err := r.snap(ctx)
	if err != nil {
		return s1, err
	}
	r.profiles = append(r.profiles, r.prof.startCPU(ctx, "cpu-settle"))
	start := time.Now()
	if err := createRouters(ctx, r.c, l, r.routers, *flagWorkers); err != nil {
		return s1, fmt.Errorf("creating routers: %w", err)
	}
	res.CreateTook = time.Since(start)
	fmt.Printf("    created %d routers in %s\n", l.n, res.CreateTook.Round(time.Millisecond))
	settleCtx, settleCancel := context.WithTimeout(ctx, *flagTimeout)
	progress := time.NewTicker(10 * time.Second)
	go func() {
		for {
			select {
			case <-settleCtx.Done():
				return
			case <-progress.C:
				fmt.Printf("    %s: %d/%d settled (load %s)\n", time.Since(start).Round(time.Second), tr.settledCount(), l.n, loadavg())
			}
		}
	}()
	err = tr.waitUntil(settleCtx, func() bool { return tr.nSet == l.n })
	progress.Stop()
	settleCancel()
	if err != nil {
		// What was measured until the timeout is still reported.
		res.Settled = tr.settledCount()
		if s1, serr := r.snap(ctx); serr == nil {
			res.SettleWin = between(s0, s1)
			res.PeakRSSMiB = float64(s1.proc.hwmKiB) / 1024
			res.CPUTotal = s1.proc.cpu
		}
		return s1, fmt.Errorf("%d of %d routers settled after %s: %s", res.Settled, l.n, *flagTimeout, tr.unsettled(8))
	}
	res.Settled = l.n
	res.Settle = time.Since(start)
	res.SettleBy = map[string]time.Duration{}
	for p, at := range tr.lastSettled() {
		res.SettleBy[p] = at.Sub(start)
	}
	if s1, err = r.snap(ctx); err != nil {
		return s1, err
	}
	res.SettleWin = between(s0, s1)
	fmt.Printf("    every router settled in %s (controller CPU %s, peak RSS %.0f MiB, RSS %.0f MiB)\n", res.Settle.Round(time.Millisecond), res.SettleWin.CPU.Round(10*time.Millisecond),
		float64(s1.proc.hwmKiB)/1024, float64(s1.proc.rssKiB)/1024)
	note(r.prof.heap(ctx, "heap-settled"))
	return s1, nil
}

// steady is the steady state after s1: nothing changes; whatever the
// controller does now it does for nothing. last is the snapshot at its
// end (s1 without a window).
func (r *benchRun) steady(s1 snapshot, steady time.Duration) (last snapshot, err error) {
	if steady <= 0 {
		return s1, nil
	}
	churn0 := r.tr.updateCount()
	select {
	case <-time.After(steady):
	case err := <-r.exited:
		return last, fmt.Errorf("controller exited: %v", err)
	case <-r.ctx.Done():
		return last, r.ctx.Err()
	}
	s2, err := r.snap(r.ctx)
	if err != nil {
		return last, err
	}
	w := between(s1, s2)
	r.res.Steady = &w
	r.res.SteadyChurn = r.tr.updateCount() - churn0
	fmt.Printf("    steady %s: %.0f writes (%.0f not Leases), router updates seen %d, CPU %s\n", steady, w.Writes, w.WritesNoLeases, r.res.SteadyChurn, w.CPU.Round(10*time.Millisecond))
	return s2, nil
}

// changeEach makes one spec change per plane, one after the other, and
// times each until its router is settled at the new generation.
func (r *benchRun) changeEach() error {
	r.res.Change, r.res.ChangeBy = map[string]time.Duration{}, map[string]window{}
	// One CPU profile at a time: the settle's may still run.
	r.waitProfiles()
	r.profiles = append(r.profiles, r.prof.startCPU(r.ctx, "cpu-change"))
	for _, p := range planes {
		var pick *router
		for i := r.l.n / 2; i < r.l.n; i++ {
			if r.routers[i].plane == p {
				pick = &r.routers[i]
				break
			}
		}
		if pick == nil {
			continue
		}
		if err := r.change(p, *pick); err != nil {
			return err
		}
	}
	return nil
}

func (r *benchRun) change(p string, pick router) error {
	tr := r.tr
	key := pick.ns + "/" + pick.name
	gen := tr.router(key).generation
	if *flagTrace {
		tr.mu.Lock()
		tr.trace = key
		tr.mu.Unlock()
		fmt.Printf("      %s patching %s\n", time.Now().Format("15:04:05.000"), key)
	}
	before, err := r.snap(r.ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	obj := r.l.object(pick, false)
	if err := r.c.Patch(r.ctx, obj, client.RawPatch(types.MergePatchType, r.l.changePatch(pick))); err != nil {
		return fmt.Errorf("spec change: %w", err)
	}
	cctx, ccancel := context.WithTimeout(r.ctx, 5*time.Minute)
	err = tr.waitUntil(cctx, func() bool {
		s := tr.routers[key]
		return s != nil && s.generation > gen && s.settled
	})
	ccancel()
	if err != nil {
		return fmt.Errorf("spec change of %s (%s) not settled: %s", key, p, tr.router(key).why)
	}
	r.res.Change[p] = tr.router(key).settledAt.Sub(t0)
	after, err := r.snap(r.ctx)
	if err != nil {
		return err
	}
	w := between(before, after)
	r.res.ChangeBy[p] = w
	fmt.Printf("    spec change of %s (%s) settled in %s; queue before it: %s; meanwhile %.0f items taken, mean wait %s, mean work %s, CPU %s (load %s)\n",
		key, p, r.res.Change[p].Round(time.Millisecond), before.ctrl.depth, w.QueueItems, w.QueueWait.Round(time.Millisecond), w.WorkMean.Round(time.Millisecond),
		w.CPU.Round(10*time.Millisecond), w.LoadAfter)
	return nil
}

// freePort is the first loopback port from base on that nobody listens on.
func freePort(base int) (int, error) {
	for p := base; p < base+200; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in %d..%d", base, base+199)
}

// waitControllerReady waits for /readyz, for the controller to hold the
// leader-election Lease, and for its workers to start (its caches are then
// synced: routers created later arrive as watch events, not in the initial
// list, which controller-runtime's priority queue serves last).
func waitControllerReady(ctx context.Context, c client.Client, probePort int, logPath string, exited <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("controller exited: %v", err)
		default:
		}
		ready := false
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)); err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		lease := &coordinationv1.Lease{}
		if ready && c.Get(ctx, types.NamespacedName{Namespace: leaseNS, Name: "llmkube-controller.inference.llmkube.dev"}, lease) == nil &&
			lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
			if log, err := os.ReadFile(logPath); err == nil && strings.Contains(string(log), `"Starting workers"`) {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return errors.New("controller not ready and leading within 2m")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func report(rs []result) {
	ms := func(d time.Duration) string {
		if d == 0 {
			return "-"
		}
		if d < 10*time.Second {
			return fmt.Sprintf("%.2f s", d.Seconds())
		}
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	fmt.Printf("\n## Results (data plane %s)\n\n", *flagDataplane)
	fmt.Println("| run | routers | settled | per plane (Proxy / Gateway / AgentGateway) | spec change (Proxy / Gateway / AgentGateway) | peak RSS | CPU: settle | CPU: steady | reconciles: settle | steady window | writes in steady state (not Leases / all) | router updates in steady state |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		if r.Err != "" {
			fmt.Printf("| %s | %d | not settled: %d of %d after %s (%s) | | | %.0f MiB | %s | | %.0f | | | |\n", r.Name, r.Routers, r.Settled, r.Routers,
				ms(r.SettleWin.Duration), r.Err, r.PeakRSSMiB, ms(r.SettleWin.CPU), r.SettleWin.Reconciles.total())
			continue
		}
		per := func(m map[string]time.Duration) string {
			var parts []string
			for _, p := range planes {
				if d, ok := m[p]; ok {
					parts = append(parts, ms(d))
				} else {
					parts = append(parts, "-")
				}
			}
			return strings.Join(parts, " / ")
		}
		steadyCPU, steadyWin, steadyWrites, churn := "-", "-", "-", "-"
		if r.Steady != nil {
			steadyCPU = ms(r.Steady.CPU)
			steadyWin = r.Steady.Duration.Round(time.Second).String()
			steadyWrites = fmt.Sprintf("%.0f / %.0f", r.Steady.WritesNoLeases, r.Steady.Writes)
			churn = fmt.Sprint(r.SteadyChurn)
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %.0f MiB | %s | %s | %.0f | %s | %s | %s |\n",
			r.Name, r.Routers, ms(r.Settle), per(r.SettleBy), per(r.Change), r.PeakRSSMiB, ms(r.SettleWin.CPU), steadyCPU,
			r.SettleWin.Reconciles.total(), steadyWin, steadyWrites, churn)
	}
	fmt.Println("\nAPI requests (kube-apiserver apiserver_request_total deltas, by verb; writes by resource; the controller's own requests by HTTP method):")
	for _, r := range rs {
		if r.SettleWin.Duration == 0 {
			continue
		}
		fmt.Printf("\n%s (%d routers; played data plane writes %d):\n", r.Name, r.Routers, r.PlayerW)
		win := func(what string, w *window) {
			fmt.Printf("  %s (%s, load %s -> %s): %s\n    writes: %s\n    reads: %s\n    API server seconds serving them: %s\n    controller: %s; reconciles %s (%.1f s in Reconcile)\n",
				what, ms(w.Duration), w.LoadBefore, w.LoadAfter, w.APIByVerb, w.APIWrites, top(w.APIReads, 12), top(w.APIReadSeconds.rounded(), 8), w.ClientByMethod, w.Reconciles, w.ReconcileSecs)
			fmt.Printf("    work queue: %.0f items taken, mean wait %s, mean work %s; waiting at the end: %s\n", w.QueueItems, w.QueueWait.Round(time.Millisecond), w.WorkMean.Round(time.Millisecond), w.DepthAfter)
		}
		win("settle", &r.SettleWin)
		if r.Steady != nil {
			win("steady", r.Steady)
		}
		if r.ChangeWin != nil {
			fmt.Printf("  spec changes (%s): %s\n    writes: %s\n", ms(r.ChangeWin.Duration), r.ChangeWin.APIByVerb, r.ChangeWin.APIWrites)
		}
	}
}
