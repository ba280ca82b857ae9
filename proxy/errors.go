package proxy

import (
	"net/http"
	"strconv"
)

// writeError answers with an OpenAI-style error object.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	b := make([]byte, 0, 128+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = strconv.AppendQuote(b, msg)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"param":null,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, code)
	}
	b = append(b, "}}\n"...)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
