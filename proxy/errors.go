package proxy

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

// writeError answers with an OpenAI-style error object. Strings are JSON
// encoded (strconv's Go quoting wrote \x00 for a control byte in a path,
// which is not JSON).
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	b := proxyapi.AppendErrorJSON(make([]byte, 0, 128+len(msg)), typ, code, msg)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// retryAfter sets Retry-After to d in whole seconds, at least 1, and
// returns the value.
func retryAfter(w http.ResponseWriter, d time.Duration) string {
	secs := strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
	w.Header().Set("Retry-After", secs)
	return secs
}
