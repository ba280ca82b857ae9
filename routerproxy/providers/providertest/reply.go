package providertest

import (
	"fmt"
	"net/http"
)

// SSE answers with an event stream (text/event-stream) of one event per
// element of data, each sent as its data line: an OpenAI-compatible
// model's stream as a test stub writes it ("[DONE]" is the caller's to
// give, as the last element).
func SSE(w http.ResponseWriter, data ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range data {
		fmt.Fprintf(w, "data: %s\n\n", d)
	}
}

// JSON answers with a JSON body (application/json), format filled in with
// args as fmt.Fprintf does: a model's or a provider's plain answer.
func JSON(w http.ResponseWriter, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, format, args...)
}
