package routerproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/providers/providertest"
)

func TestEchoDoc(t *testing.T) {
	e := newEcho("gpt-4.1", "medgemma", 200)
	require.NotNil(t, e)
	for in, want := range map[string]string{
		`{"id":"c","model":"medgemma","choices":[{"model":"inner"}]}`: `{"id":"c","model":"gpt-4.1","choices":[{"model":"inner"}]}`,
		`{"choices":[{"model":"inner"}],"model" : "m\"x"}`:            `{"choices":[{"model":"inner"}],"model" : "gpt-4.1"}`,
		`{"id":"c","choices":[]}`:                                     `{"id":"c","choices":[]}`,
		`{"model":null}`:                                              `{"model":null}`,
		`[DONE]`:                                                      `[DONE]`,
	} {
		assert.Equal(t, want, string(e.doc(nil, []byte(in))), in)
	}
	assert.Nil(t, newEcho("m", "m", 200), "same name: nothing to rewrite")
	assert.Nil(t, newEcho("m", "", 200), "the client's model went upstream")
	assert.Nil(t, newEcho("m", "n", 404), "an error answer is relayed as it is")
}

// TestEchoStreamAnySplit: every data line gets the client's model however
// the stream is cut into reads.
func TestEchoStreamAnySplit(t *testing.T) {
	in := "data: {\"model\":\"medgemma\",\"n\":1}\n\n: comment \"model\":\"x\"\n" +
		"data:{\"id\":\"a\",\"model\":\"medgemma\"}\r\n\r\ndata: [DONE]\n\n"
	want := "data: {\"model\":\"gpt-4.1\",\"n\":1}\n\n: comment \"model\":\"x\"\n" +
		"data:{\"id\":\"a\",\"model\":\"gpt-4.1\"}\r\n\r\ndata: [DONE]\n\n"
	for size := 1; size <= len(in); size++ {
		e := newEcho("gpt-4.1", "medgemma", 200)
		var out strings.Builder
		for i := 0; i < len(in); i += size {
			out.Write(e.stream([]byte(in[i:min(i+size, len(in))])))
		}
		out.Write(e.end())
		require.Equal(t, want, out.String(), "reads of %d bytes", size)
	}
	// A stream cut mid-line keeps what it had.
	e := newEcho("gpt-4.1", "medgemma", 200)
	got := string(e.stream([]byte("data: {\"model\":\"medgemma\"}\ndata: {\"mod"))) + string(e.end())
	assert.Equal(t, "data: {\"model\":\"gpt-4.1\"}\ndata: {\"mod", got)
}

