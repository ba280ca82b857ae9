package balance

import (
	"bytes"
	"encoding/json"
	"net/textproto"
)

// FNV-1a 64 constants.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// promptParts are the request fields whose bytes make up the prompt prefix,
// in the order an engine sees them: tools (and legacy functions) are rendered
// before the conversation, the system prompt (a top-level field for some
// clients, else the first message) before the messages.
type promptParts struct {
	Tools     json.RawMessage `json:"tools"`
	Functions json.RawMessage `json:"functions"`
	System    json.RawMessage `json:"system"`
	Messages  json.RawMessage `json:"messages"`
	Prompt    json.RawMessage `json:"prompt"`
	// The answer's bound (chat's max_completion_tokens, else max_tokens):
	// it sizes the KV pages the answer takes (Request.OutputTokens).
	MaxTokens           *float64 `json:"max_tokens"`
	MaxCompletionTokens *float64 `json:"max_completion_tokens"`
}

// PromptBlocks hashes the request's tools, system prompt and messages (or the
// completions prompt) as one byte stream cut into blockBytes blocks, as a
// chain: block i's hash is the FNV-1a state after the first (i+1)*blockBytes
// bytes, so it covers the whole prefix up to and including block i. Only whole
// blocks are returned (an engine caches whole KV pages too). The messages
// array's closing bracket is left out so a conversation that grows keeps its
// earlier blocks. A body that is not a JSON object yields no blocks.
func PromptBlocks(body []byte, blockBytes int) []uint64 {
	blocks, _, _ := promptFeatures(body, blockBytes)
	return blocks
}

// promptFeatures is PromptBlocks plus the prompt's length in bytes and the
// request's answer bound (0 when absent).
func promptFeatures(body []byte, blockBytes int) (blocks []uint64, promptBytes, maxTokens int) {
	if blockBytes <= 0 {
		return nil, 0, 0
	}
	var p promptParts
	if json.Unmarshal(body, &p) != nil {
		return nil, 0, 0
	}
	maxTok := 0
	for _, v := range []*float64{p.MaxCompletionTokens, p.MaxTokens} {
		if v != nil && *v >= 1 && *v < 1<<30 {
			maxTok = int(*v)
			break
		}
	}
	msgs := bytes.TrimRight(p.Messages, " \t\r\n")
	msgs = bytes.TrimSuffix(msgs, []byte("]"))
	parts := [...][]byte{p.Tools, p.Functions, p.System, msgs, p.Prompt}
	total := 0
	for _, b := range parts {
		total += len(b)
	}
	if total < blockBytes {
		return nil, total, maxTok
	}
	out := make([]uint64, 0, total/blockBytes)
	h := uint64(fnvOffset)
	n := 0 // bytes in the current block
	for _, b := range parts {
		for len(b) > 0 {
			take := min(blockBytes-n, len(b))
			for _, c := range b[:take] {
				h ^= uint64(c)
				h *= fnvPrime
			}
			b = b[take:]
			n += take
			if n == blockBytes {
				out = append(out, h)
				n = 0
			}
		}
	}
	return out, total, maxTok
}

// SessionKey returns the hash of the first header in names (canonical MIME
// keys, in priority order) that is present with a non-empty value. The raw
// value is never stored. ok is false when no header carries a value.
func SessionKey(header map[string][]string, names []string) (key uint64, ok bool) {
	for _, name := range names {
		for _, v := range header[name] {
			if v == "" {
				continue
			}
			h := uint64(fnvOffset)
			for i := 0; i < len(name); i++ {
				h ^= uint64(name[i])
				h *= fnvPrime
			}
			h ^= 0
			h *= fnvPrime
			for i := 0; i < len(v); i++ {
				h ^= uint64(v[i])
				h *= fnvPrime
			}
			return Mix(h), true
		}
	}
	return 0, false
}

// CanonicalHeaders turns configured header names into canonical MIME keys
// (header matching is case-insensitive).
func CanonicalHeaders(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, textproto.CanonicalMIMEHeaderKey(n))
	}
	return out
}
