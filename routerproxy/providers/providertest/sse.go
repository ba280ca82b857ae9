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
