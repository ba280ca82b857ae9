package compiler_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// FuzzCompile feeds arbitrary bytes through decode and the whole pipeline for
// every data plane: bad input must come back as diagnostics, never a panic.
// The seed corpus is every valid and invalid case in testdata.
func FuzzCompile(f *testing.F) {
	for _, pattern := range []string{"../testdata/*/input.yaml", "../testdata/invalid/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	reg := builtin.Registry()
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &compiler.Inputs{}
		if in.Decode("fuzz.yaml", data).HasErrors() {
			return
		}
		for _, dp := range []ir.DataPlane{"", ir.DataPlaneProxy, ir.DataPlaneGateway, ir.DataPlaneAgentGateway} {
			_, _ = pipeline.Run(in, reg, pipeline.Options{Compile: compiler.Options{DataPlane: dp}})
		}
	})
}
