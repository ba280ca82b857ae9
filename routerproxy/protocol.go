package routerproxy

import "github.com/llmkube/llmkube-compile/routerproxy/providers"

// protocol is the client API a request speaks, named once from its path. It
// decides whether intake asks a stream for its usage, which round tripper
// an attempt goes through (upstream.go) and how the answer's usage is read
// (relay.go).
type protocol uint8

const (
	// protoOpenAI: chat and text completions, embeddings (OpenAI's shapes).
	protoOpenAI protocol = iota
	// protoMessages: Anthropic Messages (messages.go).
	protoMessages
	// protoResponses: OpenAI Responses (responses.go).
	protoResponses
)

func protocolOf(path string) protocol {
	switch path {
	case messagesPath:
		return protoMessages
	case providers.ResponsesPath:
		return protoResponses
	}
	return protoOpenAI
}