// TestLocalBackendGetsItsServedModel: a request for a cloud model routed to
// a local vLLM is sent the model it serves, not the client's (vLLM answers
// 404 for a name it does not serve); the client sees the model it asked
// for in the answer and in every chunk of a stream, and the audit records
// both.
func TestLocalBackendGetsItsServedModel(t *testing.T) {
	up := newStub(t, "local", providertest.VLLM("medgemma-27b", nil))
	b := backend("local", up.URL)
	b.Model = "medgemma-27b"
	h := start(t, config(b))

	code, body, hdr := h.post(t, chat("gpt-4.1"))
	require.Equal(t, 200, code, body)
	assert.Equal(t, "gpt-4.1", servedBy(t, body))
	assert.Equal(t, fmt.Sprint(len(body)), hdr.Get("Content-Length"), "the held answer is sent with its new length")
	assert.Contains(t, string(up.Last().Body), `"model":"medgemma-27b"`)
	a := h.last(t)
	assert.Equal(t, "gpt-4.1", a.Model)
	assert.Equal(t, "medgemma-27b", a.UpstreamModel)
	assert.Equal(t, 5, int(a.TotalTokens))

	body = h.okChat(t, `{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, 5, strings.Count(body, "data: "), body)
	assert.Equal(t, 4, strings.Count(body, `"model":"gpt-4.1"`), body)
	assert.NotContains(t, body, "medgemma")
	a = h.last(t)
	assert.Equal(t, "medgemma-27b", a.UpstreamModel)
	assert.Equal(t, 7, int(a.TotalTokens), "usage is still read from the stream")
}

// TestLocalBackendLearnsItsServedModel: an InferenceService that does not
// say what its runtime serves (learnModel): the name comes from the
// backend's /v1/models, read once, and again after the backend answers 404.
func TestLocalBackendLearnsItsServedModel(t *testing.T) {
	var lists atomic.Int64
	served := atomic.Value{}
	served.Store("/models/google/medgemma-27b-it")
	up := newStub(t, "local", func(w http.ResponseWriter, r *http.Request) {
		providertest.VLLM(served.Load().(string), &lists)(w, r)
	})
	h := learnThrice(t, up.URL, "medgemma")
	assert.Equal(t, int64(1), lists.Load(), "the list is read once")
	assert.Equal(t, "/models/google/medgemma-27b-it", h.last(t).UpstreamModel)

	// The runtime restarts serving another name: one 404, then it is learned again.
	served.Store("medgemma-v2")
	code, body, _ := h.post(t, chat("gpt-4.1"))
	assert.Equal(t, 404, code, body)
	h.okChat(t, chat("gpt-4.1"))
	assert.Equal(t, "medgemma-v2", h.last(t).UpstreamModel)
	assert.Equal(t, int64(2), lists.Load())
}

// learnThrice starts a proxy whose one backend, local at url, learns its
// served model (assumed: model), and asks it three times for gpt-4.1: each
// is answered, under the client's name.
func learnThrice(t *testing.T, url, model string) *harness {
	t.Helper()
	b := backend("local", url)
	b.Model, b.LearnModel = model, true
	h := start(t, config(b))
	for range 3 {
		body := h.okChat(t, chat("gpt-4.1"))
		assert.Equal(t, "gpt-4.1", servedBy(t, body))
	}
	return h
}

// TestLearnWithoutModelList: a runtime with no /v1/models is sent the
// assumed name, and not asked again at every request.
func TestLearnWithoutModelList(t *testing.T) {
	var gets atomic.Int64
	up := newStub(t, "local", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			w.WriteHeader(http.StatusNotFound)
			return
		}
		okHandler("llama")(w, r)
	})
	h := learnThrice(t, up.URL, "phi-4")
	assert.Equal(t, int64(1), gets.Load())
	assert.Contains(t, string(up.Last().Body), `"model":"phi-4"`)
	assert.Equal(t, "phi-4", h.last(t).UpstreamModel)
}

// TestShadowAndFallbackGetTheirOwnModel: a fallback to another model and a
// shadow copy are each sent the model their backend serves.
func TestShadowAndFallbackGetTheirOwnModel(t *testing.T) {
	down := newStub(t, "a", statusHandler(503))
	fb := newStub(t, "b", providertest.VLLM("qwen3-8b", nil))
	var shadowModel atomic.Value
	shadow := newStub(t, "c", func(w http.ResponseWriter, r *http.Request) {
		var v struct{ Model string }
		_ = json.Unmarshal([]byte(mustBody(r)), &v)
		shadowModel.Store(v.Model)
		okHandler("c")(w, r)
	})
	a, b, c := backend("a", down.URL), backend("b", fb.URL), backend("c", shadow.URL)
	a.Model, b.Model, c.Model = "llama-70b", "qwen3-8b", "granite"
	cfg := config(a, b, c)
	cfg.Rules = []proxyapi.Rule{rule("r", proxyapi.StrategyShadow, "a", "b", "c")}
	h := start(t, cfg)
	body := h.okChat(t, chat("big"))
	assert.Equal(t, "big", servedBy(t, body))
	assert.Contains(t, string(down.Requests()[0].Body), `"model":"llama-70b"`)
	ent := h.last(t)
	assert.Equal(t, "b", ent.Backend)
	assert.Equal(t, "qwen3-8b", ent.UpstreamModel)
	require.Eventually(t, func() bool { return shadowModel.Load() != nil }, 10*time.Second, time.Millisecond)
	assert.Equal(t, "granite", shadowModel.Load())
}

// TestPoolMemberGetsItsServedModel: a ModelPool member is made resident
// first, then asked what it serves (the list of the member now loaded), and
// sent that name.
func TestPoolMemberGetsItsServedModel(t *testing.T) {
	var lists atomic.Int64
	up := newStub(t, "llama", providertest.VLLM("/models/meta-llama/Llama-3.1-8B", &lists))
	cfg := pooledConfig(up.URL)
	cfg.Backends[0].Model, cfg.Backends[0].LearnModel = "llama-3-1-8b", true
	pools := &fakePools{}
	h := start(t, cfg, func(o *Options) { o.Pools = pools })
	body := h.okChat(t, chat("gpt-4.1"))
	assert.Equal(t, "gpt-4.1", servedBy(t, body))
	assert.EqualValues(t, 1, pools.acquired.Load(), "the member was held before it was asked")
	assert.Equal(t, int64(1), lists.Load())
	assert.Equal(t, "/models/meta-llama/Llama-3.1-8B", h.last(t).UpstreamModel)
}

// BenchmarkEchoStream: the client's model put back in a stream's chunks,
// per 32 KiB read; the stream's buffers are reused, so nothing is allocated
// per read once they have grown.
func BenchmarkEchoStream(b *testing.B) {
	var chunk strings.Builder
	for i := 0; chunk.Len() < 32<<10; i++ {
		fmt.Fprintf(&chunk, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"/models/google/medgemma-27b-it\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d\"}}]}\n\n", i)
	}
	p := []byte(chunk.String())
	e := newEcho("gpt-4.1", "/models/google/medgemma-27b-it", 200)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		_ = e.stream(p[:len(p)/2])
		_ = e.stream(p[len(p)/2:])
	}
}

// TestEchoedStreamWithLengthLosesIt: an event stream sent with a
// Content-Length is relayed chunked once its model is rewritten (the
// length the upstream gave no longer holds).
func TestEchoedStreamWithLengthLosesIt(t *testing.T) {
	up := newStub(t, "local", sizedStream("data: {\"model\":\"m\",\"choices\":[]}\n\ndata: [DONE]\n\n"))
	b := backend("local", up.URL)
	b.Model = "m"
	h := start(t, config(b))
	code, body, hdr := h.post(t, `{"model":"a-longer-model-name","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, code, body)
	assert.Equal(t, "data: {\"model\":\"a-longer-model-name\",\"choices\":[]}\n\ndata: [DONE]\n\n", body)
	assert.Empty(t, hdr.Get("Content-Length"))
}

// TestEchoOfAnOversizedAnswer: a JSON answer too large to hold
// (maxCapture) is relayed as it came, its length intact.
func TestEchoOfAnOversizedAnswer(t *testing.T) {
	big := `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("x", maxCapture) + `"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`
	up := newStub(t, "local", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		_, _ = w.Write([]byte(big))
	})
	b := backend("local", up.URL)
	b.Model = "m"
	h := start(t, config(b))
	code, body, hdr := h.post(t, chat("asked"))
	require.Equal(t, 200, code)
	assert.Equal(t, len(big), len(body))
	assert.Equal(t, fmt.Sprint(len(big)), hdr.Get("Content-Length"))
	assert.Equal(t, 3, int(h.last(t).TotalTokens), "usage still read from the tail")
}
