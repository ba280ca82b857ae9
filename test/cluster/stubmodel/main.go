// Command stubmodel is the model server of the real-cluster tests
// (`make e2e-cluster`): an OpenAI-compatible chat endpoint that answers with
// the name of the pod it runs in, so a test sees which replica served each
// request, plus vLLM's health and metrics endpoints so the router-proxy's
// health checks and LoadAware scraping see a vLLM-shaped pod. It runs as a
// container built by tools/cluster-images; it never calls out.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", ":8000", "address to serve on")
	delay := flag.Duration("delay", 0, "time each completion takes (keeps requests in flight during rollouts)")
	flag.Parse()
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	s := &server{pod: pod, delay: *delay}
	srv := &http.Server{Addr: *listen, Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		// Finish what is in flight, as a model server draining on SIGTERM does.
		shutdown, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("stubmodel %s listening on %s", pod, *listen)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

type server struct {
	pod      string
	delay    time.Duration
	running  atomic.Int64
	requests atomic.Int64
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "stub", "object": "model"}}})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "vllm:num_requests_running{model_name=\"stub\"} %d\n", s.running.Load())
		fmt.Fprintf(w, "vllm:num_requests_waiting{model_name=\"stub\"} 0\n")
		fmt.Fprintf(w, "vllm:kv_cache_usage_perc{model_name=\"stub\"} 0\n")
		fmt.Fprintf(w, "stub_requests_total %d\n", s.requests.Load())
	})
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/messages", s.messages)
	return mux
}

func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	s.running.Add(1)
	defer s.running.Add(-1)
	s.requests.Add(1)
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if len(req.Messages) > 0 && req.Stream {
		switch req.Messages[0].Content {
		case faultHang, faultReset:
			s.midStreamFault(w, r, req.Messages[0].Content)
			return
		}
	}
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return
		}
	}
	writeJSON(w, map[string]any{
		"id":      "chatcmpl-stub",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": "served by " + s.pod},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// The faults a streamed request asks for by its first message's content
// (test/cluster's fault scenarios): the model starts the stream, then
// hangs with the connection open, or resets the connection.
const (
	faultHang  = "hang-mid-stream"
	faultReset = "reset-mid-stream"
)

// midStreamFault sends the stream's first chunk, then hangs until the
// client goes away, or resets the TCP connection (RST, linger 0).
func (s *server) midStreamFault(w http.ResponseWriter, r *http.Request, fault string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-stub\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"served by %s\"}}]}\n\n", s.pod)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if fault == faultHang {
		<-r.Context().Done()
		return
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// messages answers Anthropic's Messages API, so the stub can stand in for a
// provider the router translates to.
func (s *server) messages(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req struct {
		Model string `json:"model"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil || r.Header.Get("x-api-key") == "" {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": "bad json or no x-api-key"}})
		return
	}
	writeJSON(w, map[string]any{
		"id": "msg-stub", "type": "message", "role": "assistant", "model": req.Model,
		"content":     []any{map[string]any{"type": "text", "text": "served by " + s.pod}},
		"stop_reason": "end_turn",
		"usage":       map[string]any{"input_tokens": 10, "output_tokens": 5},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
