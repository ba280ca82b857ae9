package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/llmkube/llmkube-compile/internal/promtext"
)

// series is one Prometheus text-format sample: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

// parseMetrics reads the samples of the named metrics from Prometheus text
// format (no exemplars, no escapes beyond \" in label values, which these
// metrics do not use).
func parseMetrics(r io.Reader, names ...string) map[string][]series {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string][]series{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if !want[name] {
			continue
		}
		s := series{labels: map[string]string{}}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				continue
			}
			for _, kv := range splitLabels(rest[1:end]) {
				k, v, _ := strings.Cut(kv, "=")
				s.labels[k] = strings.Trim(v, `"`)
			}
			rest = rest[end+1:]
		}
		v, ok := promtext.SampleValue(rest)
		if !ok {
			continue
		}
		s.value = v
		out[name] = append(out[name], s)
	}
	return out
}

// splitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	in := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			if i == 0 || s[i-1] != '\\' {
				in = !in
			}
		case ',':
			if !in {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// counts are request counters keyed by a label combination.
type counts map[string]float64

func (c counts) sub(before counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (c counts) total() float64 {
	t := 0.0
	for _, v := range c {
		t += v
	}
	return t
}

// String lists the counters, largest first: "LIST 120, GET 30".
func (c counts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		if v := c[k]; v == float64(int64(v)) {
			parts[i] = fmt.Sprintf("%s %.0f", k, v)
		} else {
			parts[i] = fmt.Sprintf("%s %.1f", k, v)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeVerbs are the verbs that change state (apiserver_request_total's
// verb label: APPLY is a server-side apply PATCH).
var writeVerbs = map[string]bool{"CREATE": true, "POST": true, "UPDATE": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// apiCounts is one reading of the kube-apiserver's apiserver_request_total.
type apiCounts struct {
	byVerb           counts // every request, by verb
	writesByResource counts // writes, by verb and resource[/subresource]
	readsByResource  counts // LIST and GET, by verb and resource
	readSeconds      counts // seconds the API server spent serving them (apiserver_request_duration_seconds_sum)
}

func readAPIServer(ctx context.Context, rc rest.Interface) (apiCounts, error) {
	body, err := rc.Get().AbsPath("/metrics").Do(ctx).Raw()
	if err != nil {
		return apiCounts{}, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	m := parseMetrics(strings.NewReader(string(body)), "apiserver_request_total", "apiserver_request_duration_seconds_sum")
	out := apiCounts{byVerb: counts{}, writesByResource: counts{}, readsByResource: counts{}, readSeconds: counts{}}
	resource := func(s series) string {
		res := s.labels["resource"]
		if g := s.labels["group"]; g != "" {
			res += "." + g
		}
		if sub := s.labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		return res
	}
	for _, s := range m["apiserver_request_total"] {
		verb := s.labels["verb"]
		out.byVerb[verb] += s.value
		switch {
		case writeVerbs[verb]:
			out.writesByResource[verb+" "+resource(s)] += s.value
		case verb == "LIST" || verb == "GET":
			out.readsByResource[verb+" "+resource(s)] += s.value
		}
	}
	for _, s := range m["apiserver_request_duration_seconds_sum"] {
		if verb := s.labels["verb"]; verb == "LIST" || verb == "GET" {
			out.readSeconds[verb+" "+resource(s)] += s.value
		}
	}
	return out, nil
}

func (a apiCounts) sub(b apiCounts) apiCounts {
	return apiCounts{byVerb: a.byVerb.sub(b.byVerb), writesByResource: a.writesByResource.sub(b.writesByResource),
		readsByResource: a.readsByResource.sub(b.readsByResource), readSeconds: a.readSeconds.sub(b.readSeconds)}
}

// writes is the number of writes, and those not to Leases (the
// controller's leader-election renewals and kube-apiserver's own identity
// lease, heartbeats by design).
func (a apiCounts) writes() (all, notLeases float64) {
	for k, v := range a.writesByResource {
		all += v
		if !strings.Contains(k, " leases.coordination.k8s.io") {
			notLeases += v
		}
	}
	return all, notLeases
}

// ctrlCounts is one reading of the controller's own metrics endpoint.
type ctrlCounts struct {
	clientByMethod counts  // rest_client_requests_total by method (the controller's requests)
	reconciles     counts  // controller_runtime_reconcile_total by result
	reconcileSecs  float64 // controller_runtime_reconcile_time_seconds_sum
	// The modelrouter work queue: seconds items waited in it before a
	// worker took them (workqueue_queue_duration_seconds), and seconds the
	// workers spent on them (workqueue_work_duration_seconds), with the
	// item counts; depth is the items waiting now, by priority (0: watch
	// events, -100: rechecks and the initial list).
	queueSecs, queueItems float64
	workSecs, workItems   float64
	depth                 counts
}

func readController(ctx context.Context, addr string) (ctrlCounts, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ctrlCounts{}, fmt.Errorf("controller /metrics: %w", err)
	}
	defer resp.Body.Close()
	m := parseMetrics(resp.Body, "rest_client_requests_total", "controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds_sum",
		"workqueue_queue_duration_seconds_sum", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_sum", "workqueue_work_duration_seconds_count", "workqueue_depth")
	out := ctrlCounts{clientByMethod: counts{}, reconciles: counts{}}
	out.readQueue(m)
	for _, s := range m["rest_client_requests_total"] {
		out.clientByMethod[s.labels["method"]] += s.value
	}
	for _, s := range m["controller_runtime_reconcile_total"] {
		if s.labels["controller"] == "modelrouter" {
			out.reconciles[s.labels["result"]] += s.value
		}
	}
	for _, s := range m["controller_runtime_reconcile_time_seconds_sum"] {
		if s.labels["controller"] == "modelrouter" {
			out.reconcileSecs += s.value
		}
	}
	return out, nil
}

// readQueue reads the modelrouter work queue's series.
func (out *ctrlCounts) readQueue(m map[string][]series) {
	queue := func(metric string) float64 {
		t := 0.0
		for _, s := range m[metric] {
			if s.labels["name"] == "modelrouter" {
				t += s.value
			}
		}
		return t
	}
	out.queueSecs, out.queueItems = queue("workqueue_queue_duration_seconds_sum"), queue("workqueue_queue_duration_seconds_count")
	out.workSecs, out.workItems = queue("workqueue_work_duration_seconds_sum"), queue("workqueue_work_duration_seconds_count")
	out.depth = counts{}
	for _, s := range m["workqueue_depth"] {
		if s.labels["name"] == "modelrouter" && s.value != 0 {
			out.depth["priority "+s.labels["priority"]] += s.value
		}
	}
}

func (a ctrlCounts) sub(b ctrlCounts) ctrlCounts {
	return ctrlCounts{clientByMethod: a.clientByMethod.sub(b.clientByMethod), reconciles: a.reconciles.sub(b.reconciles), reconcileSecs: a.reconcileSecs - b.reconcileSecs,
		queueSecs: a.queueSecs - b.queueSecs, queueItems: a.queueItems - b.queueItems, workSecs: a.workSecs - b.workSecs, workItems: a.workItems - b.workItems,
		depth: a.depth}
}

// procStats are a process's peak RSS and CPU time so far.
type procStats struct {
	hwmKiB, rssKiB int64
	cpu            time.Duration // utime + stime
}

var clockTicks = func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}()

func readProc(pid int) (procStats, error) {
	var ps procStats
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmHWM":
			ps.hwmKiB = n
		case "VmRSS":
			ps.rssKiB = n
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ps, err
	}
	// The command name (field 2) may hold spaces: fields count from after ")".
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return ps, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	ps.cpu = time.Duration((utime + stime) * int64(time.Second) / clockTicks)
	return ps, nil
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// snapshot is every reading taken at one moment.
type snapshot struct {
	at   time.Time
	api  apiCounts
	ctrl ctrlCounts
	proc procStats
	load string
}

func (b *bench) snap(ctx context.Context) (snapshot, error) {
	s := snapshot{at: time.Now(), load: loadavg()}
	var err error
	if s.api, err = readAPIServer(ctx, b.restClient); err != nil {
		return s, err
	}
	if s.ctrl, err = readController(ctx, b.metricsAddr); err != nil {
		return s, err
	}
	s.proc, err = readProc(b.ctrl.Process.Pid)
	return s, err
}

// window is what happened between two snapshots.
type window struct {
	Duration       time.Duration
	CPU            time.Duration
	APIByVerb      counts
	APIWrites      counts
	APIReads       counts  // LIST and GET by resource
	APIReadSeconds counts  // the API server's time serving them
	Writes         float64 // every write the API server served
	WritesNoLeases float64 // writes other than Lease renewals
	ClientByMethod counts  // the controller's own requests
	Reconciles     counts
	ReconcileSecs  float64
	// The work queue in the window: items taken, their mean wait in the
	// queue and mean time in a worker; DepthAfter the items waiting at its
	// end by priority.
	QueueItems float64
	QueueWait  time.Duration
	WorkMean   time.Duration
	DepthAfter counts
	LoadBefore string
	LoadAfter  string
}

func between(a, b snapshot) window {
	d := b.api.sub(a.api)
	c := b.ctrl.sub(a.ctrl)
	w := window{Duration: b.at.Sub(a.at), CPU: b.proc.cpu - a.proc.cpu, APIByVerb: d.byVerb, APIWrites: d.writesByResource, APIReads: d.readsByResource, APIReadSeconds: d.readSeconds,
		ClientByMethod: c.clientByMethod, Reconciles: c.reconciles, ReconcileSecs: c.reconcileSecs, LoadBefore: a.load, LoadAfter: b.load,
		QueueItems: c.queueItems, QueueWait: perItem(c.queueSecs, c.queueItems), WorkMean: perItem(c.workSecs, c.workItems), DepthAfter: c.depth}
	w.Writes, w.WritesNoLeases = d.writes()
	return w
}

// perItem is secs/items as a duration (0 without items).
func perItem(secs, items float64) time.Duration {
	if items <= 0 {
		return 0
	}
	return time.Duration(secs / items * float64(time.Second))
}

// top keeps the n largest counters (the rest summed as "other").
func top(c counts, n int) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c[keys[i]] > c[keys[j]] })
	if len(keys) <= n {
		return c.String()
	}
	out := counts{}
	rest := 0.0
	for i, k := range keys {
		if i < n {
			out[k] = c[k]
		} else {
			rest += c[k]
		}
	}
	return fmt.Sprintf("%s, other %.0f", out, rest)
}

// rounded keeps one decimal (seconds).
func (c counts) rounded() counts {
	out := counts{}
	for k, v := range c {
		if r := float64(int64(v*10+0.5)) / 10; r > 0 {
			out[k] = r
		}
	}
	return out
}
