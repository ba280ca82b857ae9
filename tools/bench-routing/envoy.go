package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// envoyGateway plays Envoy's part in front of EPP: for every HTTP request it
// opens an ext_proc stream (gRPC over TLS, as Envoy's ext_proc filter in
// FULL_DUPLEX_STREAMED mode with the body sent whole), sends the request
// headers and body, reads the destination EPP sets
// (x-gateway-destination-endpoint), proxies the request to that pod, and
// reports the response headers and body back to EPP so its request
// lifecycle (running requests, prefix index) completes as behind Envoy.
type envoyGateway struct {
	client   extprocv3.ExternalProcessorClient
	conn     *grpc.ClientConn
	upstream *http.Client
}

func newEnvoyGateway(eppAddr string) (*envoyGateway, error) {
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) // EPP's self-signed serving cert
	conn, err := grpc.NewClient(eppAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	return &envoyGateway{client: extprocv3.NewExternalProcessorClient(conn), conn: conn,
		upstream: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}}}, nil
}

func hv(k, v string) *corev3.HeaderValue { return &corev3.HeaderValue{Key: k, RawValue: []byte(v)} }

func (g *envoyGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stream, err := g.client.Process(ctx)
	if err != nil {
		http.Error(w, "ext_proc: "+err.Error(), http.StatusBadGateway)
		return
	}
	if err := sendRequest(stream, r, body); err != nil {
		http.Error(w, "ext_proc: "+err.Error(), http.StatusBadGateway)
		return
	}
	dest, code, msg := destination(stream)
	if dest == "" {
		http.Error(w, msg, code)
		return
	}
	dest, _, _ = strings.Cut(dest, ",") // the primary; the rest are fallbacks
	// The remaining request-phase answers (body responses) and the
	// response-phase answers are drained in the background.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	up, err := http.NewRequestWithContext(ctx, r.Method, "http://"+dest+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up.Header = r.Header.Clone()
	resp, err := g.upstream.Do(up)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	relayResponse(w, resp, stream)
	_ = stream.CloseSend()
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
	}
}

// sendRequest sends the request phase to the ext_proc: the headers, then
// the whole body.
func sendRequest(stream extprocv3.ExternalProcessor_ProcessClient, r *http.Request, body []byte) error {
	hdrs := []*corev3.HeaderValue{hv(":method", r.Method), hv(":path", r.URL.Path), hv(":authority", r.Host), hv(":scheme", "http"),
		hv("content-length", fmt.Sprint(len(body)))}
	for k, vs := range r.Header {
		for _, v := range vs {
			hdrs = append(hdrs, hv(strings.ToLower(k), v))
		}
	}
	if err := stream.Send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: &corev3.HeaderMap{Headers: hdrs}}}}); err != nil {
		return err
	}
	return stream.Send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
		RequestBody: &extprocv3.HttpBody{Body: body, EndOfStream: true}}})
}

// destination reads until the request phase is answered: a headers
// response with the destination (then body responses), or an immediate
// response. No destination is the status and message to answer with.
func destination(stream extprocv3.ExternalProcessor_ProcessClient) (dest string, code int, msg string) {
	for {
		resp, err := stream.Recv()
		if err != nil {
			return "", http.StatusBadGateway, "ext_proc: " + err.Error()
		}
		switch v := resp.Response.(type) {
		case *extprocv3.ProcessingResponse_ImmediateResponse:
			code := int(v.ImmediateResponse.GetStatus().GetCode())
			if code == 0 {
				code = http.StatusInternalServerError
			}
			return "", code, "epp: " + string(v.ImmediateResponse.GetBody())
		case *extprocv3.ProcessingResponse_RequestHeaders:
			for _, h := range v.RequestHeaders.GetResponse().GetHeaderMutation().GetSetHeaders() {
				if h.GetHeader().GetKey() == "x-gateway-destination-endpoint" {
					dest = string(h.GetHeader().GetRawValue())
					if dest == "" {
						dest = h.GetHeader().GetValue()
					}
				}
			}
			if dest == "" {
				return "", http.StatusBadGateway, "epp set no destination"
			}
			return dest, 0, ""
		}
	}
}

// relayResponse writes the upstream's answer to w, streamed, and sends the
// response phase to the ext_proc as it goes.
func relayResponse(w http.ResponseWriter, resp *http.Response, stream extprocv3.ExternalProcessor_ProcessClient) {
	send := func(req *extprocv3.ProcessingRequest) error { return stream.Send(req) }
	rh := []*corev3.HeaderValue{hv(":status", fmt.Sprint(resp.StatusCode)), hv("status", fmt.Sprint(resp.StatusCode))}
	for k, vs := range resp.Header {
		for _, v := range vs {
			rh = append(rh, hv(strings.ToLower(k), v))
		}
		w.Header()[k] = vs
	}
	_ = send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extprocv3.HttpHeaders{Headers: &corev3.HeaderMap{Headers: rh}}}})
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			_, _ = w.Write(chunk)
			if fl != nil {
				fl.Flush()
			}
			_ = send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
				ResponseBody: &extprocv3.HttpBody{Body: chunk}}})
		}
		if err != nil {
			break
		}
	}
	_ = send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{EndOfStream: true}}})
}

func (g *envoyGateway) close() { _ = g.conn.Close() }

// serveHTTP listens on addr with h until ctx ends.
func serveHTTP(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return nil
}

var errNotReady = errors.New("not ready")
