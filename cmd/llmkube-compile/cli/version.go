package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmkube/llmkube-compile/internal/version"
)

// versionCmd prints this build's version, commit and Go version.
func (s *streams) versionCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this build",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			switch output {
			case "", "text":
				fmt.Fprintln(s.stdout, version.String("llmkube-compile"))
			case "json":
				_, _ = s.stdout.Write(version.JSON())
			default:
				return usageErr("-o must be text or json, not %q", output)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: text or json")
	return c
}
