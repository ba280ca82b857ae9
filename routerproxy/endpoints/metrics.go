package endpoints

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmkube/llmkube-compile/internal/promtext"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
)

// MetricsSink is a backend's balancer as the scraper sees it.
type MetricsSink interface {
	Pods() []string
	SetMetrics(addr string, m *balance.EngineMetrics)
}

// DefaultScrapeInterval is how often engine metrics are read.
const DefaultScrapeInterval = 500 * time.Millisecond

// notEngineBackoff is how many intervals a pod that serves no vLLM metrics is
// left alone before it is asked again (it is weighed by in-flight requests).
const notEngineBackoff = 60

// maxMetricsBytes bounds a /metrics answer.
const maxMetricsBytes = 4 << 20

// Scraper reads vLLM's Prometheus metrics from every pod of the sinks.
type Scraper struct {
	Client   *http.Client
	Interval time.Duration
	Log      *slog.Logger
	Sinks    []MetricsSink

	mu   sync.Mutex
	skip map[string]int // addr -> intervals left to skip
}

// Run scrapes on the interval until ctx ends.
func (s *Scraper) Run(ctx context.Context) {
	s.defaults()
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		s.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once scrapes every pod once, in parallel, each bounded by the interval.
func (s *Scraper) Once(ctx context.Context) {
	s.defaults()
	var wg sync.WaitGroup
	for _, sink := range s.Sinks {
		for _, addr := range sink.Pods() {
			s.mu.Lock()
			left := s.skip[addr]
			if left > 0 {
				s.skip[addr] = left - 1
			}
			s.mu.Unlock()
			if left > 0 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, engine, err := s.scrape(ctx, addr)
				if err != nil || !engine {
					sink.SetMetrics(addr, nil)
					if err == nil {
						s.mu.Lock()
						s.skip[addr] = notEngineBackoff
						s.mu.Unlock()
					}
					return
				}
				sink.SetMetrics(addr, m)
			}()
		}
	}
	wg.Wait()
}

func (s *Scraper) defaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Interval <= 0 {
		s.Interval = DefaultScrapeInterval
	}
	if s.Client == nil {
		s.Client = &http.Client{}
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.skip == nil {
		s.skip = map[string]int{}
	}
}

func (s *Scraper) scrape(ctx context.Context, addr string) (*balance.EngineMetrics, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, max(s.Interval, 200*time.Millisecond))
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, false, nil
	}
	m, ok := ParseVLLM(io.LimitReader(resp.Body, maxMetricsBytes))
	return m, ok, nil
}

// ParseVLLM reads vLLM's Prometheus text exposition: the sums over label
// sets of vllm:num_requests_running, vllm:num_requests_waiting and
// vllm:kv_cache_usage_perc (vllm:gpu_cache_usage_perc before vLLM 0.10),
// and the cache geometry from vllm:cache_config_info's labels block_size
// and num_gpu_blocks (blocks summed over label sets, one per engine).
// ok is false when none of the load metrics is present (not a vLLM engine).
func ParseVLLM(r io.Reader) (*balance.EngineMetrics, bool) {
	var m balance.EngineMetrics
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "vllm:") {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if name == "vllm:cache_config_info" {
			bs, _ := strconv.ParseFloat(promLabel(line, "block_size"), 64)
			nb, _ := strconv.ParseFloat(promLabel(line, "num_gpu_blocks"), 64)
			if bs > 0 && nb > 0 {
				m.CacheBlockSize = max(m.CacheBlockSize, bs)
				m.CacheBlocks += nb
			}
			continue
		}
		var dst *float64
		switch name {
		case "vllm:num_requests_running":
			dst = &m.Running
		case "vllm:num_requests_waiting":
			dst = &m.Waiting
		case "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc":
			dst = &m.KVCacheUsage
		default:
			continue
		}
		v, ok := promtext.SampleValue(line[len(name):])
		if !ok {
			continue
		}
		*dst += v
		found = true
	}
	if m.KVCacheUsage > 1 {
		m.KVCacheUsage = 1
	}
	return &m, found
}

// promLabel returns the value of label name in a sample line's label set
// ("" when absent). vLLM's info labels carry no escaped quotes.
func promLabel(line, name string) string {
	i := strings.IndexByte(line, '{')
	j := strings.LastIndexByte(line, '}')
	if i < 0 || j < i {
		return ""
	}
	for _, kv := range strings.Split(line[i+1:j], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
