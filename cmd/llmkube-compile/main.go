// Command llmkube-compile renders, validates and diffs LLMKube ModelRouters
// offline. See the README for the command reference.
package main

import (
	"os"

	"github.com/llmkube/llmkube-compile/cmd/llmkube-compile/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
