package proxy

import (
	"net/http"
	"strconv"
)

// writeError answers with an OpenAI-style error object. Strings are JSON
// encoded (strconv's Go quoting wrote \x00 for a control byte in a path,
// which is not JSON).
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	b := make([]byte, 0, 128+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = append(b, quote(msg)...)
	b = append(b, `,"type":`...)
	b = append(b, quote(typ)...)
	b = append(b, `,"param":null,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, quote(code)...)
	}
	b = append(b, "}}\n"...)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
