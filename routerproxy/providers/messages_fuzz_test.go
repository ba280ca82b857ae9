package providers

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Arbitrary Messages bodies never panic the translation, and what it
// accepts becomes a JSON chat request with the same number of turns or
// more (tool results split out).
func FuzzMessagesToChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","system":[{"type":"text","text":"s"}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","is_error":true}]}],"tool_choice":{"type":"tool","name":"n"}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"http://x"}}]}],"tools":[{"type":"web_search_20250305","name":"w"}]}`,
		`{"messages":null}`, `[]`, `{"system":5}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		mr, out, err := MessagesToChat([]byte(body))
		if err != nil {
			return
		}
		var c struct{ Messages []json.RawMessage }
		if json.Unmarshal(out, &c) != nil {
			t.Fatalf("not JSON: %s", out)
		}
		if len(c.Messages) < len(mr.Messages)-countEmptyUser(mr) {
			t.Fatalf("turns lost: %d < %d", len(c.Messages), len(mr.Messages))
		}
	})
}

// countEmptyUser counts user turns with no block (an empty array), which
// translate to no chat message.
func countEmptyUser(mr *MessagesRequest) int {
	n := 0
	for _, m := range mr.Messages {
		if bs, err := blocks(m.Content); err == nil && len(bs) == 0 {
			n++
		}
	}
	return n
}

// Arbitrary chat streams never panic the Messages stream conversion, and
// it ends (EOF or an error) without looping.
func FuzzMessagesStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"c\",\"function\":{\"name\":\"n\",\"arguments\":\"{\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1}]},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1}}\n\n")
	f.Add("data: {\"error\":{\"message\":\"x\"}}\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		st := &msgStream{sse: newSSEReader(strings.NewReader(in)), blocks: map[int]int{}, cur: -1}
		body := &streamBody{src: io.NopCloser(nil), step: st.step}
		var out bytes.Buffer
		for i := 0; ; i++ {
			if i > len(in)+16 {
				t.Fatal("the conversion does not end")
			}
			var p [4096]byte
			n, err := body.Read(p[:])
			out.Write(p[:n])
			if err != nil {
				break
			}
		}
	})
}
