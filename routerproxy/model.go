package routerproxy

// The model name a request carries upstream, and the one its client sees.
// Every backend is sent the model it serves (proxyapi.Backend.Model: an
// external backend's model, a local backend's served model name), whatever
// the client asked for: a request rerouted to a local vLLM must not carry
// the cloud model's name, which vLLM refuses with 404. When the
// InferenceService does not say what its runtime serves (LearnModel), the
// name is read from the backend's GET /v1/models once. Where the API echoes
// the model (the response's top-level "model", in a JSON answer and in
// every event of a stream), the client sees the model it asked for.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/llmkube/llmkube-compile/routerproxy/internal/jsonscan"
)

// modelsPath is the OpenAI model list a runtime serves.
const modelsPath = "/v1/models"

// learnRetry is how long a backend that answered /v1/models without a
// model list is sent the assumed name before the list is read again.
const learnRetry = 30 * time.Second

// maxModelsBody bounds a /v1/models answer.
const maxModelsBody = 1 << 20

// modelLearner is a local backend's served model name, learned from its
// /v1/models because its InferenceService does not say it.
type modelLearner struct {
	name    atomic.Pointer[string]
	retryAt atomic.Int64 // unix ns: until then a backend without a list is not asked again
	flight  singleflight.Group
}

// forget drops the learned name: the backend answered 404, perhaps
// restarted serving another model; the next request reads the list again.
func (l *modelLearner) forget() {
	if l != nil {
		l.name.Store(nil)
	}
}

// upstreamModel is the model name a request is sent to b with: b.model,
// or the name b's /v1/models lists first once it has been read; "" sends
// the client's own. The list is read at most once at a time, within the
// attempt's header timeout, with the headers the request itself carries to
// b (a runtime's --api-key guards /v1/models too). While it cannot be read
// the assumed name is sent: a backend that cannot be reached fails the
// attempt anyway, and one that answers without a list (a runtime that has
// none) is asked again after learnRetry.
func (s *Server) upstreamModel(ctx context.Context, b *backendRT, r *http.Request, host string, hto time.Duration) string {
	l := b.learn
	if l == nil {
		return b.model
	}
	if p := l.name.Load(); p != nil {
		return *p
	}
	if s.now().UnixNano() < l.retryAt.Load() {
		return b.model
	}
	v, _, _ := l.flight.Do("", func() (any, error) {
		name, err := s.readServedModel(ctx, b, r, host, hto)
		if err != nil {
			var nl noList
			if errors.As(err, &nl) {
				l.retryAt.Store(s.now().Add(learnRetry).UnixNano())
			}
			s.log.Warn("cannot read the backend's served model; sending the assumed name", "backend", b.st.Name(), "model", b.model, "error", err.Error())
			return b.model, nil
		}
		l.name.Store(&name)
		s.log.Info("learned the backend's served model from "+modelsPath, "backend", b.st.Name(), "model", name)
		return name, nil
	})
	return v.(string)
}

// noList is a /v1/models answer without a model to send.
type noList struct{ why string }

func (e noList) Error() string { return e.why }

// readServedModel is the first id b's GET /v1/models lists (vLLM lists
// its served model names first, then LoRA adapters).
func (s *Server) readServedModel(ctx context.Context, b *backendRT, r *http.Request, host string, hto time.Duration) (string, error) {
	// Other requests may be waiting on this read (singleflight): the client
	// that started it leaving does not cut it short.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hto)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, joinURL(b.base, modelsPath, ""), nil)
	if err != nil {
		return "", err
	}
	if host != "" {
		req.URL.Host, req.Host = host, ""
	}
	s.forwardHeaders(req.Header, r.Header, false)
	req.Header.Del("Content-Type")
	resp, err := s.rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return "", noList{fmt.Sprintf("GET %s: status %d", modelsPath, resp.StatusCode)}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelsBody)).Decode(&list); err != nil {
		return "", noList{"GET " + modelsPath + ": " + err.Error()}
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", noList{"GET " + modelsPath + ": no model listed"}
	}
	return list.Data[0].ID, nil
}

// echo gives a response the model its client asked for where the upstream
// echoed its own: the top-level "model" string of a JSON answer, and of
// every data line of an event stream. It works in one pass over the bytes
// as they are relayed; a stream's output buffer and its incomplete last
// line are reused from read to read.
type echo struct {
	quoted  []byte // the client's model as a JSON string
	pending []byte // a stream's incomplete last line
	out     []byte
}

// newEcho is the echo of a response whose upstream was sent sent while the
// client asked for asked, or nil when the answer needs none: the same name,
// or an answer that is not a success.
func newEcho(asked, sent string, status int) *echo {
	if sent == "" || sent == asked || status < 200 || status > 299 {
		return nil
	}
	return &echo{quoted: quote(asked)}
}

var (
	modelKey   = []byte(`"model"`)
	dataPrefix = []byte("data:")
	errFound   = errors.New("found")
)

// modelValue is the byte range of doc's top-level "model" member when it
// is a string.
func modelValue(doc []byte) (start, end int, ok bool) {
	if !bytes.Contains(doc, modelKey) {
		return 0, 0, false
	}
	_ = jsonscan.Members(doc, func(rawKey []byte, s, e int) error {
		if string(rawKey) != `"model"` {
			return nil
		}
		if e-s >= 2 && doc[s] == '"' && doc[e-1] == '"' {
			start, end, ok = s, e, true
		}
		return errFound
	})
	return start, end, ok
}

// doc appends doc to dst with its model replaced.
func (e *echo) doc(dst, doc []byte) []byte {
	s, end, ok := modelValue(doc)
	if !ok {
		return append(dst, doc...)
	}
	dst = append(dst, doc[:s]...)
	dst = append(dst, e.quoted...)
	return append(dst, doc[end:]...)
}

// stream takes the next bytes of an event stream and returns the complete
// lines among them (and the incomplete one before them) with each data
// line's model replaced; the rest waits for the next read or end. The
// slice is valid until the next call.
func (e *echo) stream(p []byte) []byte {
	data := p
	if len(e.pending) > 0 {
		e.pending = append(e.pending, p...)
		data = e.pending
	}
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		if len(e.pending) == 0 {
			e.pending = append(e.pending, p...)
		}
		return nil
	}
	e.out = e.out[:0]
	for lines := data[:last+1]; len(lines) > 0; {
		i := bytes.IndexByte(lines, '\n')
		e.out = e.line(e.out, lines[:i+1])
		lines = lines[i+1:]
	}
	rest := data[last+1:]
	if len(e.pending) > 0 {
		e.pending = e.pending[:copy(e.pending, rest)]
	} else {
		e.pending = append(e.pending, rest...)
	}
	return e.out
}

// end is what is left of a stream: its incomplete last line, as it came.
func (e *echo) end() []byte {
	rest := e.pending
	e.pending = nil
	return rest
}

// line appends one line of an event stream, a data line's model replaced.
func (e *echo) line(dst, line []byte) []byte {
	if !bytes.HasPrefix(line, dataPrefix) {
		return append(dst, line...)
	}
	n := len(dataPrefix)
	dst = append(dst, line[:n]...)
	return e.doc(dst, line[n:])
}
