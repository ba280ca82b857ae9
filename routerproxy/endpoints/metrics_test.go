package endpoints_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/routerproxy/endpoints"
	"github.com/llmkube/llmkube-compile/routerproxy/engine/balance"
)

const vllmMetrics = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 7.0
vllm:num_requests_waiting{engine="0",model_name="m"} 3.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.42
vllm:num_requests_running_total 99
vllm:prompt_tokens_total{model_name="m"} 12345
`

func TestParseVLLM(t *testing.T) {
	m, ok := endpoints.ParseVLLM(strings.NewReader(vllmMetrics))
	require.True(t, ok)
	require.Equal(t, balance.EngineMetrics{Running: 7, Waiting: 3, KVCacheUsage: 0.42}, *m)
	old, ok := endpoints.ParseVLLM(strings.NewReader("vllm:gpu_cache_usage_perc 0.5\n"))
	require.True(t, ok)
	require.InDelta(t, 0.5, old.KVCacheUsage, 1e-9)
	_, ok = endpoints.ParseVLLM(strings.NewReader("# llama.cpp\nllamacpp:requests_processing 2\n"))
	require.False(t, ok)
	// The cache geometry (vLLM's info gauge; labels as vLLM 0.11 prints them).
	geo, ok := endpoints.ParseVLLM(strings.NewReader(vllmMetrics + `vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="27056",prefix_caching_hash_algo="sha256"} 1.0` + "\n"))
	require.True(t, ok)
	require.Equal(t, balance.EngineMetrics{Running: 7, Waiting: 3, KVCacheUsage: 0.42, CacheBlockSize: 16, CacheBlocks: 27056}, *geo)
}

func TestScraperFeedsBalancer(t *testing.T) {
	vllm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/metrics", r.URL.Path)
		_, _ = w.Write([]byte(vllmMetrics))
	}))
	defer vllm.Close()
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	host := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Host }
	bal := balance.New(balance.Config{LoadAware: true})
	bal.SetPods([]string{host(vllm), host(other)})
	sc := &endpoints.Scraper{Sinks: []endpoints.MetricsSink{bal}}
	sc.Once(context.Background())
	// The vLLM pod weighs 7 running + 3 waiting + 0.42; the other pod, with
	// no engine metrics, its in-flight count (0).
	works := map[string]float64{}
	for _, p := range bal.Status() {
		works[p.Addr] = p.Work
	}
	require.InDelta(t, 10.42, works[host(vllm)], 1e-9)
	require.Zero(t, works[host(other)])
	pk, err := bal.Pick(&balance.Request{})
	require.NoError(t, err)
	require.Equal(t, host(other), pk.Addr)
	pk.Done(balance.Success)
}
