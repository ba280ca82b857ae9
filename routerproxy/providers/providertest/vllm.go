package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// VLLM answers as vLLM's OpenAI server does about model names: GET
// /v1/models lists served (with a LoRA adapter, lora-1, on it); a request
// naming another model is 404 "The model 'X' does not exist."; one naming
// it is answered 200 with "model": served, streamed when asked, with usage
// (4 prompt tokens, 1 completion token; 3 when streamed). lists, when not
// nil, counts the list's reads.
func VLLM(served string, lists *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			if lists != nil {
				lists.Add(1)
			}
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","owned_by":"vllm","root":"/models/x","parent":null},{"id":"lora-1","object":"model","parent":%q}]}`, served, served)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Model != served {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"object":"error","message":"The model '%s' does not exist.","type":"NotFoundError","param":"model","code":404}`, req.Model)
			return
		}
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", served, i)
				w.(http.Flusher).Flush()
			}
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":3,\"total_tokens\":7}}\n\ndata: [DONE]\n\n", served)
			return
		}
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}`, served)
	}
}
